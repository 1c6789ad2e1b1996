"""A checkpoint store that fails on purpose, for tests of the engine's store-failure paths."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any


class Flaky:
    """Wraps a store; ``get``, ``put`` and ``delete`` raise ``OSError`` as ``plan`` says.

    ``plan`` is a list of booleans consumed one per call of those three methods, in call order
    (True: this call fails, before it reaches the inner store, so the inner store is unchanged).
    Once the plan is used up, or after ``calm()``, nothing fails. Every other method of the
    inner store (``set_meta``, ``meta``, ``ids``, ``record``, ``journal``…) is passed through
    and never fails. ``failures`` counts the failures by method and ``calls`` the
    calls, so a test can check that the store really failed.

    ``get_budget`` (None: no limit) bounds how often ``get`` fails for one instance in all:
    a planned failure beyond it is skipped (the call succeeds, the plan entry is used), so
    that the wakes of one instance are delayed by at most that many retries."""

    def __init__(self, inner: Any, plan: Iterable[bool] = (), get_budget: int | None = None):
        self.inner = inner
        self.plan = list(plan)
        self.get_budget = get_budget
        self.failed_gets: Counter[str] = Counter()
        self.durable = inner.durable
        self.calls: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.log: list[tuple[str, str, bool]] = []  # (method, instance, failed)
        self._next = 0
        self._calm = False

    def calm(self) -> None:
        """From now on nothing fails (used before reading outcomes)."""
        self._calm = True

    def _gate(self, method: str, instance: str) -> None:
        self.calls[method] += 1
        fail = False
        if not self._calm and self._next < len(self.plan):
            fail = self.plan[self._next]
            self._next += 1
        if fail and method == "get" and self.get_budget is not None:
            fail = self.failed_gets[instance] < self.get_budget
            self.failed_gets[instance] += fail
        self.log.append((method, instance, fail))
        if fail:
            self.failures[method] += 1
            raise OSError(f"flaky store: {method} of {instance!r} refused "
                          f"(call {sum(self.calls.values())})")

    def get(self, instance: str) -> bytes:
        self._gate("get", instance)
        return self.inner.get(instance)

    def put(self, instance: str, doc: bytes, meta: dict[str, str] | None = None) -> None:
        self._gate("put", instance)
        self.inner.put(instance, doc, meta)

    def delete(self, instance: str, meta: dict[str, str] | None = None) -> None:
        self._gate("delete", instance)
        self.inner.delete(instance, meta)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "inner":  # no recursion before __init__ is done
            raise AttributeError(name)
        return getattr(self.inner, name)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    def __len__(self) -> int:
        return len(self.inner)


def bounded(plan: Iterable[bool], run: int = 3) -> list[bool]:
    """The plan with at most ``run`` failures in a row (a failure after ``run`` in a row
    becomes a success)."""
    out: list[bool] = []
    streak = 0
    for fail in plan:
        fail = bool(fail) and streak < run
        streak = streak + 1 if fail else 0
        out.append(fail)
    return out
