"""The checkpoint of a level-assignment run (:func:`structrag.levels.walk.driver.assign_levels`): a JSON-lines
file, a header that names the run, then one line per completed step, so that an interrupted run with a
remote backend resumes where it stopped; and the usage totals its steps report."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Sequence

from ...errors import ConfigError
from ...files import require_regular_file
from ...model import Heading

__all__ = ["Checkpoint", "headings_digest", "merge_usage"]

_NEW_PATH = "pass a new file path for --checkpoint (it is created); what is there now is left as it is"


def headings_digest(headings: Sequence[Heading], fixed: Sequence[int | None] = ()) -> str:
    h = hashlib.sha1()
    for x in headings:
        h.update(f"{x.page}\x1f{x.text}\x1e".encode("utf-8"))
    if any(f is not None for f in fixed):
        # fixed levels change the run; without any the digest stays what older checkpoints hold
        h.update(("fixed:" + ",".join("" if f is None else str(f) for f in fixed)).encode("utf-8"))
    return h.hexdigest()


def merge_usage(total: dict, usage: dict | None) -> None:
    if not usage:
        return
    for k, v in usage.items():
        if isinstance(v, bool):
            total[k] = total.get(k, 0) + int(v)
        elif isinstance(v, (int, float)):
            total[k] = total.get(k, 0) + v
        elif isinstance(v, dict):
            merge_usage(total.setdefault(k, {}), v)
        else:
            total[k] = v


class Checkpoint:
    """JSON-lines checkpoint: header line, then one line per completed step."""

    def __init__(self, path: Path, header: dict) -> None:
        self.path = path
        self.header = header
        self.done: list[dict] = []
        self._fh = None

    def load(self) -> None:
        """The steps the file holds; a file that is not a checkpoint of this run is an error and left as it is."""
        if not os.path.lexists(self.path):
            return
        try:
            require_regular_file(self.path, what="checkpoint", error=ConfigError)  # a folder, a FIFO, a loop
        except ConfigError as exc:
            exc.hint = _NEW_PATH
            raise
        if self.path.stat().st_size == 0:
            return
        with open(self.path, "rb") as f:
            first, _, rest = f.read().partition(b"\n")
        head = _json_line(first)
        if not isinstance(head, dict) or head.get("format") != self.header.get("format"):
            # someone else's file given by mistake: never advise deleting it, never append to it
            raise ConfigError("is not a checkpoint of 'structrag' level prediction", path=self.path,
                              hint=_NEW_PATH)
        for key in ("format", "document", "headings_sha1", "n_headings", "predictor", "memory", "granularity"):
            if head.get(key) != self.header.get(key):
                raise ConfigError(
                    f"checkpoint was written for another run ({key}: {head.get(key)!r}, "
                    f"this run: {self.header.get(key)!r})",
                    path=self.path,
                    hint="delete it or pass another checkpoint path",
                )
        good_bytes = len(first) + 1
        for line in rest.split(b"\n"):
            if not line.strip():
                break
            rec = _json_line(line)
            # the interrupted last write (or a damaged line): drop it and what follows, redo those steps
            if not _is_step(rec, self.done[-1]["end"] if self.done else 0):
                break
            self.done.append(rec)
            good_bytes += len(line) + 1
        # cut a torn tail so appends continue a well-formed file
        with open(self.path, "rb+") as f:
            f.truncate(min(good_bytes, os.path.getsize(self.path)))

    def open(self) -> None:
        new = not self.path.exists() or self.path.stat().st_size == 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "a", encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"the checkpoint cannot be written: {exc.strerror or exc}", path=self.path,
                              hint="pass another path for --checkpoint") from None
        if new:
            self._fh.write(json.dumps(self.header) + "\n")
            self._fh.flush()

    def write(self, rec: dict) -> None:
        assert self._fh is not None
        self._fh.write(json.dumps(rec, separators=(",", ":")) + "\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def _json_line(line: str | bytes) -> object:
    """A checkpoint line's JSON value; None for a line that is not JSON (torn, damaged, another file's)."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested past the reader's depth
        return None


def _is_step(rec: object, start: int) -> bool:
    """Whether ``rec`` is a completed step that starts at ``start`` with one level, source and confidence per
    heading of its span."""
    if not isinstance(rec, dict) or rec.get("start") != start or not isinstance(rec.get("end"), int):
        return False
    n = rec["end"] - start
    levels, sources, confs = rec.get("levels"), rec.get("sources"), rec.get("confidences")
    return (n > 0 and isinstance(levels, list) and isinstance(sources, list) and isinstance(confs, list)
            and len(levels) == len(sources) == len(confs) == n
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in levels)
            and all(isinstance(v, str) for v in sources)
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in confs)
            and isinstance(rec.get("usage", {}), (dict, type(None))))
