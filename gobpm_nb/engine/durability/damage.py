"""Reading back the engine's own records beside the checkpoints (counters, clock, seed,
the message window and buffer, deployed versions) at restart recovery: a damaged one stops
the recovery with a StoreError naming it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ...errors import StoreError
from ..state.records import Trigger

#: A recorded trigger read back: (instance, accepted at, sequence, trigger)
Entry = tuple[str, int | None, Any, Trigger]


@contextmanager
def reading(key: str) -> Iterator[None]:
    """Read the store's record ``key`` (restart recovery): what a damaged one raises (not
    JSON, nested past the stack, the wrong shape or type) is a StoreError naming it, and
    nothing is recovered."""
    try:
        yield
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError,
            OverflowError) as exc:
        raise StoreError(f"the store's record {key!r} is damaged ({type(exc).__name__}: "
                         f"{str(exc)[:80]}); nothing was recovered") from None


def registry(meta: Mapping[str, str]) -> dict[str, Any]:
    """The deployed versions the store recorded: process id -> the signatures of its
    versions, in order."""
    out = {}
    for key, value in meta.items():
        if key.startswith("process:"):
            with reading(key):
                out[key.split(":", 1)[1]] = json.loads(value)
    return out


def read_journal(rows: Iterable[tuple[str, str]]) -> tuple[list[Entry], dict[str, str]]:
    """The triggers the store still records (``rows``: its journal, accepted triggers not
    checkpointed yet, by instance), read back once, in order, and the instances with an
    entry that cannot be read, each with why: recovery fails those as it fails a damaged
    checkpoint, and replays none of theirs."""
    entries: list[Entry] = []
    damaged: dict[str, str] = {}
    for iid, text in rows:
        try:
            entry = json.loads(text)
            kind, node, wait, track = (entry[k] for k in ("kind", "node", "wait_kind", "track"))
            payload, ref = entry["payload"], entry["ref"]
            if not all(isinstance(n, str) for n in (kind, node, wait, track)) or not \
                    isinstance(payload, (dict, type(None))) or \
                    not isinstance(ref, (str, type(None))):
                raise TypeError("a field of the wrong type")
            at = None if entry.get("at") is None else int(entry["at"])
            entries.append((iid, at, entry.get("seq"), Trigger(kind, node, wait, track,
                                                                  payload, ref)))
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            damaged.setdefault(iid, type(exc).__name__)
    return [e for e in entries if e[0] not in damaged], damaged
