"""Durability: what the store records besides checkpoints, and when.

- **The recorded clock.** At the end of every public command (``settle``) the store records
  the virtual clock, the instance counter (ids are never reused), buffered messages and the
  ids of the last ``SEEN_WINDOW`` correlated messages; every checkpoint and journal write
  records the kernel's sequence too (so holds recovered later keep a unique, ordered number
  above every number a checkpoint holds). Recovery resumes exactly there.
- **Accepted triggers.** On a durable store, a trigger call (message, signal, task or job
  completion, job failure) records each trigger it accepted before it changes anything and
  before it returns. An entry stays until the instance's next checkpoint (or its end) covers
  it: the store drops an instance's entries in the same transaction. Recovery delivers the
  entries still there, once each, after every instance is back.
- **Checkpoint writes and deletes** go through ``put`` and ``delete``; a failed delete is
  retried at the end of every later command, so a finished instance does not come back.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import EngineError, StoreError
from .records import Trigger

if TYPE_CHECKING:
    from .core import Core

log = logging.getLogger("gobpm_nb")

#: How many correlated message ids are remembered (and recorded) for de-duplication.
SEEN_WINDOW = 1_000


class Store(Protocol):
    """What the engine needs of a checkpoint store (``MemoryStore`` and ``SQLiteStore``)."""

    durable: bool

    def put(self, instance: str, doc: bytes, meta: Mapping[str, str] | None = None) -> None: ...
    def get(self, instance: str) -> bytes: ...
    def delete(self, instance: str, meta: Mapping[str, str] | None = None) -> None: ...
    def record(self, entries: list[tuple[str, str]],
               meta: Mapping[str, str] | None = None) -> None: ...
    def journal(self) -> list[tuple[str, str]]: ...
    def set_meta(self, meta: Mapping[str, str]) -> None: ...
    def meta(self) -> dict[str, str]: ...
    def ids(self) -> list[str]: ...


class Codec(Protocol):
    """Checkpoint documents to bytes and back."""

    def encode(self, doc: dict[str, Any]) -> bytes: ...
    def decode(self, raw: bytes, instance: str) -> dict[str, Any]: ...


class Journal:
    """The engine's durable record beside the checkpoints."""

    def __init__(self, core: Core):
        self.core = core
        self.written: dict[str, str] = {}  # meta values as last written
        self.deletes: list[str] = []  # instances whose checkpoint delete failed
        #: Correlated message ids, oldest first, at most SEEN_WINDOW.
        self.seen: OrderedDict[str, None] = OrderedDict()
        self._seen_text: str | None = "[]"  # ``seen`` as JSON; None: changed since

    # -- meta -----------------------------------------------------------------------------
    def seen_text(self) -> str:
        if self._seen_text is None:
            self._seen_text = json.dumps(list(self.seen))
        return self._seen_text

    def changed(self, seq: bool = True) -> dict[str, str]:
        """Meta values that differ from what the store last recorded, in the order clock,
        seq, next_instance, buffer, seen. The kernel's sequence goes with checkpoints and
        journal entries only (what carries hold numbers)."""
        # each value compared as it is made, without a dict of them all: once per checkpoint
        core = self.core
        kernel = core.kernel
        written = self.written
        out: dict[str, str] = {}
        text = str(kernel.now)
        if written.get("clock") != text:
            out["clock"] = text
        if seq:
            text = str(kernel.seq)
            if written.get("seq") != text:
                out["seq"] = text
        text = str(core.next_instance)
        if written.get("next_instance") != text:
            out["next_instance"] = text
        text = core.buffer_rows()
        if written.get("buffer") != text:
            out["buffer"] = text
        text = self._seen_text if self._seen_text is not None else self.seen_text()
        if written.get("seen") != text:
            out["seen"] = text
        return out

    def wrote(self, meta: Mapping[str, str]) -> None:
        self.written.update(meta)

    def forget(self, message_id: str) -> None:
        """Take back an id whose message was not accepted after all."""
        self.seen.pop(message_id, None)
        self._seen_text = None

    def see(self, message_id: str) -> None:
        self._seen_text = None
        self.seen[message_id] = None
        while len(self.seen) > SEEN_WINDOW:
            self.seen.popitem(last=False)

    def load(self, meta: Mapping[str, str]) -> None:
        """Take back what the store recorded (restart recovery)."""
        core = self.core
        core.next_instance = int(meta.get("next_instance", "0"))
        core.kernel.advance_seq(int(meta.get("seq", "0")))
        for message_id in json.loads(meta.get("seen", "[]")):
            self.see(message_id)
        for name, ckey, expiry, values, message_id in json.loads(meta.get("buffer", "[]")):
            core.buffer_message(name, ckey, expiry, values, message_id)
        self.written = dict(meta)

    # -- checkpoints ----------------------------------------------------------------------
    def put(self, iid: str, doc: dict[str, Any]) -> bool:
        """Write a checkpoint (and what meta changed) in one transaction; False if the
        store failed (a ``checkpoint_failed`` fact and a warning say so)."""
        core = self.core
        core.covered(iid)
        meta = self.changed()
        try:
            core.store.put(iid, core.codec.encode(doc), meta)
        except Exception as exc:  # a store can fail in many ways
            log.warning("checkpoint of instance %s not written (%s); it stays resident", iid,
                        type(exc).__name__)
            core.emit("checkpoint_failed", iid, None, None, {"cause": type(exc).__name__})
            return False
        self.written.update(meta)  # ``wrote``, inline: once per checkpoint
        if core.holders.expected:  # only after a recovery, until its triggers are placed
            self.unexpected(iid)
        return True

    def unexpected(self, iid: str) -> None:
        """The instance's new checkpoint (or its end) covers its journal: a recorded trigger
        whose wait it never armed again is gone, and said so with a ``trigger_dropped``."""
        expected = self.core.holders.expected
        for key in [k for k in expected if k[0] == iid] if expected else ():
            trigger = expected.pop(key)
            self.core.emit("trigger_dropped", iid, trigger.track, trigger.node,
                           {"trigger": trigger.kind,
                            "reason": "its wait was not armed again after recovery"})

    def delete(self, iid: str) -> None:
        """An instance ended: its checkpoint leaves the store (retried if the store fails)."""
        self.core.covered(iid)
        meta = self.changed()
        try:
            self.core.store.delete(iid, meta)
        except Exception as exc:
            log.warning("checkpoint of finished instance %s not deleted (%s); retried later",
                        iid, type(exc).__name__)
            if iid not in self.deletes:
                self.deletes.append(iid)
            return
        self.wrote(meta)
        self.unexpected(iid)

    def settle(self) -> None:
        """The end of a public command: retry failed deletes, record the clock and counters."""
        store = self.core.store
        for iid in list(self.deletes):
            self.deletes.remove(iid)
            self.delete(iid)
        if not store.durable:
            return
        meta = self.changed(seq=False)
        if not meta:
            return
        try:
            store.set_meta(meta)
        except Exception as exc:
            self.core.emit("checkpoint_failed", None, None, None, {"cause": type(exc).__name__})
            raise StoreError(f"the command ran, but the store failed to record the clock "
                              f"and counters ({type(exc).__name__}: {exc}); a restart now "
                              "would resume at the last recorded time") from None
        self.wrote(meta)

    # -- accepted triggers ----------------------------------------------------------------
    def record(self, triggers: list[tuple[str, Trigger]], force: bool = False) -> None:
        """Record accepted triggers (and, with ``force``, the meta even with none) durably
        before they change anything; EngineError if the store fails."""
        store = self.core.store
        if not store.durable or not (triggers or force):
            return
        at = self.core.kernel.now
        rows = [(iid, json.dumps({"at": at, "kind": t.kind, "node": t.node,
                                  "wait_kind": t.wait_kind, "track": t.track,
                                  "payload": t.payload, "ref": t.ref}, sort_keys=True))
                for iid, t in triggers]
        meta = self.changed()
        try:
            store.record(rows, meta)
        except Exception as exc:
            raise EngineError(f"the trigger was not accepted: the store failed to record it "
                              f"({type(exc).__name__}); nothing changed") from None
        self.wrote(meta)

    def replay(self) -> int:
        """Deliver every trigger the store still records, once each, in order, each after
        the events that were due before it was accepted (an overdue timer that had fired
        before a message still comes first); then run what is due up to the recovered
        clock. A trigger whose wait the instance has not armed again yet is delivered when
        it does."""
        core = self.core
        kernel = core.kernel
        entries = core.store.journal()
        for iid, text in entries:
            entry = json.loads(text)
            kernel.run(until=min(int(entry.get("at", kernel.now)), kernel.now))
            core.redeliver(iid, Trigger(entry["kind"], entry["node"], entry["wait_kind"],
                                        entry["track"], entry["payload"], entry["ref"]))
        kernel.run(until=kernel.now)
        return len(entries)
