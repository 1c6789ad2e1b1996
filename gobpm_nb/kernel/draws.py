"""The one source of randomness: counter-based draws. The n-th draw of a stream is a number
in [0, 1) made from the SHA-256 of the stream's parts and n, joined by ``/``: the same on
every platform and in every process, and a draw of one stream never shifts another's (the
engine's weighted decisions and a population scenario's draws both come from here)."""

from __future__ import annotations

import hashlib

SCALE = 2.0 ** -64


def unit(*parts: object) -> float:
    """A number in [0, 1) from the SHA-256 of ``parts`` joined by ``/`` (the first 8 bytes,
    big-endian, over 2**64)."""
    text = "/".join(map(str, parts)).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8]) * SCALE
