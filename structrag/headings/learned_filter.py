"""The learned heading filter: a LightGBM model's second opinion on the layout-detected headings.

Trained across a few hundred publishers and synthetic templates (``python -m eval.bench.heading_filter
--save``), it drops a layout heading whose probability of being a real heading is under the threshold
saved with it; headings read from the printed contents or the outline are kept as they are.  The model is
LightGBM's text format (``models/heading_filter.txt``; the pipeline reads it with
:mod:`structrag.levels.gbdt`, without importing lightgbm); ``models/heading_filter.json`` holds the feature
names and the threshold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from ..errors import ModelError
from ..model import Document, Heading
from .filter_features import FEATURES, document_drawings, heading_features

MODELS = Path(__file__).with_name("models")


def filter_model_files(models: Path = MODELS) -> tuple[Path, float]:
    """The model file and its threshold; refused when the model was saved for other features."""
    path = models / "heading_filter.json"
    meta = json.loads(path.read_text(encoding="utf-8"))
    if tuple(meta["features"]) != FEATURES:
        raise ModelError("the heading filter model was saved for other features", path=path,
                         hint="train it again: python -m eval.bench.heading_filter --save structrag/headings/models")
    return models / "heading_filter.txt", float(meta["threshold"])


def filter_vetoes(document: Document, heads: Sequence[Heading], model: Any, threshold: float, *,
                  password: str | None = None) -> set[int]:
    """Indices of the layout headings of ``heads`` that ``model`` (anything with ``predict(rows)`` giving
    probabilities: the model of :func:`filter_model_files`) puts under ``threshold``.

    Reads the PDF again for the ruling lines of the pages that hold a layout heading (PyMuPDF's
    ``get_cdrawings``, several hundred pages a second).
    """
    import numpy as np

    from ..extraction.pdf import open_pdf

    layout = [k for k, h in enumerate(heads) if h.source == "layout"]
    if not layout:
        return set()
    pdf = open_pdf(Path(document.path), password)
    try:
        drawn = document_drawings(pdf, [heads[k].page for k in layout])
    finally:
        pdf.close()
    rows = heading_features(document, heads, drawn)
    p = np.asarray(model.predict(np.asarray([rows[k] for k in layout], float)), float).reshape(-1)
    return {k for k, q in zip(layout, p) if q < threshold}
