"""Element classes of a process definition: immutable, no runtime state.

A wait node may implement ``dehydratable(ctx) -> bool`` (docs/semantics.md, Eligibility): its
permission to dehydrate its instance while a track is parked on it. A node that does not
implement it is simply not dehydratable, so its instance stays resident (Invariants 2 and 9,
docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from .characteristics import Decision as Decision
from .characteristics import Loop as Loop
from .characteristics import Many as Many
from .characteristics import Mapping as Mapping
from .expr import Expr
from .timers import TimerSpec

#: A script task's or an inline service task's Python function: given a copy of the instance's
#: data, it returns what to merge into it (a dict, or nothing); what it returns is checked when
#: it runs, so it is not declared here.
Script = Callable[[dict[str, Any]], Any]


class WaitContext(Protocol):
    """What an element may consult when asked whether it is dehydratable."""

    remaining: timedelta | None  # the time left on the wait's own timer, if it has one
    min_dehydrate_wait: timedelta


def waits(self: Element, ctx: WaitContext) -> bool:
    """A node that waits for what runs under it, each judged on its own: eligible."""
    return True


@dataclass(frozen=True)
class Element:
    """Base of every flow node."""

    id: str
    name: str | None = None
    #: The subprocess (plain or event) that contains it; None: the process itself.
    within: str | None = None
    #: Multi-instance characteristics (activities only), or None.
    many: Many | None = None
    #: Standard loop characteristics (activities only), or None.
    loop: Loop | None = None
    #: True for a compensation handler (BPMN ``isForCompensation``); None: not one.
    for_compensation: bool | None = None
    #: The target node of its default flow (a gateway's, or an activity's: taken only when
    #: no other outgoing flow is); None: none.
    default: str | None = None
    #: Input and output mappings (``Process.mapping``), or None.
    io: Mapping | None = None
    kind = "element"
    activity = False  # boundaries may attach only to activities
    catch = False  # may be an arm of an event-based gateway

    @property
    def label(self) -> str:
        return self.name or self.id

    @property
    def repeats(self) -> bool:
        """Whether it runs as a body over runs of its own (multi-instance, or a loop)."""
        return self.many is not None or self.loop is not None


@dataclass(frozen=True)
class StartEvent(Element):
    kind = "start"


@dataclass(frozen=True)
class TriggeredStart(StartEvent):
    """The start event of an event subprocess: what starts it, and whether starting it
    cancels the rest of its enclosing scope (``interrupting``)."""

    interrupting: bool = True
    kind = "triggered_start"
    catch = True


@dataclass(frozen=True)
class MessageStart(TriggeredStart):
    message: str = ""
    key: Expr | None = None
    kind = "message_start"


@dataclass(frozen=True)
class TimerStart(TriggeredStart):
    timer: TimerSpec | None = None
    kind = "timer_start"


@dataclass(frozen=True)
class SignalStart(TriggeredStart):
    signal: str = ""
    kind = "signal_start"


@dataclass(frozen=True)
class ConditionalStart(TriggeredStart):
    """Starts its event subprocess when its condition over the instance's data becomes true
    while the enclosing scope runs; in the process itself, an instance is started by
    ``Engine.start_on_conditions`` when it holds on the data given."""

    condition: Expr | None = None
    kind = "conditional_start"


@dataclass(frozen=True)
class ErrorStart(TriggeredStart):
    """Catches an error thrown inside its scope (``error`` None: every error). Always
    interrupting, as BPMN says."""

    error: str | None = None
    kind = "error_start"


@dataclass(frozen=True)
class EscalationStart(TriggeredStart):
    """Catches an escalation raised inside its scope (``escalation`` None: every one)."""

    escalation: str | None = None
    kind = "escalation_start"


@dataclass(frozen=True)
class CompensationStart(TriggeredStart):
    """Starts a compensation event subprocess when its subprocess is compensated."""

    kind = "compensation_start"


@dataclass(frozen=True)
class EndEvent(Element):
    terminate: bool = False
    error: str | None = None
    escalation: str | None = None
    kind = "end"


@dataclass(frozen=True)
class MessageEnd(EndEvent):
    """An end event that publishes ``message`` (with ``key`` and the ``payload`` fields, as
    a message throw does), then ends its track as a plain end does."""

    message: str = ""
    key: Expr | None = None
    payload: tuple[str, ...] = ()
    kind = "message_end"


@dataclass(frozen=True)
class SignalEnd(EndEvent):
    """An end event that broadcasts ``signal`` (with the ``payload`` fields, as a signal
    throw does), then ends its track as a plain end does."""

    signal: str = ""
    payload: tuple[str, ...] = ()
    kind = "signal_end"


@dataclass(frozen=True)
class CompensationEnd(EndEvent):
    """Compensates (as ``CompensationThrow``), then ends its track."""

    ref: str | None = None  # BPMN activityRef
    no_wait: bool | None = None  # True: waitForCompletion="false" (ends at once)
    kind = "compensation_end"
    dehydratable = waits  # it waits for its handlers


@dataclass(frozen=True)
class CancelEnd(EndEvent):
    """Cancels its transaction: withdrawn, compensated, left by its cancel boundary."""

    kind = "cancel_end"


@dataclass(frozen=True)
class ScriptTask(Element):
    fn: Script | None = None
    kind = "script_task"
    activity = True


@dataclass(frozen=True)
class ServiceTask(Element):
    """An inline service (``fn``) runs at once; a worker service (``topic``, or the value of
    ``topic_from`` when the job is created) is a job."""

    fn: Script | None = None
    topic: str | None = None
    topic_from: Expr | None = None
    kind = "service_task"
    activity = True

    def dehydratable(self, ctx: WaitContext) -> bool:
        return False  # a job in flight is active work, not a passive wait


@dataclass(frozen=True)
class UserTask(Element):
    assignee: str | None = None
    kind = "user_task"
    activity = True

    def dehydratable(self, ctx: WaitContext) -> bool:
        return True  # the task lives in the engine's inbox, independent of residency


@dataclass(frozen=True)
class ReceiveTask(Element):
    message: str = ""
    key: Expr | None = None
    kind = "receive_task"
    activity = True
    catch = True

    def dehydratable(self, ctx: WaitContext) -> bool:
        return True  # a receive is a pure wait, externally driven


@dataclass(frozen=True)
class TimerCatch(Element):
    timer: TimerSpec | None = None
    kind = "timer_catch"
    catch = True

    def dehydratable(self, ctx: WaitContext) -> bool:
        # Permission, applied at arm time where the deadline is known: a short wait is not
        # worth a checkpoint and hydrate round-trip.
        return ctx.remaining is None or ctx.remaining >= ctx.min_dehydrate_wait


@dataclass(frozen=True)
class MessageCatch(Element):
    message: str = ""
    key: Expr | None = None
    kind = "message_catch"
    catch = True
    dehydratable = waits  # a message from outside


@dataclass(frozen=True)
class SignalCatch(Element):
    signal: str = ""
    kind = "signal_catch"
    catch = True
    dehydratable = waits  # a signal from outside


@dataclass(frozen=True)
class ConditionalCatch(Element):
    """Fires when its condition over the instance's own data holds. Never dehydratable: its
    trigger is the instance's own data commits (the spec's dehydratable waits)."""

    condition: Expr | None = None
    kind = "conditional_catch"
    catch = True


@dataclass(frozen=True)
class MessageThrow(Element):
    message: str = ""
    key: Expr | None = None
    payload: tuple[str, ...] = ()
    kind = "message_throw"


@dataclass(frozen=True)
class SignalThrow(Element):
    signal: str = ""
    payload: tuple[str, ...] = ()
    kind = "signal_throw"


@dataclass(frozen=True)
class NoneThrow(Element):
    """An intermediate throw event with no definition: a milestone the track passes."""

    kind = "none_throw"


@dataclass(frozen=True)
class EscalationThrow(Element):
    """Raises an escalation to the scopes around it and goes on (a catch may interrupt)."""

    escalation: str = ""
    kind = "escalation_throw"


@dataclass(frozen=True)
class CompensationThrow(Element):
    """Compensates ``ref`` (None: its scope's, latest first), waiting for the handlers."""

    ref: str | None = None  # BPMN activityRef
    no_wait: bool | None = None  # True: waitForCompletion="false" (goes on at once)
    kind = "compensation_throw"
    dehydratable = waits  # it waits for its handlers


@dataclass(frozen=True)
class LinkThrow(Element):
    """Goes to the link catch event of the same name in the same scope."""

    link: str = ""
    kind = "link_throw"


@dataclass(frozen=True)
class LinkCatch(Element):
    """Where the link throw events of its name go; it has no incoming flow."""

    link: str = ""
    kind = "link_catch"


@dataclass(frozen=True)
class SubProcess(Element):
    """An embedded subprocess: a scope with its own start event, run by a track that waits
    on it while the tracks inside run; boundaries may attach to it."""

    kind = "subprocess"
    activity = True

    def dehydratable(self, ctx: WaitContext) -> bool:
        return True  # it waits for the tracks inside it, each judged on its own


@dataclass(frozen=True)
class Transaction(SubProcess):
    """A transaction subprocess: a cancel end event inside it cancels it."""

    kind = "transaction"


@dataclass(frozen=True)
class EventSubProcess(Element):
    """An event subprocess (``triggeredByEvent``): started by its start event's trigger while
    its enclosing scope is active; no flow enters or leaves it."""

    kind = "event_subprocess"

    def dehydratable(self, ctx: WaitContext) -> bool:
        return True


@dataclass(frozen=True)
class CallActivity(Element):
    """Calls a deployed process (the newest version, or ``version``): a child instance of its
    own, started with the ``inputs`` fields of the data (None: all of them); when it ends, its
    ``outputs`` fields (None: all) are merged back, and an error it does not catch reaches the
    call activity's error boundary."""

    process: str = ""
    version: int | None = None
    inputs: tuple[str, ...] | None = None
    outputs: tuple[str, ...] | None = None
    kind = "call_activity"
    activity = True

    def dehydratable(self, ctx: WaitContext) -> bool:
        return True  # it waits for its child, which the engine holds for it


@dataclass(frozen=True)
class InclusiveGateway(Element):
    """Split: every flow whose condition holds (the default when none does). Join: fires when
    a token has arrived and no other token of its scope can still reach it."""

    decision: Decision | None = None  # a person or a rule chooses its flows (design review)
    kind = "inclusive_gateway"
    dehydratable = waits  # a decision waits for a person (a join's wait asks no permission)


@dataclass(frozen=True)
class ComplexGateway(Element):
    """Splits as the inclusive gateway; joins once ``activation`` holds, then resets
    (``engine.elements.complex``); with no ``activation``, joins as the inclusive one."""

    activation: Expr | None = None
    kind = "complex_gateway"


@dataclass(frozen=True)
class ExclusiveGateway(Element):
    #: A decision (design-review mode): a person or a rule chooses the flow, not conditions
    decision: Decision | None = None
    kind = "exclusive_gateway"
    dehydratable = waits  # a decision waits for a person, in no coroutine of its own


@dataclass(frozen=True)
class ParallelGateway(Element):
    kind = "parallel_gateway"


@dataclass(frozen=True)
class EventGateway(Element):
    """The first of its arms' events wins. ``instantiate``: it stands at the start of the
    process, and the first arm's event creates an instance (True; None: it does not);
    ``parallel`` (BPMN's ``eventGatewayType="Parallel"``, only with ``instantiate``): the
    instance then waits on each other arm for its own event too."""

    instantiate: bool | None = None
    parallel: bool | None = None
    kind = "event_gateway"

    def dehydratable(self, ctx: WaitContext) -> bool:
        # The gateway is the wait node, not its arms: always a pure wait point.
        return True


@dataclass(frozen=True)
class Boundary(Element):
    attached_to: str = ""
    interrupting: bool = True
    kind = "boundary"


@dataclass(frozen=True)
class TimerBoundary(Boundary):
    timer: TimerSpec | None = None
    kind = "timer_boundary"


@dataclass(frozen=True)
class MessageBoundary(Boundary):
    message: str = ""
    key: Expr | None = None
    kind = "message_boundary"


@dataclass(frozen=True)
class SignalBoundary(Boundary):
    signal: str = ""
    kind = "signal_boundary"


@dataclass(frozen=True)
class ErrorBoundary(Boundary):
    """Resolved where the error is raised; arms nothing. ``error`` None catches every error."""

    error: str | None = None
    kind = "error_boundary"


@dataclass(frozen=True)
class EscalationBoundary(Boundary):
    """Catches an escalation raised inside the subprocess it is attached to (``escalation``
    None: every one); arms nothing, like an error boundary."""

    escalation: str | None = None
    kind = "escalation_boundary"


@dataclass(frozen=True)
class CompensationBoundary(Boundary):
    """Links its activity to the compensation ``handler``; arms nothing."""

    handler: str = ""
    kind = "compensation_boundary"


@dataclass(frozen=True)
class CancelBoundary(Boundary):
    """Where a cancelled transaction is left; arms nothing."""

    kind = "cancel_boundary"


@dataclass(frozen=True)
class ConditionalBoundary(Boundary):
    condition: Expr | None = None
    kind = "conditional_boundary"


@dataclass(frozen=True)
class Flow:
    id: str
    source: str
    target: str
    condition: Expr | None = None
    #: A condition given as text that did not compile (the process refuses it): kept so
    #: that a file written for the process carries it as it was given.
    refused: str | None = None
