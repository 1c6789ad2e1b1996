"""The ad-hoc subprocess: a subprocess with no start event whose inner elements run when
activated (docs/semantics.md); beside the other subprocesses, in a module of its own."""

from __future__ import annotations

from dataclasses import dataclass

from .elements import SubProcess
from .expr import Expr


@dataclass(frozen=True)
class AdHocSubProcess(SubProcess):
    """No start event: its inner elements with no incoming flow run when ``collection`` (on
    entry) or a person (``Engine.activate``) activates them; docs/semantics.md."""

    collection: Expr | None = None
    completion: Expr | None = None
    cancel_remaining: bool = True
    sequential: bool = False
    kind = "adhoc_subprocess"
