"""PyMuPDF, imported late and lean, with MuPDF's own messages sent to the log.

**Import.** PyMuPDF 2 depends on ``pymupdf-layout`` and ``pymupdf4llm`` and
imports both with itself; the first loads ONNX models.  That costs about a
second and 90 MB per process here, for code structrag never calls.  And
importing PyMuPDF at all (~0.15 s) is wasted on ``structrag --help`` or a
retrieval query.  So ``import structrag`` imports nothing from PyMuPDF, and
structrag imports it through :func:`import_pymupdf`, which keeps the add-ons
out of that first import.  Both stay importable afterwards: ``import
pymupdf4llm`` works as usual and activates the layout model itself when asked
to.  What is lost is only PyMuPDF's own ``to_markdown`` shortcut into
pymupdf4llm (call ``pymupdf4llm.to_markdown`` instead).
``STRUCTRAG_PYMUPDF_LAYOUT=1`` keeps PyMuPDF's default behaviour.

**Messages.** While parsing some PDFs MuPDF reports problems ("could not
parse color space", "repairing PDF document") that PyMuPDF prints on stdout,
where they mix with ``structrag toc --json``.  :class:`MuPDFMessages` turns
the printing off while structrag reads a document (PyMuPDF's supported switch,
``TOOLS.mupdf_display_errors``), collects the messages PyMuPDF stores
(``TOOLS.mupdf_warnings``), logs them on the ``structrag.mupdf`` logger under
the file's name and gives the document one counted warning.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import sys
import threading
from typing import Any, Callable, TypeVar

_ADDONS = ("pymupdf.layout", "pymupdf4llm")

log = logging.getLogger("structrag.mupdf")

__all__ = ["import_pymupdf", "MuPDFMessages", "route_mupdf_messages"]


# --- import ---------------------------------------------------------------------------------
_import_lock = threading.Lock()


def import_pymupdf() -> Any:
    """``pymupdf``, imported on first call with its add-ons kept out of that import.

    Every PyMuPDF user in structrag calls this instead of ``import pymupdf``; nothing is installed
    in the import system.  When pymupdf is already imported (by the caller), it is returned as is.
    """
    mod = sys.modules.get("pymupdf")
    if mod is not None:
        return mod
    if os.environ.get("STRUCTRAG_PYMUPDF_LAYOUT") == "1":
        import pymupdf

        return pymupdf
    with _import_lock:
        blocked = [m for m in _ADDONS if m not in sys.modules]
        for m in blocked:
            sys.modules[m] = None  # type: ignore[assignment]  # their import fails fast, PyMuPDF carries on
        try:
            import pymupdf
        finally:
            for m in blocked:
                if m in sys.modules and sys.modules[m] is None:
                    del sys.modules[m]
    return pymupdf


# --- MuPDF messages --------------------------------------------------------------------------
# PyMuPDF keeps one process-wide store and one display switch: documents read in
# threads at the same time share them, so one reader holds them at a time.
_lock = threading.RLock()


class MuPDFMessages:
    """Collect MuPDF's messages about one document instead of printing them.

    ``with MuPDFMessages(path) as m: ...`` then ``m.messages`` (the lines, as
    MuPDF words them, "... repeated N times..." included), ``m.count`` (the
    problems, repeats counted) and ``m.warning()`` (one line for the document's
    warnings, or None).  Each line is logged at INFO on the ``structrag.mupdf``
    logger, prefixed with the file name (INFO: the document's warning already
    says how many there were; ``logging.basicConfig(level=logging.INFO)`` shows
    them).  Messages PyMuPDF had stored before
    are left in its store for their owner.
    """

    def __init__(self, path: Any) -> None:
        self.path = str(path)
        self.messages: list[str] = []
        self._pymupdf: Any = None
        self._earlier = ""
        self._display: Any = None

    def __enter__(self) -> "MuPDFMessages":
        _lock.acquire()
        try:
            pymupdf = import_pymupdf()
        except ImportError:  # the stage that needs pymupdf says so
            return self
        self._pymupdf = pymupdf
        self._display = pymupdf.TOOLS.mupdf_display_errors()
        pymupdf.TOOLS.mupdf_display_errors(False)
        self._earlier = pymupdf.TOOLS.mupdf_warnings(reset=True)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._pymupdf is not None:
                tools = self._pymupdf.TOOLS
                text = tools.mupdf_warnings(reset=True)
                tools.mupdf_display_errors(self._display)
                store = getattr(self._pymupdf, "JM_mupdf_warnings_store", None)
                if self._earlier and isinstance(store, list):
                    store[:0] = self._earlier.split("\n")
                self.messages = [line for line in text.split("\n") if line.strip()]
                for line in self.messages:
                    log.info("%s: MuPDF: %s", self.path, line)  # the document's warning counts them
        finally:
            _lock.release()

    @property
    def count(self) -> int:
        n = 0
        for line in self.messages:
            m = _REPEATED.match(line)
            n += int(m.group(1)) - 1 if m else 1  # N counts the first, printed, line too
        return n

    def warning(self) -> str | None:
        if not self.messages:
            return None
        first = self.messages[0] if len(self.messages[0]) <= 100 else self.messages[0][:97] + "..."
        return (f"{self.path}: MuPDF reported {self.count} problem(s) while reading the file, e.g. {first!r} "
                f"(each on the 'structrag.mupdf' logger); text where they occurred may be missing")


# MuPDF folds a run of one message into "... repeated N times..." (N more of the line before)
_REPEATED = re.compile(r"^\.\.\. repeated (\d+) times?\.\.\.$")


F = TypeVar("F", bound=Callable[..., Any])


def route_mupdf_messages(func: F) -> F:
    """Decorate a function ``(path, ...) -> Document``: MuPDF's messages become a warning of the document."""

    @functools.wraps(func)
    def wrapper(path, *args, **kwargs):
        import dataclasses
        import warnings

        from .errors import StructragWarning

        with MuPDFMessages(path) as m:
            doc = func(path, *args, **kwargs)
        w = m.warning()
        if w is None:
            return doc
        warnings.warn(w, StructragWarning, stacklevel=2)
        return dataclasses.replace(doc, warnings=tuple(doc.warnings) + (w,))

    return wrapper  # type: ignore[return-value]
