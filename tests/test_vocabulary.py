"""One vocabulary: gobpm_nb/vocabulary.py is the only place its word lists are spelled out,
it depends on nothing, and every look the views give a word covers the whole list (the
legends once left out the call hold because a second list of hold kinds did)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gobpm_nb import vocabulary
from gobpm_nb.observe.projections import EDGE_LABELS
from gobpm_nb.render.dot import EDGE_STYLES, HOLD_LOOKS, RESIDENCY_LOOKS, STATE_COLOURS

PACKAGE = Path(vocabulary.__file__).resolve().parent
#: The vocabulary's word lists, by name.
LISTS = {name: frozenset(value) for name, value in vars(vocabulary).items()
         if name.isupper() and isinstance(value, tuple | frozenset)}


def _literal_words(node: ast.AST) -> frozenset[str] | None:
    """The strings of a tuple, list or set display made only of string constants, else None.
    (A dict keyed by the words gives each its look: the test below checks it covers them.)"""
    if not isinstance(node, ast.Tuple | ast.List | ast.Set) or len(node.elts) < 2:
        return None
    if not all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in node.elts):
        return None
    return frozenset(i.value for i in node.elts if isinstance(i, ast.Constant))


def test_no_module_spells_out_a_word_list_of_the_vocabulary_again():
    """A literal tuple, list or set whose strings are exactly one of the vocabulary's
    lists (track states, live states, terminal states, origins, hold kinds, residencies) is
    a second copy that will drift: import the list from gobpm_nb.vocabulary instead."""
    again = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "vocabulary.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            words = _literal_words(node)
            for name, listed in LISTS.items():
                if words == listed:
                    where = path.relative_to(PACKAGE.parent)
                    again.append(f"{where}:{getattr(node, 'lineno', '?')} spells out {name}")
    assert not again, "\n".join(again)


def test_the_vocabulary_imports_nothing_from_the_package():
    tree = ast.parse(Path(vocabulary.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module or "." for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "typing"}, imported


@pytest.mark.parametrize("look, words", [
    (STATE_COLOURS, vocabulary.TRACK_STATES),
    (RESIDENCY_LOOKS, vocabulary.RESIDENCIES),
    (HOLD_LOOKS, vocabulary.HOLD_KINDS),
    (EDGE_STYLES, vocabulary.ORIGINS - {"start"}),
    (EDGE_LABELS, vocabulary.ORIGINS - {"start"}),
], ids=["track colours", "residency looks", "hold looks", "edge styles", "edge labels"])
def test_every_look_covers_its_words(look, words):
    """Each word the engine can report has its look in the views, and no look is for a word
    the engine does not have (a track that began at the start has no parent edge)."""
    assert set(look) == set(words)
