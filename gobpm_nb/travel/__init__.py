"""Time travel: the command history behind ``Engine.rewind``, ``Engine.replay`` and
``Engine.branch``.

- ``state``: ``EngineState``, what an engine is made of (one typed object, one constructor);
- ``history``: the command envelope every public command goes through, and the history it
  records (entries, position, snapshots kept);
- ``entries``: the history's entries, kept compactly;
- ``snapshots``: copies of the engine state, and when to take the next one;
- ``rewind``: rewind, replay and branch (a state rebuilt aside, then swapped in);
- ``tape``: what user callables answered and which store calls failed, served to a replay;
- ``clone``: a copy of an engine core at an event boundary.
- ``driving``: a population run's commands to its own engine, which keeps no history:
  the public commands' bodies without the envelope.

The engine (``gobpm_nb.engine``) uses only the tape from here.
"""
