"""anywidget classes for the notebook views: a graph (lineage or process) and the dashboard.

Both load the same small ES module (``gobpm_nb/static/widget.js``, built from ``widgets/``),
which draws them with the shared module every widget of the kernel refers to (the views,
Graphviz and the BPMN viewer, sent once: :mod:`gobpm_nb.ui.shared`), and pick their view
with the ``view`` trait. The traits below are the whole contract with the front end:
``python -m gobpm_nb.ui.contract`` writes them, with the words of each class docstring's
"Traits" section, into ``widgets/src/contract.js``, and the front-end build refuses a stale
copy.

The dashboard sends commands as custom messages ``{"kind": ..., ...}``. They are dispatched
by ``kind`` to handlers registered with :meth:`DashboardWidget.on_command`; a missing handler
or a handler that raises sets the ``error`` trait (shown in red) and never raises into the
comm.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Mapping
from typing import Any

import anywidget
import traitlets as t
from ipywidgets import widget_serialization

from .shared import SharedModule, shared_module

_ESM = pathlib.Path(__file__).parent.parent / "static" / "widget.js"

Command = dict[str, Any]
CommandHandler = Callable[[Command], object]

#: The kinds the dashboard front end sends, with the fields each carries.
COMMAND_FIELDS: dict[str, tuple[str, ...]] = {
    "step": (),
    "run": ("horizon",),
    "advance": ("duration",),
    "play": ("speed",),
    "pause": (),
    "publish": ("name", "key", "payload"),
    "complete": ("task", "outputs"),
    "decide": ("instance", "flow", "track"),
    "activate": ("instance", "adhoc", "element", "track"),
    "select": ("instance",),
    "facts": ("instance", "fact_kind", "page"),
    "rewind": ("to",),
    "replay": (),
    "branch": (),
}

_FIXED = frozenset({"view"})


class _Widget(anywidget.AnyWidget):
    """Shared base: the loader module and the shared module it loads, strict keyword
    arguments, a deterministic repr.

    Traits (all synced):
        _shared:        the kernel's :class:`SharedModule` (the views, Graphviz, the BPMN
                        viewer), sent as ``"IPY_MODEL_<id>"``.
        _shared_digest: str; what the imported shared module is kept under on
                        ``globalThis``.
    """

    _esm = _ESM
    _shared = t.Instance(SharedModule, allow_none=True).tag(sync=True, **widget_serialization)
    _shared_digest = t.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        allowed = {
            name
            for name in self.class_trait_names()
            if not name.startswith("_") and name not in _FIXED
        }
        unknown = sorted(name for name in kwargs if name not in allowed)
        if unknown:
            names = ", ".join(repr(name) for name in unknown)
            raise TypeError(f"{type(self).__name__}() got unexpected keyword argument(s): {names}")
        shared = shared_module()
        super().__init__(_shared=shared, _shared_digest=shared.digest, **kwargs)

    def _repr_fields(self) -> list[str]:
        raise NotImplementedError

    def __repr__(self) -> str:
        """A fixed text form (nbval compares ``text/plain``): no ids, no addresses."""
        return f"{type(self).__name__}({', '.join(self._repr_fields())})"


class GraphWidget(_Widget):
    """One graph: a BPMN diagram drawn by bpmn.io's viewer with the engine's state on it, or
    else DOT drawn by WebAssembly Graphviz in the browser, animated on change.

    Traits (all synced):
        view:   ``"graph"``, fixed.
        title:  str, default ``""``; shown above the graph as text.
        dot:    str, default ``""``; a complete DOT document (quoted by the Python builder);
                drawn when ``bpmn`` is empty.
        bpmn:   str, default ``""``; a BPMN 2.0 document with its diagram (BPMN DI).
        marks:  dict, default ``{}``; what to draw on the diagram's shapes
                (:func:`gobpm_nb.render.marks.process_marks`).
        legend: list of ``[label, colour]`` pairs, default ``[]``; drawn as swatches below.
        moment: str, default ``""``; which moment the graph shows, in the header beside the
                title: ``"live"`` (it follows its engine) or ``"at fact 42 · 2026-01-01
                05:00"`` (frozen there); ``""`` shows no header line.
        live:   bool, default ``False``; two-way: True while the graph follows its engine.
                The header's "follow live" / "freeze here" button sets it.
    """

    view = t.Unicode("graph", read_only=True).tag(sync=True)
    title = t.Unicode("").tag(sync=True)
    dot = t.Unicode("").tag(sync=True)
    bpmn = t.Unicode("").tag(sync=True)
    marks = t.Dict(default_value={}).tag(sync=True)
    legend = t.List(t.List(t.Unicode(), minlen=2, maxlen=2), default_value=[]).tag(sync=True)
    moment = t.Unicode("").tag(sync=True)
    live = t.Bool(False).tag(sync=True)

    def _repr_fields(self) -> list[str]:
        return [f"title={self.title!r}"]


class DashboardWidget(_Widget):
    """Controls and live state of an engine: clock, counters, forms, holders, facts, graphs.

    Traits (all synced):
        view:        ``"dashboard"``, fixed.
        clock:       str, default ``""``; the virtual clock as text.
        counters:    dict str -> int, default ``{}``; shown as labelled numbers, in order.
        tasks:       list of ``{id, instance, node, assignee}``, default ``[]``.
        holds:       list of ``{instance, track, kind, wait_kind, node, deadline, keys}``;
                     ``track`` is ``"process"`` for a hold armed on the process's own scope
                     (the start of one of its event subprocesses).
        decisions:   dict, default ``{}``; the decisions waiting for a person: ``total`` (in
                     the whole engine) and ``rows``, those of the selected instance, each
                     ``{instance, track, gateway, label, several, flows: [{flow, target,
                     label}]}``. A flow's button (or a click on the flow in the diagram)
                     sends the ``decide`` command ``{instance, flow, track}``; where
                     ``several`` (an inclusive gateway) it toggles the flow, and a "take"
                     button sends the flows toggled on, ``flow`` a list of their ids.
                     ``activations``: the selected instance's ad-hoc subprocesses waiting
                     for a person, each ``{instance, track, adhoc, label, elements:
                     [{element, label}]}``; an element's button sends ``activate``
                     ``{instance, adhoc, element, track}``.
        facts:       list of ``{seq, at, kind, instance, track, node, details}``, oldest first:
                     one page of the fact table (the browser never holds the whole log).
        fact_page:   dict, default ``{}``; what the fact table says about that page: the query
                     in force (``instance``, ``kind``: ``""`` for any; ``page``: 0 is the
                     oldest, None the newest facts), ``start``, ``size``, ``total`` (kept facts
                     that match), ``pages``, ``older`` / ``newer`` (the page to ask for next),
                     ``kept``, ``emitted``, ``kinds`` (the kind filter's choices). The browser
                     asks for another page with the ``facts`` command.
        last_step:   str, default ``""``; what the last Step, Run or Advance did, in words.
        publish_notice: dict, default ``{}``; ``{text, level}`` about the last published
                     message (``level`` ``"warning"`` when it reached nobody).
        instances:   list of instance ids, default ``[]``.
        instance_rows: list of ``{id, process, state, residency, label}``, default ``[]``;
                     the instance picker's label (and filter) for each of ``instances``.
        selected:    str, default ``""``; two-way, set by the instance select.
        lineage_dot: str, default ``""``; DOT of the selected instance's lineage.
        process_dot: str, default ``""``; DOT of its process view (drawn when
                     ``process_bpmn`` is empty).
        process_bpmn: str, default ``""``; its process as BPMN XML with a diagram.
        process_marks: dict, default ``{}``; the engine's state on that diagram.
        playing:     bool, default ``False``; set it while a play loop runs so the Play/Pause
                     button shows the truth (the button also flips itself when clicked).
        timeline:    dict, default ``{}``; the history slider: ``start``, ``end`` (the fact
                     numbers the history covers), ``position`` (the fact the engine stands
                     at), ``at`` (its clock), ``pending`` (facts a replay runs again),
                     ``movable`` (False: no command history; ``note`` says why).
        branch:      a ``DashboardWidget`` or None, default None; the dashboard of the
                     last branch made here ("branch here"), drawn below this one.
        moment:      str, default ``""``; which moment the dashboard shows, in its header
                     beside the clock: ``"live"`` (it follows its engine) or ``"at fact 42 ·
                     2026-01-01 05:00"`` (frozen there); ``""`` shows no header line.
        live:        bool, default ``False``; two-way: True while the dashboard follows its
                     engine. The header's "freeze here" / "follow live" button sets it. While
                     the header says frozen (``moment`` set, ``live`` False) the front end
                     disables every control that sends a command and says so in the
                     last-step line; the tabs and the folding tables still work.
        error:       str, default ``""``; shown in red when non-empty; the user can dismiss it.
    """

    view = t.Unicode("dashboard", read_only=True).tag(sync=True)
    clock = t.Unicode("").tag(sync=True)
    counters = t.Dict(value_trait=t.Int(), key_trait=t.Unicode(), default_value={}).tag(sync=True)
    tasks = t.List(t.Dict(), default_value=[]).tag(sync=True)
    holds = t.List(t.Dict(), default_value=[]).tag(sync=True)
    decisions = t.Dict(default_value={}).tag(sync=True)
    facts = t.List(t.Dict(), default_value=[]).tag(sync=True)
    fact_page = t.Dict(default_value={}).tag(sync=True)
    last_step = t.Unicode("").tag(sync=True)
    publish_notice = t.Dict(default_value={}).tag(sync=True)
    instances = t.List(t.Unicode(), default_value=[]).tag(sync=True)
    instance_rows = t.List(t.Dict(), default_value=[]).tag(sync=True)
    selected = t.Unicode("").tag(sync=True)
    lineage_dot = t.Unicode("").tag(sync=True)
    process_dot = t.Unicode("").tag(sync=True)
    process_bpmn = t.Unicode("").tag(sync=True)
    process_marks = t.Dict(default_value={}).tag(sync=True)
    playing = t.Bool(False).tag(sync=True)
    timeline = t.Dict(default_value={}).tag(sync=True)
    branch = t.Instance("gobpm_nb.ui.widgets.DashboardWidget", allow_none=True
                        ).tag(sync=True, **widget_serialization)
    moment = t.Unicode("").tag(sync=True)
    live = t.Bool(False).tag(sync=True)
    error = t.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._handlers: dict[str, CommandHandler] = {}
        self.on_msg(self._on_custom_msg)

    def on_command(self, kind: str, fn: CommandHandler) -> CommandHandler:
        """Route front-end messages of this ``kind`` to ``fn(message)``; replaces any earlier one.

        ``fn`` gets the whole message dict (``kind`` included), e.g. ``{"kind": "advance",
        "duration": "PT1H"}``. ``error`` is cleared before ``fn`` runs, so ``fn`` may set it.
        Returns ``fn``.
        """
        if not isinstance(kind, str) or not kind:
            raise TypeError(f"command kind must be a non-empty str, got {kind!r}")
        if not callable(fn):
            raise TypeError(f"handler for command {kind!r} must be callable, got {fn!r}")
        self._handlers[kind] = fn
        return fn

    @property
    def commands(self) -> list[str]:
        """The kinds that have a handler, sorted."""
        return sorted(self._handlers)

    def handle_command(self, message: object) -> None:
        """Dispatch one command by its ``kind``; failures go to the ``error`` trait, never raise."""
        if not isinstance(message, Mapping) or not isinstance(message.get("kind"), str):
            self.error = f"malformed command (no 'kind'): {_short(message)}"
            return
        command = dict(message)
        kind = command["kind"]
        if kind == "select" and isinstance(command.get("instance"), str):
            self.selected = command["instance"]  # already synced; idempotent
        handler = self._handlers.get(kind)
        if handler is None:
            if kind == "select":
                return  # choosing an instance needs no handler: the trait carries it
            known = ", ".join(self.commands) or "none registered"
            self.error = f"unknown command kind {kind!r} (handled: {known})"
            return
        self.error = ""
        try:
            handler(command)
        except Exception as exc:  # the comm must never see an exception
            self.error = f"command {kind!r} failed: {type(exc).__name__}: {exc}"

    def _on_custom_msg(self, _widget: object, content: object, _buffers: object) -> None:
        self.handle_command(content)

    def _repr_fields(self) -> list[str]:
        fields = [
            f"clock={self.clock!r}",
            f"instances={len(self.instances)}",
            f"tasks={len(self.tasks)}",
            f"holds={len(self.holds)}",
            f"facts={self.fact_page.get('kept', len(self.facts))}",
        ]
        if self.moment and not self.live:
            fields.append(f"moment={self.moment!r}")
        if self.last_step:
            fields.append(f"last_step={self.last_step!r}")
        if self.error:
            fields.append(f"error={self.error!r}")
        return fields


class PopulationWidget(_Widget):
    """A population run on its process: the virtual clock, the case counters, each pool's
    busy resources and waiting work, and a heat map of the tokens on the process diagram.

    Traits (all synced):
        view:     ``"population"``, fixed.
        title:    str, default ``""``; the process and the scenario, shown above.
        phase:    str, default ``""``; what the clock's moment is: ``"not run yet"``,
                  ``"running"`` (the dashboard follows the run) or ``"ended"``.
        clock:    str, default ``""``; the virtual clock as text (``Mon 2026-01-05 10:30``).
        counters: dict str -> int, default ``{}``; the case counters, in order.
        pools:    list of ``{pool, size, busy, waiting, open}``, default ``[]``; one row per
                  pool of the scenario: its size (None: unlimited), busy resources, work
                  waiting in its queue, and whether its calendar is open now.
        bpmn:     str, default ``""``; the process as BPMN XML with a diagram.
        marks:    dict, default ``{}``; the heat map on that diagram
                  (:func:`gobpm_nb.render.heat.heat_marks`): each element with tokens has a
                  ``fill`` (its shade) and a ``heat`` badge with the count.
        dot:      str, default ``""``; the same heat map as DOT, drawn when ``bpmn`` is empty.
        legend:   list of ``[label, colour]`` pairs, default ``[]``; the heat map's shades,
                  the first saying what is counted.
    """

    view = t.Unicode("population", read_only=True).tag(sync=True)
    title = t.Unicode("").tag(sync=True)
    phase = t.Unicode("").tag(sync=True)
    clock = t.Unicode("").tag(sync=True)
    counters = t.Dict(value_trait=t.Int(), key_trait=t.Unicode(), default_value={}).tag(sync=True)
    pools = t.List(t.Dict(), default_value=[]).tag(sync=True)
    bpmn = t.Unicode("").tag(sync=True)
    marks = t.Dict(default_value={}).tag(sync=True)
    dot = t.Unicode("").tag(sync=True)
    legend = t.List(t.List(t.Unicode(), minlen=2, maxlen=2), default_value=[]).tag(sync=True)

    def _repr_fields(self) -> list[str]:
        counts = ", ".join(f"{k}={v}" for k, v in self.counters.items())
        return [f"title={self.title!r}", f"phase={self.phase!r}", f"clock={self.clock!r}",
                counts]


def _short(value: object, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
