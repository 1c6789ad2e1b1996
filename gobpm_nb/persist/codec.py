"""The checkpoint codec: a JSON object per instance, canonical bytes, checked on read.

The engine writes the document (``gobpm_nb.engine.durability.checkpoint``, its own keys
sorted, instance data in the order its fields arrived) and checks its fields; the codec
turns it into bytes and back. ``decode`` refuses bytes that are not a JSON object for the
instance named, with a CheckpointError.
"""

from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

from ..errors import CheckpointError

#: Built once: ``json.dumps`` with options builds a new encoder on every call. No check
#: for circular references: a document is the engine's own, and every value in it was
#: copied in as JSON, nested at most ``MAX_DEPTH`` levels (``engine.values``).
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False, check_circular=False)
#: ``JSONEncoder.encode`` also makes its C encoder again on every call: made once here
#: (the very one it would make, with the same options), when the C accelerator is there.
#: (typeshed's json.encoder stub leaves out c_make_encoder, None without the accelerator:
#: hence the ignore on its import.)
_C_ENCODE = None if c_make_encoder is None else c_make_encoder(
    None, _ENCODER.default, encode_basestring_ascii, None, ":", ",", False, False, False)


def encode(doc: dict[str, Any]) -> bytes:
    """The document as compact JSON, in the order it was built: the engine builds its own
    keys sorted and keeps instance data in arrival order, so equal documents give equal
    bytes without a second pass over them."""
    if _C_ENCODE is None:
        return _ENCODER.encode(doc).encode()
    return "".join(_C_ENCODE(doc, 0)).encode()


def decode(raw: bytes, instance: str) -> dict[str, Any]:
    """Parse a stored checkpoint of ``instance``; CheckpointError names what is wrong."""
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError, TypeError, RecursionError) as exc:
        raise CheckpointError(instance, "<document>",
                              f"is not JSON ({exc.__class__.__name__})") from None
    if not isinstance(doc, dict):
        raise CheckpointError(instance, "<document>", "is not a JSON object")
    schema = doc.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise CheckpointError(instance, "schema", "is missing or not a number")
    if doc.get("instance") != instance:
        raise CheckpointError(instance, "instance", f"names {doc.get('instance')!r}")
    return doc
