"""The text of a file's ``timeDuration``, ``timeDate`` or ``timeCycle``, read as the builder's
timer argument: ISO 8601 or cron text as it is, or ``=`` and the safe evaluator's source of
an expression over the instance data (evaluated when the timer is armed).

What is read as a literal: ISO 8601 text (``PT1H``, ``R3/PT10M``, ``2026-01-01T09:00``), a cron
cycle (``0 0/5 * * * ?``), and a string literal in any dialect (FEEL ``="PT1H"``, JUEL
``${'PT1H'}``, a Python string ``"PT1H"`` as SpiffWorkflow writes it). What is read as an
expression: FEEL (``=timeout``; a ``duration(...)``, ``date and time(...)`` or ``cycle(...)``
around it is left out: the value is read as the timer's kind says anyway), JUEL
(``${timeout}``, ``#{dueDate}``), a JUEL template (``R1/PT1H/${end}``: the text joined with
each expression's value), a plain name or comparison (SpiffWorkflow's Python,
``start_time``). Each expression is translated as a condition is (``expressions.translate``);
what does not translate (calls, paths, arithmetic) is a ModelError naming the text.
"""

from __future__ import annotations

import re

from ..errors import ModelError
from ..model.expr import Expr, shown
from ..model.timers import TimerSpec, is_cron
from .expressions import dialect, translate
from .roots import expression

#: Text read as ISO 8601 as it is: a duration, a repeating interval or a date
_ISO = re.compile(r"^(?:[+-]?P[\dT]|R\d*/|\d{4}-?\d)")
#: A string literal: FEEL's, JUEL's or Python's
_LITERAL = re.compile(r"""^(?:=\s*|\$\{\s*|#\{\s*)?("[^"\\]*"|'[^'\\]*')\s*\}?$""")
#: FEEL's conversions around a timer's expression, left out
_FEEL_WRAP = re.compile(r"^(?:duration|date and time|date|cycle)\s*\((.*)\)$", re.S)
#: A JUEL expression inside a text
_EMBEDDED = re.compile(r"[$#]\{([^{}]*)\}")


def timer_value(text: str, language: str | None, kind: str) -> str:
    """The builder's argument for a timer's text (see the module docstring)."""
    text = text.strip()
    if not text:
        return text
    literal = _LITERAL.match(text)
    if literal is not None and _closed(text):
        return literal.group(1)[1:-1].strip()
    marked = text.startswith("=") or "${" in text or "#{" in text
    if not marked and (_ISO.match(text) or (kind == "cycle" and is_cron(text))):
        return text  # whatever language the file names for its expressions
    how = dialect(text, language)
    what = f"timer {kind}"
    if how == "feel":
        inner = text[1:].strip() if text.startswith("=") else text
        wrapped = _FEEL_WRAP.match(inner)
        while wrapped is not None:
            inner = wrapped.group(1).strip()
            wrapped = _FEEL_WRAP.match(inner)
        return "=" + translate("=" + inner, None, what)
    if how == "juel" and not _whole(text):
        return "=" + _template(text, what)
    return "=" + translate(text, language, what)


def _closed(text: str) -> bool:
    """Whether a literal wrapped in ``${`` or ``#{`` is closed by ``}`` (and only then)."""
    opened = text.startswith(("${", "#{"))
    return opened == text.endswith("}")


def _whole(text: str) -> bool:
    """Whether the text is one JUEL expression, nothing around it."""
    return text.startswith(("${", "#{")) and text.endswith("}") and \
        len(_EMBEDDED.findall(text)) == 1


def _template(text: str, what: str) -> str:
    """A JUEL template as one expression: its text joined with each embedded value."""
    parts: list[str] = []
    at = 0
    for found in _EMBEDDED.finditer(text):
        if found.start() > at:
            parts.append(repr(text[at:found.start()]))
        parts.append(f"str({translate('${' + found.group(1) + '}', None, what)})")
        at = found.end()
    if at < len(text):
        parts.append(repr(text[at:]))
    if not parts or "{" in "".join(p for p in parts if not p.startswith("str(")):
        raise ModelError(f"{what} {shown(text)} mixes text and expressions in a way that "
                         "does not read")
    return " + ".join(parts)


def timer_text(spec: TimerSpec) -> tuple[str, str | None]:
    """How a timer is written back: its ISO 8601 or cron text; an expression in FEEL when it
    translates, else in the safe evaluator's syntax (with that language named)."""
    source = spec.expression
    if source is None:
        return spec.text, None
    return expression(Expr(source))
