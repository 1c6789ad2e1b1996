"""An instance's checkpoint: only what re-entering nodes cannot re-derive.

Identity, process id, version and signature, data, id counters, the live tracks (position,
state, lineage, what each waits for with recorded deadlines, correlation keys, task and job
ids, the armed boundaries with their recorded deadlines, and the order each holder was armed
in) and the open joins. ``capture`` writes the JSON document (times as ISO 8601 text);
``read`` checks every field of one and rebuilds the tracks; ``check_against`` checks that
what it names exists in the process definition it claims.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from ...errors import CheckpointError
from ...model import Definition
from ...model import elements as el
from ...model.adhoc import AdHocSubProcess
from ...model.multiple import MultipleCatch
from ...vocabulary import BOUNDARY, LIVE, NODE, ORIGINS, ROOT
from ..runtime.run import Run
from ..state.adhoc_wait import AdHocWait
from ..state.fields import Reader
from ..state.records import Track, TrackView, join_parts
from ..state.waits import (
    BOUNDARY_KINDS,
    CompensateWait,
    GatewayWait,
    ManyWait,
    ScopeWait,
    TimerWait,
    at_text,
    read_wait,
    wait_doc,
)

if TYPE_CHECKING:
    from ..state.holders import Hold

SCHEMA = 2


class Image(NamedTuple):
    """A checkpoint read back: everything ``restore`` needs, checked."""

    instance: str
    process: dict[str, Any]  # id, version, signature
    at: int
    state: str
    data: dict[str, Any]
    seq: dict[str, int]
    tracks: list[Track]
    joins: dict[str, dict[str, list[str]]]
    #: The armed starts of the process's own event subprocesses (``Run.root``), or None.
    events: dict[str, Any] | None = None
    #: A called instance's caller: (instance, track), or None.
    parent: tuple[str, str] | None = None
    #: The completed compensable activities' records, by scope (``Run.compensable``).
    compensable: dict[str, list[dict[str, Any]]] | None = None
    #: The complex gateways waiting for their reset (``Run.resets``), or None.
    resets: dict[str, list[str]] | None = None
    #: How many throws started the chain of instances it ends (``Run.generation``).
    generation: int = 0


def capture(run: Run, now: int) -> dict[str, Any]:
    """The checkpoint document of a resident instance. Every key of the engine's own is in
    sorted order (instance data keeps the order its fields arrived in), so the codec writes
    equal documents as equal bytes without sorting them again."""
    data = run.data
    defn = run.defn
    seq = run.seq
    joins = run.joins
    doc = {
        "at": at_text(now),
        "data": {} if data == {} else copy.deepcopy(data),  # most start empty: no deepcopy
        "instance": run.id,
        "joins": {g: {f: list(ts) for f, ts in sorted(flows.items())}
                  for g, flows in sorted(joins.items())} if joins else {},
        "process": {"id": defn.id, "signature": defn.signature, "version": defn.version},
        "schema": SCHEMA,
        "seq": {"job": seq["job"], "task": seq["task"], "track": seq["track"]} if len(seq) == 3
        else dict(sorted(seq.items())),  # and the draws of decisions' rules (``drawn``)
        "state": run.state,
        "tracks": live_docs(run),
    }
    if run.generation:  # between "events" and "instance" in sorted order (absent: 0)
        doc = dict(sorted({**doc, "generation": run.generation}.items()))
    if run.parent is not None:  # after "joins" in sorted order
        doc = dict(sorted({**doc, "parent": {"instance": run.parent[0],
                                             "track": run.parent[1]}}.items()))
    if run.root is not None:  # between "data" and "instance" in sorted order
        orders = {(h.node, h.wait_kind, h.kind): h.seq for h in run.holds if h.track == ROOT}
        doc = {"at": doc.pop("at"), "data": doc.pop("data"),
               "events": {s: wait_doc(w, orders, BOUNDARY)
                          for s, w in sorted(run.root.boundaries.items())}, **doc}
    if run.resets:  # between "process" and "schema" in sorted order (absent: none)
        doc = dict(sorted({**doc, "resets": {g: list(fl) for g, fl in
                                             sorted(run.resets.items())}}.items()))
    if run.compensable:  # between "at" and "data" (absent: none, as before it existed)
        doc = {"at": doc.pop("at"), "compensable": {
            scope: copy.deepcopy(records) for scope, records in sorted(run.compensable.items())},
            **doc}
    return doc


def live_docs(run: Run) -> list[dict[str, Any]]:
    """The entries of the live tracks, in track order, each with the numbers of its own
    holders: (node, wait kind, hold kind) -> number, a later hold at one place winning."""
    by_track: dict[str, dict[tuple[str, str, str], int]] = {}
    for h in run.holds:  # one pass over the holds, not one per track
        site = h.site
        by_track.setdefault(site.track, {})[(site.node, site.wait_kind, site.kind)] = h.seq
    return [track_doc(t, by_track.get(t.id, {})) for t in run.live.values()]


def track_doc(tr: Track, orders: dict[tuple[str, str, str], int]) -> dict[str, Any]:
    """A live track's entry (keys sorted); ``orders`` maps (node, wait kind, hold kind) to
    its holder's number."""
    bounds = tr.boundaries
    doc = {"boundaries": {b: wait_doc(a, orders, BOUNDARY)
                          for b, a in sorted(bounds.items())} if bounds else {},
           "id": tr.id, "node": tr.node, "origin": tr.origin, "parents": list(tr.parents),
           "state": tr.state, "via": tr.via,
           "wait": wait_doc(tr.wait, orders, NODE)}
    if tr.scope is not None:  # the keys only where there is one (kept in sorted order)
        doc = dict(sorted({**doc, "scope": tr.scope}.items()))
    if tr.locals is not None:
        doc = dict(sorted({**doc, "locals": copy.deepcopy(tr.locals)}.items()))
    if tr.inputs is not None:
        doc = dict(sorted({**doc, "inputs": copy.deepcopy(tr.inputs)}.items()))
    return doc


