"""What every benchmark script shares: failing a self-check, timing a call, and writing the
figures as JSON with the machine and commit they were measured on."""

from __future__ import annotations

import gc
import json
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn


def fail(msg: str) -> NoReturn:
    """A self-check failed: say what, and exit non-zero (a benchmark never asserts timing)."""
    print(f"VERIFY FAILED: {msg}", file=sys.stderr)
    raise SystemExit(1)


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall seconds (perf_counter), CPU seconds of this process, and fn's result (after a
    collection, so that garbage from before is not charged to ``fn``)."""
    gc.collect()
    c0 = time.process_time()
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, time.process_time() - c0, result


def check_all_woken(eng: Any, store: Any, seen: Any, n: int, finished: int) -> None:
    """The wake's self-check: ``finished`` instances finished (none still dehydrated), the
    engine idle (no coroutine, hold or pending event), ``n`` ``hydrated`` and ``n``
    ``instance_completed`` facts seen by the subscriber, and an empty store."""
    stats = eng.stats()
    if stats["instances"]["finished"] != finished or stats["instances"]["dehydrated"]:
        fail(f"after the wake: {stats['instances']}, expected {finished} finished")
    if stats["coroutines"] or any(stats["holds"].values()) or stats["pending_events"]:
        fail(f"not idle after the wake: {stats}")
    if seen["hydrated"] != n or seen["instance_completed"] != n:
        fail(f"after the wake: {seen['hydrated']} hydrated and {seen['instance_completed']} "
             f"instance_completed facts, expected {n} each")
    if len(store):
        fail(f"{len(store)} checkpoints left in the store after every instance completed")


def git_head() -> str | None:
    """The commit the engine was measured at (None outside a git checkout)."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10, cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def write_json(path: str, doc: dict[str, Any]) -> None:
    """The figures as JSON, with the Python, platform and commit they were measured on."""
    doc = {**doc, "git": git_head(), "python": platform.python_version(),
           "platform": platform.platform()}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2, sort_keys=True)
        fh.write("\n")
