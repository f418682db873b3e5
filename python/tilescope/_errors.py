"""The exceptions of the tilescope package (the compiled core raises them)."""


class Error(Exception):
    """Anything tilescope refuses. `diagnostics` lists the diagnostics as
    `tilescope check --json` prints them: dicts with severity, file, line,
    column and message."""

    def __init__(self, message, diagnostics=None, path=None):
        super().__init__(message)
        self.message = message
        self.diagnostics = list(diagnostics or [])
        self.path = path


class InputError(Error):
    """The source (or layout) does not parse or type-check: the command line
    would exit 2 with these diagnostics."""


class TreeError(Error, ValueError):
    """A JSON tree given to from_json is malformed; `path` names the value at
    fault, e.g. "$.kernels[0].body[3].value"."""


class UsageError(Error, ValueError):
    """The call itself is wrong: an unknown kernel, an input the kernel does
    not have, an array of the wrong shape."""
