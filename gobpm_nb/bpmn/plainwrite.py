"""Writing for ``plaintree``: ``tostring``, ``indent`` and ``cleanup_namespaces`` as lxml
does them (the same prefixes, the same escaping, ``<a/>`` for an empty element, CDATA sections
kept where their text is unchanged)."""

from __future__ import annotations

from typing import Any

from .plainnodes import UNSET, Comment, ProcessingInstruction, _Element, _ElementTree, binding


def _split(name: str) -> tuple[str | None, str]:
    if name.startswith("{"):
        uri, _, local = name[1:].partition("}")
        return uri, local
    return None, name


def _names(node: _Element) -> tuple[str, list[tuple[str, str]], list[tuple[_Element | None,
                                                                              str | None]]]:
    """``node``'s qualified name, its attributes' (name, value), and every declaration used."""
    used = []
    uri, local = _split(node.tag)
    name = local
    if uri is not None:
        found = binding(node, uri, node._hint, False)
        used.append(found)
        name = f"{found[1]}:{local}" if found[1] else local
    attrs = []
    for key, value in node._attrib.items():
        a_uri, a_local = _split(key)
        if a_uri is not None:
            found = binding(node, a_uri, node._ahints.get(key, UNSET), True)
            used.append(found)
            a_local = f"{found[1]}:{a_local}"
        attrs.append((a_local, value))
    return name, attrs, used


def cleanup_namespaces(tree: Any) -> None:
    """Remove every namespace declaration in the subtree that nothing in it uses."""
    top = tree.getroot() if isinstance(tree, _ElementTree) else tree
    used: set[tuple[int, str | None]] = set()
    nodes = [n for n in top.iter() if isinstance(n.tag, str)]
    for node in nodes:
        used.update((id(owner), prefix) for owner, prefix in _names(node)[2]
                    if owner is not None)
    for node in nodes:
        node._decl = {p: u for p, u in node._decl.items() if (id(node), p) in used}


# --- writing -----------------------------------------------------------------------------

def _escape_text(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("\r", "&#13;"))


def _escape_attr(text: str) -> str:
    return (_escape_text(text).replace('"', "&quot;").replace("\n", "&#10;")
            .replace("\t", "&#9;"))


def _escape_read(node: _Element, part: str, text: str) -> str:
    """``text`` escaped; CDATA sections kept where it is still the text they were read in."""
    read = node._cdata.get(part)
    if read is None or read[0] != text:
        return _escape_text(text)
    out, at = [], 0
    for start, end in read[1]:
        out += [_escape_text(text[at:start]), f"<![CDATA[{text[start:end]}]]>"]
        at = end
    return "".join([*out, _escape_text(text[at:])])


def _write(node: _Element, out: list[str], inherited: dict[str | None, str]) -> None:
    if node.tag is Comment:
        out.append(f"<!--{node.text or ''}-->")
        return
    if node.tag is ProcessingInstruction:
        target = node._attrib["target"]
        out.append(f"<?{target} {node.text}?>" if node.text else f"<?{target}?>")
        return
    name, attrs, _ = _names(node)  # first: it may declare a new prefix
    decls = {**node._decl, **{p: u for p, u in inherited.items() if p not in node._decl}}
    out.append(f"<{name}")
    for prefix, uri in decls.items():
        out.append(f' xmlns="{_escape_attr(uri)}"' if prefix is None
                   else f' xmlns:{prefix}="{_escape_attr(uri)}"')
    for key, value in attrs:
        out.append(f' {key}="{_escape_attr(value)}"')
    if not node._children and node._text is None:
        out.append("/>")
        return
    out.append(">")
    if node._text:
        out.append(_escape_read(node, "text", node._text))
    for child in node._children:
        _write(child, out, {})
        if child._tail:
            out.append(_escape_read(child, "tail", child._tail))
    out.append(f"</{name}>")


def tostring(node: Any, encoding: Any = None, with_tail: bool = True) -> Any:
    """``node`` as XML text (``encoding="unicode"``; otherwise UTF-8 bytes)."""
    if isinstance(node, _ElementTree):
        node = node.getroot()
    inherited = node._parent.nsmap if node._parent is not None else {}
    out: list[str] = []
    _write(node, out, {p: u for p, u in inherited.items() if p not in node._decl})
    if with_tail and node._tail:
        out.append(_escape_text(node._tail))
    text = "".join(out)
    return text if encoding in ("unicode", str) else text.encode("utf-8")


def indent(tree: Any, space: str = "  ", level: int = 0) -> None:
    """Indent as lxml (and the standard library) does: whitespace-only text and tails become
    a newline and the indentation of the line that follows."""
    top = tree.getroot() if isinstance(tree, _ElementTree) else tree
    if not len(top):
        return
    steps = ["\n" + level * space]

    def children(elem: _Element, depth: int) -> None:
        if len(steps) <= depth + 1:
            steps.append(steps[depth] + space)
        inner = steps[depth + 1]
        if not elem.text or not elem.text.strip():
            elem.text = inner
        for child in elem:
            if len(child):
                children(child, depth + 1)
            if not child.tail or not child.tail.strip():
                child.tail = inner
        last = elem[-1]
        if not (last.tail or "").strip():
            last.tail = steps[depth]

    children(top, 0)
