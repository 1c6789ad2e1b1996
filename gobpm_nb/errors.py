"""The typed errors of gobpm_nb. Every message names the element, id or value at fault."""


class GobpmError(Exception):
    """Base of every error the package raises on purpose."""


class ModelError(GobpmError):
    """A process definition is invalid; ``problems`` lists every problem found, and
    ``warnings`` what would only have been warned about (``Process.warnings``)."""

    def __init__(self, problems: list[str] | str, warnings: list[str] | None = None):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        self.warnings = list(warnings or ())
        super().__init__("; ".join(self.problems))


class EngineError(GobpmError):
    """A call to the engine was refused; the engine's state is unchanged."""


class CheckpointError(GobpmError):
    """A stored checkpoint cannot be decoded; names the instance and the field."""

    def __init__(self, instance: str, field: str, why: str):
        self.instance = instance
        self.field = field
        super().__init__(f"checkpoint of instance {instance!r}: field {field!r}: {why}")


class StoreError(GobpmError):
    """A store cannot be opened, or failed after a command had run (the command's work is
    done; only its record is missing): the message names the store and why."""


class ScenarioError(GobpmError):
    """A population scenario is invalid: the message begins with the path of the field at
    fault (``durations.check.exponential.mean: 'PT8X' is not an ISO 8601 duration``),
    kept as ``path``."""

    def __init__(self, path: str, why: str):
        self.path = path
        super().__init__(f"{path}: {why}" if path else why)
