"""The checkpoint codec: a versioned JSON document per instance, validated on read.

In memory, deadlines are integer virtual microseconds; in the document they are ISO 8601 text,
so a stored checkpoint reads like what it is. ``decode`` checks every field it will use and
raises CheckpointError naming the instance and the field.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import CheckpointError, ModelError
from ..kernel import iso, to_us
from ..model.timers import parse_date

SCHEMA = 1
WAIT_FIELDS = {
    "timer": {"deadline": "time", "hold": "optint"},
    "message": {"name": "str", "key": "str", "hold": "optint"},
    "signal": {"name": "str", "hold": "optint"},
    "task": {"task": "str", "created": "time", "hold": "optint"},
    "job": {"job": "str"},
    "conditional": {},
    "join": {},
    "ebg": {"arms": "arms"},
}
BOUND_FIELDS = {
    "timer": {"deadline": "time", "cycles": "cycles", "hold": "optint"},
    "message": {"name": "str", "key": "str", "hold": "optint"},
    "signal": {"name": "str", "hold": "optint"},
    "conditional": {"last": "bool"},
}
ARM_FIELDS = {
    "timer": {"node": "str", "deadline": "time", "hold": "optint"},
    "message": {"node": "str", "name": "str", "key": "str", "hold": "optint"},
    "signal": {"node": "str", "name": "str", "hold": "optint"},
    "conditional": {"node": "str"},
}
STATES = {"ready", "running", "waiting", "dehydrated"}
ORIGINS = {"start", "fork", "join", "continuation", "boundary"}


def _times(record: dict[str, Any], fields: dict[str, str], out: bool) -> dict[str, Any]:
    copy = {k: v for k, v in record.items() if k != "fired"}
    for name, kind in fields.items():
        if kind == "time" and name in copy:
            copy[name] = iso(copy[name]) if out else copy[name]
        if kind == "arms":
            copy[name] = [_times(a, ARM_FIELDS.get(a["kind"], {}), out) for a in copy[name]]
    return copy


def export(doc: dict[str, Any]) -> dict[str, Any]:
    """The JSON form of a captured checkpoint (deadlines as ISO text)."""
    out = dict(doc)
    out["tracks"] = []
    for t in doc["tracks"]:
        t = dict(t)
        if t.get("wait") is not None:
            t["wait"] = _times(t["wait"], WAIT_FIELDS[t["wait"]["kind"]], True)
        t["boundaries"] = {b: _times(a, BOUND_FIELDS[a["kind"]], True)
                           for b, a in t["boundaries"].items()}
        out["tracks"].append(t)
    out["at"] = iso(doc["at"])
    return out


def encode(doc: dict[str, Any]) -> bytes:
    return json.dumps(canonical(export(doc)), separators=(",", ":")).encode()


def canonical(obj: Any, inside_data: bool = False) -> Any:
    """The document with its own keys sorted, so that equal documents encode to equal bytes;
    instance data keeps the order its fields arrived in, released or not."""
    if isinstance(obj, dict) and not inside_data:
        return {k: canonical(obj[k], k == "data") for k in sorted(obj)}
    if isinstance(obj, list) and not inside_data:
        return [canonical(v) for v in obj]
    return obj


class _Reader:
    """Checks one document, converting ISO times back to microseconds as it goes."""

    def __init__(self, instance: str):
        self.instance = instance

    def fail(self, where: str, why: str) -> CheckpointError:
        return CheckpointError(self.instance, where, why)

    def field(self, obj: Any, name: str, kind: str, where: str) -> Any:
        path = f"{where}.{name}" if where else name
        if not isinstance(obj, dict) or name not in obj:
            raise self.fail(path, "is missing")
        return self.value(obj[name], kind, path)

    def value(self, v: Any, kind: str, path: str) -> Any:
        ok = {
            "str": lambda: isinstance(v, str),
            "int": lambda: isinstance(v, int) and not isinstance(v, bool),
            "bool": lambda: isinstance(v, bool),
            "dict": lambda: isinstance(v, dict),
            "list": lambda: isinstance(v, list),
            "cycles": lambda: v is None or (isinstance(v, int) and not isinstance(v, bool)),
            "optint": lambda: v is None or (isinstance(v, int) and not isinstance(v, bool)),
            "optstr": lambda: v is None or isinstance(v, str),
            "time": lambda: isinstance(v, str),
            "arms": lambda: isinstance(v, list),
        }[kind]()
        if not ok:
            raise self.fail(path, f"expected {kind}, found {type(v).__name__}")
        if kind == "time":
            try:
                return to_us(parse_date(v))
            except ModelError:
                raise self.fail(path, f"{v!r} is not an ISO 8601 time") from None
        if kind == "arms":
            return [self.record(a, ARM_FIELDS, f"{path}[{i}]") for i, a in enumerate(v)]
        return v

    def record(self, obj: Any, table: dict[str, dict[str, str]], path: str) -> dict[str, Any]:
        kind = self.field(obj, "kind", "str", path)
        if kind not in table:
            raise self.fail(f"{path}.kind", f"unknown kind {kind!r}")
        out = {"kind": kind}
        for name, k in table[kind].items():
            out[name] = self.field(obj, name, k, path)
        return out


def decode(raw: bytes, instance: str) -> dict[str, Any]:
    """Parse and check a stored checkpoint; CheckpointError names what is wrong."""
    r = _Reader(instance)
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise r.fail("<document>", f"is not JSON ({exc.__class__.__name__})") from None
    if not isinstance(doc, dict):
        raise r.fail("<document>", "is not a JSON object")
    schema = r.field(doc, "schema", "int", "")
    if schema != SCHEMA:
        raise r.fail("schema", f"version {schema} is not supported (expected {SCHEMA})")
    if r.field(doc, "instance", "str", "") != instance:
        raise r.fail("instance", f"names {doc['instance']!r}")
    out: dict[str, Any] = {"schema": schema, "instance": instance}
    proc = r.field(doc, "process", "dict", "")
    out["process"] = {"id": r.field(proc, "id", "str", "process"),
                      "version": r.field(proc, "version", "int", "process"),
                      "signature": r.field(proc, "signature", "str", "process")}
    out["at"] = r.field(doc, "at", "time", "")
    out["state"] = r.field(doc, "state", "str", "")
    out["data"] = r.field(doc, "data", "dict", "")
    seq = r.field(doc, "seq", "dict", "")
    out["seq"] = {k: r.field(seq, k, "int", "seq") for k in ("track", "task", "job")}
    out["tracks"] = []
    for i, t in enumerate(r.field(doc, "tracks", "list", "")):
        path = f"tracks[{i}]"
        track = {k: r.field(t, k, "str", path) for k in ("id", "node", "state", "origin")}
        if track["state"] not in STATES:
            raise r.fail(f"{path}.state", f"{track['state']!r} is not a live track state")
        if track["origin"] not in ORIGINS:
            raise r.fail(f"{path}.origin", f"unknown origin {track['origin']!r}")
        parents = r.field(t, "parents", "list", path)
        if not all(isinstance(p, str) for p in parents):
            raise r.fail(f"{path}.parents", "holds something that is not a track id")
        track["parents"] = parents
        track["via"] = r.field(t, "via", "optstr", path)
        wait = t.get("wait") if isinstance(t, dict) else None
        track["wait"] = None if wait is None else r.record(wait, WAIT_FIELDS, f"{path}.wait")
        bounds = r.field(t, "boundaries", "dict", path)
        track["boundaries"] = {b: r.record(a, BOUND_FIELDS, f"{path}.boundaries.{b}")
                               for b, a in sorted(bounds.items())}
        out["tracks"].append(track)
    joins = r.field(doc, "joins", "dict", "")
    for g, flows in joins.items():
        if not isinstance(flows, dict) or not all(
                isinstance(ts, list) and all(isinstance(x, str) for x in ts)
                for ts in flows.values()):
            raise r.fail(f"joins.{g}", "is not a map of flow ids to track ids")
    out["joins"] = joins
    return out
