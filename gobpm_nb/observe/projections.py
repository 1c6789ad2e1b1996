"""Plain-data projections of an engine: lineage, process state, dashboard rows.

Everything here is built from the public engine API only — ``engine.instance(iid)`` and its
``tracks``, ``definition``, ``state``, ``residency`` and ``holds()``; ``engine.holders()``,
``engine.facts``, ``engine.stats()``, ``engine.tasks()``, ``engine.instances()``,
``engine.decisions()`` (:mod:`.choices`) and ``engine.now`` — the same calls a user types
in a cell. Reading never changes residency: a dehydrated instance's tracks come from its
checkpoint, without hydrating it.

The results are tuples of named tuples and plain dicts, ordered by ids or by definition order
(never by hash order), so two runs of the same cells give equal projections. The DOT builder
(``gobpm_nb.render.dot``) and the widgets (``gobpm_nb.ui.views``) read these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from ..vocabulary import ACTIVE, DEHYDRATED, LIVE, RESIDENCIES
from .choices import decisions_state
from .fact_pages import FACT_PAGE, FactQuery, fact_page, when
from .fact_pages import fact_row as fact_row  # re-exported: the rows the widgets show
from .fact_pages import short_details as short_details

#: How a child track came to be (its ``origin``) -> the edge label in the lineage.
EDGE_LABELS = {"fork": "fork", "join": "join", "continuation": "continuation",
               "boundary": "boundary fork", "scope": "scope", "event": "event subprocess",
               "many": "multi-instance", "loop": "loop run",
               "compensation": "compensation"}
#: What began a track that has no parent, other than the process's start (its ``origin``):
#: an event subprocess started on the process's own scope.
ROOT_ORIGINS = {"event": "event subprocess start"}
#: Origins of a track that begins where another track stands (drawn on the process view).
FORK_ORIGINS = ("boundary", "continuation")
#: How a view names the holder of a hold armed on the process's own scope (track ``""``: the
#: start of an event subprocess of the process), where it would name a track.
PROCESS_SCOPE = "process"
#: Element kinds that are scopes: drawn as a frame around the elements ``within`` them.
SCOPE_KINDS = frozenset({"subprocess", "event_subprocess", "transaction", "adhoc_subprocess"})

#: Newest facts a live dashboard keeps at hand: its fact table's newest page, read without
#: copying the log (the table pages through the whole kept log: :mod:`.fact_pages`).
FACT_TAIL = FACT_PAGE
#: Rows of the dashboard's holder table (the counters carry the totals).
HOLD_ROWS = 200
#: Instance ids the dashboard offers (the newest; the selected one is always kept).
INSTANCE_ROWS = 1000


# -- small formatting helpers ------------------------------------------------------------
def holder_name(track: str) -> str:
    """The holder of a hold as a view shows it: its track id, or :data:`PROCESS_SCOPE` for a
    hold armed on the process's own scope (track ``""``)."""
    return track or PROCESS_SCOPE


def track_number(tid: str) -> tuple[int, str]:
    """Sort key of a track id: ``t2`` before ``t10``; anything else after, by text."""
    if tid[:1] == "t" and tid[1:].isdigit():
        return int(tid[1:]), ""
    return 1 << 62, tid


def standing(views: Sequence[Any]) -> set[str]:
    """Ids of the tracks that stand on a node now (the tokens): ready, running or waiting
    ones, and dehydrated ones that have not woken yet. A dehydrated track that woke keeps its
    state as history and its continuation fork (a child of origin ``continuation``) carries
    on; it stands nowhere any more."""
    woke = {p for v in views if v.origin == "continuation" for p in v.parents}
    return {v.id for v in views if v.state in LIVE
            and not (v.state == DEHYDRATED and v.id in woke)}


# -- lineage ------------------------------------------------------------------------------
class TrackRow(NamedTuple):
    """One track: id, the node it stands on (or ended at), that node's label, its state,
    its parents, how it came to be, and whether it stands there now (a token)."""

    id: str
    node: str
    label: str
    state: str
    parents: tuple[str, ...]
    origin: str
    standing: bool


