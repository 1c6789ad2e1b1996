"""Checkpoint codec (JSON, schema-versioned, validated on read) and stores."""

from . import codec
from .stores import MemoryStore, SQLiteStore

__all__ = ["MemoryStore", "SQLiteStore", "codec"]
