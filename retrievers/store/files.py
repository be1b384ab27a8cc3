"""The files of an index directory beside its database: the vector files and the derived search
arrays, one folder per generation, written whole and checked before use (a mixin of
:class:`retrievers.store.database.Store`, which says how the directory is laid out and kept safe)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from .durable import file_crc, fsync_dir

__all__ = ["DerivedFiles"]


class DerivedFiles:
    """Vector and derived-array files of a :class:`~retrievers.store.database.Store` (``root``, ``generation()``
    and ``documents()`` come from the store)."""

    @property
    def vectors_dir(self) -> Path:
        return self.root / "vectors"

    @property
    def derived_root(self) -> Path:
        return self.root / "derived"

    def derived_dir(self, generation: int) -> Path:
        return self.derived_root / f"g{generation:08d}"

    def derived_ok(self, generation: int, layout: str) -> bool:
        """Whether ``derived/g<generation>`` is complete and of ``layout``."""
        d = self.derived_dir(generation)
        try:
            done = json.loads((d / "COMPLETE").read_text(encoding="utf-8"))
            if not (isinstance(done, dict) and done.get("generation") == generation and done.get("layout") == layout):
                return False
            # a damaged cache file must not answer queries: each file's size and CRC-32 are checked
            # (folders written before the checksums were recorded have no "files" and are trusted)
            return all(file_crc(d / rel) == tuple(want) for rel, want in done.get("files", {}).items())
        except (OSError, ValueError, TypeError, AttributeError):
            return False

    def publish_derived(self, generation: int, writer, layout: str) -> Path:
        """Run ``writer(tmpdir)`` and rename the folder to ``derived/g<generation>`` when it returns.

        An existing folder of another ``layout`` (written by an older version) is replaced.
        """
        self.derived_root.mkdir(exist_ok=True)
        final = self.derived_dir(generation)
        if self.derived_ok(generation, layout):
            return final
        tmp = self.derived_root / f".tmp-g{generation:08d}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        writer(tmp)
        files = {str(f.relative_to(tmp)): list(file_crc(f)) for f in sorted(tmp.rglob("*")) if f.is_file()}
        (tmp / "COMPLETE").write_text(json.dumps({"generation": generation, "layout": layout, "files": files}),
                                      encoding="utf-8")
        for dirpath, _, files in os.walk(tmp):
            for fn in files:
                with open(os.path.join(dirpath, fn), "rb") as f:
                    os.fsync(f.fileno())
        if final.exists():  # of an older layout: readers meanwhile rebuild from the database
            old = self.derived_root / f".old-g{generation:08d}-{os.getpid()}"
            os.rename(final, old)
            shutil.rmtree(old, ignore_errors=True)
        os.rename(tmp, final)
        fsync_dir(self.derived_root)
        return final

    def garbage_collect(self) -> None:
        """Remove derived folders of old generations, unreferenced vectors, stale temp files (writer only)."""
        gen = self.generation()
        keep = self.derived_dir(gen).name
        if self.derived_root.is_dir():
            for p in self.derived_root.iterdir():
                if p.name != keep:
                    shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        referenced = {d.vectors for d in self.documents() if d.vectors}
        if self.vectors_dir.is_dir():
            for p in self.vectors_dir.iterdir():
                stem = p.name.split(".", 1)[0]
                if p.name.startswith(".") or stem not in referenced:
                    p.unlink(missing_ok=True)
        for p in self.root.iterdir():
            if p.name.startswith(".") and ".tmp-" in p.name:
                p.unlink(missing_ok=True)