class LineageEdge(NamedTuple):
    """A parent link: ``parent`` -> ``child``, labelled by the child's origin."""

    parent: str
    child: str
    origin: str
    label: str


class Lineage(NamedTuple):
    """Every track of one instance as a graph of parent links."""

    instance: str
    process: str | None
    version: int | None
    state: str
    residency: str
    tracks: tuple[TrackRow, ...]
    edges: tuple[LineageEdge, ...]
    #: The instance whose call activity started this one, or None.
    caller: str | None = None
    #: (track, child instance) of each call activity waiting for its child now.
    calls: tuple[tuple[str, str], ...] = ()


def _label_of(definition: Any, node: str) -> str:
    if definition is None:
        return node
    element = definition.nodes.get(node)
    return str(element.label) if element is not None else node


def lineage(engine: Any, iid: str) -> Lineage:
    """The lineage of instance ``iid``: tracks in id order, edges in (child, parent) order."""
    inst = engine.instance(iid)
    definition = inst.definition
    views = sorted(inst.tracks, key=lambda v: track_number(v.id))
    live = standing(views)
    rows = tuple(TrackRow(v.id, v.node, _label_of(definition, v.node), v.state,
                          tuple(v.parents), v.origin, v.id in live) for v in views)
    edges = tuple(LineageEdge(parent, row.id, row.origin, EDGE_LABELS.get(row.origin, row.origin))
                  for row in rows for parent in row.parents)
    calls = tuple((h.track, h.keys[0]) for h in inst.holds() if h.kind == "call")
    return Lineage(inst.id, inst.process, inst.version, inst.state, inst.residency, rows, edges,
                   inst.parent, calls)


# -- the path taken ---------------------------------------------------------------------
class PathTracker:
    """The nodes one instance has left (``node_left`` facts) and entered (``node_entered``),
    and where its boundary forks and continuations began (``track_state`` facts of a new
    track whose origin is ``boundary`` or ``continuation``: track id -> (node, origin)).

    Built from a log snapshot (``engine.facts``) and then, in a live widget, fed each new
    fact from a subscription, so keeping it current costs nothing per refresh. Fed every
    fact, it equals a fresh tracker over the log for as long as the log keeps its oldest
    facts (``keep_facts=None``, or fewer facts than it keeps); after the log has dropped
    some, the live tracker still remembers what they said.
    """

    __slots__ = ("instance", "left", "entered", "forks")

    def __init__(self, instance: str, facts: Iterable[Any] = ()) -> None:
        self.instance = instance
        self.left: set[str] = set()
        self.entered: set[str] = set()
        self.forks: dict[str, tuple[str, str]] = {}
        for fact in facts:
            if fact.instance == instance:
                self.feed(fact)

    def feed(self, fact: Any) -> None:
        """Take in one fact of this instance."""
        kind = fact.kind
        if kind == "node_left":
            self.left.add(fact.node)
        elif kind == "node_entered":
            self.entered.add(fact.node)
        elif kind == "track_state" and fact.details.get("origin") in FORK_ORIGINS:
            self.forks[fact.track] = (fact.node, fact.details["origin"])


# -- the process view -------------------------------------------------------------------
class ProcessNode(NamedTuple):
    """One element of the definition, as the process view draws it."""

    id: str
    kind: str
    label: str
    detail: str  # what the element waits for or does, e.g. "user · alice", "PT24H"
    attached_to: str | None  # boundaries only
    interrupting: bool | None  # boundaries and the starts of event subprocesses only
    terminate: bool  # terminate end events
    within: str | None = None  # the subprocess (plain or event) it is in; None: the process
    many: str = ""  # multi-instance: "||| ..." parallel, "≡ ..." sequential; a loop "↻ ..."


class ProcessFlow(NamedTuple):
    id: str
    source: str
    target: str
    label: str  # the condition's text, "default", or ""


class Token(NamedTuple):
    """A live track standing on a node."""

    track: str
    node: str
    state: str


