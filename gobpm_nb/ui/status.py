"""What the dashboard says about its last command, and how it reads the Run horizon.

- :func:`step_line` and :func:`run_line` make the "last step" line: the event a Step ran
  (its kind, instance, track and node, from the ``EventView`` that ``eng.step()`` returns) or
  how many events a Run or an Advance ran, and how far the clock moved. A Step on a quiet
  engine (nothing ready now) jumps to the next deadline; the line says so and names it.
- :func:`publish_notice` says whether a published message reached an instance, from
  ``eng.publish_message``'s return and the ``message_dropped`` / ``message_buffered`` fact
  the engine emitted for it.
- :func:`read_horizon` reads what the user typed next to Run.
- :func:`idle_line`, :func:`complete_line` and :func:`play_line` finish the line for an idle
  engine (what it waits for from outside), a completed task and a paused play.

Everything is plain text built from virtual times and ids: the same cells give the same lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import ModelError
from ..model.timers import parse_date, parse_duration
from ..observe.fact_pages import when
from ..observe.projections import PROCESS_SCOPE

if TYPE_CHECKING:
    from ..engine.state.records import EventView, TaskView
    from ..observe import Fact

#: What each event kind ``eng.step()`` reports means, in words.
EVENT_WORDS = {
    "track": "a track ran its node's work",
    "loop": "a turn of the instance's loop, which emits no fact",
    "timer": "a timer fired its wait",
    "expiry": "a buffered message expired",
    "retry": "a failed wake was tried again",
    "wake": "a trigger reached a dehydrated instance: its checkpoint was read and the work "
            "the trigger wakes ran",
}
IDLE = "nothing is scheduled (no track is ready, no deadline is armed): the engine is idle"
HORIZON_HELP = ("an ISO 8601 duration such as 'PT24H', a date-time such as "
                "'2026-01-02T00:00:00Z', or 'end' (until nothing is scheduled); leave it "
                "empty to run to the next quiet point")
#: The same help in the browser: the tooltip of Run and of the field beside it (the widgets'
#: contract, :mod:`.contract`, carries it to the front end).
HORIZON_TIP = ("Run to: empty = the next quiet point (everything due now, else the next "
               "deadline and what is due then); PT24H = for 24 h of virtual time; "
               "2026-01-02T00:00:00Z = until then; end = until nothing is scheduled")


def span_text(span: timedelta) -> str:
    """A span of virtual time as an ISO 8601 duration: ``P1DT23H``, ``PT15M``, ``PT0.5S``."""
    micros = span // timedelta(microseconds=1)
    days, rest = divmod(micros, 86_400_000_000)
    hours, rest = divmod(rest, 3_600_000_000)
    minutes, rest = divmod(rest, 60_000_000)
    seconds = f"{rest / 1_000_000:.6f}".rstrip("0").rstrip(".") if rest else ""
    clock = "".join(f"{n}{unit}" for n, unit in ((hours, "H"), (minutes, "M")) if n)
    clock += f"{seconds}S" if seconds else ""
    text = (f"P{days}D" if days else "P") + (f"T{clock}" if clock else "")
    return text if text != "P" else "PT0S"


def _events(count: int) -> str:
    return f"{count} event{'' if count == 1 else 's'}"


#: What each kind of hold an idle engine still has waits for, in words (singular, plural).
WAITS = (("task", "open task (the Complete form)", "open tasks (the Complete form)"),
         ("message", "message wait (the Publish form)", "message waits (the Publish form)"),
         ("signal", "signal wait", "signal waits"))


def idle_line(stats: dict[str, Any] | None = None) -> str:
    """The engine is idle; ``stats`` (``eng.stats()``) tells what it still waits for from
    outside (open tasks, message and signal waits), so an idle engine with work left does
    not look finished."""
    holds = stats.get("holds", {}) if isinstance(stats, dict) else {}
    waits = [f"{holds[kind]} {one if holds[kind] == 1 else many}"
             for kind, one, many in WAITS if holds.get(kind)]
    return IDLE + (f"; it waits for the outside: {', '.join(waits)}" if waits else "")


def complete_line(task: TaskView, dehydrated: bool) -> str:
    """What completing ``task`` (a ``TaskView``) did; ``dehydrated``: its instance is
    dehydrated, so the next event is its wake from the store."""
    line = f"Complete task {task.id} (instance {task.instance}, node {task.node}): done"
    if dehydrated:
        return line + "; the dehydrated instance is woken from the store at the next Step or Run"
    return line + "; it goes on at the next Step or Run"


def play_line(events: int, before: datetime, after: datetime) -> str:
    """What a play did when it was paused: ``events`` run, the clock from ``before`` to
    ``after``."""
    return run_line("Pause: play stopped", events, before, after)


def step_line(event: EventView | None, before: datetime,
              stats: dict[str, Any] | None = None) -> str:
    """What one Step did: ``event`` is what ``eng.step()`` returned, ``before`` the clock
    before it; ``stats`` (for an idle engine) what it still waits for."""
    if event is None:
        return f"Step: {idle_line(stats)}"
    where = " · ".join(f"{name} {value}" for name, value in (
        ("instance", event.instance), ("track", event.track), ("node", event.node)) if value)
    line = f"Step: {event.kind} event{' · ' + where if where else ''}"
    words = EVENT_WORDS.get(event.kind)
    if words:
        line += f" — {words}"
    if event.at > before:
        line += (f". Nothing was ready: the clock jumped {span_text(event.at - before)} to "
                 f"the next deadline, {when(event.at)}")
    return line


def run_line(what: str, count: int, before: datetime, after: datetime) -> str:
    """What a Run or an Advance did: ``count`` events, the clock from ``before`` to ``after``."""
    if after > before:
        moved = f"the clock moved {span_text(after - before)} to {when(after)}"
    else:
        moved = f"the clock stays at {when(after)}"
    return f"{what}: {_events(count)}; {moved}"


class Horizon(NamedTuple):
    """How far Run goes: ``kind`` is ``quiet`` (the next quiet point), ``end`` (until nothing
    is scheduled), ``for`` (``value`` an ISO duration) or ``until`` (``value`` a date-time)."""

    kind: str
    value: Any = None
    text: str = ""


def read_horizon(value: Any) -> Horizon:
    """The Run horizon the user typed; ValueError saying what is accepted."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return Horizon("quiet")
    if not isinstance(value, str):
        raise ValueError(f"Run's horizon must be text ({HORIZON_HELP}); got {value!r}")
    text = value.strip()
    if text.lower() == "end":
        return Horizon("end", None, text)
    try:
        if text[:1] in "Pp-":
            return Horizon("for", parse_duration(text.upper(), "horizon"), text.upper())
        return Horizon("until", parse_date(text, "horizon"), text)
    except ModelError:
        raise ValueError(f"Run's horizon {text!r} is not understood: give {HORIZON_HELP}"
                         ) from None


