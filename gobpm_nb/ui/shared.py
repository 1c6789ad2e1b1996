"""One copy of the heavy front-end parts per page: the shared module.

anywidget sends a widget's ES module (its ``_esm``) with every widget, and a notebook saved
with its widget state keeps one copy per widget. So each widget's own module
(``gobpm_nb/static/widget.js``) is a loader of a few kilobytes, and everything else — the
views, WebAssembly Graphviz and bpmn.io's diagram viewer (``gobpm_nb/static/shared.js``) —
travels in one :class:`SharedModule` widget per kernel, as a gzip-compressed binary buffer
that every widget refers to (its ``_shared`` trait).

In the browser the first widget that needs the shared module decompresses and imports it and
keeps it on ``globalThis`` under its digest; a second widget, a re-run cell, two widgets made
in one cell and the widgets of a restarted kernel (a new ``SharedModule``, same digest) all
reuse that copy. A notebook saved with its widget state holds the shared module once, so
after a page reload the views still draw; where it is missing (state saved by hand without
it) a widget says so and asks for the cell to be run again.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import pathlib

import anywidget
import traitlets as t

SHARED_JS = pathlib.Path(__file__).parent.parent / "static" / "shared.js"


@functools.cache
def payload() -> tuple[str, bytes]:
    """The digest of ``shared.js`` (16 hex digits of its SHA-256) and its gzip bytes (no
    timestamp in the header: the same file always gives the same bytes)."""
    code = SHARED_JS.read_bytes()
    return hashlib.sha256(code).hexdigest()[:16], gzip.compress(code, compresslevel=9, mtime=0)


class SharedModule(anywidget.AnyWidget):
    """The shared front-end module of every gobpm_nb widget; it is never displayed.

    Traits (synced; an anywidget model with an empty module of its own):
        digest: str; what the browser keeps the imported module under.
        code:   bytes; ``shared.js`` compressed with gzip, sent as a binary buffer.

    It is an anywidget model, not a plain ``@jupyter-widgets/base`` one, for the notebook
    saved with its widget state: the plain model copies its state through JSON when the
    page saves it, which writes a binary trait as ``{}`` (the shared module without its
    code); anywidget's model saves it whole.
    """

    _esm = "export default {};"
    digest = t.Unicode("").tag(sync=True)
    code = t.Bytes(b"").tag(sync=True)

    def __repr__(self) -> str:
        return f"SharedModule(digest={self.digest!r}, {len(self.code)} bytes)"


_current: SharedModule | None = None


def shared_module() -> SharedModule:
    """This kernel's shared module, made on first use (and again once closed)."""
    global _current
    if _current is None or _current.comm is None:
        digest, code = payload()
        _current = SharedModule(digest=digest, code=code)
    return _current
