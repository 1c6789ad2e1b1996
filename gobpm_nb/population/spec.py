"""What a run needs of a scenario, in small parts: a pool, a message or signal from
outside, and ``Plan``, the protocol the driver, the results and the replications read a
scenario through (so none of them imports ``scenario``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..model import Process
from ..model import elements as el
from ..model.expr import Expr
from .arrivals import Arrivals
from .calendars import ALWAYS, Calendar
from .draws import Distribution, Generator


@dataclass(frozen=True)
class Pool:
    """A pool of ``size`` resources (None: unlimited) working by ``calendar``."""

    name: str
    size: int | None
    calendar: Calendar
    cost_per_hour: float


@dataclass(frozen=True)
class Outside:
    """A message or signal sent from outside for a share of the cases, ``after`` (a
    duration distribution) from the case's arrival."""

    kind: str
    name: str
    after: Distribution
    share: float
    key: str | None
    payload: dict[str, Any] | None


#: Where work of a task that no pool is assigned goes: no limit, no wait, no cost.
UNASSIGNED = Pool("(unassigned)", None, ALWAYS, 0.0)


class Plan(Protocol):
    """A scenario as a run reads it (``Scenario``): times in virtual microseconds."""

    process: Process
    start: int
    warmup: int
    horizon: int
    drain: int
    seed: int
    sla: int | None
    arrivals: Arrivals
    data: dict[str, Generator]
    durations: dict[str, Distribution]
    pools: dict[str, Pool]
    priority: dict[str, Expr]
    outside: list[Outside]
    lanes: dict[str, str]

    def runnable(self) -> Process: ...

    def to_dict(self) -> dict[str, Any]: ...

    def pool_of(self, task: str) -> Pool: ...

    def replace(self, **changes: Any) -> Plan: ...

    def run(self, *, progress: bool | None = None) -> Any: ...


def is_work(node: el.Element | None) -> bool:
    """Whether a node is work a pool's resources do: a user task or a worker service task."""
    return isinstance(node, el.UserTask) or (isinstance(node, el.ServiceTask)
                                             and node.topic is not None)
