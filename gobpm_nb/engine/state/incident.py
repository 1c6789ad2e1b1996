"""An incident: what stops an instance, naming the element and the cause."""

from __future__ import annotations

from typing import Any

from .values import json_copy


class Incident(Exception):
    """The instance cannot go on: the message names the element and the cause; ``details``
    (names and counts) go into the ``incident`` fact beside the cause."""

    def __init__(self, node: str, cause: str, error: str | None = None,
                 details: dict[str, Any] | None = None):
        self.node = node
        self.cause = cause
        self.error = error
        self.details = details
        super().__init__(f"{node}: {cause}")


def clean(values: Any, node: str) -> dict[str, Any] | None:
    """What a merge takes from ``values`` (task outputs, a payload, what a script returned):
    None when there is nothing, else a JSON copy; anything else is an incident at ``node``."""
    if not values:
        return None
    if not isinstance(values, dict):
        raise Incident(node, f"returned {type(values).__name__}, not a dict")
    try:
        copied: dict[str, Any] = json_copy(values, "data")
    except ValueError as exc:
        raise Incident(node, f"returned data that is not JSON: {exc}") from None
    return copied
