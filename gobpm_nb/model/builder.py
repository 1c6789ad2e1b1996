"""The builder's element methods, shared by a process and the scopes inside it: one method
per element, each returning the element's id."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..errors import ModelError
from . import elements as el
from . import multiple as mu
from .adhoc import AdHocSubProcess
from .expr import Expr
from .placeholders import Unsupported, UnsupportedBoundary
from .timers import TimerSpec, timer_spec

Condition = str | Callable[[dict[str, Any]], Any]


class Builder:
    """What ``Process`` and ``Scope`` both offer: every element, and flows between them."""

    def _add(self, element: el.Element) -> str:
        raise NotImplementedError

    def add_problem(self, problem: str) -> None:
        raise NotImplementedError

    def flow(self, *ids: str, condition: Condition | None = None,
             id: str | None = None) -> list[str]:
        raise NotImplementedError

    def multi_instance(self, node: str, *, sequential: bool = False,
                       collection: Condition | None = None, element: str | None = None,
                       cardinality: Condition | int | None = None,
                       completion: Condition | None = None,
                       output_collection: str | None = None,
                       output_element: Condition | None = None) -> str:
        raise NotImplementedError

    def decide(self, gateway: str, weights: dict[str, float] | None = None) -> str:
        raise NotImplementedError

    def loop(self, node: str, *, condition: Condition | None = None,
             test_before: bool = False, maximum: int | None = None) -> str:
        raise NotImplementedError

    def for_compensation(self, node: str) -> str:
        raise NotImplementedError

    def default_flow(self, node: str, target: str) -> str:
        raise NotImplementedError

    def _expr(self, owner: str, what: str, value: Any) -> Expr | None:
        if value is None:
            return None
        try:
            return Expr(value)
        except ModelError as exc:
            self.add_problem(f"{owner}: {what}: {exc}")
            return None

    def _timer(self, owner: str, duration: Any, date: Any, cycle: Any) -> TimerSpec | None:
        spec = timer_spec(duration, date, cycle)
        if spec is None:
            self.add_problem(f"{owner}: give exactly one of duration, date or cycle")
        return spec

    def start(self, id: str, name: str | None = None) -> str:
        return self._add(el.StartEvent(id, name))

    def end(self, id: str, name: str | None = None, *, terminate: bool = False,
            error: str | None = None, escalation: str | None = None,
            message: str | None = None, key: Condition | None = None,
            signal: str | None = None, payload: tuple[str, ...] | list[str] = (),
            compensate: bool | str = False, cancel: bool = False,
            events: list[dict[str, Any]] | None = None, wait: bool = True) -> str:
        """An end event: plain, ``terminate`` (ends its scope: the instance, or the
        subprocess it is in), ``error`` (throws that error code), ``escalation``, ``message``
        (publishes it with ``key`` and the ``payload`` fields, as ``message_throw`` does),
        ``signal`` (broadcasts it with the ``payload`` fields), ``compensate`` (True: every
        completed activity of its scope, latest first; an id: that activity; then it ends)
        or ``cancel`` (cancels the transaction it is in), or ``events`` (several, as
        ``throw`` takes them: each thrown in order, then it ends); give at most one.
        ``wait=False`` with ``compensate``: it ends at once while the handlers run."""
        common: dict[str, Any] = {"terminate": terminate, "error": error,
                                  "escalation": escalation}
        if events is not None:
            if any(common.values()) or message is not None or signal is not None or \
                    key is not None or compensate is not False or cancel:
                self.add_problem(f"end event {id!r}: events= lists everything it throws; "
                                 "give no other kind beside it")
            return self._add(mu.MultipleEnd(
                id, name, events=mu.throw_defs(id, events, self._expr, self.add_problem),
                payload=tuple(payload)))
        if wait is not True and compensate is False:
            self.add_problem(f"end event {id!r}: wait= is only for a compensation end")
        if compensate is not False or cancel:
            return self._compensating_end(id, name, common, compensate, cancel,
                                          message is not None or signal is not None, wait)
        if message is not None and signal is not None:
            self.add_problem(f"end event {id!r}: give at most one of terminate, error, "
                             "escalation, message or signal (it has message and signal)")
        if message is not None:
            return self._add(el.MessageEnd(id, name, **common, message=message,
                                           key=self._expr(id, "key", key),
                                           payload=tuple(payload)))
        if key is not None:
            self.add_problem(f"end event {id!r}: key= needs message=")
        if signal is not None:
            return self._add(el.SignalEnd(id, name, **common, signal=signal,
                                          payload=tuple(payload)))
        if payload:
            self.add_problem(f"end event {id!r}: payload= needs message= or signal=")
        return self._add(el.EndEvent(id, name, **common))

    def _compensating_end(self, id: str, name: str | None, common: dict[str, Any],
                          compensate: bool | str, cancel: bool, sends: bool,
                          wait: bool = True) -> str:
        if sends or any(common.values()) or (compensate is not False and cancel):
            self.add_problem(f"end event {id!r}: give at most one of terminate, error, "
                             "escalation, message, signal, compensate or cancel")
        if cancel:
            return self._add(el.CancelEnd(id, name, **common))
        return self._add(el.CompensationEnd(id, name, **common,
                                            ref=self._activity_ref(id, compensate),
                                            no_wait=self._no_wait(id, wait)))

    def _activity_ref(self, id: str, compensate: bool | str | None) -> str | None:
        if compensate is True or compensate is None:
            return None
        if not isinstance(compensate, str) or not compensate:
            self.add_problem(f"{id!r}: compensate= is True or an activity id, not "
                             f"{compensate!r}")
            return None
        return str(compensate)

    def compensation_throw(self, id: str, name: str | None = None, *,
                           activity: str | None = None, wait: bool = True) -> str:
        """An intermediate throw that compensates ``activity`` (None: every completed
        compensable activity of its scope, the latest first) and goes on when every handler
        is done (BPMN ``waitForCompletion``); ``wait=False``: it goes on at once while the
        handlers run, one after another, in a track of their own at the throw."""
        return self._add(el.CompensationThrow(id, name, ref=self._activity_ref(id, activity),
                                              no_wait=self._no_wait(id, wait)))

    def _no_wait(self, id: str, wait: Any) -> bool | None:
        if not isinstance(wait, bool):
            self.add_problem(f"{id!r}: wait= is True or False, not {wait!r}")
        return None if wait is not False else True

    def compensation_boundary(self, id: str, name: str | None = None, *, attached_to: str,
                              handler: str) -> str:
        """Make ``handler`` (an activity added with ``for_compensation=True``) the
        compensation handler of ``attached_to``: once that activity has completed, a
        compensation throw of its scope runs the handler, with the data as it completed."""
        return self._add(el.CompensationBoundary(id, name, attached_to=attached_to,
                                                 handler=handler))

    def compensation_start(self, id: str, name: str | None = None) -> str:
        """The start of a compensation event subprocess (in a subprocess): it runs when the
        subprocess, completed, is compensated."""
        return self._add(el.CompensationStart(id, name))

    def transaction(self, id: str, name: str | None = None, *,
                    for_compensation: bool = False, default: str | None = None) -> Scope:
        """A transaction subprocess (as ``subprocess``): a ``cancel`` end inside it withdraws
        its tracks, compensates its completed activities and leaves by its cancel boundary."""
        self._add(el.Transaction(id, name, for_compensation=for_compensation or None,
                                 default=default))
        return Scope(id, self)

    def cancel_boundary(self, id: str, name: str | None = None, *, attached_to: str) -> str:
        """Where a transaction is left once it has been cancelled and compensated."""
        return self._add(el.CancelBoundary(id, name, attached_to=attached_to))

    # -- the start events of event subprocesses ------------------------------------------
    def message_start(self, id: str, name: str | None = None, *, message: str,
                      key: Condition | None = None, interrupting: bool = True) -> str:
        return self._add(el.MessageStart(id, name, interrupting=interrupting, message=message,
                                         key=self._expr(id, "key", key)))

    def timer_start(self, id: str, name: str | None = None, *, duration: Any = None,
                    date: Any = None, cycle: Any = None, interrupting: bool = True) -> str:
        return self._add(el.TimerStart(id, name, interrupting=interrupting,
                                       timer=self._timer(id, duration, date, cycle)))

    def signal_start(self, id: str, name: str | None = None, *, signal: str,
                     interrupting: bool = True) -> str:
        return self._add(el.SignalStart(id, name, interrupting=interrupting, signal=signal))

    def conditional_start(self, id: str, name: str | None = None, *, condition: Condition,
                          interrupting: bool = True) -> str:
        """In an event subprocess: it starts when ``condition`` becomes true after a change
        of the data while its scope runs (a non-interrupting one once per rise from false
        to true). In the process itself: ``Engine.start_on_conditions(data)`` starts an
        instance when ``condition`` holds on ``data``."""
        return self._add(el.ConditionalStart(id, name, interrupting=interrupting,
                                             condition=self._expr(id, "condition", condition)))

    def error_start(self, id: str, name: str | None = None, *,
                    error: str | None = None) -> str:
        """Catches ``error`` (None: every error) thrown in the enclosing scope."""
        return self._add(el.ErrorStart(id, name, error=error))

    def escalation_start(self, id: str, name: str | None = None, *,
                         escalation: str | None = None, interrupting: bool = True) -> str:
        return self._add(el.EscalationStart(id, name, interrupting=interrupting,
                                            escalation=escalation))

    def script_task(self, id: str, name: str | None = None, *, fn: el.Script | None = None,
                    for_compensation: bool = False, default: str | None = None) -> str:
        """``for_compensation``: a compensation handler (``compensation_boundary``), which
        no flow enters or leaves. ``default`` (on every activity): the node its default flow
        leads to, taken only when none of its other outgoing flows is (each flow whose
        condition holds is taken, and each without one)."""
        return self._add(el.ScriptTask(id, name, fn=fn, for_compensation=for_compensation or None,
                                       default=default))

    def service_task(self, id: str, name: str | None = None, *, fn: el.Script | None = None,
                     topic: str | None = None, for_compensation: bool = False,
                     default: str | None = None, topic_from: Condition | None = None) -> str:
        return self._add(el.ServiceTask(id, name, fn=fn, topic=topic,
                                        topic_from=self._expr(id, "topic_from", topic_from),
                                        for_compensation=for_compensation or None,
                                        default=default))

    def user_task(self, id: str, name: str | None = None, *, assignee: str | None = None,
                  for_compensation: bool = False, default: str | None = None) -> str:
        return self._add(el.UserTask(id, name, assignee=assignee,
                                     for_compensation=for_compensation or None,
                                     default=default))

    def receive_task(self, id: str, name: str | None = None, *, message: str,
                     key: Condition | None = None, default: str | None = None) -> str:
        return self._add(el.ReceiveTask(id, name, message=message,
                                        key=self._expr(id, "key", key), default=default))

    def timer_catch(self, id: str, name: str | None = None, *, duration: Any = None,
                    date: Any = None, cycle: Any = None) -> str:
        return self._add(el.TimerCatch(id, name, timer=self._timer(id, duration, date, cycle)))

    def message_catch(self, id: str, name: str | None = None, *, message: str,
                      key: Condition | None = None) -> str:
        return self._add(el.MessageCatch(id, name, message=message,
                                         key=self._expr(id, "key", key)))

    def signal_catch(self, id: str, name: str | None = None, *, signal: str) -> str:
        return self._add(el.SignalCatch(id, name, signal=signal))

    def conditional_catch(self, id: str, name: str | None = None, *, condition: Condition) -> str:
        return self._add(el.ConditionalCatch(
            id, name, condition=self._expr(id, "condition", condition)))

    def message_throw(self, id: str, name: str | None = None, *, message: str,
                      key: Condition | None = None, payload: tuple[str, ...] | list[str] = ()
                      ) -> str:
        return self._add(el.MessageThrow(id, name, message=message,
                                         key=self._expr(id, "key", key), payload=tuple(payload)))

    def signal_throw(self, id: str, name: str | None = None, *, signal: str,
                     payload: tuple[str, ...] | list[str] = ()) -> str:
        return self._add(el.SignalThrow(id, name, signal=signal, payload=tuple(payload)))

    def throw(self, id: str, name: str | None = None, *,
              events: list[dict[str, Any]] | None = None,
              payload: tuple[str, ...] | list[str] = ()) -> str:
        """An intermediate throw event. With no ``events``: a milestone the track passes.
        With ``events`` (two or more dicts: ``{"message": "paid", "key": "order"}``,
        ``{"signal": "stop"}``, ``{"escalation": "late"}``, at most one of each kind): it
        throws each, in order (messages and signals with the ``payload`` fields), then
        leaves."""
        if events is None:
            if payload:
                self.add_problem(f"throw {id!r}: payload= needs events=")
            return self._add(el.NoneThrow(id, name))
        return self._add(mu.MultipleThrow(
            id, name, events=mu.throw_defs(id, events, self._expr, self.add_problem),
            payload=tuple(payload)))

    # -- events with several definitions (``multiple``) ----------------------------------
    def _events(self, id: str, any_of: Any, all_of: Any, parallel_ok: bool
                ) -> tuple[tuple[mu.EventDef, ...], bool]:
        if (any_of is None) == (all_of is None):
            self.add_problem(f"{id!r}: give exactly one of any_of= or all_of=")
        elif all_of is not None and not parallel_ok:
            self.add_problem(f"{id!r}: all_of= (parallel multiple) is only for a catch event "
                             "here; give any_of=")
        given = any_of if any_of is not None else all_of
        return mu.event_defs(id, given or [], self._expr, self.add_problem), all_of is not None

    def catch(self, id: str, name: str | None = None, *, any_of: list[dict[str, Any]] |
              None = None, all_of: list[dict[str, Any]] | None = None) -> str:
        """A catch event with several definitions, each a dict: ``{"message": "paid", "key":
        "order"}``, ``{"timer": "PT1H"}`` (or ``duration``, ``date``), ``{"signal": "stop"}``;
        at most one of each kind. ``any_of``: it fires on the first to come (the others are
        withdrawn); ``all_of``: once every one has come (BPMN's parallel multiple)."""
        events, parallel = self._events(id, any_of, all_of, True)
        return self._add(mu.MultipleCatch(id, name, events=events, parallel=parallel))

    def boundary(self, id: str, name: str | None = None, *, attached_to: str,
                 any_of: list[dict[str, Any]], interrupting: bool = True) -> str:
        """A boundary event that fires on the first of ``any_of`` (as ``catch`` takes them)."""
        events, _ = self._events(id, any_of, None, False)
        return self._add(mu.MultipleBoundary(id, name, attached_to=attached_to,
                                             interrupting=interrupting, events=events))

    def start_on(self, id: str, name: str | None = None, *, any_of: list[dict[str, Any]],
                 interrupting: bool = True) -> str:
        """The start of an event subprocess that opens on the first of ``any_of`` (as
        ``catch`` takes them); in the process itself, a start event that creates an instance
        on any one of them, each time one comes."""
        events, _ = self._events(id, any_of, None, False)
        return self._add(mu.MultipleStart(id, name, interrupting=interrupting, events=events))

    def escalation_throw(self, id: str, name: str | None = None, *, escalation: str) -> str:
        return self._add(el.EscalationThrow(id, name, escalation=escalation))

    def link_throw(self, id: str, name: str | None = None, *, link: str) -> str:
        """Goes to the link catch named ``link`` in the same scope (a go-to)."""
        return self._add(el.LinkThrow(id, name, link=link))

    def link_catch(self, id: str, name: str | None = None, *, link: str) -> str:
        return self._add(el.LinkCatch(id, name, link=link))

    def subprocess(self, id: str, name: str | None = None, *,
                   for_compensation: bool = False, default: str | None = None) -> Scope:
        """An embedded subprocess. What it returns is its id, and the builder of what is
        inside it: ``with p.subprocess("handle") as sp: sp.start("hs") ...``."""
        self._add(el.SubProcess(id, name, for_compensation=for_compensation or None,
                                default=default))
        return Scope(id, self)

    def adhoc_subprocess(self, id: str, name: str | None = None, *,
                         collection: Condition | None = None,
                         completion: Condition | None = None,
                         cancel_remaining: bool = True, ordering: str = "Parallel",
                         default: str | None = None) -> Scope:
        """An ad-hoc subprocess: its inner elements with no incoming flow are activated by
        ``collection`` (a list of their ids, on entry) or by a person (``Engine.activate``);
        ``completion`` is checked after each inner track ends, and when it holds
        ``cancel_remaining`` cancels what still runs; ``ordering="Sequential"`` runs one
        activated element at a time. Its id, and the builder of its inside."""
        if ordering not in ("Parallel", "Sequential"):
            self.add_problem(f"adhoc_subprocess {id!r}: ordering {ordering!r} is neither "
                             "'Parallel' nor 'Sequential'")
        if not isinstance(cancel_remaining, bool):
            self.add_problem(f"adhoc_subprocess {id!r}: cancel_remaining must be True or False")
        self._add(AdHocSubProcess(
            id, name, default=default,
            collection=self._expr(id, "collection", collection),
            completion=self._expr(id, "completion condition", completion),
            cancel_remaining=cancel_remaining is not False, sequential=ordering == "Sequential"))
        return Scope(id, self)

    def event_subprocess(self, id: str, name: str | None = None) -> Scope:
        """An event subprocess of the scope it is added to, started by its one start event
        (``message_start``, ``timer_start``, ...); its id, and the builder of its inside."""
        self._add(el.EventSubProcess(id, name))
        return Scope(id, self)

    def call_activity(self, id: str, name: str | None = None, *, process: str,
                      version: int | None = None, inputs: list[str] | None = None,
                      outputs: list[str] | None = None, for_compensation: bool = False,
                      default: str | None = None) -> str:
        """Call process ``process`` (its newest deployed version, or ``version``) as a child
        instance: ``inputs`` names the fields it starts with (None: all the data),
        ``outputs`` the fields merged back when it ends (None: all its data)."""
        return self._add(el.CallActivity(
            id, name, process=process, version=version,
            inputs=tuple(inputs) if inputs is not None else None,
            outputs=tuple(outputs) if outputs is not None else None,
            for_compensation=for_compensation or None, default=default))

    def inclusive_gateway(self, id: str, name: str | None = None, *,
                          default: str | None = None) -> str:
        return self._add(el.InclusiveGateway(id, name, default=default))

    def complex_gateway(self, id: str, name: str | None = None, *,
                        activation: Condition | None = None, default: str | None = None
                        ) -> str:
        """A complex gateway: splits like the inclusive one; joins when ``activation`` (a
        condition over the data and ``arrived``, the tokens waiting at it) first holds,
        then takes in the rest of the expected tokens without firing again; with no
        ``activation``, joins like the inclusive one."""
        return self._add(el.ComplexGateway(id, name, default=default,
                                           activation=self._expr(id, "activation", activation)))

    def exclusive_gateway(self, id: str, name: str | None = None, *,
                          default: str | None = None) -> str:
        return self._add(el.ExclusiveGateway(id, name, default=default))

    def parallel_gateway(self, id: str, name: str | None = None) -> str:
        return self._add(el.ParallelGateway(id, name))

    def event_gateway(self, id: str, name: str | None = None, *, instantiate: bool = False,
                      parallel: bool = False) -> str:
        """The first of its arms (catch events or receive tasks after it) to fire wins.
        ``instantiate=True``: it starts the process (no incoming flow), and the first arm's
        event creates an instance that goes on by that arm; ``parallel=True`` too: each
        other arm then waits in that instance for its own event."""
        return self._add(el.EventGateway(id, name, instantiate=True if instantiate else None,
                                         parallel=True if parallel else None))

    def timer_boundary(self, id: str, name: str | None = None, *, attached_to: str,
                       duration: Any = None, date: Any = None, cycle: Any = None,
                       interrupting: bool = True) -> str:
        return self._add(el.TimerBoundary(id, name, attached_to=attached_to,
                                          interrupting=interrupting,
                                          timer=self._timer(id, duration, date, cycle)))

    def message_boundary(self, id: str, name: str | None = None, *, attached_to: str,
                         message: str, key: Condition | None = None,
                         interrupting: bool = True) -> str:
        return self._add(el.MessageBoundary(id, name, attached_to=attached_to,
                                            interrupting=interrupting, message=message,
                                            key=self._expr(id, "key", key)))

    def signal_boundary(self, id: str, name: str | None = None, *, attached_to: str,
                        signal: str, interrupting: bool = True) -> str:
        return self._add(el.SignalBoundary(id, name, attached_to=attached_to,
                                           interrupting=interrupting, signal=signal))

    def error_boundary(self, id: str, name: str | None = None, *, attached_to: str,
                       error: str | None = None) -> str:
        return self._add(el.ErrorBoundary(id, name, attached_to=attached_to, error=error))

    def escalation_boundary(self, id: str, name: str | None = None, *, attached_to: str,
                            escalation: str | None = None, interrupting: bool = True) -> str:
        return self._add(el.EscalationBoundary(id, name, attached_to=attached_to,
                                               interrupting=interrupting,
                                               escalation=escalation))

    def conditional_boundary(self, id: str, name: str | None = None, *, attached_to: str,
                             condition: Condition, interrupting: bool = True) -> str:
        return self._add(el.ConditionalBoundary(
            id, name, attached_to=attached_to, interrupting=interrupting,
            condition=self._expr(id, "condition", condition)))

    def unsupported(self, id: str, name: str | None = None, *, tag: str, reason: str,
                    activity: bool = False, attached_to: str | None = None,
                    interrupting: bool = True, definition: str = "") -> str:
        """A placeholder for an element the engine cannot run yet (read from a file): it keeps
        the flows to and from it, and ``validate()`` refuses it naming ``tag`` and ``reason``.
        With ``attached_to`` it is a boundary event of that activity; ``definition`` names an
        event's definition (``compensate``), written back with it."""
        if attached_to is not None:
            return self._add(UnsupportedBoundary(id, name, attached_to=attached_to,
                                                    interrupting=interrupting, tag=tag,
                                                    reason=reason, definition=definition))
        return self._add(Unsupported(id, name, tag=tag, reason=reason, activity=activity,
                                        definition=definition))

class Scope(str, Builder):
    """A subprocess's id, and the builder of what is inside it. Elements added through it are
    ``within`` it; flows and problems go to the process. A context manager for reading."""

    _outer: Builder  # the builder it was made by: the process, or the scope around it

    def __new__(cls, id: str, outer: Builder) -> Scope:
        scope = super().__new__(cls, id)
        scope._outer = outer
        return scope

    def _add(self, element: el.Element) -> str:
        return self._outer._add(dataclasses.replace(element, within=str(self))
                                if element.within is None else element)

    def add_problem(self, problem: str) -> None:
        self._outer.add_problem(problem)

    def flow(self, *ids: str, condition: Condition | None = None,
             id: str | None = None) -> list[str]:
        return self._outer.flow(*ids, condition=condition, id=id)

    def multi_instance(self, node: str, **options: Any) -> str:
        return self._outer.multi_instance(node, **options)

    def decide(self, gateway: str, weights: dict[str, float] | None = None) -> str:
        return self._outer.decide(gateway, weights)

    def loop(self, node: str, **options: Any) -> str:
        return self._outer.loop(node, **options)

    def for_compensation(self, node: str) -> str:
        return self._outer.for_compensation(node)

    def default_flow(self, node: str, target: str) -> str:
        return self._outer.default_flow(node, target)

    def __enter__(self) -> Scope:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None
