"""The part of ``lxml.etree`` this package uses, on the standard library alone (``pyexpat``):
what ``xmllib`` gives when lxml cannot be imported (Pyodide: lxml has no WebAssembly wheel on
PyPI). Same names, same behaviour for what the package calls:

- building: ``Element``/``SubElement`` with ``nsmap``, attributes in lxml's order (keyword
  ones first); a value with a control character is a ValueError, as in lxml;
- writing: ``tostring`` writes what lxml writes (namespace prefixes looked up nearest first,
  the same escaping, ``<a/>`` for an empty element), ``indent`` and ``cleanup_namespaces``
  as lxml's; a process built in Python is written byte for byte as under lxml;
- reading: ``fromstring`` through expat, hardened as the lxml parser is configured in
  ``source.py``: a DOCTYPE, an entity declaration or an external entity is refused (an
  ``XMLSyntaxError``), nothing is expanded or fetched; each element's ``sourceline`` is the
  line its start tag ends on, as libxml2 gives it.

Elements live in ``plainnodes``, writing in ``plainwrite``, reading in ``plainread``; this
module is their one face, the ``etree`` of ``xmllib``.

Not here: XSD validation (``schema.py`` says so in the report), XPath, encodings expat
cannot decode (multi-byte ones other than UTF-8, UTF-16 and UTF-32).
"""

from __future__ import annotations

from .plainnodes import (
    PI,
    Comment,
    Element,
    ProcessingInstruction,
    SubElement,
    XMLParser,
    XMLSyntaxError,
    _Element,
    _ElementTree,
)
from .plainread import fromstring
from .plainwrite import cleanup_namespaces, indent, tostring

__all__ = ["PI", "Comment", "Element", "ProcessingInstruction", "SubElement", "XMLParser",
           "XMLSyntaxError", "_Element", "_ElementTree", "cleanup_namespaces", "fromstring",
           "indent", "tostring"]
