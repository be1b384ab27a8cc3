"""Hierarchy-aware features for (query, chunk) pairs, vectorised over candidates: the feature registry.

Each feature is one :class:`Feature` of :data:`FEATURES`: its name, its group, the direction in which
it may move a score (the ranker's monotone constraint), the function that computes it
(:mod:`retrievers.rank.chunk_features`, :mod:`retrievers.rank.question_features`,
:mod:`retrievers.rank.page_features`), what it means, and its column in the shipped rankers.  The
named sets (:data:`LEXICAL_FEATURES`, :data:`PORTABLE_FEATURES`, :data:`EVIDENCE_DIRECTION`, ...)
and the list below are read from the registry; :func:`compute_features` computes any of them.
Adding a feature is one entry (and its function).
"""

from __future__ import annotations

import textwrap
from typing import Callable, NamedTuple, Sequence

import numpy as np

from structrag.errors import ConfigError

from ..store.corpus import Corpus
from . import chunk_features as chunk
from . import page_features as page
from . import question_features as question
from .candidates import Candidates
from .query import QueryScores

__all__ = [
    "Feature",
    "Group",
    "GROUPS",
    "FEATURES",
    "HELD_FEATURES",
    "LEXICAL_FEATURES",
    "DENSE_FEATURES",
    "ALL_FEATURES",
    "NORMALISED_LEXICAL",
    "NORMALISED_DENSE",
    "QUERY_LEXICAL",
    "QUERY_DENSE",
    "CONCEPT_FEATURES",
    "DOC_FEATURES",
    "PAGE_TEXT_FEATURES",
    "OPEN_PAGE_FEATURES",
    "KNOWN_FEATURES",
    "PORTABLE_LEXICAL",
    "PORTABLE_DENSE",
    "PORTABLE_FEATURES",
    "EVIDENCE_DIRECTION",
    "evidence_constraints",
    "feature_names",
    "portable_feature_names",
    "available_features",
    "needs_dense",
    "compute_features",
]


class Group(NamedTuple):
    """A group of features: its name, whether its features need embeddings, and what it is."""

    name: str
    dense: bool
    about: str


class Feature(NamedTuple):
    """One feature of the ranker."""

    name: str
    group: str  # a key of GROUPS
    #: +1: more may only raise a candidate's score (more matching evidence), -1: only lower it (a rank,
    #: 0 = best), 0: free (structure and question type, whose effect depends on the question)
    direction: int
    compute: Callable[[Candidates], np.ndarray]  # one value per candidate
    about: str
    #: its column in the shipped rankers (they read columns by position), None when they do not read it
    column: int | None = None


GROUPS: dict[str, Group] = {g.name: g for g in (
    Group("held", False, "HELD's features (the hierarchy-aware ranker of the HELD method, as published):"),
    Group("lexical", False, "Beyond HELD:"),
    Group("dense", True, "Beyond HELD, with embeddings:"),
    Group("normalised-lexical", False, """\
Per-query normalised and rank-based features.  A raw BM25 or cosine value means different things on
different collections: BM25 grows with the query's length and the collection's idf, cosine similarity
with the model (e5's similarities sit in a narrow band near 0.8, MiniLM's spread from 0 to 0.7).
These say how a candidate stands among the query's own candidates instead, so a ranker trained on
10-K questions reads them the same way on a manual or a Chinese prospectus:"""),
    Group("normalised-dense", True, "The same for the dense scores:"),
    Group("query-lexical", False, """\
Idf-weighted coverage, and query-level features (one value per query, the same for all its
candidates).  A tree splits on the query-level ones to weigh the others by the kind of question: a
question worded like one page (its rare words all on that page, one lexical match far ahead of the
rest) is best answered by the lexical scores, a question worded unlike the text by the dense ones and
the structural priors.  Normalised scores alone hide this, since every query's best candidate has
z-score > 0:"""),
    Group("query-dense", True, "The same for the dense scores:"),
    Group("concept", False, """\
Concept and year features (:mod:`retrievers.rank.question_features`): the concepts a question names
in the reader's words ("capex", :mod:`retrievers.rank.concepts`) are looked for in the filer's words
("purchases of property, plant and equipment"), scored on their own (all 0 when the question names no
concept):"""),
    Group("document", False, """\
Document features: does the question name the chunk's document (its issuer and period,
:mod:`retrievers.rank.named_documents`).  Constant within a document; NaN where the identity or the
year is unknown:"""),
    Group("page-text", False, """\
Whole-page text features (:mod:`retrievers.rank.page_features`): BM25 of the chunk's page as one
document, against the pages of its own document.  Available to any ranker (``structrag train-ranker
--features portable+page-text``), not in :data:`PORTABLE_FEATURES`: the shipped rankers trained with
them lost the filings 0.07 mAP and the demo's answer:"""),
    Group("open-page", False, """\
Their twins, which the shipped rankers read: the same values on a question that names no concept,
unknown (NaN) on one that does:"""),
)}

