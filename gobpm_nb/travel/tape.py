"""The tape: what the world outside the engine answered while commands ran, so that a replay
of those commands (a rewind, a branch) is handed the same answers and runs no side effect
twice — the idea of durable-execution engines' replay.

Two things are recorded, each in the order it happened:

- **User callables** (a script or service task's ``fn``, a condition or a correlation key
  that is a Python callable): each call is recorded with its *site* (what called it and at
  which node) and its outcome, already normalized by the engine (the dict to merge, the
  error code raised, the answer of a condition, the incident it caused). Safe string
  expressions are not recorded: they are pure.
- **Store failures**: every call the engine makes on its store is counted; a call that
  raised is recorded with its number and its exception, so a replay on a memory store fails
  the same calls (a wake that failed fails again, a checkpoint that was refused is refused).

While recording, a call runs and its outcome is appended. While an outcome is recorded at
the tape's position, the call is *served*: the recorded outcome is returned (or raised) and
nothing runs. A site that differs from the recorded one, or a call past the end of a tape
that only serves, raises ``Diverged``: the replay went another way than the run it replays.

The engine does not import this module: the facade hands each core its tape
(``Core(tape=...)``, an ``engine.outside.Outside`` to the engine) and the store wrapped in it
(``TapedStore``); time travel reads, positions and copies it (``taped(core).tape``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Site = tuple[str, str]  # (what called, node)


class Diverged(BaseException):
    """A replay asked the tape for something other than what the recorded run asked. A
    ``BaseException``: the engine's handlers of user and store errors (``except Exception``)
    must not take it for one; it ends the replay, whose engine is thrown away."""


class Tape:
    """Outcomes of user callables and the store's failures, with a reading position."""

    __slots__ = ("outcomes", "at", "calls", "failures", "failed", "serving", "keeping")

    def __init__(self, outcomes: list[tuple[Site, bool, Any]] | None = None, at: int = 0,
                 calls: int = 0, failures: list[tuple[int, BaseException]] | None = None,
                 failed: int = 0, serving: bool = False):
        #: (site, returned, value or exception), in call order.
        self.outcomes = outcomes if outcomes is not None else []
        self.at = at  # the next outcome to serve or record
        self.calls = calls  # store calls made so far
        #: (number of the store call, what it raised), in call order.
        self.failures = failures if failures is not None else []
        self.failed = failed  # the next failure to serve or record
        #: Only serve: a call past the end is a divergence, never a live call.
        self.serving = serving
        #: Whether anything is recorded (not on a durable store: its engine keeps no
        #: command history).
        self.keeping = True

    def position(self) -> tuple[int, int, int]:
        """Where it stands: (outcomes read, store calls made, failures read)."""
        return self.at, self.calls, self.failed

    def call(self, site: Site, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``'s outcome: served from the tape when recorded there, else run and
        recorded. ``fn`` is the engine's wrapper around the user's callable: it returns the
        normalized value, or raises the engine's own error (an incident)."""
        if not self.keeping:
            return fn(*args)
        at = self.at
        outcomes = self.outcomes
        if at < len(outcomes):
            recorded, returned, value = outcomes[at]
            if recorded != site:
                raise Diverged(f"the replay called {site[0]} at {site[1]!r} where the run "
                               f"called {recorded[0]} at {recorded[1]!r}")
            self.at = at + 1
            if returned:
                return value
            raise value.with_traceback(None)
        if self.serving:
            raise Diverged(f"the replay called {site[0]} at {site[1]!r}, more user code "
                           "than the run it replays")
        try:
            value = fn(*args)
        except Exception as exc:
            outcomes.append((site, False, exc))
            self.at = at + 1
            raise
        outcomes.append((site, True, value))
        self.at = at + 1
        return value

    def store_call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """A call on the store: fails as recorded, or runs (a failure is recorded)."""
        if not self.keeping:
            return fn(*args)
        self.calls = n = self.calls + 1
        failed = self.failed
        failures = self.failures
        if failed < len(failures):
            number, exc = failures[failed]
            if number == n:
                self.failed = failed + 1
                raise exc.with_traceback(None)
            return fn(*args)
        try:
            return fn(*args)
        except Exception as exc:
            if self.serving:
                raise Diverged(f"store call {n} failed in the replay ({type(exc).__name__}) "
                               "but not in the run it replays") from None
            failures.append((n, exc))
            self.failed = failed + 1
            raise

    def untrace(self, at: int, failed: int) -> None:
        """Drop the tracebacks of the errors recorded since a position (the command that
        met them is over): a kept traceback would keep every frame it passed through."""
        errors = [v for _, returned, v in self.outcomes[at:] if not returned]
        for exc in errors + [exc for _, exc in self.failures[failed:]]:
            exc.__traceback__ = exc.__context__ = exc.__cause__ = None

    def cut(self) -> None:
        """Forget everything past the position (a new command after a rewind: the history
        that was rewound over is discarded)."""
        del self.outcomes[self.at:]
        del self.failures[self.failed:]

    def copy(self) -> Tape:
        """An independent tape with what was recorded up to the position (a branch)."""
        return Tape(self.outcomes[:self.at], self.at, self.calls,
                    self.failures[:self.failed], self.failed)

    def reading(self, at: int, calls: int, failed: int) -> Tape:
        """A tape that serves this one's records from a position (a replay's)."""
        return Tape(self.outcomes, at, calls, self.failures, failed, serving=True)


class TapedStore:
    """The engine's view of its store: every call counted on the tape, failures recorded
    (and, in a replay, failed again as recorded)."""

    def __init__(self, inner: Any, tape: Tape):
        self.inner = inner
        self.tape = tape
        self.durable: bool = bool(inner.durable)
        #: Whether the store can group writes into one transaction (``journal.Grouping``).
        self.groups = all(callable(getattr(inner, name, None))
                          for name in ("begin", "commit", "rollback", "in_group"))

    def put(self, instance: str, doc: bytes, meta: Mapping[str, str] | None = None) -> None:
        self.tape.store_call(self.inner.put, instance, doc, meta)

    def begin(self) -> None:
        self.tape.store_call(self.inner.begin)

    def commit(self) -> None:
        self.tape.store_call(self.inner.commit)

    def rollback(self) -> None:
        self.tape.store_call(self.inner.rollback)

    def in_group(self) -> bool:
        return bool(self.inner.in_group())

    def get(self, instance: str) -> bytes:
        raw: bytes = self.tape.store_call(self.inner.get, instance)
        return raw

    def delete(self, instance: str, meta: Mapping[str, str] | None = None) -> None:
        self.tape.store_call(self.inner.delete, instance, meta)

    def record(self, entries: list[tuple[str, str]],
               meta: Mapping[str, str] | None = None) -> None:
        self.tape.store_call(self.inner.record, entries, meta)

    def journal(self) -> list[tuple[str, str]]:
        rows: list[tuple[str, str]] = self.tape.store_call(self.inner.journal)
        return rows

    def set_meta(self, meta: Mapping[str, str]) -> None:
        self.tape.store_call(self.inner.set_meta, meta)

    def meta(self) -> dict[str, str]:
        values: dict[str, str] = self.tape.store_call(self.inner.meta)
        return values

    def ids(self) -> list[str]:
        found: list[str] = self.tape.store_call(self.inner.ids)
        return found

    def __repr__(self) -> str:
        return repr(self.inner)


__all__ = ["Diverged", "Site", "Tape", "TapedStore"]