def read(doc: dict[str, Any], instance: str) -> Image:
    """Check a decoded document field by field; CheckpointError names what is wrong."""
    r = Reader(instance)
    schema = r.get(doc, "schema", "int", "")
    if schema != SCHEMA:
        raise r.fail("schema", f"version {schema} is not supported (expected {SCHEMA})")
    proc, seq, listed, joins, at, state, data = r.fields(doc, "", DOC)
    process = {name: v for (name, _), v in zip(PROCESS, r.fields(proc, "process", PROCESS),
                                               strict=True)}
    tracks = [read_track(r, t, f"tracks[{i}]") for i, t in enumerate(listed)]
    if not tracks:  # an instance whose last track ends has ended: its checkpoint is gone
        raise r.fail("tracks", "is empty: a stored instance has a live track")
    counters = read_seq(r, seq, tracks)
    for g, flows in joins.items():
        if not isinstance(flows, dict):
            raise r.fail(f"joins.{g}", "is not a map of flow ids to track ids")
        for f, ts in flows.items():
            r.tracks(ts, f"joins.{g}.{f}")
    events = None
    if "events" in doc:
        events = {s: read_wait(r, w, f"events.{s}", s, BOUNDARY_KINDS)
                  for s, w in sorted(r.get(doc, "events", "dict", "").items())}
    parent = None
    if "parent" in doc:
        link = r.get(doc, "parent", "dict", "")
        parent = (r.get(link, "instance", "str", "parent"),
                  r.get(link, "track", "track", "parent"))
    compensable = None
    if "compensable" in doc:
        compensable = r.get(doc, "compensable", "dict", "")
        for scope, records in compensable.items():
            if scope != ROOT:
                r.tracks([scope], f"compensable.{scope}")
            read_records(r, records, f"compensable.{scope}")
    resets = None
    if "resets" in doc:
        resets = r.get(doc, "resets", "dict", "")
        for g, fl in resets.items():
            if not isinstance(fl, list) or not all(isinstance(f, str) for f in fl):
                raise r.fail(f"resets.{g}", "is not a list of flow ids")
    generation = r.get(doc, "generation", "int", "") if "generation" in doc else 0
    if generation < 0:
        raise r.fail("generation", "is negative")
    return Image(instance, process, at, state, data, counters, tracks, joins, events, parent,
                 compensable, resets, generation)


def read_records(r: Reader, records: Any, path: str) -> None:
    """Compensable records: each names its activity, with its data, and its inner records."""
    if not isinstance(records, list):
        raise r.fail(path, "is not a list of records")
    for i, rec in enumerate(records):
        where = f"{path}[{i}]"
        r.get(rec, "node", "str", where)
        r.get(rec, "data", "dict", where)
        if "inner" in rec:
            read_records(r, rec["inner"], f"{where}.inner")


#: The fields read together (``Reader.fields``): of the document, of its process, of its id
#: counters and of each track.
DOC = (("process", "dict"), ("seq", "dict"), ("tracks", "list"), ("joins", "dict"),
       ("at", "time"), ("state", "str"), ("data", "dict"))
