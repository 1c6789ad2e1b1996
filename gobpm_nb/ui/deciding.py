"""The dashboard's ``decide`` command: a person chooses the flow a decision gateway takes;
and its ``activate`` command: a person activates an element of an ad-hoc subprocess
(``{"kind": "activate", "instance", "adhoc", "element", "track"}`` from an element's button,
``Engine.activate``).

The front end sends ``{"kind": "decide", "instance": ..., "flow": ..., "track": ...}`` from
a flow's button in the decisions row, or from a click on a flow drawn dashed on the BPMN
diagram (the marks' ``choices``, :func:`gobpm_nb.render.marks.choices`); at an inclusive
gateway's decision (``several``) those toggle flows, and the row's "take" button sends
``flow`` as the list of the flows toggled on. The handler calls
``Engine.decide`` — the same call a user types in a cell — and says what it did in the
last-step line; what the engine refuses (no decision waiting, a flow that is not one of the
decision's) goes to the ``error`` trait and changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .widgets import Command

if TYPE_CHECKING:
    from ..api import Engine
    from ..engine.state.records import DecisionView


def decide_line(view: DecisionView | None, flow: str | list[str], dehydrated: bool) -> str:
    """What choosing ``flow`` (a list: several flows) at ``view`` (the decision it took,
    when known) did."""
    names = flow if isinstance(flow, list) else [flow]
    if view is None:
        line = f"Decide: flow {', '.join(names)} taken"
    else:
        taken = [(f, t) for f, t in view.flows if any(n in (f, t) for n in names)]
        said = ", ".join(f"{f} → {t}" for f, t in taken) if taken else ", ".join(names)
        line = f"Decide {view.gateway} (instance {view.instance}, track {view.track}): " \
               f"flow{'s' if len(taken) > 1 else ''} {said}"
    if dehydrated:
        return line + "; the dehydrated instance is woken from the store at the next Step " \
                      "or Run"
    return line + "; it goes on at the next Step or Run"


class DecisionCommands:
    """The dashboard's ``decide`` and ``activate`` commands (mixed into ``Dashboard``)."""

    _engine: Engine
    last_step: str

    def _decide(self, command: Command) -> None:
        instance, flow, track = (command.get(k) for k in ("instance", "flow", "track"))
        if not isinstance(instance, str) or not instance:
            raise ValueError(f"decide needs an instance id, got {instance!r}")
        if not (isinstance(flow, str) and flow) and not (
                isinstance(flow, list) and flow and all(isinstance(f, str) and f for f in flow)):
            raise ValueError(f"decide needs a flow (its id, or the node it leads to) or a "
                             f"list of them, got {flow!r}")
        if track in ("", None):
            track = None
        elif not isinstance(track, str):
            raise ValueError(f"decide's track must be a track id, got {track!r}")
        eng = self._engine
        views = [v for v in eng.decisions(instance) if track is None or v.track == track]
        first = flow[0] if isinstance(flow, list) else flow
        view = next((v for v in views if any(first in pair for pair in v.flows)), None)
        eng.decide(instance, flow, track)
        away = eng.describe_instance(instance).residency == "dehydrated"
        self.last_step = decide_line(view, flow, away)

    def _activate(self, command: Command) -> None:
        """An element's button in an ad-hoc subprocess's row: ``Engine.activate``."""
        instance, adhoc, element = (_named(command, k, what) for k, what in (
            ("instance", "an instance id"), ("adhoc", "an ad-hoc subprocess"),
            ("element", "an element")))
        track = command.get("track")
        if track in ("", None):
            track = None
        elif not isinstance(track, str):
            raise ValueError(f"activate's track must be a track id, got {track!r}")
        eng = self._engine
        eng.activate(instance, adhoc, element, track)
        away = eng.describe_instance(instance).residency == "dehydrated"
        line = f"Activate {element} in {adhoc} (instance {instance})"
        self.last_step = line + ("; the dehydrated instance is woken from the store at the "
                                 "next Step or Run" if away else
                                 "; it runs at the next Step or Run")


def _named(command: Command, key: str, what: str) -> str:
    value = command.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"activate needs {what}, got {value!r}")
    return value


__all__ = ["DecisionCommands", "decide_line"]
