"""Benchmark runners: heading trees, retrieval, speed — each method side by side.

>>> from eval.runners import run_headings, run_retrieval, run_speed          # doctest: +SKIP
>>> rep = run_headings("shared/data/headings", protocol="level-only")       # doctest: +SKIP
>>> rep.write("structrag-out/headings")                                    # doctest: +SKIP

Every report carries :func:`eval.provenance.provenance` (command, git commit,
versions) and writes a Markdown table, the full JSON (per document / per
query) and PNG plots (:mod:`eval.plots`, matplotlib).

Heading methods
---------------
- structrag level predictors by registered name (``font-size``, ``size-rank``,
  ``numbering``, ``rules``, ``learned``, ``vlm``, ...).  *Level-only*: the
  reference headings (outline entries located on their pages) are given and
  only their levels are predicted (:func:`structrag.levels.assign_levels`).
  *End-to-end*: :func:`structrag.pipeline.parse_document` from the extracted
  PDF with the outline ignored (it is the answer key), headings detected,
  levels predicted.
- ``pymupdf4llm`` / ``pymupdf4llm-legacy``: the ``#`` headings of
  ``pymupdf4llm.to_markdown`` (with its layout model / with its font-size
  heuristics), read the MPDocBench way (end-to-end only).  Run in a child
  process (pymupdf4llm's import switches PyMuPDF's layout hook on) and cached.

A method that fails on a document scores an empty prediction there (so it is
never flattered) and the error is listed in the report.
"""

from .headings import (
    HeadingsReport,
    default_heading_methods,
    predict_end_to_end,
    predict_level_only,
    run_headings,
    score_end_to_end,
    score_level_only,
    vlm_configured,
)
from .headings import __all__ as _HEADINGS
from ._child import MARKDOWN_METHODS, markdown_pages
from .retrieval import RetrievalReport, load_queries, retrieval_metric_names, run_retrieval
from .speed import SPEED_METHODS, SpeedReport, run_speed

__all__ = [
    "MARKDOWN_METHODS",
    *_HEADINGS,
    "load_queries",
    "retrieval_metric_names",
    "RetrievalReport",
    "run_retrieval",
    "SPEED_METHODS",
    "SpeedReport",
    "run_speed",
    "markdown_pages",
]