class Fork(NamedTuple):
    """A track that began at ``node`` as a boundary fork or a continuation of ``parents``."""

    track: str
    node: str
    origin: str  # boundary | continuation
    parents: tuple[str, ...]


class HoldRow(NamedTuple):
    """An armed hold, with its deadline as ISO text and its keys as strings."""

    instance: str
    track: str
    kind: str
    wait_kind: str
    node: str
    deadline: str | None
    keys: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """The dashboard's row (its ``track``: :func:`holder_name`)."""
        return {"instance": self.instance, "track": holder_name(self.track), "kind": self.kind,
                "wait_kind": self.wait_kind, "node": self.node, "deadline": self.deadline,
                "keys": list(self.keys)}


class ProcessState(NamedTuple):
    """The process graph of one instance with its tokens, armed holds and path taken."""

    instance: str
    process: str | None
    version: int | None
    state: str
    residency: str
    nodes: tuple[ProcessNode, ...]  # definition order
    flows: tuple[ProcessFlow, ...]  # definition order
    tokens: tuple[Token, ...]  # track order
    ended: tuple[Token, ...]  # terminal tracks, track order
    holds: tuple[HoldRow, ...]  # armed order
    path: tuple[str, ...]  # nodes left, definition order
    entered: tuple[str, ...]  # nodes entered, definition order
    forks: tuple[Fork, ...] = ()  # boundary forks and continuations, track order
    decisions: tuple[Any, ...] = ()  # ``engine.decisions(instance)``: a person's choices


def _detail(element: Any) -> str:
    kind = element.kind
    timer = getattr(element, "timer", None)
    if timer is not None:
        return f"{timer.kind} {timer.text}" if timer.kind != "duration" else str(timer.text)
    if kind == "event_gateway" and element.instantiate:
        return "parallel · instantiates" if element.parallel else "instantiates"
    if kind == "user_task":
        return f"user · {element.assignee}" if element.assignee else "user"
    if kind == "service_task":
        return f"service · {element.topic}" if element.topic else "service"
    if kind == "script_task":
        return "script"
    if kind == "call_activity":
        pinned = f" v{element.version}" if element.version is not None else ""
        return f"call · {element.process}{pinned}"
    if kind in ("receive_task", "message_catch", "message_throw", "message_boundary",
                "message_start", "message_end"):
        key = getattr(element, "key", None)
        return f"{element.message} · {key.describe()}" if key is not None else str(element.message)
    if kind in ("signal_catch", "signal_throw", "signal_boundary", "signal_start",
                "signal_end"):
        return str(element.signal)
    if kind in ("conditional_catch", "conditional_boundary", "conditional_start"):
        return element.condition.describe() if element.condition is not None else ""
    if kind in ("error_boundary", "error_start"):
        return str(element.error) if element.error else "any error"
    if kind in ("escalation_boundary", "escalation_start", "escalation_throw"):
        return str(element.escalation) if element.escalation else "any escalation"
    if kind in ("link_throw", "link_catch"):
        return f"link {element.link}"
    if kind == "compensation_boundary":
        return f"handler {element.handler}"
    if kind in ("compensation_throw", "compensation_end"):
        return f"compensate {element.ref}" if element.ref else "compensate all"
    if kind in ("multiple_throw", "multiple_end"):
        return ", ".join(f"{d.kind} {d.message or d.signal or d.escalation}"
                         for d in element.events)
    if kind == "end" and element.error:
        return f"error {element.error}"
    if kind == "end" and getattr(element, "escalation", None):
        return f"escalation {element.escalation}"
    return ""


def _many(element: Any) -> str:
    """An activity's multi-instance marker and what it runs over, or its standard loop's
    marker and condition ("" for none)."""
    many = getattr(element, "many", None)
    if getattr(element, "for_compensation", None):  # BPMN's compensation marker
        return " ".join(m for m in ("◀◀ for compensation", _loop(element.loop)) if m)
    if many is None:
        return _loop(getattr(element, "loop", None))
    marker = "≡" if many.sequential else "|||"
    if many.collection is not None:
        over = many.collection.describe()
        return f"{marker} {many.element} in {over}" if many.element else f"{marker} {over}"
    if many.cardinality is not None:
        return f"{marker} × {many.cardinality.describe()}"
    return marker


