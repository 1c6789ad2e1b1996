"""The typed errors of gobpm_nb. Every message names the element, id or value at fault."""

import reprlib
from typing import Any

#: How a message shows a value it was given: a few levels and items of it, never the whole
#: (a value can be a list shared a billion times, or nested past the stack)
_SHOWN = reprlib.Repr()
_SHOWN.maxlevel = 3
_SHOWN.maxtuple = _SHOWN.maxlist = _SHOWN.maxarray = _SHOWN.maxdict = 6
_SHOWN.maxset = _SHOWN.maxfrozenset = _SHOWN.maxdeque = 6
_SHOWN.maxstring = _SHOWN.maxlong = _SHOWN.maxother = 200


def shown(value: Any) -> str:
    """``repr(value)`` as a message shows it: a string or number of up to 200 characters
    as it is; a longer one, a container or an object, cut short."""
    try:
        return _SHOWN.repr(value)
    except Exception:  # noqa: BLE001 (a value whose own repr fails is still named)
        return f"<{type(value).__name__}>"


#: The longest message an error keeps, and the longest problem a ModelError's message
#: shows: longer ones are cut in their middle, saying how much was cut (a megabyte id
#: named in a message never fills a notebook's output). What an error keeps beside its
#: message (``ModelError.problems``) is kept whole.
LONGEST, LONGEST_PROBLEM = 20_000, 1_000


def cut(text: str, longest: int) -> str:
    """``text``, or, when it is longer than ``longest``, its two ends and how much was cut."""
    if len(text) <= longest:
        return text
    half = longest // 2
    return f"{text[:half]} [... {len(text) - 2 * half:,} characters cut ...] {text[-half:]}"


class GobpmError(Exception):
    """Base of every error the package raises on purpose. Its message is at most
    ``LONGEST`` characters and a few more."""

    def __init__(self, *args: Any):
        if len(args) == 1 and isinstance(args[0], str):
            args = (cut(args[0], LONGEST),)
        super().__init__(*args)


class ModelError(GobpmError):
    """A process definition is invalid; ``problems`` lists every problem found, and
    ``warnings`` what would only have been warned about (``Process.warnings``)."""

    def __init__(self, problems: list[str] | str, warnings: list[str] | None = None):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        self.warnings = list(warnings or ())
        super().__init__("; ".join(cut(p, LONGEST_PROBLEM) for p in self.problems))


class EngineError(GobpmError):
    """A call to the engine was refused; the engine's state is unchanged."""


class CheckpointError(GobpmError):
    """A stored checkpoint cannot be decoded; names the instance and the field."""

    def __init__(self, instance: str, field: str, why: str):
        self.instance = instance
        self.field = field
        self.why = why
        super().__init__(instance, field, why)  # its arguments: pickled or copied whole

    def __str__(self) -> str:
        return cut(f"checkpoint of instance {self.instance!r}: field {self.field!r}: "
                   f"{self.why}", LONGEST)


class StoreError(GobpmError):
    """A store cannot be opened, or failed after a command had run (the command's work is
    done; only its record is missing): the message names the store and why."""


class ScenarioError(GobpmError):
    """A population scenario is invalid: the message begins with the path of the field at
    fault (``durations.check.exponential.mean: 'PT8X' is not an ISO 8601 duration``),
    kept as ``path``."""

    def __init__(self, path: str, why: str):
        self.path = path
        self.why = why
        super().__init__(path, why)  # its arguments: pickled or copied whole

    def __str__(self) -> str:
        return cut(f"{self.path}: {self.why}" if self.path else self.why, LONGEST)
