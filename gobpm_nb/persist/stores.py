"""Checkpoint stores. Both keep encoded bytes: what a store holds is never a live object."""

from __future__ import annotations

import sqlite3
from pathlib import Path


class MemoryStore:
    """Checkpoints as encoded bytes in a dict: dehydration is real even in memory."""

    durable = False

    def __init__(self) -> None:
        self._docs: dict[str, bytes] = {}
        self._meta: dict[str, str] = {}

    def put(self, instance: str, doc: bytes, meta: dict[str, str] | None = None) -> None:
        self._docs[instance] = bytes(doc)
        self._meta.update(meta or {})

    def get(self, instance: str) -> bytes:
        try:
            return self._docs[instance]
        except KeyError:
            raise KeyError(f"no checkpoint for instance {instance!r}") from None

    def delete(self, instance: str, meta: dict[str, str] | None = None) -> None:
        self._docs.pop(instance, None)
        self._meta.update(meta or {})

    def set_meta(self, meta: dict[str, str]) -> None:
        self._meta.update(meta)

    def ids(self) -> list[str]:
        return sorted(self._docs)

    def meta(self) -> dict[str, str]:
        return dict(self._meta)

    def __len__(self) -> int:
        return len(self._docs)


class SQLiteStore:
    """Durable checkpoints in SQLite (WAL): each checkpoint is written in one transaction."""

    durable = True

    def __init__(self, path: str | Path):
        self.path = str(path)
        self._db = sqlite3.connect(self.path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA cache_size=-256")  # KiB: reads are one row at a time
        self._db.execute("CREATE TABLE IF NOT EXISTS checkpoints "
                         "(instance TEXT PRIMARY KEY, doc BLOB NOT NULL)")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")

    def _meta_rows(self, meta: dict[str, str] | None) -> None:
        for key, value in sorted((meta or {}).items()):
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def put(self, instance: str, doc: bytes, meta: dict[str, str] | None = None) -> None:
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("INSERT OR REPLACE INTO checkpoints VALUES (?, ?)",
                             (instance, bytes(doc)))
            self._meta_rows(meta)

    def get(self, instance: str) -> bytes:
        row = self._db.execute("SELECT doc FROM checkpoints WHERE instance = ?",
                               (instance,)).fetchone()
        if row is None:
            raise KeyError(f"no checkpoint for instance {instance!r}")
        return bytes(row[0])

    def delete(self, instance: str, meta: dict[str, str] | None = None) -> None:
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM checkpoints WHERE instance = ?", (instance,))
            self._meta_rows(meta)

    def set_meta(self, meta: dict[str, str]) -> None:
        with self._db:
            self._db.execute("BEGIN")
            self._meta_rows(meta)

    def ids(self) -> list[str]:
        return [r[0] for r in self._db.execute(
            "SELECT instance FROM checkpoints ORDER BY instance")]

    def meta(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT key, value FROM meta ORDER BY key"))

    def close(self) -> None:
        self._db.close()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0])