FEATURES: tuple[Feature, ...] = (
    Feature("bm25", "held", +1, chunk.bm25, "BM25 of the chunk's own text."),
    Feature("bm25_anc_max", "held", +1, chunk.bm25_anc_max,
            "max BM25 of the query against each ancestor heading (the chunk's section heading and every "
            "heading above it)."),
    Feature("same_word_anc", "held", +1, chunk.same_word_anc,
            "number of distinct query terms found in the ancestor headings.", 9),
    Feature("pos", "held", 0, chunk.pos, "the chunk's index among the chunks of its section.", 0),
    Feature("pos_ratio", "held", 0, chunk.pos_ratio, "``pos / sibling_count``.", 1),
    Feature("bm25_section", "lexical", +1, chunk.bm25_section,
            "BM25 of the whole section the chunk is in (all its chunks)."),
    Feature("depth", "lexical", 0, chunk.depth, "length of the section path (0 before the first heading).", 2),
    Feature("sec_pos_ratio", "lexical", 0, chunk.sec_pos_ratio,
            "the section's index among its parent's sub-sections, over their number.", 3),
    Feature("page_pos", "lexical", 0, chunk.page_pos, "first page of the chunk / (pages in the document - 1).", 4),
    Feature("bm25_rel", "lexical", +1, chunk.bm25_rel,
            "``bm25`` over the best ``bm25`` among the query's candidates (puts queries with long and short "
            "score scales on one footing).", 5),
    Feature("page_bm25", "lexical", +1, chunk.page_bm25,
            "sum of ``bm25`` over every chunk on the chunk's (first) page: relevance is judged by page, and a "
            "page whose several chunks match is the likelier answer."),
    Feature("page_bm25_rel", "lexical", +1, chunk.page_bm25_rel,
            "``page_bm25`` over its best value among the candidates.", 12),
    Feature("coverage", "lexical", +1, chunk.coverage, "share of the distinct query terms found in the chunk.", 15),
    Feature("coverage_ctx", "lexical", +1, chunk.coverage_ctx,
            "share of them found in the chunk or its ancestor headings.", 16),
    Feature("page_coverage", "lexical", +1, chunk.page_coverage,
            "share of them found anywhere on the chunk's page.", 17),
    Feature("num_ratio", "lexical", 0, chunk.num_ratio,
            "share of the chunk's terms that are numbers (statements, tables).", 18),
    Feature("page_num_ratio", "lexical", 0, chunk.page_num_ratio,
            "mean ``num_ratio`` of the chunks on the chunk's (first) page: a statement page is numeric as a "
            "whole even where one of its chunks is a caption or a footnote, and relevance is by page.", 19),
    Feature("length", "lexical", 0, chunk.length, "the chunk's number of terms."),
    Feature("q_amount", "lexical", 0, chunk.q_amount,
            '1 if the query asks for a quantity ("how much", "amount", "ratio", a currency, a percentage, ...), '
            "else 0 (:func:`retrievers.rank.question.asks_for_amount`): lets the trees weigh ``num_ratio`` by "
            "question type.", 21),
    Feature("dense", "dense", +1, chunk.dense, "cosine similarity of query and chunk embeddings."),
    Feature("dense_path", "dense", +1, chunk.dense_path,
            'cosine similarity of the query and the section path ("Item 8 > Notes > Note 5") embedding.'),
    Feature("dense_rel", "dense", +1, chunk.dense_rel, "``dense`` minus the best ``dense`` among the candidates."),
    Feature("bm25_z", "normalised-lexical", +1, chunk.bm25_z,
            "z-score of ``bm25`` among the candidates (0 when they all tie).", 6),
    Feature("bm25_rank", "normalised-lexical", -1, chunk.bm25_rank,
            "rank of ``bm25`` among the candidates (0 = best; ties share the best rank).", 7),
    Feature("anc_rel", "normalised-lexical", +1, chunk.anc_rel,
            "``bm25_anc_max`` over its best value among the candidates.", 8),
    Feature("same_word_anc_frac", "normalised-lexical", +1, chunk.same_word_anc_frac,
            "``same_word_anc`` over the number of distinct query terms.", 10),
    Feature("section_rel", "normalised-lexical", +1, chunk.section_rel,
            "``bm25_section`` over its best value among the candidates.", 11),
    Feature("page_bm25_z", "normalised-lexical", +1, chunk.page_bm25_z,
            "z-score of ``page_bm25`` among the candidates.", 13),
    Feature("page_rank", "normalised-lexical", -1, chunk.page_rank,
            "rank of the chunk's page among the candidates' pages by ``page_bm25``.", 14),
    Feature("length_rel", "normalised-lexical", 0, chunk.length_rel,
            "``length`` over the candidates' median length.", 20),
    Feature("sec_mention", "normalised-lexical", +1, chunk.sec_mention,
            "1 if the query names one of the chunk's ancestor headings (:mod:`retrievers.rank.question`: "
            '"risk factors", "Item 7", "募集资金运用").', 22),
    Feature("q_sec_mention", "normalised-lexical", 0, chunk.q_sec_mention,
            "1 if the query names any ancestor heading of any candidate.", 23),
    Feature("dense_z", "normalised-dense", +1, chunk.dense_z, "z-score of ``dense`` among the candidates.", 39),
    Feature("dense_rank", "normalised-dense", -1, chunk.dense_rank, "rank of ``dense`` among the candidates.", 40),
    Feature("dense_path_z", "normalised-dense", +1, chunk.dense_path_z,
            "z-score of ``dense_path`` among the candidates.", 41),
    Feature("idf_coverage", "query-lexical", +1, chunk.idf_coverage,
            "share of the query's idf mass (distinct terms) found in the chunk: a rare word of the question "
            "counts more than a common one.  A term the collection lacks counts with the largest idf, so a "
            "question worded unlike the documents scores low everywhere."),
    Feature("page_idf_coverage", "query-lexical", +1, chunk.page_idf_coverage,
            "the same over the chunk's whole (first) page."),
    Feature("q_idf_top", "query-lexical", 0, chunk.q_idf_top, "the best ``page_idf_coverage`` among the candidates."),
    Feature("q_bm25_top_z", "query-lexical", 0, chunk.q_bm25_top_z,
            "the best ``bm25_z`` among the candidates (how far the best lexical match stands out)."),
    Feature("q_dense_top_z", "query-dense", 0, chunk.q_dense_top_z, "the best ``dense_z`` among the candidates."),
    Feature("x_bm25_z", "concept", +1, question.x_bm25_z,
            "z-score among the candidates of the BM25 of the expansion terms.", 24),
    Feature("x_page_z", "concept", +1, question.x_page_z, "the same summed over the chunk's (first) page.", 25),
    Feature("x_phrase", "concept", +1, question.x_phrase,
            "best share of one filer wording's terms found in the chunk (a statement row label \"Purchases of "
            'property, plant and equipment").', 26),
    Feature("x_anc", "concept", +1, question.x_anc,
            "the same, filer wordings and statement titles, in the chunk's ancestor headings (\"Capital "
            'Spending", "Consolidated Statement of Cash Flows").', 27),
    Feature("x_stmt", "concept", +1, question.x_stmt,
            "best share of a statement title's terms on the chunk's page.", 28),
    Feature("q_concept", "concept", 0, question.q_concept, "1 if the question names a concept.", 29),
    Feature("year_match", "concept", +1, question.year_match,
            "share of the years the question names (2018, FY2018) found in the chunk or its ancestor headings "
            "(a statement's title names its years); 0 when it names none.", 30),
    Feature("year_page", "concept", +1, question.year_page,
            "the same on the chunk's whole (first) page (a table's column header).", 31),
    Feature("doc_entity", "document", +1, question.doc_entity,
            "how fully the question names the issuer of the chunk's document (1: the whole name, less: a share "
            "of its words).", 32),
    Feature("doc_period", "document", +1, question.doc_period,
            "1 if a year the question names is the document's fiscal year (and the quarter agrees), 0.5 for a "
            "year match with another quarter, 0 otherwise.", 33),
    Feature("q_doc_named", "document", 0, question.q_doc_named,
            "the best ``doc_entity`` over the collection: whether the question names any indexed issuer.", 34),
    Feature("page_text_rel", "page-text", 0, page.page_text_rel,
            "the page's BM25 over the best page BM25 of its document (1: the page the page-BM25 baseline would "
            "put first)."),
    Feature("page_text_rank", "page-text", 0, page.page_text_rank,
            "rank of the page among its document's pages by that BM25 (0 = best; equal scores share the better "
            "rank)."),
    Feature("page_text_z", "page-text", 0, page.page_text_z,
            "z-score of the page's BM25 among the query's candidates."),
    Feature("page_text_nb", "page-text", 0, page.page_text_nb,
            "the best ``page_text_rel`` of the pages just before and after it in its document (an answer that "
            "runs over a page break; 0 at the ends)."),
    Feature("open_page_rel", "open-page", 0, page.open_page_rel, "``page_text_rel``, or NaN.", 35),
    Feature("open_page_rank", "open-page", 0, page.open_page_rank, "``page_text_rank``, or NaN.", 36),
    Feature("open_page_z", "open-page", 0, page.open_page_z, "``page_text_z``, or NaN.", 37),
    Feature("open_page_nb", "open-page", 0, page.open_page_nb, "``page_text_nb``, or NaN.", 38),
)

