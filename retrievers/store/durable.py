"""Durable writes and guarded reads of an index's files (used by :mod:`retrievers.store.database`).

Writes go to a temporary file that is fsynced and renamed over the target, so a reader sees the old
file or the whole new one; a read of the database that meets damage is an
:class:`~structrag.errors.IndexFormatError` naming the index, never a sqlite traceback.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import zlib
from pathlib import Path

import numpy as np

from structrag.errors import IndexFormatError

__all__ = ["DB_NAME", "fsync_dir", "atomic_write_bytes", "atomic_save_npy", "damaged", "reads", "file_crc", "read_only_storage"]

#: the database file of an index directory
DB_NAME = "index.sqlite"


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the whole new one."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def atomic_save_npy(path: Path, array: np.ndarray) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        np.save(f, np.ascontiguousarray(array), allow_pickle=False)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def damaged(root: Path, exc: BaseException) -> IndexFormatError:
    return IndexFormatError(
        f"cannot read {DB_NAME}: {exc}", path=root,
        hint="the index database is damaged; build the index again from the PDFs "
             "(structrag index PDF... --out NEW_DIR)")


def reads(method):
    """A read of the database: a damaged file or row is an IndexFormatError naming the index, not a traceback."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.DatabaseError, ValueError, TypeError, KeyError, zlib.error) as exc:
            if isinstance(exc, IndexFormatError):
                raise
            raise damaged(self.root, exc) from exc

    return wrapper


def file_crc(path: Path) -> tuple[int, int]:
    """(size, CRC-32) of a file, read in blocks."""
    crc, size = 0, 0
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            crc = zlib.crc32(block, crc)
            size += len(block)
    return size, crc


def read_only_storage(root: Path, db: Path) -> bool:
    """The index sits where this process cannot write (a read-only mount, a container layer, mode bits)."""
    return not (os.access(root, os.W_OK) and os.access(db, os.W_OK))
