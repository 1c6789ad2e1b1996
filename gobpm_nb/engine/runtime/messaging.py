"""``Messages``: what an instance needs of the engine's messages and signals.

A catch event or receive task takes a buffered message, a throw event publishes one or
broadcasts a signal; ``hub.Hub`` does it. An instance sees only this protocol (``RunHost.hub``),
so the instance's module and the hub never name each other.
"""

from __future__ import annotations

from typing import Any, Protocol


class Messages(Protocol):
    """Take a buffered message, publish a message, broadcast a signal (``hub.Hub``)."""

    def take_buffered(self, name: str, ckey: str, iid: str, stored: bool
                      ) -> dict[str, Any] | None: ...
    def publish_message(self, name: str, key: Any = None,
                        payload: dict[str, Any] | None = None, message_id: str | None = None,
                        ttl: Any = None, generation: int = 0) -> str | None: ...
    def broadcast_signal(self, name: str, payload: dict[str, Any] | None = None,
                         generation: int = 0) -> int: ...


__all__ = ["Messages"]
