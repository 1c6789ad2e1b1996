"""Reading a BPMN file safely: a path, bytes or XML text in, a tree out (lxml's, or without
lxml the standard library's: ``xmllib``).

Threat model: a file from anywhere (a modeler, an email, a web page). The parser resolves no
entities, loads no DTD, touches no network and refuses huge trees; any document that has a
DOCTYPE is refused before it is parsed (and checked again after), so an entity that points at
a local file or a URL is never read. Text is parsed as bytes: files declare encodings such as
ISO-8859-1, which lxml honours only when it decodes the bytes itself.
"""

from __future__ import annotations

import codecs
import os
import re
from pathlib import Path
from typing import Any

from ..errors import ModelError, shown
from ..files import NotAName, read_bounded
from .xmllib import etree


def parser() -> etree.XMLParser:
    """The one parser configuration for documents from outside (CDATA kept as written)."""
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           huge_tree=False, strip_cdata=False, remove_comments=False)


_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_BOM_AND_SPACE = "\ufeff \t\r\n"
_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)


def read_bytes(source: Any) -> tuple[bytes, str]:
    """The bytes of ``source`` and how to name it in messages."""
    if isinstance(source, bytes | bytearray):
        return bytes(source), "<bytes>"
    if isinstance(source, str) and source.lstrip(_BOM_AND_SPACE).startswith("<"):
        # XML text: its declaration (if any) names an encoding the text no longer has; a
        # leading U+FEFF is the byte order mark of a file read as text, not content
        text = _DECLARATION.sub("", source.lstrip("\ufeff"), count=1)
        try:
            return text.encode("utf-8"), "<text>"
        except UnicodeEncodeError as exc:
            line = text.count("\n", 0, exc.start) + 1
            raise ModelError(f"<text>: character {ord(text[exc.start]):#06x} on line {line} is "
                             "not valid in XML (a lone surrogate: the text was decoded "
                             "wrongly)") from None
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        try:
            return read_bounded(path), str(path)
        except NotAName as why:
            raise ModelError(f"cannot read BPMN file {shown(str(path))}: {why} (nor XML "
                             "text: it does not start with '<')") from None
        except ValueError as why:
            raise ModelError(f"cannot read BPMN file {shown(str(path))}: {why}") from None
    raise ModelError(f"a BPMN source is a path, bytes or XML text, not {type(source).__name__}")


def prolog(data: bytes) -> str:
    """The text before the root element, decoded well enough to look for a DOCTYPE."""
    if data.startswith(_BOMS):
        for encoding in ("utf-32", "utf-16"):
            try:
                text = data.decode(encoding)
                break
            except UnicodeDecodeError:
                continue
        else:
            text = ""
    else:
        text = data.decode("latin-1")  # every byte decodes; markup is ASCII in these codecs
    match = re.search(r"<[A-Za-z_]", text)
    return text[: match.start()] if match else text


def parse(source: Any) -> etree._ElementTree:
    """Parse ``source`` safely; ModelError when it has a DOCTYPE or is not well-formed XML."""
    data, name = read_bytes(source)
    if "<!DOCTYPE" in prolog(data).upper():
        raise ModelError(f"{name}: a DOCTYPE is refused (a BPMN file needs none, and its "
                         "entities could read local files or the network)")
    try:
        tree = etree.fromstring(data, parser()).getroottree()
    except etree.XMLSyntaxError as exc:
        raise ModelError(f"{name}: not well-formed XML: {exc.msg} (line {exc.lineno})") from None
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:
        raise ModelError(f"{name}: a DOCTYPE is refused")
    return tree
