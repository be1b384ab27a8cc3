"""Evaluation: tree metrics, retrieval metrics, benchmarks and their reports.

>>> from eval import score_document, evaluate, load_outline
>>> s = score_document(predicted, load_outline("report.toc.json"))     # doctest: +SKIP
>>> s.teds, s.path_accuracy                                             # doctest: +SKIP
>>> evaluate({"q1": [59, 12, 60]}, {"q1": [59]}).mean["map"]            # doctest: +SKIP

Modules: :mod:`eval.trees` (TED / STEDS, parent & path accuracy, heading
P/R/F1, Markdown HeadingTEDS, loaders), :mod:`eval.retrieval_metrics` (mAP,
MRR, nDCG, recall@k any/all-hit, page and passage units),
:mod:`eval.references` (reference sets from outline-bearing PDFs),
:mod:`eval.runners` (headings / retrieval / speed side by side),
:mod:`eval.report` (the whole report), :mod:`eval.shared_data` (where the
shared data folder is), CLI ``structrag eval ...``.

The benchmarks are ``eval.bench`` (``python -m eval.bench.<name>`` from a
checkout); they build on this package and are not installed with it.
"""

from __future__ import annotations

from structrag._lazy import lazy_exports

# Names are imported on first use: the CLI loads this package to register its
# sub-commands, and should not pay for numpy/numba/lightgbm imports to print --help.
_LAZY = {
    "RetrievalScores": "retrieval_metrics",
    "evaluate": "retrieval_metrics",
    "pages_from_hits": "retrieval_metrics",
    "passages_from_hits": "retrieval_metrics",
    "DocumentScores": "trees",
    "Outline": "trees",
    "TreeScores": "trees",
    "align": "trees",
    "as_outline": "trees",
    "heading_prf": "trees",
    "heading_teds": "trees",
    "load_outline": "trees",
    "outline_from_markdown": "trees",
    "outline_from_parent_links": "trees",
    "parent_accuracy": "trees",
    "path_accuracy": "trees",
    "score_corpus": "trees",
    "score_document": "trees",
    "ted": "trees",
    "teds": "trees",
}

# What the package documents: every name of the table above.
__all__ = list(_LAZY)


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