PROCESS = (("id", "str"), ("version", "int"), ("signature", "str"))
SEQ = (("track", "int"), ("task", "int"), ("job", "int"))
TRACK = (("id", "track"), ("node", "str"), ("state", "str"), ("origin", "str"),
         ("parents", "list"), ("via", "optstr"), ("boundaries", "dict"))


def read_seq(r: Reader, seq: dict[str, Any], tracks: list[Track]) -> dict[str, int]:
    """The id counters: counts from 0, each track's number among those given out, and no
    track id twice (a new track must never take the id of one the checkpoint holds)."""
    counters = {name: n for (name, _), n in zip(SEQ, r.fields(seq, "seq", SEQ), strict=True)}
    for k in sorted(seq):  # the draws of decisions' rules, by gateway (``draws.drawn``)
        if k.startswith("draw:"):
            counters[k] = r.get(seq, k, "int", "seq")
    for k, n in counters.items():
        if n < 0:
            raise r.fail(f"seq.{k}", f"{n} is not a count")
    seen: set[str] = set()
    for i, t in enumerate(tracks):
        if t.id in seen:
            raise r.fail(f"tracks[{i}].id", f"{t.id!r} is there twice")
        seen.add(t.id)
        if int(t.id[1:]) > counters["track"]:
            raise r.fail("seq.track", f"{counters['track']} is below track {t.id!r}")
    return counters


def read_track(r: Reader, t: Any, path: str) -> Track:
    tid, node, state, origin, parents, via, bounds = r.fields(t, path, TRACK)
    if state not in LIVE:
        raise r.fail(f"{path}.state", f"{state!r} is not a live track state")
    if origin not in ORIGINS:
        raise r.fail(f"{path}.origin", f"unknown origin {origin!r}")
    parents = r.tracks(parents, f"{path}.parents")
    # interned: a hydrated instance shares its names with every other (JSON makes new ones)
    tr = Track(sys.intern(tid), sys.intern(node), tuple(sys.intern(p) for p in parents),
               sys.intern(origin), via, sys.intern(state))
    wait = t.get("wait")
    tr.wait = None if wait is None else read_wait(r, wait, f"{path}.wait", tr.node)
    tr.boundaries = {b: read_wait(r, a, f"{path}.boundaries.{b}", b, BOUNDARY_KINDS)
                 for b, a in sorted(bounds.items())}
    scope = r.get(t, "scope", "opttrack", path) if "scope" in t else None
    if scope is not None:
        tr.scope = sys.intern(scope)
    if "locals" in t:
        tr.locals = r.get(t, "locals", "dict", path)
        counter = tr.locals.get("loopCounter")
        if origin != "compensation" and (type(counter) is not int or counter < 1):
            raise r.fail(f"{path}.locals.loopCounter", "is not a count from 1")
    if "inputs" in t:
        tr.inputs = r.get(t, "inputs", "dict", path)
    return tr


def check_against(image: Image, defn: Definition, holds: Iterable[Hold] = ()) -> None:
    """Everything the document names exists where it says in ``defn``: track nodes, the
    kind of wait each node has, gateway arms, boundaries, joins and parents; and, for a
    wake, the track of each of the instance's ``holds`` (the process scope for one on it)."""
    r = Reader(image.instance)
    nodes = defn.nodes
    ids = {t.id: t for t in image.tracks}
    for h in holds:
        if h.track == ROOT and image.events is None:
            raise r.fail("events", "is missing: the engine holds a start of an event "
                                   "subprocess of the process")
        if h.track != ROOT and h.track not in ids:
            raise r.fail("tracks", f"has no track {h.track!r}: the engine holds its "
                                   f"wait at {h.node!r}")
    for i, tr in enumerate(image.tracks):
        path = f"tracks[{i}]"
        node = nodes.get(tr.node)
        if node is None:
            raise r.fail(f"{path}.node", f"{tr.node!r} is not a node of {defn.id!r}")
        check_wait(r, tr, node, defn, f"{path}.wait")
        check_scope(r, tr, node, ids, f"{path}.scope")
        guards = {b.id for b in defn.boundaries.get(tr.node, ())}
        guards.update(defn.event_starts.get(tr.node, ()))
        for bid in tr.boundaries:
            if bid not in guards:
                raise r.fail(f"{path}.boundaries.{bid}",
                             f"is not a boundary of {tr.node!r} in {defn.id!r}")
    for sid in image.events or {}:
        if sid not in defn.event_starts.get(ROOT, ()):
            raise r.fail(f"events.{sid}", f"is not the start of an event subprocess of "
                                          f"{defn.id!r}")
    for key, flows in image.joins.items():
        g, scope = join_parts(key)
        if not isinstance(nodes.get(g), (el.ParallelGateway, el.InclusiveGateway,
                                         el.ComplexGateway)):
            raise r.fail(f"joins.{key}", f"{g!r} is not a joining gateway of {defn.id!r}")
        if scope is not None and scope not in ids:
            raise r.fail(f"joins.{key}", "names a scope that is not in the checkpoint")
        for f, waiting in flows.items():
            if any(t not in ids for t in waiting):
                raise r.fail(f"joins.{key}.{f}", "names a track that is not in the checkpoint")
    check_resets(r, image, defn, ids)


