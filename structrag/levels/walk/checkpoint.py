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
from ...model import Heading

__all__ = ["Checkpoint", "headings_digest", "merge_usage"]


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
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with open(self.path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        try:
            head = json.loads(lines[0])
        except json.JSONDecodeError:
            raise ConfigError("checkpoint header is not JSON", path=self.path,
                              hint="delete the file to start over") from None
        for key in ("format", "document", "headings_sha1", "n_headings", "predictor", "memory", "granularity"):
            if head.get(key) != self.header.get(key):
                raise ConfigError(
                    f"checkpoint was written for another run ({key}: {head.get(key)!r}, "
                    f"this run: {self.header.get(key)!r})",
                    path=self.path,
                    hint="delete it or pass another checkpoint path",
                )
        good_bytes = len(lines[0]) + 1
        for line in lines[1:]:
            if not line.strip():
                break
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                break  # the interrupted last write: drop it, redo that step
            if rec.get("start") != (self.done[-1]["end"] if self.done else 0):
                break
            self.done.append(rec)
            good_bytes += len(line.encode("utf-8")) + 1
        # cut a torn tail so appends continue a well-formed file
        with open(self.path, "rb+") as f:
            f.truncate(min(good_bytes, os.path.getsize(self.path)))

    def open(self) -> None:
        new = not self.path.exists() or self.path.stat().st_size == 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8")
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