def _loop(loop: Any) -> str:
    """A standard loop's marker: ``↻ while <condition>``, its cap (``≤ 5``); "" for none."""
    if loop is None:
        return ""
    parts = ["↻"]
    if loop.condition is not None:
        parts.append(f"while {loop.condition.describe()}")
    if loop.maximum is not None:
        parts.append(f"≤ {loop.maximum}")
    return " ".join(parts)


def hold_row(view: Any) -> HoldRow:
    return HoldRow(view.instance, view.track, view.kind, view.wait_kind, view.node,
                   when(view.deadline), tuple(str(k) for k in view.keys))


def definition_graph(definition: Any) -> tuple[tuple[ProcessNode, ...], tuple[ProcessFlow, ...]]:
    """The nodes and flows of a definition, in definition order."""
    nodes = []
    for element in definition.nodes.values():
        boundary = hasattr(element, "attached_to")
        within = getattr(element, "within", None)
        nodes.append(ProcessNode(
            str(element.id), str(element.kind), str(element.label), _detail(element),
            str(element.attached_to) if boundary else None,
            bool(element.interrupting) if hasattr(element, "interrupting") else None,
            bool(getattr(element, "terminate", False)),
            None if within is None else str(within), _many(element)))
    defaults = {}
    for element in definition.nodes.values():
        if getattr(element, "default", None):
            defaults[element.id] = element.default
    flows = []
    for f in definition.flows:
        if f.condition is not None:
            label = f.condition.describe()
        elif defaults.get(f.source) == f.target:
            label = "default"
        else:
            label = ""
        flows.append(ProcessFlow(str(f.id), str(f.source), str(f.target), label))
    return tuple(nodes), tuple(flows)


def process_state(engine: Any, iid: str, path: PathTracker | None = None) -> ProcessState:
    """The process view of instance ``iid``. ``path`` (a live tracker of this instance)
    saves reading ``engine.facts``; without it the log is read here."""
    inst = engine.instance(iid)
    definition = inst.definition
    if path is None or path.instance != iid:
        path = PathTracker(iid, engine.facts)
    views = sorted(inst.tracks, key=lambda v: track_number(v.id))
    live = standing(views)
    tokens = tuple(Token(v.id, v.node, v.state) for v in views if v.id in live)
    ended = tuple(Token(v.id, v.node, v.state) for v in views if v.id not in live)
    holds = tuple(hold_row(h) for h in inst.holds())
    if definition is None:
        nodes: tuple[ProcessNode, ...] = ()
        flows: tuple[ProcessFlow, ...] = ()
        order: list[str] = sorted(path.left | path.entered)
    else:
        nodes, flows = definition_graph(definition)
        order = [n.id for n in nodes]
    forks = tuple(Fork(v.id, path.forks[v.id][0], path.forks[v.id][1], tuple(v.parents))
                  for v in views if v.id in path.forks)
    return ProcessState(
        inst.id, inst.process, inst.version, inst.state, inst.residency, nodes, flows,
        tokens, ended, holds,
        tuple(n for n in order if n in path.left),
        tuple(n for n in order if n in path.entered), forks, tuple(engine.decisions(iid)))


# -- the dashboard ------------------------------------------------------------------------
def task_row(task: Any) -> dict[str, Any]:
    return {"id": task.id, "instance": task.instance, "node": task.node,
            "assignee": task.assignee}


def counters(stats: Mapping[str, Any]) -> dict[str, int]:
    """Instances by residency, live coroutines, armed holds, open tasks — in that order."""
    residency = stats["instances"]
    out = {name: int(residency.get(name, 0)) for name in RESIDENCIES}
    out["coroutines"] = int(stats["coroutines"])
    out["holds"] = int(sum(stats["holds"].values()))
    out["tasks"] = int(stats["tasks"])
    return out


