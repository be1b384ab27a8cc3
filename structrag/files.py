"""File helpers shared by every stage: one streamed sha1, one sha1 of JSON-able values, one check that a path
is a readable regular file.

Reading a FIFO blocks until a writer appears and ``/dev/zero`` never ends, so every reader of a
user-given path calls :func:`require_regular_file` before it opens the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from .errors import NotAPDFError

__all__ = ["file_sha1", "content_key", "require_regular_file"]

_BUFSIZE = 1 << 20


def require_regular_file(path: str | os.PathLike[str], *, what: str = "file") -> Path:
    """``path`` as a :class:`~pathlib.Path` if it names a regular file (links followed); else :class:`NotAPDFError`.

    Never opens the file, so it cannot block on a FIFO or a device.
    """
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise NotAPDFError(f"{what} not found", path=p) from None
    except OSError as exc:
        raise NotAPDFError(f"cannot be read: {exc.strerror or exc}", path=p) from None
    if stat.S_ISDIR(st.st_mode):
        raise NotAPDFError("is a folder, not a file", path=p, hint="pass the PDF files, or a folder to a command "
                           "that takes folders (structrag index)")
    if not stat.S_ISREG(st.st_mode):
        kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(st.st_mode) else "a device" if
                stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
                else "not a regular file")
        raise NotAPDFError(f"is {kind}, not a regular file", path=p,
                           hint="copy the document to a regular file first")
    if not os.access(p, os.R_OK):
        raise NotAPDFError("cannot be read: permission denied", path=p, hint="check the file's permissions")
    return p


def file_sha1(path: str | os.PathLike[str], bufsize: int = _BUFSIZE) -> str:
    """Hex sha1 of a regular file's bytes, read in ``bufsize`` blocks (never the whole file at once)."""
    p = require_regular_file(path)
    h = hashlib.sha1()
    with open(p, "rb") as f:
        while block := f.read(bufsize):
            h.update(block)
    return h.hexdigest()


def content_key(*parts: object) -> str:
    """A stable sha1 of JSON-able ``parts`` (keys sorted; other values by ``str``): the key of what a stored
    form depends on."""
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()