def publish_notice(name: str, key: Any, reached: str | None, facts: Iterable[Fact]
                   ) -> dict[str, str]:
    """What became of a published message: ``reached`` is what ``publish_message`` returned,
    ``facts`` the facts emitted while it ran. ``level`` is ``ok`` or ``warning``."""
    what = f"Message {name!r}" + (f" with key {key!r}" if key is not None else "")
    for fact in facts:
        if fact.kind == "message_correlated" and reached is not None:
            if fact.track:
                at = f" (track {fact.track} at {fact.node!r})"
            elif fact.track == "" and fact.node:  # the process's own scope: an event start
                at = f" (the {PROCESS_SCOPE}'s event subprocess start {fact.node!r})"
            else:
                at = ""
            return {"text": f"{what} reached instance {reached}{at}", "level": "ok"}
        if fact.kind == "message_buffered":
            return {"text": f"{what} reached nobody yet: no instance waits for it; it is "
                            "buffered for its time to live", "level": "warning"}
        if fact.kind == "message_dropped":
            reason = fact.details.get("reason", "no subscriber")
            return {"text": f"{what} reached nobody ({reason}): it was dropped",
                    "level": "warning"}
    if reached is not None:
        return {"text": f"{what} reached instance {reached}", "level": "ok"}
    return {"text": f"{what} reached nobody", "level": "warning"}