_BY_NAME: dict[str, Feature] = {f.name: f for f in FEATURES}
_COMPUTE = {f.name: f.compute for f in FEATURES}


def _named(*groups: str, dense: bool | None = None, shipped: bool = False) -> tuple[str, ...]:
    """The features of ``groups`` (all when none) in registry order (``shipped``: the shipped rankers'
    features, in their column order; ``dense``: only those that need embeddings, or only those that do not)."""
    got = [f for f in FEATURES if (not groups or f.group in groups)
           and (dense is None or GROUPS[f.group].dense == dense) and (not shipped or f.column is not None)]
    return tuple(f.name for f in (sorted(got, key=lambda f: f.column) if shipped else got))


HELD_FEATURES: tuple[str, ...] = _named("held")
LEXICAL_FEATURES: tuple[str, ...] = _named("held", "lexical")
DENSE_FEATURES: tuple[str, ...] = _named("dense")
#: the first rankers' 22 features (raw and relative scores)
ALL_FEATURES: tuple[str, ...] = LEXICAL_FEATURES + DENSE_FEATURES
NORMALISED_LEXICAL: tuple[str, ...] = _named("normalised-lexical")
NORMALISED_DENSE: tuple[str, ...] = _named("normalised-dense")
QUERY_LEXICAL: tuple[str, ...] = _named("query-lexical")
QUERY_DENSE: tuple[str, ...] = _named("query-dense")
CONCEPT_FEATURES: tuple[str, ...] = _named("concept")
DOC_FEATURES: tuple[str, ...] = _named("document")
PAGE_TEXT_FEATURES: tuple[str, ...] = _named("page-text")
OPEN_PAGE_FEATURES: tuple[str, ...] = _named("open-page")
#: every feature :func:`compute_features` knows
KNOWN_FEATURES: tuple[str, ...] = _named()
#: what the shipped rankers read, in their column order: nothing whose scale depends on the collection
#: or the model (the lexical ranker reads PORTABLE_LEXICAL, the dense one PORTABLE_FEATURES)
PORTABLE_LEXICAL: tuple[str, ...] = _named(dense=False, shipped=True)
PORTABLE_DENSE: tuple[str, ...] = _named(dense=True, shipped=True)
PORTABLE_FEATURES: tuple[str, ...] = PORTABLE_LEXICAL + PORTABLE_DENSE
#: the direction in which each evidence feature can only help a candidate (+1: more is better, -1: a
#: lower rank is better): monotone constraints for the ranker, so that a prior learnt on one kind of
#: question cannot turn more matching words into a lower score
EVIDENCE_DIRECTION: dict[str, int] = {f.name: f.direction for f in FEATURES if f.direction}


