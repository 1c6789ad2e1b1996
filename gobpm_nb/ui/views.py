"""Widgets bound to a live engine: a lineage view, a process view and a dashboard.

``lineage_view(engine, iid)``, ``process_view(engine, iid)`` and ``dashboard(engine)`` (also
reachable as ``inst.lineage()``, ``inst.process_view()`` and ``eng.dashboard()``) return
anywidget objects whose synced traits are rebuilt from projections
(:mod:`gobpm_nb.observe.projections`), DOT (:mod:`gobpm_nb.render.dot`) and, for the process
in BPMN notation, the diagram's document and the marks drawn on it
(:mod:`gobpm_nb.ui.process`). A widget never reaches into the engine: it reads the public
API, and the dashboard's controls call the public API — the same calls a user types in a
cell.

How updates flow (the subscription, coalesced previews, exact flushes after each command
and each cell) is in :mod:`gobpm_nb.ui.live`.

Everything is shown as text: names, ids and data go through the DOT quoting of
:mod:`gobpm_nb.render.dot` or lxml's XML escaping, and the front end writes only
``textContent`` (bpmn.io's viewer too draws labels as SVG text).

"""


from __future__ import annotations

import asyncio
import base64
import math
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..observe.fact_pages import FactQuery, fact_query, matching, needs_log
from ..observe.projections import (
    FACT_TAIL,
    dashboard_state,
    instance_ids,
    lineage,
)
from ..render.dot import captioned, png
from ..render.lineage import lineage_dot, lineage_legend
from .deciding import DecisionCommands
from .live import INTERVAL, _after_cell, _Live, flush_all
from .process import Drawings, panel, process_picture
from .saving import MARK
from .status import (
    complete_line,
    idle_line,
    play_line,
    publish_notice,
    read_horizon,
    run_line,
    step_line,
)
from .timeline import TimelineCommands, timeline_state
from .widgets import Command, DashboardWidget, GraphWidget

if TYPE_CHECKING:
    from ..api import Engine
    from ..instance import Instance

#: Wall seconds between two steps of play.
TICK = 0.1

__all__ = ["INTERVAL", "TICK", "Dashboard", "LineageView", "ProcessView", "_after_cell",
           "dashboard", "dashboard_traits", "flush_all", "lineage_view", "process_view",
           "with_png"]


def _iid(instance: Instance | str) -> str:
    """An instance id from an id or an ``Instance`` handle."""
    return instance if isinstance(instance, str) else str(instance.id)


