"""Checkpoint stores. Both keep encoded bytes: what a store holds is never a live object.

A store holds three things: one checkpoint per instance, a few ``meta`` values (the clock,
counters, the version registry, buffered messages) and a **journal** of triggers accepted
for instances but not yet covered by their checkpoints. Writing an instance's checkpoint or
deleting it drops that instance's journal entries in the same transaction.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import EngineError, StoreError

#: Writing a row over its key: an upsert updates the row in place where INSERT OR REPLACE
#: deletes and inserts it (measurably dearer per commit); upserts need SQLite 3.24.
if sqlite3.sqlite_version_info >= (3, 24, 0):
    PUT_DOC = ("INSERT INTO checkpoints VALUES (?, ?) "
               "ON CONFLICT (instance) DO UPDATE SET doc = excluded.doc")
    PUT_META = ("INSERT INTO meta VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value")
else:  # an older SQLite
    PUT_DOC = "INSERT OR REPLACE INTO checkpoints VALUES (?, ?)"
    PUT_META = "INSERT OR REPLACE INTO meta VALUES (?, ?)"

#: What a memory store holds: checkpoints by instance, meta values, journal entries.
Contents = tuple[dict[str, bytes], dict[str, str], list[tuple[str, str]]]


class MemoryStore:
    """Checkpoints as encoded bytes in a dict: dehydration is real even in memory."""

    durable = False

    def __init__(self) -> None:
        self._docs: dict[str, bytes] = {}
        self._meta: dict[str, str] = {}
        self._journal: list[tuple[str, str]] = []

    def put(self, instance: str, doc: bytes, meta: Mapping[str, str] | None = None) -> None:
        self._docs[instance] = bytes(doc)
        self._meta.update(meta or {})
        self._drop(instance)

    def get(self, instance: str) -> bytes:
        try:
            return self._docs[instance]
        except KeyError:
            raise KeyError(f"no checkpoint for instance {instance!r}") from None

    def delete(self, instance: str, meta: Mapping[str, str] | None = None) -> None:
        self._docs.pop(instance, None)
        self._meta.update(meta or {})
        self._drop(instance)

    def _drop(self, instance: str) -> None:
        if self._journal:
            self._journal = [e for e in self._journal if e[0] != instance]

    def record(self, entries: list[tuple[str, str]],
               meta: Mapping[str, str] | None = None) -> None:
        self._journal.extend(entries)
        self._meta.update(meta or {})

    def journal(self) -> list[tuple[str, str]]:
        return list(self._journal)

    def set_meta(self, meta: Mapping[str, str]) -> None:
        self._meta.update(meta)

    def ids(self) -> list[str]:
        return sorted(self._docs)

    def meta(self) -> dict[str, str]:
        return dict(self._meta)

    def __len__(self) -> int:
        return len(self._docs)

    def contents(self) -> Contents:
        """Copies of what it holds: checkpoints, meta and journal entries."""
        return dict(self._docs), dict(self._meta), list(self._journal)

    def replace(self, contents: Contents) -> None:
        """Hold exactly ``contents`` (as ``contents()`` gives them): a rewind puts back what
        the store held at the point rewound to."""
        docs, meta, journal = contents
        self._docs, self._meta, self._journal = dict(docs), dict(meta), list(journal)


#: Lock files held in this process where the runtime has no ``flock`` (descriptor -> the lock
#: file's real path): Pyodide in a browser, whose ``fcntl`` has no ``flock``.
_HELD_HERE: dict[int, str] = {}


def writer_lock(path: str) -> int | None:
    """Take the one-writer lock of the SQLite file at ``path``: an exclusive ``flock`` on
    ``<path>.lock``, held until the store is closed (or its process ends, however it ends:
    a killed process leaves no lock behind). Returns its descriptor (None for an in-memory
    database); StoreError naming the file if another open store holds it.

    Where the runtime has no ``flock`` (Pyodide in a browser: ``fcntl`` lacks it, or it
    fails with ENOSYS) the lock is an entry in this process's table of open lock files
    instead. That runtime is a single process with a file system of its own, so the table
    refuses every second writer ``flock`` would; where ``flock`` exists it is always used."""
    if path in ("", ":memory:"):
        return None
    lock_file = f"{path}.lock"
    try:
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StoreError(f"SQLiteStore cannot open {path!r}: its lock file cannot be made "
                         f"({exc.strerror})") from None
    try:
        if not _flock(fd):
            _hold_here(fd, lock_file)
    except OSError:
        os.close(fd)
        raise StoreError(f"SQLiteStore {path!r} is open in another store (one writer at a "
                         "time): close that store first (store.close(); an engine's store is "
                         "eng.store), or let its process end") from None
    return fd


def _flock(fd: int) -> bool:
    """An exclusive, non-blocking ``flock`` on ``fd``: True once taken, False where the
    runtime has none; OSError if another descriptor holds it."""
    flock = getattr(fcntl, "flock", None)
    if flock is None:
        return False
    try:
        flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno == errno.ENOSYS:
            return False
        raise
    return True


def _hold_here(fd: int, lock_file: str) -> None:
    """The lock without ``flock``: an entry in this process's table; OSError if the file
    has one already."""
    held = os.path.realpath(lock_file)
    if held in _HELD_HERE.values():
        raise BlockingIOError(errno.EWOULDBLOCK, "held by a store in this process", lock_file)
    _HELD_HERE[fd] = held


class SQLiteStore:
    """Durable checkpoints in SQLite (WAL): every write is one transaction, except inside a
    group (``begin`` ... ``commit``), where they all share one. One open store writes a
    file at a time (``writer_lock``): opening a second one on it raises StoreError."""

    durable = True
    _lock: int | None = None

    def __init__(self, path: str | Path):
        if not isinstance(path, (str, Path)):
            raise StoreError(f"SQLiteStore needs a file path, got {type(path).__name__}")
        self.path = str(path)
        if "\0" in self.path:
            raise StoreError(f"SQLiteStore path {self.path!r} holds a NUL character: no file "
                             "has that name")
        if Path(self.path).is_dir():
            raise StoreError(f"SQLiteStore path {self.path!r} is a directory, not a file")
        self._lock = writer_lock(self.path)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA cache_size=-256")  # KiB: reads are one row at a time
            self._db.execute("CREATE TABLE IF NOT EXISTS checkpoints "
                             "(instance TEXT PRIMARY KEY, doc BLOB NOT NULL)")
            # meta WITHOUT ROWID: a row lives in its key's b-tree, so a write touches one
            # page, not a table page and its key index's (nearly every checkpoint writes a
            # meta row). Not the checkpoints: a document over ~1 KB would spill into a page
            # of its own there, doubling the file. New files only; the statements are the
            # same for both layouts.
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT) "
                             "WITHOUT ROWID")
            self._db.execute("CREATE TABLE IF NOT EXISTS journal (n INTEGER PRIMARY KEY "
                             "AUTOINCREMENT, instance TEXT NOT NULL, entry TEXT NOT NULL)")
            # each checkpoint drops its instance's entries: found by index, not by a scan of
            # every entry (many triggers accepted at one instant made that quadratic)
            self._db.execute("CREATE INDEX IF NOT EXISTS journal_instance "
                             "ON journal (instance)")
            #: Instances that may have journal entries (a superset): a checkpoint of any
            #: other skips the delete. Read once: while the store is open, its engine is
            #: the only writer of the file.
            self._journaled = {r[0] for r in self._db.execute(
                "SELECT DISTINCT instance FROM journal")}
        except sqlite3.Error as exc:
            self._unlock()
            raise StoreError(f"SQLiteStore cannot open {self.path!r}: {exc}") from None
        #: A group is open (``begin``): writes join one transaction until ``commit``.
        self._group = False
        self._group_dropped: set[str] = set()  # journaled instances dropped in the group

    def _meta_rows(self, meta: Mapping[str, str] | None) -> None:
        if meta:
            self._db.executemany(PUT_META, sorted(meta.items()))

    def _drop(self, instance: str) -> bool:
        """Delete the instance's journal entries (in the open transaction); whether there
        may have been any."""
        if instance not in self._journaled:
            return False
        self._db.execute("DELETE FROM journal WHERE instance = ?", (instance,))
        return True

    # -- group commit ---------------------------------------------------------------------
    def begin(self) -> None:
        """Open a group: every write until ``commit`` (or ``rollback``) joins one transaction
        instead of committing on its own. A write that fails inside it is undone alone
        (``in_group`` stays true), unless SQLite rolled the whole group back."""
        if not self._group:
            self._db.execute("BEGIN")
            self._group = True
            self._group_dropped = set()

    def commit(self) -> None:
        """Commit the open group; on failure it is rolled back and the error raised."""
        if not self._group:
            return
        try:
            self._db.execute("COMMIT")
        except BaseException:
            self.rollback()
            raise
        self._group = False
        self._journaled -= self._group_dropped

    def in_group(self) -> bool:
        """Whether a group is open and holds every write made in it: a write that failed
        inside it undid itself alone, unless SQLite rolled the whole group back (an I/O
        error, a full disk), which this tells."""
        if self._group and not self._db.in_transaction:
            self._group = False  # SQLite ended it: nothing of it happened
        return self._group

    def _still_open(self) -> None:
        """Refuse a write into a group SQLite has rolled back (it would commit on its own)."""
        if not self.in_group():
            raise StoreError("the open group of writes was rolled back")

    def _undo(self, whole: bool) -> None:
        """A write inside the group failed: take back what of it was done (a savepoint's
        worth), or, if that cannot be done, the whole group."""
        if not self.in_group() or not whole:
            return
        try:
            self._db.execute("ROLLBACK TO write")
            self._db.execute("RELEASE write")
        except sqlite3.Error:
            self.rollback()

    def rollback(self) -> None:
        """Abandon the open group: none of its writes happened."""
        self._group = False
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def put(self, instance: str, doc: bytes, meta: Mapping[str, str] | None = None) -> None:
        self._write(instance, meta, PUT_DOC, (instance, bytes(doc)))

    def _write(self, instance: str, meta: Mapping[str, str] | None, sql: str,
               args: tuple[Any, ...]) -> None:
        """One checkpoint row written or deleted, the instance's journal entries dropped
        and ``meta`` recorded: a transaction of its own, or a part of the open group."""
        db = self._db
        if self._group:
            self._still_open()
            # more than one statement: a savepoint keeps the write whole if one fails
            whole = bool(meta) or instance in self._journaled
            try:
                if whole:
                    db.execute("SAVEPOINT write")
                db.execute(sql, args)
                if self._drop(instance):
                    self._group_dropped.add(instance)
                self._meta_rows(meta)
                if whole:
                    db.execute("RELEASE write")
            except BaseException:
                self._undo(whole)
                raise
            return
        with db:
            db.execute("BEGIN")
            db.execute(sql, args)
            dropped = self._drop(instance)
            self._meta_rows(meta)
        if dropped:  # committed: the instance has no entries left
            self._journaled.discard(instance)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """A transaction of its own, or (inside a group) a part of the open one, whole or
        undone (a savepoint)."""
        if self._group:
            self._still_open()
            self._db.execute("SAVEPOINT write")
            try:
                yield
                self._db.execute("RELEASE write")
            except BaseException:
                self._undo(True)
                raise
            return
        with self._db:
            self._db.execute("BEGIN")
            yield

    def get(self, instance: str) -> bytes:
        row = self._db.execute("SELECT doc FROM checkpoints WHERE instance = ?",
                               (instance,)).fetchone()
        if row is None:
            raise KeyError(f"no checkpoint for instance {instance!r}")
        return bytes(row[0])

    def delete(self, instance: str, meta: Mapping[str, str] | None = None) -> None:
        self._write(instance, meta, "DELETE FROM checkpoints WHERE instance = ?", (instance,))

    def record(self, entries: list[tuple[str, str]],
               meta: Mapping[str, str] | None = None) -> None:
        # noted before the write: a failed one leaves a superset, which costs a delete
        self._journaled.update(iid for iid, _ in entries)
        with self._transaction():
            self._db.executemany("INSERT INTO journal (instance, entry) VALUES (?, ?)", entries)
            self._meta_rows(meta)

    def journal(self) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self._db.execute(
            "SELECT instance, entry FROM journal ORDER BY n")]

    def set_meta(self, meta: Mapping[str, str]) -> None:
        with self._transaction():
            self._meta_rows(meta)

    def ids(self) -> list[str]:
        return [r[0] for r in self._db.execute(
            "SELECT instance FROM checkpoints ORDER BY instance")]

    def meta(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT key, value FROM meta ORDER BY key"))

    def close(self) -> None:
        """Close the database and give up its writer lock."""
        self._db.close()
        self._unlock()

    def _unlock(self) -> None:
        fd, self._lock = self._lock, None
        if fd is not None:
            _HELD_HERE.pop(fd, None)
            os.close(fd)  # the flock goes with its descriptor

    def __del__(self) -> None:  # a store dropped unclosed frees its file for the next one
        self._unlock()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0])


STORE_METHODS = ("put", "get", "delete", "record", "journal", "set_meta", "meta", "ids")


def check_store(store: Any) -> None:
    """EngineError naming the store when it lacks a method a checkpoint store has."""
    missing = [m for m in STORE_METHODS if not callable(getattr(store, m, None))]
    if missing or not hasattr(store, "durable"):
        raise EngineError(f"store {store!r} is not a checkpoint store (it lacks "
                          f"{', '.join(missing) or 'durable'})")


def read_store(store: Any) -> tuple[list[str], dict[str, str]]:
    """The store's instance ids and meta; EngineError naming the store if it cannot say."""
    try:
        return list(store.ids()), dict(store.meta())
    except Exception as exc:
        raise EngineError(f"store {store!r} cannot be read ({type(exc).__name__}: {exc})"
                          ) from None