def _describe() -> str:
    """The registry as the module docstring lists it: each group, then its features."""
    out = []
    for group in GROUPS.values():
        out += ["", group.about, ""]
        for f in FEATURES:
            if f.group == group.name:
                name = f"``{f.name}``"
                out.append(textwrap.fill(f.about, 104, initial_indent=f"{name:<19} ",
                                         subsequent_indent=" " * 20))
    return "\n".join(out)


__doc__ += _describe() + """

:data:`PORTABLE_FEATURES` is the set the shipped rankers use: the structural features (positions,
depth), the fractions (coverage, number shares), the normalised scores and one count,
``same_word_anc`` -- no raw BM25 or cosine value.  A count of question words found in the headings
means the same on any collection (its fraction alone hides that a long question matched four heading
words, not one); inner cross-validation on the training families chose it.

Features that need embeddings are only available when the corpus has vectors; :func:`feature_names`
gives the set for a corpus.  A value that does not apply (no ancestors) is 0.
"""


def evidence_constraints(names: Sequence[str]) -> dict[str, int]:
    """:data:`EVIDENCE_DIRECTION` for the features in ``names`` (the ranker's ``monotone``)."""
    return {n: EVIDENCE_DIRECTION[n] for n in names if n in EVIDENCE_DIRECTION}


