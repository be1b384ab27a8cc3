"""Heading-tree metrics: TED / TEDS / STEDS, parent and path accuracy, heading P/R/F1.

Modules: :mod:`eval.trees.outline` (the :class:`Outline` value and its loaders),
:mod:`eval.trees.ted` (tree edit distance), :mod:`eval.trees.align` (text similarity,
alignment, heading P/R/F1, pruning), :mod:`eval.trees.scores` (per-document and pooled
scores).  Every public name is importable from ``eval.trees``.

Everything works on :class:`Outline`, a heading tree in reading order (texts,
levels, pages, parent links).  :func:`as_outline` makes one from what users
have: a :class:`structrag.HeadingTree`, a sequence of ``(text, level, page)``
items (or ``Heading`` / ``OutlineEntry`` objects, or dicts), a structrag JSON
payload, a ``*.toc.json`` payload, or a path (:func:`load_outline`: PDF
outline, ``structrag toc --json``, ``*.toc.json``, ``HeadingTree.to_dict``
JSON, Markdown).

Definitions
-----------
*TED*: tree edit distance (APTED / Zhang–Shasha, exact) between the two trees,
each under a virtual root that is never edited; insert and delete cost 1;
renaming one heading into another costs the normalised edit distance
(Levenshtein / longer length) between their :func:`normalize_title` texts
(``rename="exact"``: 0 if equal, else 1).

*TEDS* per document: ``1 - TED / max(|T_pred|, |T_ref|)`` where ``|T|`` counts
headings (the virtual root is not counted); 1.0 when both trees are empty;
clipped below at 0 (TED can exceed the larger size only for trees of opposite
shapes, e.g. a chain against a flat list).

*Micro-STEDS* over documents: ``1 - sum TED / sum max-size`` (long documents
weigh more); *Macro-STEDS*: the mean of per-document TEDS.

*Alignment* (end-to-end protocol): a monotone one-to-one matching of predicted
to reference headings (both in reading order) that maximises the summed text
similarity over pairs with similarity >= ``threshold`` and pages at most
``page_window`` apart (pages are ignored where either side has none).
Similarity is ``1 - NED`` of the normalised texts, also tried with the leading
number stripped (``"Item 7."`` vs ``"Item 7. Management's..."``, ``"2.1 Scope"``
vs ``"Scope"``), with a prefix rule for truncated titles.

*Heading precision / recall / F1*: matched / predicted, matched / reference.

*Parent accuracy*: the share of reference headings whose matched prediction
hangs from the prediction matched to the reference parent (or both from the
root).  The prediction is first pruned to the matched headings (unmatched
headings are deleted and their children promoted, as TED's delete does), since
outlines are partial trees.  *Path accuracy* (HELD): the share whose whole
root-to-node path is right, i.e. the parent is right and so is the parent's
path.  *Depth accuracy*: the pruned depth equals the reference depth.
Unmatched reference headings count as wrong; the denominator is the number of
reference headings.  In the *level-only* protocol both sides hold the same
headings, the alignment is the identity and nothing is pruned.

*Pruned TEDS*: TEDS between the pruned prediction and the reference.
*Aligned TEDS*: the same after relabelling each kept prediction with the text
of the reference heading it is aligned to, so that only structure counts
(printed "1.2 Scope" against the outline's "Scope" costs nothing once they
are aligned).  In the level-only protocol both equal TEDS.
"""

from __future__ import annotations

from .align import Alignment, HeadingPRF, align, heading_prf, prune, text_similarity
from .outline import Outline, as_outline, load_outline, outline_from_markdown, outline_from_parent_links
from .scores import (
    DocumentScores,
    Protocol,
    TreeScores,
    parent_accuracy,
    path_accuracy,
    pool,
    score_corpus,
    score_document,
)
from .ted import Engine, Rename, heading_teds, ted, teds

__all__ = [
    "Outline",
    "as_outline",
    "load_outline",
    "outline_from_markdown",
    "outline_from_parent_links",
    "ted",
    "teds",
    "heading_teds",
    "text_similarity",
    "Alignment",
    "align",
    "HeadingPRF",
    "heading_prf",
    "parent_accuracy",
    "path_accuracy",
    "prune",
    "pool",
    "DocumentScores",
    "TreeScores",
    "score_document",
    "score_corpus",
]
