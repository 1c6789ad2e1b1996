"""Reading a file a person named (a BPMN model, a scenario): a regular file of at most
``LARGEST`` bytes, or a ``ValueError`` saying why not, for the reader to raise as its own
typed error. A device or a pipe (``/dev/zero``, a FIFO) is refused before it is opened: read
to its end, it filled the machine's memory, or waited for ever."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class NotAName(ValueError):
    """The text given cannot name a file at all (a NUL or a lone surrogate in it)."""


#: The largest file read: far above any real model or scenario (the bpmn.io and Camunda
#: examples are kilobytes; a model of thousands of elements, a few megabytes)
LARGEST = 100 * 2 ** 20


def read_bounded(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file at ``path``; ValueError naming why it cannot be read
    (OSError's reason, not a regular file, or too large; ``NotAName`` for a name that is no
    file name)."""
    where = Path(path)
    try:
        mode = where.stat().st_mode
    except OSError as exc:
        raise ValueError(exc.strerror or type(exc).__name__) from None
    except ValueError:  # a lone surrogate or a NUL in the name
        raise NotAName("not a valid file name") from None
    if not stat.S_ISREG(mode):
        raise ValueError("it is not a regular file (a directory, a device or a pipe)")
    try:
        with where.open("rb") as f:
            data = f.read(LARGEST + 1)
    except OSError as exc:
        raise ValueError(exc.strerror or type(exc).__name__) from None
    if len(data) > LARGEST:
        raise ValueError(f"it is larger than {LARGEST:,} bytes, the most read")
    return data
