"""The exception tree of structrag.

Every error raised on purpose by structrag, retrievers and eval derives from
:class:`StructragError`.  Errors carry the file and, where known, the 1-based
page they concern; both are attached as the error propagates (see
:meth:`StructragError.with_context`) so the message a user reads names them.

::

    StructragError
    ├── InputError                  bad input the user can fix
    │   ├── NotAPDFError
    │   ├── EncryptedPDFError
    │   ├── CorruptPDFError
    │   └── ReferenceFormatError    a reference / query file that does not parse
    ├── ConfigError                 wrong arguments or settings (also a ValueError)
    │   └── TreeError               headings whose levels make no tree
    ├── ModelError                  a shipped or user model cannot be used
    ├── BackendError                a model server failed (VLM / LLM backends)
    │   ├── BackendUnreachable      no connection at all (refused, unknown host, TLS, connect time-out)
    │   └── BackendResponseError    the server answered, but not usably
    └── IndexFormatError            a persisted index cannot be opened
        └── SchemaVersionError

    StructragWarning (UserWarning)  the input was processed, but not all of it
                                    (pages without text, a repaired file, ...)
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "StructragError",
    "InputError",
    "NotAPDFError",
    "EncryptedPDFError",
    "CorruptPDFError",
    "ReferenceFormatError",
    "ConfigError",
    "TreeError",
    "ModelError",
    "BackendError",
    "BackendUnreachable",
    "BackendResponseError",
    "IndexFormatError",
    "SchemaVersionError",
    "StructragWarning",
]


class StructragError(Exception):
    """Base class.  ``path`` and ``page`` (1-based) locate the problem."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        page: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = str(path) if path is not None else None
        self.page = page
        self.hint = hint

    def with_context(self, *, path: str | Path | None = None, page: int | None = None) -> "StructragError":
        """Attach a file / page if the error does not name one yet; returns self."""
        if self.path is None and path is not None:
            self.path = str(path)
        if self.page is None and page is not None:
            self.page = page
        return self

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path
            if self.page is not None:
                where += f", page {self.page}"
            where += ": "
        elif self.page is not None:
            where = f"page {self.page}: "
        text = where + self.message
        if self.hint:
            text += f" ({self.hint})"
        return text


class InputError(StructragError):
    """The input cannot be processed as given."""


class NotAPDFError(InputError):
    """The file is not a PDF (or does not exist)."""


class EncryptedPDFError(InputError):
    """The PDF needs a password."""


class CorruptPDFError(InputError):
    """The PDF is damaged or truncated beyond what PyMuPDF can repair."""


class ReferenceFormatError(InputError):
    """A reference headings / queries file does not have the expected shape."""


class ConfigError(StructragError, ValueError):
    """An argument or setting is invalid."""


class TreeError(ConfigError):
    """Headings cannot make a tree: a level missing or invalid, levels and headings that do not pair up."""


class ModelError(StructragError):
    """A model file is missing, unreadable or of the wrong kind."""


class BackendError(StructragError):
    """A model server could not be reached or kept failing."""


class BackendUnreachable(BackendError):
    """The model server cannot be reached at all: no request of the run can succeed."""


class BackendResponseError(BackendError):
    """The server answered, but the answer cannot be used."""


class IndexFormatError(StructragError):
    """A persisted index is missing, damaged or of another format."""


class SchemaVersionError(IndexFormatError):
    """A persisted index was written by an incompatible schema version."""


class StructragWarning(UserWarning):
    """Processing went on, but the result misses something the user should know of."""
