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
- **Group commit.** Inside a command that runs the scheduler (``step``, ``run``,
  ``advance``) on a store that can group writes (``begin``/``commit``/``rollback``), every
  checkpoint write and delete joins one transaction, committed with the clock and counters at
  the command's end, or every ``GROUP`` writes. Each write still happens at its quiet point
  (a write the store refuses there is refused as without a group: its instance stays
  resident); only the commit waits. What the open group holds is kept here too
  (``unsynced``), so a dehydrated instance is read back from memory until its checkpoint is
  committed, and a group the store rolls back is written again at the next commit. A commit
  the store refuses at a command's end raises StoreError ("the command ran, but ..."), the
  writes kept for the next command's end; a crash before it resumes at the previous
  command's end, as a crash inside a command always has.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from ...errors import EngineError, StoreError
from ..state.records import Trigger
from .damage import Entry, reading

if TYPE_CHECKING:
    from ...kernel import Kernel
    from ..state.holders import Holders

log = logging.getLogger("gobpm_nb")

#: How many correlated message ids are remembered (and recorded) for de-duplication.
SEEN_WINDOW = 1_000

#: Checkpoint writes per group commit at most: what the open group holds in memory.
GROUP = 256


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


class Grouping(Store, Protocol):
    """A store that can group writes into one transaction (``SQLiteStore``)."""

    def begin(self) -> None: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def in_group(self) -> bool: ...


class Codec(Protocol):
    """Checkpoint documents to bytes and back."""

    def encode(self, doc: dict[str, Any]) -> bytes: ...
    def decode(self, raw: bytes, instance: str) -> dict[str, Any]: ...


class Buffer(Protocol):
    """The message buffer, which the journal records (``hub.Hub``): its rows as the meta
    value ``buffer``, the messages an instance took that its checkpoint now covers, and a
    recorded message put back (restart recovery)."""

    def buffer_rows(self) -> str: ...
    def covered(self, iid: str) -> None: ...
    def buffer_message(self, name: str, ckey: str, expiry: int, values: dict[str, Any],
                       message_id: str | None) -> Any: ...


class Ids(Protocol):
    """The engine's instance counter, which the journal records and takes back (ids are never
    reused), and the seed its decisions draw from, which the journal records once."""

    next_instance: int
    seed: int


