"""The one door to an XML library: ``etree`` is lxml's where lxml can be imported, else
``plaintree`` (the standard library), which has the same names for what this package calls.

Under the standard library (Pyodide, where lxml has no WebAssembly wheel on PyPI) a process
built in Python is written byte for byte as under lxml, and a file is read with the same
hardening and source lines; the file is not validated against the BPMN XSD, and the report
says so in a note (``schema.py``). ``LXML`` says which one this is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lxml import etree
else:
    try:
        from lxml import etree
    except ImportError:  # Pyodide: no lxml wheel; the standard library does the same work
        from . import plaintree as etree

LXML: bool = etree.__name__ == "lxml.etree"

__all__ = ["LXML", "etree"]
