"""The one error type for input the pipeline refuses."""

from __future__ import annotations


class InputError(ValueError):
    """Refused input: names the file, the entry (index or id) and the field.

    Raised by every loader at the boundary; the CLI turns it into exit code 2, assets
    into a failed step whose message is this text.
    """

    def __init__(self, file: str, message: str, *, entry: str | None = None, field: str | None = None):
        self.file = str(file)
        self.entry = entry
        self.field = field
        self.detail = message
        where = self.file
        if entry is not None:
            where += f", {entry}"
        if field is not None:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")