class Journal:
    """The engine's durable record beside the checkpoints: handed the store, the checkpoint
    codec, the kernel (clock and sequence), the facts' emitter, the holders (triggers expected
    after a recovery) and the instance counter (``ids``); the message buffer (``buffer``) is
    handed in once the hub, which records through the journal, is built."""

    #: The message buffer it records (``hub.Hub``).
    buffer: Buffer

    def __init__(self, store: Store, codec: Codec, kernel: Kernel, emit: Callable[..., Any],
                 holders: Holders, ids: Ids):
        self.store, self.codec, self.kernel = store, codec, kernel
        self.emit, self.holders, self.ids = emit, holders, ids
        self.written: dict[str, str] = {}  # meta values as last written
        self.deletes: list[str] = []  # instances whose checkpoint delete failed
        #: Checkpoint writes (None: a delete) not committed yet: the open group's, and a
        #: refused group's until a commit takes them. The newest per instance.
        self.unsynced: dict[str, bytes | None] = {}
        self.grouping = False  # a command that groups its writes is running
        self._open = False  # the store's group is open and holds every ``unsynced`` write
        self._limit = GROUP  # commit when ``unsynced`` holds this many
        #: Correlated message ids, oldest first, at most SEEN_WINDOW.
        self.seen: OrderedDict[str, None] = OrderedDict()
        self._seen_text: str | None = "[]"  # ``seen`` as JSON; None: changed since
        #: Instances whose checkpoint the store refused since its last one was written: the
        #: store's is behind them (recorded as meta ``behind``, ids joined by commas).
        self.behind: set[str] = set()
        self._behind_text = ""

    # -- meta -----------------------------------------------------------------------------
    def seen_text(self) -> str:
        if self._seen_text is None:
            self._seen_text = json.dumps(list(self.seen))
        return self._seen_text

    def changed(self, seq: bool = True) -> dict[str, str]:
        """Meta values that differ from what the store last recorded, in the order clock,
        seq, seed, next_instance, buffer, seen. The kernel's sequence goes with checkpoints and
        journal entries only (what carries hold numbers)."""
        # each value compared as it is made, without a dict of them all: once per checkpoint
        kernel = self.kernel
        written = self.written
        out: dict[str, str] = {}
        text = str(kernel.now)
        if written.get("clock") != text:
            out["clock"] = text
        if seq:
            text = str(kernel.seq)
            if written.get("seq") != text:
                out["seq"] = text
        text = str(self.ids.seed)
        if written.get("seed") != text:
            out["seed"] = text
        text = str(self.ids.next_instance)
        if written.get("next_instance") != text:
            out["next_instance"] = text
        text = self.buffer.buffer_rows()
        if written.get("buffer") != text:
            out["buffer"] = text
        text = self._seen_text if self._seen_text is not None else self.seen_text()
        if written.get("seen") != text:
            out["seen"] = text
        if written.get("behind", "") != self._behind_text:
            out["behind"] = self._behind_text
        return out

    def caught_up(self, iid: str) -> None:
        """The instance's checkpoint was written (or deleted): the store is not behind it."""
        self.behind.discard(iid)
        self._behind_text = ",".join(sorted(self.behind, key=lambda i: (len(i), i)))

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
        """Take back what the store recorded (restart recovery); a record that cannot be
        read is a StoreError naming it (``reading``)."""
        with reading("next_instance"):
            self.ids.next_instance = int(meta.get("next_instance", "0"))
        with reading("behind"):
            self.behind = set(filter(None, meta.get("behind", "").split(",")))
        self.caught_up("")
        with reading("seq"):
            self.kernel.advance_seq(int(meta.get("seq", "0")))
        with reading("seen"):
            for message_id in json.loads(meta.get("seen", "[]")):
                self.see(message_id)
        with reading("buffer"):
            for name, ckey, expiry, values, message_id in json.loads(meta.get("buffer", "[]")):
                self.buffer.buffer_message(name, ckey, expiry, values, message_id)
        self.written = dict(meta)

    # -- checkpoints ----------------------------------------------------------------------
    def put(self, iid: str, doc: dict[str, Any]) -> bool:
        """Write a checkpoint (and what meta changed) in one transaction, or into the open
        group; False if the store failed (a ``checkpoint_failed`` fact and a warning say so)."""
        try:
            raw = self.codec.encode(doc)
        except ValueError as exc:  # what JSON text cannot hold (refused where data enters)
            self.refused(iid, exc)
            return False
        self.buffer.covered(iid)
        if self.grouping:
            refusal = self._grouped(iid, raw)
            if refusal is not None:
                self.refused(iid, refusal)
                return False
        else:
            meta = self.changed()
            try:
                self.store.put(iid, raw, meta)
            except Exception as exc:  # a store can fail in many ways
                self.refused(iid, exc)
                return False
            self.written.update(meta)  # ``wrote``, inline: once per checkpoint
            if self.unsynced:
                self.unsynced.pop(iid, None)  # newer than what a refused group kept
        if self.deletes and iid in self.deletes:  # an id taken back and used again
            self.deletes.remove(iid)
        if self.behind:
            self.caught_up(iid)
        if self.holders.expected:  # only after a recovery, until its triggers are placed
            self.unexpected(iid)
        return True

    def put_all(self, docs: list[tuple[str, dict[str, Any]]]) -> bool:
        """The first checkpoints of new instances, all or none: one transaction on a store
        that groups writes, else one by one, the written ones taken back if one fails.
        False if the store refused (a ``checkpoint_failed`` fact says so)."""
        if not getattr(self.store, "groups", False):
            written: list[str] = []
            for iid, doc in docs:
                if not self.put(iid, doc):
                    for done in written:  # taken back (a failed delete is retried later)
                        self.delete(done)
                    return False
                written.append(iid)
            return True
        store = cast(Grouping, self.store)
        encode = self.codec.encode
        meta = self.changed()
        try:
            store.begin()
            for iid, doc in docs:
                store.put(iid, encode(doc))
            store.set_meta(meta)
            store.commit()
        except Exception as exc:
            self._abandon()
            self._not_committed(len(docs), exc)
            return False
        self.wrote(meta)
        return True

    def refused(self, iid: str, exc: BaseException) -> None:
        """A checkpoint the store refused: the instance stays resident."""
        cause = type(exc).__name__
        log.warning("checkpoint of instance %s not written (%s); it stays resident", iid, cause)
        self.behind.add(iid)
        self.caught_up("")  # (the text again)
        self.emit("checkpoint_failed", iid, None, None, {"cause": cause})

    def unexpected(self, iid: str) -> None:
        """The instance's new checkpoint (or its end) covers its journal: a recorded trigger
        whose wait it never armed again is gone, and said so with a ``trigger_dropped``."""
        expected = self.holders.expected
        for key in [k for k in expected if k[0] == iid] if expected else ():
            trigger = expected.pop(key)
            self.emit("trigger_dropped", iid, trigger.track, trigger.node,
                           {"trigger": trigger.kind,
                            "reason": "its wait was not armed again after recovery"})

    def delete(self, iid: str) -> None:
        """An instance ended: its checkpoint leaves the store (retried if the store fails)."""
        self.buffer.covered(iid)
        if self.grouping:
            refusal = self._grouped(iid, None)
            if refusal is not None:
                self._delete_failed(iid, refusal)
                return
        else:
            self.unsynced.pop(iid, None)  # a refused group's write of it is moot
            meta = self.changed()
            try:
                self.store.delete(iid, meta)
            except Exception as exc:
                self._delete_failed(iid, exc)
                return
            self.wrote(meta)
        if self.behind:
            self.caught_up(iid)
        self.unexpected(iid)

    def _delete_failed(self, iid: str, exc: BaseException) -> None:
        log.warning("checkpoint of finished instance %s not deleted (%s); retried later",
                    iid, type(exc).__name__)
        self.unsynced.pop(iid, None)
        if iid not in self.deletes:
            self.deletes.append(iid)

    # -- group commit ---------------------------------------------------------------------
    def group(self) -> None:
        """A command that runs the scheduler begins: its writes join one group."""
        store = self.store
        if store.durable and getattr(store, "groups", False):
            self.grouping = True

    def _grouped(self, iid: str, raw: bytes | None) -> BaseException | None:
        """Write (``raw``) or delete a checkpoint inside the open group; what the store
        raised if it refused (the write undone, the rest of the group kept if it can be)."""
        store = self.store
        try:
            if not self._open:
                self._reopen()
            if raw is None:
                store.delete(iid)
            else:
                store.put(iid, raw)
        except Exception as exc:
            if not cast(Grouping, store).in_group():  # the group is gone, not this write
                self._open = False  # alone: the next commit writes it all again
            return exc
        self.unsynced[iid] = raw
        if len(self.unsynced) >= self._limit:
            self.commit(raising=False)
        return None

    def _reopen(self) -> None:
        """Open the store's group with every write not committed yet in it."""
        store = cast(Grouping, self.store)
        store.rollback()  # what a refused reopening left
        store.begin()
        for iid, raw in self.unsynced.items():
            if raw is None:
                store.delete(iid)
            else:
                store.put(iid, raw)
        self._open = True

    def _abandon(self) -> None:
        self._open = False
        try:
            cast(Grouping, self.store).rollback()
        except Exception:  # a store can fail in many ways; its next commit tries again
            log.warning("the store could not roll back its group", exc_info=True)

    def commit(self, raising: bool = True) -> None:
        """Commit what the group holds, with the meta that changed. If the store refuses,
        the writes stay in ``unsynced`` for the next commit, a ``checkpoint_failed`` fact
        counts them, and (``raising``: at a command's end) StoreError says so."""
        if not self.unsynced and not self._open:
            return
        store = cast(Grouping, self.store)
        meta = self.changed()
        try:
            if not self._open:
                self._reopen()
            if meta:
                store.set_meta(meta)
            store.commit()
        except Exception as exc:
            self._abandon()
            count = len(self.unsynced)
            self._limit = count + GROUP  # not again at every write while the store is down
            cause = self._not_committed(count, exc)
            if raising:
                raise StoreError(f"the command ran, but the store failed to commit its "
                                 f"{count} checkpoint writes and the clock ({cause}: {exc}); "
                                 "they are kept and written at the end of the next command; "
                                 "a restart now would resume at the last recorded "
                                 "time") from None
            return
        self._open = False
        self._limit = GROUP
        self.unsynced.clear()
        self.wrote(meta)

    def set_meta(self, meta: dict[str, str]) -> None:
        """Meta written on its own (a version's registry, a start timer's deadline): the
        open group is committed first, so what the store refuses is this write alone."""
        if self._open:
            self.commit(raising=False)
        self.store.set_meta(meta)

    def _not_committed(self, count: int, exc: BaseException) -> str:
        """A group the store refused: a warning and a ``checkpoint_failed`` fact count its
        writes; the cause's name."""
        cause = type(exc).__name__
        log.warning("%d checkpoint writes not committed (%s)", count, cause)
        self.emit("checkpoint_failed", None, None, None, {"cause": cause, "checkpoints": count})
        return cause

    def read(self, iid: str) -> bytes:
        """An instance's checkpoint: what the group holds for it, else the store's."""
        raw = self.unsynced.get(iid) if self.unsynced else None
        if raw is not None:
            return raw
        if self.unsynced and iid in self.unsynced:
            raise KeyError(f"no checkpoint for instance {iid!r}")
        return self.store.get(iid)

    def settle(self) -> None:
        """The end of a public command: retry failed deletes, commit the group, record the
        clock and counters."""
        store = self.store
        for iid in list(self.deletes):
            self.deletes.remove(iid)
            self.delete(iid)
        if not store.durable:
            return
        self.grouping = False
        if self.unsynced or self._open:
            self.commit()
            return
        meta = self.changed(seq=False)
        if not meta:
            return
        try:
            store.set_meta(meta)
        except Exception as exc:
            self.emit("checkpoint_failed", None, None, None, {"cause": type(exc).__name__})
            raise StoreError(f"the command ran, but the store failed to record the clock "
                              f"and counters ({type(exc).__name__}: {exc}); a restart now "
                              "would resume at the last recorded time") from None
        self.wrote(meta)

    # -- accepted triggers ----------------------------------------------------------------
    def record(self, triggers: list[tuple[str, Trigger]], force: bool = False) -> None:
        """Record accepted triggers (and, with ``force``, the meta even with none) durably
        before they change anything; EngineError if the store fails."""
        store = self.store
        if not store.durable or not (triggers or force):
            return
        if self._open:  # the group first: the entries must be committed on their own
            self.commit(raising=False)
        stale = [iid for iid, _ in triggers if iid in self.unsynced]
        if stale:  # its writing again would drop the entries it never covered
            raise EngineError(f"the trigger was not accepted: the store has not committed "
                              f"the checkpoint of instance {stale[0]!r} yet (it refused "
                              "the last commit); nothing changed")
        kernel = self.kernel
        at, seq = kernel.now, kernel.seq  # one call's triggers share both (``replay``)
        rows = [(iid, json.dumps({"at": at, "seq": seq, "kind": t.kind, "node": t.node,
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

    def replay(self, entries: list[Entry], redeliver: Callable[[str, Trigger], None]) -> int:
        """Deliver every trigger the store still records (``entries``, read back by
        ``damage.read_journal``), once each, in order, each after the events that were due
        before it was accepted (an overdue timer that had fired before a message still comes
        first); then run what is due up to the recovered clock. Triggers accepted together
        (one broadcast reaching two waits of an instance) are delivered together, nothing
        run between them, as they were. A trigger whose wait the instance has not armed
        again yet is delivered when it does (``redeliver``: the engine's
        ``Core.redeliver``)."""
        kernel = self.kernel
        accepted: tuple[Any, Any] | None = None
        for iid, at, seq, trigger in entries:
            together, accepted = accepted, (at, seq)
            if together != accepted or seq is None:
                kernel.run(until=kernel.now if at is None else min(at, kernel.now))
            redeliver(iid, trigger)
        kernel.run(until=kernel.now)
        return len(entries)
