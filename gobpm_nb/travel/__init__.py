"""Time travel: the command history behind ``Engine.rewind``, ``Engine.replay`` and
``Engine.branch``.

- ``history``: every public command as it is recorded (the command envelope), the history's
  position, and its snapshots;
- ``entries``: the history's entries, kept compactly;
- ``rewind``: rewind, replay and branch (a state rebuilt aside, then swapped in);
- ``tape``: what user callables answered and which store calls failed, served to a replay;
- ``clone``: a copy of an engine core at an event boundary (snapshots, branches).

The engine (``gobpm_nb.engine``) knows only the tape; nothing here is imported by it
otherwise.
"""