def instance_ids(engine: Any) -> list[str]:
    """Ids of every instance, in start order."""
    return [i.id for i in engine.instances()]


def offered_ids(ids: Sequence[str], selected: str, limit: int = INSTANCE_ROWS) -> list[str]:
    """The ids the dashboard offers: the newest ``limit`` in start order, with ``selected``
    kept in front when it is older than those."""
    offered = list(ids[-limit:]) if limit and len(ids) > limit else list(ids)
    if selected and selected not in offered and selected in ids:
        offered.insert(0, selected)
    return offered


def choose(ids: Sequence[str], selected: str, known: Any = None,
           state_of: Any = None) -> str:
    """The instance the dashboard shows: ``selected`` when it exists, else the first one
    started that is still active (``state_of(id)`` gives its state), else the first one
    started, else ``""``. ``known`` (a container of ids) speeds up the membership test."""
    if selected and selected in (ids if known is None else known):
        return selected
    if state_of is not None:
        active = next((i for i in ids if state_of(i) == ACTIVE), None)
        if active is not None:
            return active
    return ids[0] if ids else ""


def instance_rows(engine: Any, ids: Sequence[str]) -> list[dict[str, str]]:
    """What the instance picker says about each offered id: ``{id, process, state,
    residency, label}``; the label reads ``"SO-3001 · order_to_cash v1 · active
    (dehydrated)"`` (the business key given to ``start`` is the id)."""
    rows = []
    for iid in ids:
        view = engine.describe_instance(iid)
        process = f"{view.process} v{view.version}" if view.process else "?"
        where = f" ({view.residency})" if view.state == ACTIVE else ""
        rows.append({"id": iid, "process": process, "state": view.state,
                     "residency": view.residency,
                     "label": f"{iid} · {process} · {view.state}{where}"})
    return rows


class DashboardState(NamedTuple):
    """Everything the dashboard shows except the two graphs (built from ``selected``)."""

    clock: str
    counters: dict[str, int]
    tasks: list[dict[str, Any]]
    holds: list[dict[str, Any]]
    facts: list[dict[str, Any]]  # one page of the fact table
    fact_page: dict[str, Any]  # what the table says about that page (see fact_page)
    instances: list[str]
    selected: str
    instance_rows: list[dict[str, str]]  # the picker's label of each of ``instances``
    decisions: dict[str, Any]  # {total, rows}: :func:`.choices.decisions_state`


def dashboard_state(engine: Any, selected: str = "", *, facts: Sequence[Any] | None = None,
                    stats: Mapping[str, Any] | None = None, ids: Sequence[str] | None = None,
                    known: Any = None, query: FactQuery | None = None,
                    kept: int | None = None,
                    flow_names: Callable[[Any], Mapping[str, str]] | None = None
                    ) -> DashboardState:
    """The dashboard's rows, its fact table showing ``query``. A caller that already holds
    the log (``facts``; for a query that does not need the whole log, its newest page with
    ``kept`` the length of the log), ``engine.stats()`` or the instance ids may pass them in;
    the result is the same. ``flow_names(definition)``: the names a process's file gives
    its flows (a decision's buttons say them)."""
    log = engine.facts if facts is None else facts
    stats = engine.stats() if stats is None else stats
    all_ids = instance_ids(engine) if ids is None else ids
    chosen = choose(all_ids, selected, known,
                    lambda iid: engine.describe_instance(iid).state)
    offered = offered_ids(all_ids, chosen)
    page = fact_page(log, query or FactQuery(), kept=kept, emitted=int(stats["facts"]))
    return DashboardState(
        clock=when(engine.now) or "",
        counters=counters(stats),
        tasks=[task_row(t) for t in engine.tasks()],
        holds=[hold_row(h).as_dict() for h in engine.holders()[:HOLD_ROWS]],
        facts=page.rows,
        fact_page=page.info,
        instances=offered,
        selected=chosen,
        instance_rows=instance_rows(engine, offered),
        decisions=decisions_state(engine, chosen, flow_names),
    )