def check_resets(r: Reader, image: Image, defn: Definition, ids: dict[str, Track]) -> None:
    """Each complex gateway waiting for its reset is one of ``defn``'s, in a scope the
    checkpoint holds, expecting tokens on incoming flows of its own."""
    for key, flows in (image.resets or {}).items():
        g, scope = join_parts(key)
        if not isinstance(defn.nodes.get(g), el.ComplexGateway):
            raise r.fail(f"resets.{key}", f"{g!r} is not a complex gateway of {defn.id!r}")
        if scope is not None and scope not in ids:
            raise r.fail(f"resets.{key}", "names a scope that is not in the checkpoint")
        own = {f.id for f in defn.incoming[g]}
        for f in flows:
            if f not in own:
                raise r.fail(f"resets.{key}", f"{f!r} is not an incoming flow of {g!r}")


def check_scope(r: Reader, tr: Track, node: el.Element, tracks: dict[str, Track],
                path: str) -> None:
    """A track inside a subprocess names the track running it, parked on that subprocess;
    a track in the process names none."""
    if tr.scope is None:
        if node.within is not None:
            raise r.fail(path, f"{tr.node!r} is inside {node.within!r}, but the track names "
                               "no scope")
        return
    host = tracks.get(tr.scope)
    if host is not None and tr.locals is not None and host.node == tr.node and \
            isinstance(host.wait, ManyWait):
        return  # an inner instance of a multi-instance activity, under its body
    if host is not None and tr.origin in ("compensation", "continuation") and \
            isinstance(host.wait, CompensateWait):
        return  # a compensation handler, under the throw that runs it
    if host is None or host.node != node.within or \
            not isinstance(host.wait, (ScopeWait, AdHocWait)):
        raise r.fail(path, f"{tr.scope!r} is not a track running {node.within!r}")


KIND_OF_WAIT = {"timer": el.TimerCatch, "message": (el.MessageCatch, el.ReceiveTask),
                "signal": el.SignalCatch, "task": el.UserTask, "job": el.ServiceTask,
                "conditional": el.ConditionalCatch,
                "join": (el.ParallelGateway, el.InclusiveGateway, el.ComplexGateway),
                "gateway": el.EventGateway, "scope": (el.SubProcess, el.EventSubProcess),
                "many": (el.UserTask, el.ServiceTask, el.ScriptTask, el.ReceiveTask,
                         el.SubProcess, el.CallActivity),
                "call": el.CallActivity, "decision": (el.ExclusiveGateway, el.InclusiveGateway),
                "compensate": (el.CompensationThrow, el.CompensationEnd, el.Transaction),
                "multiple": MultipleCatch, "adhoc": AdHocSubProcess}


def check_wait(r: Reader, tr: Track, node: el.Element, defn: Definition, path: str) -> None:
    w = tr.wait
    if w is None:
        return
    if not isinstance(node, KIND_OF_WAIT[w.kind]):  # type: ignore[arg-type]
        raise r.fail(f"{path}.kind", f"a {w.kind} wait cannot be at {node.kind} {tr.node!r}")
    if isinstance(w, GatewayWait):
        targets = {f.target for f in defn.outgoing[tr.node]}
        for j, a in enumerate(w.arms):
            if a.node not in targets:
                raise r.fail(f"{path}.arms[{j}].node",
                             f"{a.node!r} is not an arm of gateway {tr.node!r}")
    if w.kind == "decision" and getattr(node, "decision", None) is None:
        raise r.fail(f"{path}.kind", f"gateway {tr.node!r} is not a decision")
    if isinstance(w, TimerWait) and tr.node not in defn.timers:
        raise r.fail(path, f"{tr.node!r} has no timer")


def views(history: list[TrackView] | None, image: Image) -> list[TrackView]:
    """A dehydrated instance's tracks: history from memory, parked ones from its checkpoint."""
    out = list(history or ())
    out += [t.view() for t in image.tracks]
    return sorted(out, key=lambda v: int(v.id[1:]))


__all__ = ["SCHEMA", "CheckpointError", "Image", "at_text", "capture", "check_against", "read",
           "views"]
