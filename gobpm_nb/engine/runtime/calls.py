"""``Calls``: what a call activity needs of the engine its instance runs in.

A call activity (``elements.call_activities``) starts a child instance of a deployed process
and looks up its chain of callers. It reaches the engine through its instance's host, which
is a ``Calls`` too (``run.RunHost``), so the element never names the engine's core.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ...model import Definition


class Calls(Protocol):
    """The deployed versions a call may call, how an instance is made, the instance records
    and how deep calls may nest (the ``Core``)."""

    max_call_depth: int  # how deep call activities may nest (``check_depth``)

    @property
    def runs(self) -> Mapping[str, Any]:
        """Instance id -> its record (``Run``, ``Dehydrated`` or ``Finished``)."""

    def callable(self, pid: str, version: int | None) -> Definition | None:
        """The newest deployed version of ``pid``, or ``version``."""

    def launch(self, defn: Definition, values: dict[str, Any] | None, key: str | None,
               at: str, by: str | None = None, parent: tuple[str, str] | None = None) -> str:
        """A new instance of ``defn`` at start event ``at`` (a call's child: ``by`` is
        ``call``, ``parent`` its caller's instance and track); its id."""


__all__ = ["Calls"]
