"""File helpers shared by every stage: one streamed sha1, one sha1 of JSON-able values, one check that a path
is a readable regular file, one reader of a user's JSON (or JSON-lines) file, one check of an output path,
and the cache folder.

Reading a FIFO blocks until a writer appears and ``/dev/zero`` never ends, so every reader of a
user-given path calls :func:`require_regular_file` before it opens the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from .errors import ConfigError, NotAPDFError, ReferenceFormatError, StructragError

__all__ = ["file_sha1", "content_key", "require_regular_file", "read_json", "read_json_lines",
           "check_output_file", "check_output_folder", "cache_folder"]

_BUFSIZE = 1 << 20


def require_regular_file(path: str | os.PathLike[str], *, what: str = "file",
                         error: type[StructragError] = NotAPDFError) -> Path:
    """``path`` as a :class:`~pathlib.Path` if it names a regular file (links followed); else ``error``
    (:class:`NotAPDFError` unless told).

    Never opens the file, so it cannot block on a FIFO or a device.
    """
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        if os.path.islink(p):
            raise error(f"is a broken link (to {os.readlink(p)}, which does not exist)", path=p) from None
        raise error(f"{what} not found", path=p) from None
    except OSError as exc:  # a symlink loop too (ELOOP)
        raise error(f"cannot be read: {exc.strerror or exc}", path=p) from None
    if stat.S_ISDIR(st.st_mode):
        hint = ("pass the PDF files, or a folder to a command that takes folders (structrag index)"
                if error is NotAPDFError else f"pass the {what} itself")
        raise error("is a folder, not a file", path=p, hint=hint)
    if not stat.S_ISREG(st.st_mode):
        kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(st.st_mode) else "a device" if
                stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
                else "not a regular file")
        raise error(f"is {kind}, not a regular file", path=p, hint="copy it to a regular file first")
    if not os.access(p, os.R_OK):
        raise error("cannot be read: permission denied", path=p, hint="check the file's permissions")
    return p


def _user_text(path: str | os.PathLike[str], what: str, error: type[StructragError],
               hint: str | None) -> tuple[Path, str]:
    """A user's file as text, or ``error`` naming it."""
    p = require_regular_file(path, what=what, error=error)
    try:
        # utf-8-sig: a byte-order mark, as some Windows editors write, is no reason to refuse a file
        return p, p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"is not UTF-8 text (byte {exc.start}): not a {what}", path=p, hint=hint) from None
    except OSError as exc:
        raise error(f"cannot be read: {exc.strerror or exc}", path=p) from None


def _loads(text: str) -> tuple[Any, str | None]:
    """The value of JSON ``text``, or None and why it does not parse."""
    try:
        return json.loads(text), None
    except RecursionError:  # the reader recurses once per bracket: a deep nest exhausts the stack
        return None, "nested too deep"
    except ValueError as exc:  # JSONDecodeError, and integers past Python's digit limit
        return None, str(exc)


def read_json(path: str | os.PathLike[str], *, what: str = "JSON file",
              error: type[StructragError] = ReferenceFormatError, hint: str | None = None) -> Any:
    """The JSON value in a user's file; any failure (missing, a folder or a FIFO, not UTF-8, not JSON, nested
    too deep) is ``error`` naming the file, with ``hint`` where the text does not parse."""
    p, text = _user_text(path, what, error, hint)
    value, why = _loads(text)
    if why is not None:
        raise error(f"not a JSON file ({why})", path=p, hint=hint)
    return value


def read_json_lines(path: str | os.PathLike[str], *, what: str = "JSON-lines file",
                    error: type[StructragError] = ReferenceFormatError,
                    hint: str | None = None) -> list[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of a user's JSON-lines file; failures as in
    :func:`read_json`, a line that does not parse named by its number."""
    p, text = _user_text(path, what, error, hint)
    out: list[tuple[int, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        value, why = _loads(line)
        if why is not None:
            raise error(f"line {n} is not JSON: {why}", path=p, hint=hint)
        out.append((n, value))
    return out


def check_output_file(path: str | os.PathLike[str], *, what: str = "output file", flag: str | None = None,
                      example: str = "out") -> Path:
    """``path`` as a :class:`~pathlib.Path` if a file can be written there: not a folder (nor a FIFO or a
    device), and no file where one of its parent folders should be; else :class:`ConfigError`.

    Checked before the work that produces the output, so a wrong path costs nothing; nothing is created,
    and a folder given by mistake is never written into.
    """
    # os.path's tests, not Path's: they answer False for a name too long or otherwise unusable, where
    # Path.is_dir raises
    p = Path(path)
    if os.path.isdir(p):
        raise ConfigError(f"is a folder: the {what} must be a file", path=p,
                          hint=f"name a file inside it, e.g. {flag + ' ' if flag else ''}{p / example}")
    if os.path.exists(p) and not os.path.isfile(p):
        raise ConfigError(f"is not a regular file: the {what} cannot be written there", path=p,
                          hint=f"name another {what}")
    _check_parents(p, what)
    return p


def check_output_folder(path: str | os.PathLike[str], *, what: str = "output folder", flag: str | None = None) -> Path:
    """``path`` as a :class:`~pathlib.Path` if it is a folder or can be made one (nothing of another kind
    there or where a parent folder should be); else :class:`ConfigError`.  Nothing is created."""
    p = Path(path)
    if os.path.exists(p) and not os.path.isdir(p):
        raise ConfigError(f"is a file, not a folder: the {what} cannot be written there", path=p,
                          hint=f"name a folder{' for ' + flag if flag else ''}; it is created if missing")
    _check_parents(p, what)
    return p


def _check_parents(p: Path, what: str) -> None:
    for parent in p.absolute().parents:
        if os.path.exists(parent):
            if not os.path.isdir(parent):
                raise ConfigError(f"{parent} is a file, not a folder: the {what} cannot be written there",
                                  path=p, hint=f"name another {what}")
            return


def cache_folder(*parts: str) -> Path:
    """The folder ``parts`` under ``$STRUCTRAG_CACHE`` (default ``$XDG_CACHE_HOME/structrag``, or
    ``~/.cache/structrag``), created if missing; :class:`ConfigError` naming the variable when it cannot be."""
    env = os.environ.get("STRUCTRAG_CACHE")
    if env:
        root, source = Path(env), "STRUCTRAG_CACHE"
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = Path(xdg or Path.home() / ".cache") / "structrag"
        source = "XDG_CACHE_HOME" if xdg else "the cache folder"
    folder = root.joinpath(*parts)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = "names a file, not a folder" if os.path.exists(root) and not os.path.isdir(root) else \
            f"cannot be created ({exc.strerror or exc})"
        raise ConfigError(f"{source} ({root}) {why}", hint="point STRUCTRAG_CACHE at a folder structrag may "
                          "write to (it is created if missing), or unset it") from None
    return folder


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
