"""The names of the ranker's features, grouped: which are lexical, dense, normalised, portable, and the
direction each evidence feature may move a score in.  :mod:`retrievers.features` computes them, describes
each group in its docstring and re-exports these sets."""

from __future__ import annotations

from .page_features import OPEN_PAGE_FEATURES, PAGE_TEXT_FEATURES

__all__ = [
    "HELD_FEATURES", "LEXICAL_FEATURES", "DENSE_FEATURES", "NORMALISED_LEXICAL", "NORMALISED_DENSE",
    "QUERY_LEXICAL", "QUERY_DENSE", "CONCEPT_FEATURES", "DOC_FEATURES", "ALL_FEATURES", "KNOWN_FEATURES",
    "PORTABLE_LEXICAL", "PORTABLE_DENSE", "PORTABLE_FEATURES", "EVIDENCE_DIRECTION", "PAGE_TEXT_FEATURES",
    "OPEN_PAGE_FEATURES",
]

HELD_FEATURES: tuple[str, ...] = ("bm25", "bm25_anc_max", "same_word_anc", "pos", "pos_ratio")
LEXICAL_FEATURES: tuple[str, ...] = HELD_FEATURES + (
    "bm25_section", "depth", "sec_pos_ratio", "page_pos", "bm25_rel",
    "page_bm25", "page_bm25_rel", "coverage", "coverage_ctx", "page_coverage", "num_ratio", "page_num_ratio",
    "length", "q_amount",
)  # fmt: skip
DENSE_FEATURES: tuple[str, ...] = ("dense", "dense_path", "dense_rel")
#: normalised / rank-based features (module docstring)
NORMALISED_LEXICAL: tuple[str, ...] = (
    "bm25_z", "bm25_rank", "anc_rel", "same_word_anc_frac", "section_rel", "page_bm25_z", "page_rank",
    "length_rel", "sec_mention", "q_sec_mention",
)  # fmt: skip
NORMALISED_DENSE: tuple[str, ...] = ("dense_z", "dense_rank", "dense_path_z")
#: idf-weighted coverage and query-level features (module docstring)
QUERY_LEXICAL: tuple[str, ...] = ("idf_coverage", "page_idf_coverage", "q_idf_top", "q_bm25_top_z")
QUERY_DENSE: tuple[str, ...] = ("q_dense_top_z",)
#: concept and year features (module docstring)
CONCEPT_FEATURES: tuple[str, ...] = (
    "x_bm25_z", "x_page_z", "x_phrase", "x_anc", "x_stmt", "q_concept", "year_match", "year_page",
)  # fmt: skip
#: does the question name the chunk's document: issuer and period agreement (retrievers.doc_cues)
DOC_FEATURES: tuple[str, ...] = ("doc_entity", "doc_period", "q_doc_named")
#: the 22 features of the issue-5 rankers (raw and relative scores)
ALL_FEATURES: tuple[str, ...] = LEXICAL_FEATURES + DENSE_FEATURES
#: every feature :func:`compute_features` knows
KNOWN_FEATURES: tuple[str, ...] = (ALL_FEATURES + NORMALISED_LEXICAL + NORMALISED_DENSE + QUERY_LEXICAL + QUERY_DENSE
                                   + CONCEPT_FEATURES + DOC_FEATURES + PAGE_TEXT_FEATURES + OPEN_PAGE_FEATURES)
#: what the shipped rankers use: nothing whose scale depends on the collection or the model
PORTABLE_LEXICAL: tuple[str, ...] = (
    "pos", "pos_ratio", "depth", "sec_pos_ratio", "page_pos",
    "bm25_rel", "bm25_z", "bm25_rank", "anc_rel", "same_word_anc", "same_word_anc_frac", "section_rel",
    "page_bm25_rel", "page_bm25_z", "page_rank", "coverage", "coverage_ctx", "page_coverage",
    "num_ratio", "page_num_ratio", "length_rel", "q_amount", "sec_mention", "q_sec_mention",
) + CONCEPT_FEATURES + DOC_FEATURES + OPEN_PAGE_FEATURES  # fmt: skip
PORTABLE_DENSE: tuple[str, ...] = NORMALISED_DENSE
PORTABLE_FEATURES: tuple[str, ...] = PORTABLE_LEXICAL + PORTABLE_DENSE
#: the direction in which each evidence feature can only help a candidate (+1: more is
#: better, -1: a lower rank is better): monotone constraints for the ranker, so that a
#: prior learnt on one kind of question cannot turn more matching words into a lower score
#: (not the page-text features, nor their open-question twins: left free, a 10-K's best page by
#: whole-page BM25 is often an index or a contents page, and the free form was chosen by
#: family-fold cross-validation, ``python -m eval.bench.page_text_select``)
EVIDENCE_DIRECTION: dict[str, int] = {
    **dict.fromkeys((
        "bm25", "bm25_anc_max", "same_word_anc", "bm25_section", "bm25_rel", "page_bm25", "page_bm25_rel",
        "coverage", "coverage_ctx", "page_coverage", "dense", "dense_path", "dense_rel", "bm25_z", "anc_rel",
        "same_word_anc_frac", "section_rel", "page_bm25_z", "sec_mention", "dense_z", "dense_path_z",
        "idf_coverage", "page_idf_coverage", "x_bm25_z", "x_page_z", "x_phrase", "x_anc", "x_stmt",
        "year_match", "year_page", "doc_entity", "doc_period"), 1),
    **dict.fromkeys(("bm25_rank", "page_rank", "dense_rank"), -1),
}