def feature_names(corpus: Corpus) -> tuple[str, ...]:
    """The original 22 features (raw and relative scores) available on ``corpus``."""
    return ALL_FEATURES if corpus.has_dense else LEXICAL_FEATURES


def portable_feature_names(corpus: Corpus) -> tuple[str, ...]:
    """:data:`PORTABLE_FEATURES` available on ``corpus`` (the dense ones need vectors)."""
    return PORTABLE_FEATURES if corpus.has_dense else PORTABLE_LEXICAL


def available_features(corpus: Corpus) -> tuple[str, ...]:
    """Every feature :func:`compute_features` can give on ``corpus``."""
    return KNOWN_FEATURES if corpus.has_dense else _named(dense=False)


def needs_dense(names) -> bool:
    return any(n in _BY_NAME and GROUPS[_BY_NAME[n].group].dense for n in names)


def compute_features(
    corpus: Corpus,
    qs: QueryScores,
    candidates: np.ndarray,
    names: Sequence[str] | None = None,
) -> np.ndarray:
    """Feature matrix ``(len(candidates), len(names))`` (float32), columns in ``names`` order."""
    names = tuple(names) if names is not None else feature_names(corpus)
    unknown = [n for n in names if n not in _BY_NAME]
    if unknown:
        raise ConfigError(f"unknown features {unknown}; known: {list(KNOWN_FEATURES)}")
    cand = np.asarray(candidates, dtype=np.int64)
    out = np.zeros((cand.shape[0], len(names)), dtype=np.float32)
    if cand.shape[0] == 0:
        return out
    if needs_dense(names) and (not corpus.has_dense or qs.query_vector is None):
        raise ConfigError("dense features need an index with embeddings and a query vector")
    c = Candidates(corpus, qs, cand, _COMPUTE)
    for j, n in enumerate(names):
        out[:, j] = c[n]
    return out