class _InstanceGraph(_Live, GraphWidget):
    """A graph of one instance: its repr names the instance and the moment shown, its static
    fallback is a PNG.

    Frozen by default: it shows the engine as it was when the view was made (the moment its
    cell ran) and stays there; ``live=True`` (or ``follow()``, or the header's "follow
    live") follows the engine, ``freeze()`` (or "freeze here") stops where it stands."""

    _iid: str
    _summary: str

    def _start(self, engine: Engine, iid: str, what: str, live: bool, **bind: Any) -> None:
        self._iid = iid
        self._summary = ""
        where = engine.branched_at
        self.title = f"{what} of {iid}" if where is None else \
            f"{what} of {iid} · branch from fact {where}"
        self._bind(engine, live=live, **bind)

    def _repr_fields(self) -> list[str]:
        fields = [repr(self._iid), self._summary, f"moment={self.moment!r}"]
        where = self._engine.branched_at
        return fields if where is None else [*fields, f"branch_from={where}"]

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget, its text and a PNG whose label says the moment it shows."""
        moment = self.moment if not self.following else \
            f"live view, shown {self._moment_of_engine()}"
        where = self._engine.branched_at
        caption = moment if where is None else f"branch from fact {where} · {moment}"
        bundle = with_png(super()._repr_mimebundle_(**kwargs), captioned(self.dot, caption))
        return marked(bundle, frozen=not self.following)

    def close(self) -> None:
        self._detach()
        super().close()


class LineageView(_InstanceGraph):
    """Every track of one instance as a graph of parent links (frozen unless ``live``)."""

    def __init__(self, engine: Engine, instance: Instance | str, live: bool = False) -> None:
        iid = _iid(instance)
        engine.instance(iid)  # an unknown id fails here, with the engine's message
        super().__init__(legend=lineage_legend())
        self._start(engine, iid, "lineage", live)

    def _update(self) -> None:
        view = lineage(self._engine, self._iid)
        self.dot = lineage_dot(view)
        self._summary = f"tracks={len(view.tracks)}, state={view.state!r}, " \
                        f"residency={view.residency!r}"

    def _failed(self, exc: Exception) -> None:
        self.title = f"lineage of {self._iid}: cannot read it ({type(exc).__name__}: {exc})"



class ProcessView(_InstanceGraph):
    """The process of one instance in BPMN notation (its file's diagram, or the exporter's
    layout) with tokens, armed holds, forks and the path taken on it; in Graphviz where no
    diagram can be had (frozen unless ``live``)."""

    def __init__(self, engine: Engine, instance: Instance | str, live: bool = False) -> None:
        iid = _iid(instance)
        engine.instance(iid)
        super().__init__()
        self._drawings = Drawings()
        self._start(engine, iid, "process view", live, tracked=iid)

    def _update(self) -> None:
        picture = process_picture(self._engine, self._iid, self._track(self._iid),
                                  self._drawings)
        with self.hold_sync():
            self.dot, self.bpmn, self.marks = picture.dot, picture.bpmn, picture.marks
            self.legend = picture.legend
        view = picture.view
        self._summary = f"process={view.process!r}, tokens={len(view.tokens)}, " \
                        f"holds={len(view.holds)}"

    def _failed(self, exc: Exception) -> None:
        self.title = f"process view of {self._iid}: cannot read it " \
                     f"({type(exc).__name__}: {exc})"



class Dashboard(TimelineCommands, DecisionCommands, _Live, DashboardWidget):
    """Controls and live state of one engine; every control is a public API call.

    It follows the engine (its header says "live"). "freeze here" (or ``freeze()``, or
    ``board.live = False``) stops it at the fact and clock the engine stands at, as the
    standalone views freeze; "follow live" (or ``follow()``) shows the engine as it is now
    and follows it again. A frozen dashboard is a picture of one moment, so its controls
    would act on an engine it no longer shows: the front end disables them (the last-step
    line says "frozen at fact N — follow live to use the controls"), and a command that
    reaches Python all the same is refused (the ``error`` trait says why; nothing changes),
    as is choosing another instance. Only "pause" still runs: freezing pauses a play first.
    """

    def __init__(self, engine: Engine) -> None:
        super().__init__()
        self._ids: list[str] = []
        self._known: set[str] = set()
        self._syncing = False
        self._speed = 3600.0
        self._play_task: asyncio.Task[None] | None = None
        self._played: tuple[Any, int] = (None, 0)  # a play's start clock and its events
        self._query = FactQuery()
        for kind, fn in (("step", self._step), ("run", self._run), ("advance", self._advance),
                         ("play", self._play), ("pause", self._pause),
                         ("publish", self._publish), ("complete", self._complete),
                         ("decide", self._decide), ("activate", self._activate),
                         ("select", self._select), ("facts", self._facts),
                         ("rewind", self._rewind), ("replay", self._replay),
                         ("branch", self._branch)):
            self.on_command(kind, self._then_refresh(fn))
        self.observe(self._on_selected, names="selected")
        self._drawings = Drawings()
        self._bind(engine, tail=FACT_TAIL)

    # -- building the traits --------------------------------------------------------------
    def _update(self) -> None:
        eng = self._engine
        stats = eng.stats()
        total = sum(stats["instances"].values())
        if total != len(self._ids):  # instances are never removed: a new count, new ids
            self._ids = instance_ids(eng)
            self._known = set(self._ids)
        query = self._query
        if needs_log(query):  # a filter or an older page: the whole kept log
            facts, kept = eng.facts, None
        else:  # the newest page: the tail this widget keeps, and the log's length
            keep = eng.keep_facts
            facts, kept = list(self._tail), stats["facts"] if keep is None \
                else min(stats["facts"], keep)
        state = dashboard_state(eng, self.selected, facts=facts, stats=stats, ids=self._ids,
                                known=self._known, query=query, kept=kept,
                                flow_names=self._flow_names)
        lineage_text, picture = "", None
        if state.selected:
            lineage_text = lineage_dot(lineage(eng, state.selected))
            picture = process_picture(eng, state.selected, self._track(state.selected),
                                      self._drawings)
        self._syncing = True
        try:
            with self.hold_sync():
                self.clock = state.clock
                self.counters = state.counters
                self.tasks = state.tasks
                self.holds = state.holds
                self.decisions = state.decisions
                self.facts = state.facts
                self.fact_page = state.fact_page
                self.instances = state.instances
                self.instance_rows = state.instance_rows
                self.selected = state.selected
                self.lineage_dot = lineage_text
                self.process_dot, self.process_bpmn, self.process_marks = panel(picture)
                self.timeline = timeline_state(eng)
        finally:
            self._syncing = False

    def _failed(self, exc: Exception) -> None:
        self.error = f"cannot read the engine: {type(exc).__name__}: {exc}"

    def _flow_names(self, definition: Any) -> Mapping[str, str]:
        drawn = self._drawings.of(definition)
        return drawn.names if drawn is not None else {}

    def _on_selected(self, change: Any) -> None:
        if self._syncing or self._closed:
            return
        if self.following:
            self.refresh()
            return
        self._syncing = True  # frozen: the picture keeps its instance
        try:
            self.selected = change["old"]
        finally:
            self._syncing = False
        self.error = self._frozen_notice()

    # -- freezing: a frozen picture takes no command ----------------------------------------
    def freeze(self) -> None:
        """Stop at the engine's fact and clock (a play running is paused first: it would
        move an engine the picture no longer follows)."""
        self._pause({"kind": "pause"})
        super().freeze()

    def handle_command(self, message: object) -> None:
        """Dispatch one command; while frozen, refuse all but "pause" (``error`` says so)."""
        kind = message.get("kind") if isinstance(message, Mapping) else None
        if self.following or self._closed or kind == "pause":
            super().handle_command(message)
        else:
            self.error = self._frozen_notice()

    def _frozen_notice(self) -> str:
        return f"frozen {self.moment} — follow live to use the controls"

    # -- commands: public engine API only ---------------------------------------------------
    def _then_refresh(self, fn: Callable[[Command], object]) -> Callable[[Command], object]:
        def handler(command: Command) -> object:
            try:
                done = fn(command)
                if command.get("kind") != "publish":  # the notice is of the last command only
                    self.publish_notice = {}
                return done
            finally:
                self.refresh()

        return handler

    def _step(self, _command: Command) -> None:
        before = self._engine.now
        event = self._engine.step()
        self.last_step = step_line(event, before, None if event else self._engine.stats())

    def _run(self, command: Command) -> None:
        """Run to the horizon the user gave: the next quiet point when none (everything due
        now; when nothing is, the next deadline and everything due then), ``end`` (until
        nothing is scheduled), an ISO duration, or a date-time."""
        eng = self._engine
        horizon = read_horizon(command.get("horizon"))
        before = eng.now
        if horizon.kind == "end":
            what, count = "Run to the end", eng.run()
        elif horizon.kind == "for":
            what, count = f"Run for {horizon.text}", eng.advance(horizon.text)
        elif horizon.kind == "until":
            what, count = f"Run until {horizon.text}", eng.run(until=horizon.text)
        else:
            what, count = "Run to the next quiet point", eng.run(until=before)
            if count == 0:
                if eng.step() is None:
                    self.last_step = f"Run: {idle_line(eng.stats())}"
                    return
                count = 1 + eng.run(until=eng.now)
        self.last_step = run_line(what, count, before, eng.now)

    def _advance(self, command: Command) -> None:
        duration = command.get("duration")
        if not isinstance(duration, str) or not duration.strip():
            raise ValueError(f"advance needs an ISO 8601 duration such as 'PT1H', "
                             f"got {duration!r}")
        before = self._engine.now
        count = self._engine.advance(duration.strip())
        self.last_step = run_line(f"Advance {duration.strip()}", count, before,
                                  self._engine.now)

    def _publish(self, command: Command) -> None:
        name = command.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"publish needs a message name, got {name!r}")
        key = command.get("key")
        payload = command.get("payload")
        if payload is not None and not isinstance(payload, dict):
            raise ValueError(f"publish payload must be a JSON object, got {payload!r}")
        key = key if key not in ("", None) else None
        seen = self._tail[-1].seq if self._tail else 0
        self.publish_notice = {}  # a refused message leaves no notice of an earlier one
        reached = self._engine.publish_message(name.strip(), key=key, payload=payload or None)
        self.publish_notice = publish_notice(name.strip(), key, reached,
                                             [f for f in self._tail if f.seq > seen])
        self.last_step = f"Publish: {self.publish_notice['text']}" + \
            ("; it goes on at the next Step or Run" if reached is not None else "")

    def _complete(self, command: Command) -> None:
        task = command.get("task")
        if not isinstance(task, str) or not task:
            raise ValueError(f"complete needs a task id, got {task!r}")
        outputs = command.get("outputs")
        if outputs is not None and not isinstance(outputs, dict):
            raise ValueError(f"task outputs must be a JSON object, got {outputs!r}")
        view = next((t for t in self._engine.tasks() if t.id == task), None)
        self._engine.complete_task(task, outputs or {})
        if view is not None:
            away = self._engine.describe_instance(view.instance).residency == "dehydrated"
            self.last_step = complete_line(view, away)

    def _select(self, command: Command) -> None:
        iid = command.get("instance")
        if not isinstance(iid, str):
            raise ValueError(f"select needs an instance id, got {iid!r}")
        self._engine.instance(iid)  # unknown: the engine's error goes to the error trait

    def _facts(self, command: Command) -> None:
        """Show another page of the fact table, or filter it. A filter that matches no kept
        fact is refused (the table stays as it was)."""
        query = fact_query(command.get("instance"), command.get("fact_kind"),
                           command.get("page"))
        if query.instance or query.kind:
            log = self._engine.facts
            if not matching(log, query):
                raise ValueError(f"no fact {query.describe()} among the {len(log)} facts "
                                 f"the log keeps; the fact table is unchanged")
        self._query = query

    # -- play: virtual time moved from the Jupyter kernel's event loop ----------------------
    def _play(self, command: Command) -> None:
        speed = command.get("speed", self._speed)
        if isinstance(speed, bool) or not isinstance(speed, int | float) or \
                not math.isfinite(speed) or speed <= 0:
            raise ValueError(f"play speed must be a positive number of virtual seconds per "
                             f"wall second, got {speed!r}")
        self._speed = float(speed)
        line = f"Play: virtual time moves {self._speed:g} s per wall second, running every " \
               "event that falls due"
        if self._play_task is not None and not self._play_task.done():
            self.playing, self.last_step = True, line
            return  # already playing: the new speed applies from the next tick
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.playing = False
            raise RuntimeError("play needs a running asyncio event loop (a Jupyter kernel "
                               "has one); call step, run or advance instead") from None
        self.playing, self.last_step = True, line
        self._played = (self._engine.now, 0)
        self._play_task = loop.create_task(self._play_loop())

    def _pause(self, _command: Command) -> None:
        self.playing = False
        task, self._play_task = self._play_task, None
        if task is not None and not task.done():
            task.cancel()
        started, events = self._played
        if started is not None and not self._closed:
            self._played = (None, 0)
            self.last_step = play_line(events, started, self._engine.now)

    async def _play_loop(self) -> None:
        try:
            while self.playing and not self._closed:
                await asyncio.sleep(TICK)
                if not self.playing:
                    break
                try:
                    count = self._engine.advance(timedelta(seconds=self._speed * TICK))
                    started, events = self._played
                    self._played = (started, events + count)
                except Exception as exc:
                    self.error = f"play stopped: {type(exc).__name__}: {exc}"
                    break
                finally:
                    self.refresh()
        finally:
            self.playing = False

    # -- display ----------------------------------------------------------------------------
    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return marked(with_png(super()._repr_mimebundle_(**kwargs), self.lineage_dot),
                      frozen=not self.following)

    def close(self) -> None:
        self._pause({"kind": "pause"})
        self._detach()
        if self.branch is not None:
            self.branch.close()
        super().close()


def with_png(bundle: Any, dot: str) -> Any:
    """Add the static drawing of ``dot`` (a PNG, :func:`gobpm_nb.render.dot.png`) to a
    display bundle (``data`` or ``(data, metadata)``) where the ``dot`` program exists.

    A notebook shows it wherever the widget cannot be drawn and the front end will not run
    the widget: in a notebook that is not trusted JupyterLab shows a PNG (an SVG it does
    not), and so does Notebook 7 (``tests/test_browser.py`` and
    ``tests/test_browser_notebook7.py``; VS Code is not checked). It sits beside the
    ``text/plain`` repr nbval compares."""
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    if isinstance(data, dict) and dot:
        try:
            image = png(dot)
        except Exception:  # a static fallback must never break display
            image = None
        if image:
            data["image/png"] = base64.b64encode(image).decode("ascii")
    return bundle


def marked(bundle: Any, frozen: bool) -> Any:
    """A view's display bundle, marked as this package's (saved as its drawing where the
    notebook saves no widget state: ``saving.py``) and as frozen or live."""
    data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
    return data, {**(meta or {}), MARK: {"frozen": frozen}}


# -- the public constructors ------------------------------------------------------------------
def lineage_view(engine: Engine, instance: Instance | str, live: bool = False) -> LineageView:
    """The lineage graph of one instance (an id or an ``Instance``) as it is now, frozen
    there; ``live=True``: following the engine."""
    return LineageView(engine, instance, live)


def process_view(engine: Engine, instance: Instance | str, live: bool = False) -> ProcessView:
    """The process view of one instance (tokens, armed holds, path taken) as it is now,
    frozen there; ``live=True``: following the engine."""
    return ProcessView(engine, instance, live)


def dashboard(engine: Engine) -> Dashboard:
    """A live dashboard of the engine, with controls that call its public API."""
    return Dashboard(engine)


def dashboard_traits(engine: Engine, selected: str = "", query: FactQuery | None = None
                     ) -> dict[str, Any]:
    """What a dashboard showing ``selected`` (and ``query`` in its fact table: by default
    the newest facts) must hold, built from scratch (for tests and for comparing a live
    widget with a fresh projection)."""
    drawings = Drawings()
    state = dashboard_state(engine, selected, query=query,
                            flow_names=lambda d: getattr(drawings.of(d), "names", {}))
    lineage_text, picture = "", None
    if state.selected:
        lineage_text = lineage_dot(lineage(engine, state.selected))
        picture = process_picture(engine, state.selected, drawings=drawings)
    process_text, process_bpmn, process_marks = panel(picture)
    return {"clock": state.clock, "counters": state.counters, "tasks": state.tasks,
            "holds": state.holds, "decisions": state.decisions, "facts": state.facts,
            "fact_page": state.fact_page, "instances": state.instances,
            "instance_rows": state.instance_rows, "selected": state.selected,
            "lineage_dot": lineage_text,
            "process_dot": process_text, "process_bpmn": process_bpmn,
            "process_marks": process_marks}
