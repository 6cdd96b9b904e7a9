"""The exceptions aqmlab raises. The Rust core raises these same classes."""


class ScenarioError(ValueError):
    """A scenario is invalid. ``path`` names the field (``topology.bottleneck.rate``),
    ``message`` says what the value was and what was expected."""

    def __init__(self, path: str, message: str):
        super().__init__(path, message)
        self.path = path
        self.message = message

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class SimulationError(RuntimeError):
    """A simulation failed: an internal error in the core (a panic, caught) or I/O."""
