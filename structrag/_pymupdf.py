"""Import PyMuPDF without the add-ons it imports on its own.

PyMuPDF 2 depends on ``pymupdf-layout`` and ``pymupdf4llm`` and imports both
with itself; the first loads ONNX models.  That costs about a second and
90 MB per process here (several seconds on a busy machine), for code
structrag never calls — and every CLI run, index worker and test subprocess
pays it.  So the first import of pymupdf made through structrag skips them.
Both stay importable afterwards: ``import pymupdf4llm`` works as usual and
activates the layout model itself when asked to.  What is lost is only
PyMuPDF's own ``to_markdown`` shortcut into pymupdf4llm (call
``pymupdf4llm.to_markdown`` instead).  ``STRUCTRAG_PYMUPDF_LAYOUT=1`` keeps
PyMuPDF's default behaviour.
"""

from __future__ import annotations

import os
import sys

_ADDONS = ("pymupdf.layout", "pymupdf4llm")


def prepare() -> None:
    if "pymupdf" in sys.modules or os.environ.get("STRUCTRAG_PYMUPDF_LAYOUT") == "1":
        return
    blocked = [m for m in _ADDONS if m not in sys.modules]
    for m in blocked:
        sys.modules[m] = None  # type: ignore[assignment]  # their import fails fast, PyMuPDF carries on
    try:
        import pymupdf  # noqa: F401
    except ImportError:  # pymupdf missing: the stage that needs it says so
        pass
    finally:
        for m in blocked:
            if m in sys.modules and sys.modules[m] is None:
                del sys.modules[m]
