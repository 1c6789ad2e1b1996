"""The seam between the builder and file formats: a registry of codecs, by format name.

The model layer declares what a codec does and keeps the registry; a format package (today
``gobpm_nb.bpmn``) imports the model, implements ``Codec`` and registers itself when it is
imported. So ``Process.from_bpmn`` and ``Process.to_bpmn`` exist without the model ever
importing the format code: the imports point one way, from the format to the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ModelError

if TYPE_CHECKING:  # annotations only
    from .process import Process


class Codec(Protocol):
    """Reads a process from a source and writes one back, for one file format."""

    def read(self, source: Any, id: str | None) -> Process:
        """The process named ``id`` (or the executable one) from ``source``."""
        ...

    def write(self, process: Process) -> str:
        """The process as a document of this format, as text."""
        ...


_CODECS: dict[str, Codec] = {}


def register(name: str, codec: Codec) -> None:
    """Make ``codec`` the one used for format ``name`` (a later registration replaces it)."""
    _CODECS[name] = codec


def codec(name: str) -> Codec:
    """The codec registered for ``name``; ModelError when none is."""
    try:
        return _CODECS[name]
    except KeyError:
        raise ModelError(f"no codec for format {name!r} is registered "
                         f"(import gobpm_nb.{name} first)") from None
