"""The dashboard's fact table: one page of the kept fact log, filtered by instance and kind.

The browser never holds the log. It asks for a page with a filter (a :class:`FactQuery`);
Python answers with that page's rows and a summary (:func:`fact_page`): how many kept facts
match, where the page starts, which pages lie older and newer. Pages count from the oldest
kept fact (page 0 starts with it); no page (``None``) means the newest facts, following the
log as it grows. ``Engine(keep_facts=N)`` bounds the kept log; ``stats()["facts"]`` counts
every fact emitted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

#: Rows of one page of the fact table.
FACT_PAGE = 100
#: Fact kinds the kind filter always offers (kinds met in a page are added to them).
FACT_KINDS = ("checkpoint_failed", "data_changed", "dehydrated", "error_caught",
              "error_to_caller", "escalation_caught", "escalation_uncaught", "hydrated",
              "incident", "instance_completed", "instance_failed", "instance_started",
              "job_completed", "job_created", "job_failed", "job_locked", "loop_ended",
              "message_buffered", "message_correlated", "message_dropped", "node_entered",
              "node_left", "recovered", "recovery_failed", "signal_broadcast",
              "task_completed", "task_created", "timer_fired", "track_state", "trigger_dropped",
              "wait_held", "wait_released", "wake_failed")


def when(value: datetime | None) -> str | None:
    """A datetime as ISO 8601 text in UTC ending in ``Z`` (None stays None)."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def short_details(details: Mapping[str, Any], limit: int = 120) -> str:
    """Fact details as one short line: ``key=value`` pairs in the engine's order."""
    parts = []
    for key, value in details.items():
        if isinstance(value, list | tuple):
            text = "+".join(str(v) for v in value)
        else:
            text = str(value)
        parts.append(f"{key}={text}")
    line = ", ".join(parts)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def fact_row(fact: Any) -> dict[str, Any]:
    """One fact as the fact table shows it (details as a short line)."""
    return {"seq": fact.seq, "at": when(fact.at), "kind": fact.kind, "instance": fact.instance,
            "track": fact.track, "node": fact.node, "details": short_details(fact.details)}


class FactQuery(NamedTuple):
    """What the fact table shows: the facts of one instance and of one kind (``""``: any),
    and a page (0: the oldest; None: the newest facts, following the log)."""

    instance: str = ""
    kind: str = ""
    page: int | None = None

    def describe(self) -> str:
        """The filter in words, e.g. ``of instance 'i2' and of kind 'timer_fired'``."""
        parts = []
        if self.instance:
            parts.append(f"of instance {self.instance!r}")
        if self.kind:
            parts.append(f"of kind {self.kind!r}")
        return " and ".join(parts) or "of any instance and kind"


def fact_query(instance: Any = "", kind: Any = "", page: Any = None) -> FactQuery:
    """A checked query; ValueError naming the bad field and value."""
    instance = "" if instance is None else instance
    kind = "" if kind is None else kind
    if not isinstance(instance, str):
        raise ValueError(f"the fact filter's instance must be an instance id, or '' for "
                         f"every instance; got {instance!r}")
    if not isinstance(kind, str):
        raise ValueError(f"the fact filter's kind must be a fact kind such as 'timer_fired', "
                         f"or '' for every kind; got {kind!r}")
    if page is not None and (isinstance(page, bool) or not isinstance(page, int) or page < 0):
        raise ValueError(f"a fact page is a whole number from 0 (the oldest page) up, or "
                         f"null for the newest facts; got {page!r}")
    return FactQuery(instance.strip(), kind.strip(), page)


def needs_log(query: FactQuery) -> bool:
    """Whether answering ``query`` reads the whole kept log (a filter or an older page);
    the newest page of every fact needs only the newest facts."""
    return bool(query.instance or query.kind) or query.page is not None


def matching(facts: Sequence[Any], query: FactQuery) -> Sequence[Any]:
    """The facts the query's filter lets through, in log order."""
    instance, kind = query.instance, query.kind
    if instance and kind:
        return [f for f in facts if f.instance == instance and f.kind == kind]
    if instance:
        return [f for f in facts if f.instance == instance]
    if kind:
        return [f for f in facts if f.kind == kind]
    return facts


class FactPage(NamedTuple):
    """One page of the fact table: its rows (oldest first) and what the table says about it."""

    rows: list[dict[str, Any]]
    info: dict[str, Any]


def fact_page(facts: Sequence[Any], query: FactQuery, kept: int | None = None,
              emitted: int | None = None, size: int = FACT_PAGE) -> FactPage:
    """The page ``query`` asks for. ``facts`` is the kept log, or — for a query that does not
    :func:`need the log <needs_log>` — at least its newest ``size`` facts, with ``kept``
    saying how many the log holds. A page past the last one shows the last one.

    ``info``: ``instance``, ``kind`` and ``page`` (the query in force; ``page`` None: the
    newest), ``start`` (the position of the first row among the matching facts, 0 = the
    oldest), ``size``, ``total`` (kept facts that match), ``pages``, ``older`` / ``newer``
    (the page to ask for next; ``older`` None: this is the oldest, ``newer`` None: ask for the
    newest), ``kept``, ``emitted`` (every fact the engine emitted) and ``kinds`` (the kind
    filter's choices, sorted).
    """
    kept = len(facts) if kept is None else kept
    if needs_log(query):
        found = matching(facts, query)
        total = len(found)
    else:
        found, total = facts, kept
    offset = total - len(found)  # found holds the newest matches only
    pages = max(1, -(-total // size))
    page = None if query.page is None else min(query.page, pages - 1)
    start = max(0, total - size) if page is None else page * size
    end = min(total, start + size)
    rows = [fact_row(f) for f in found[max(0, start - offset):max(0, end - offset)]]
    if start == 0:
        older = None
    else:
        older = (start - 1) // size if page is None else page - 1
    newer = None if page is None or page + 1 >= pages else page + 1
    kinds = set(FACT_KINDS) | {row["kind"] for row in rows} | ({query.kind} - {""})
    info = {"instance": query.instance, "kind": query.kind, "page": page, "start": start,
            "size": size, "total": total, "pages": pages, "older": older, "newer": newer,
            "kept": kept, "emitted": kept if emitted is None else emitted,
            "kinds": sorted(kinds)}
    return FactPage(rows, info)
