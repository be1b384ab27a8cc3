"""Hierarchy-aware features for (query, chunk) pairs, vectorised over candidates.

HELD's features (the hierarchy-aware ranker of the HELD method, as published):

``bm25``            BM25 of the chunk's own text.
``bm25_anc_max``    max BM25 of the query against each ancestor heading (the
                    chunk's section heading and every heading above it).
``same_word_anc``   number of distinct query terms found in the ancestor headings.
``pos``             the chunk's index among the chunks of its section.
``pos_ratio``       ``pos / sibling_count``.

Beyond HELD:

``bm25_section``    BM25 of the whole section the chunk is in (all its chunks).
``depth``           length of the section path (0 before the first heading).
``sec_pos_ratio``   the section's index among its parent's sub-sections, over their number.
``page_pos``        first page of the chunk / (pages in the document - 1).
``bm25_rel``        ``bm25`` over the best ``bm25`` among the query's candidates
                    (puts queries with long and short score scales on one footing).
``page_bm25``       sum of ``bm25`` over every chunk on the chunk's (first) page:
                    relevance is judged by page, and a page whose several chunks
                    match is the likelier answer.
``page_bm25_rel``   ``page_bm25`` over its best value among the candidates.
``coverage``        share of the distinct query terms found in the chunk.
``coverage_ctx``    share of them found in the chunk or its ancestor headings.
``page_coverage``   share of them found anywhere on the chunk's page.
``num_ratio``       share of the chunk's terms that are numbers (statements, tables).
``page_num_ratio``  mean ``num_ratio`` of the chunks on the chunk's (first) page: a
                    statement page is numeric as a whole even where one of its
                    chunks is a caption or a footnote, and relevance is by page.
``length``          the chunk's number of terms.
``q_amount``        1 if the query asks for a quantity ("how much", "amount",
                    "ratio", a currency, a percentage, ...), else 0: lets the trees
                    weigh ``num_ratio`` by question type.
``dense``           cosine similarity of query and chunk embeddings.
``dense_path``      cosine similarity of the query and the section path
                    ("Item 8 > Notes > Note 5") embedding.
``dense_rel``       ``dense`` minus the best ``dense`` among the candidates.

Per-query normalised and rank-based features (issue 14).  A raw BM25 or cosine
value means different things on different collections: BM25 grows with the
query's length and the collection's idf, cosine similarity with the model (e5's
similarities sit in a narrow band near 0.8, MiniLM's spread from 0 to 0.7).
These say how a candidate stands among the query's own candidates instead, so a
ranker trained on 10-K questions reads them the same way on a manual or a
Chinese prospectus:

``bm25_z``          z-score of ``bm25`` among the candidates (0 when they all tie).
``bm25_rank``       rank of ``bm25`` among the candidates (0 = best; ties share the best rank).
``anc_rel``         ``bm25_anc_max`` over its best value among the candidates.
``same_word_anc_frac`` ``same_word_anc`` over the number of distinct query terms.
``section_rel``     ``bm25_section`` over its best value among the candidates.
``page_bm25_z``     z-score of ``page_bm25`` among the candidates.
``page_rank``       rank of the chunk's page among the candidates' pages by ``page_bm25``.
``length_rel``      ``length`` over the candidates' median length.
``sec_mention``     1 if the query names one of the chunk's ancestor headings
                    (:mod:`retrievers.mentions`: "risk factors", "Item 7", "募集资金运用").
``q_sec_mention``   1 if the query names any ancestor heading of any candidate.
``dense_z``         z-score of ``dense`` among the candidates.
``dense_rank``      rank of ``dense`` among the candidates.
``dense_path_z``    z-score of ``dense_path`` among the candidates.
``idf_coverage``    share of the query's idf mass (distinct terms) found in the chunk: a
                    rare word of the question counts more than a common one.  A term
                    the collection lacks counts with the largest idf, so a question
                    worded unlike the documents scores low everywhere.
``page_idf_coverage`` the same over the chunk's whole (first) page.

Query-level features (one value per query, the same for all its candidates).  A
tree splits on them to weigh the others by the kind of question: a question
worded like one page (its rare words all on that page, one lexical match far
ahead of the rest) is best answered by the lexical scores, a question worded
unlike the text by the dense ones and the structural priors.  Normalised
scores alone hide this, since every query's best candidate has z-score > 0:

``q_idf_top``       the best ``page_idf_coverage`` among the candidates.
``q_bm25_top_z``    the best ``bm25_z`` among the candidates (how far the best
                    lexical match stands out).
``q_dense_top_z``   the best ``dense_z`` among the candidates.

Concept, year and document features (issues 26 and 22): ``x_bm25_z``, ``x_page_z``,
``x_phrase``, ``x_anc``, ``x_stmt``, ``q_concept``, ``year_match``, ``year_page``,
``doc_entity``, ``doc_period``, ``q_doc_named`` -- described and computed in
:mod:`retrievers.concept_features`.

Whole-page text features (issue 22, item 5): ``page_text_rel``, ``page_text_rank``,
``page_text_z``, ``page_text_nb`` -- BM25 of the chunk's page as one document, against
the pages of its own document; described and computed in :mod:`retrievers.page_features`.
Available to any ranker (``structrag train-ranker --features portable+page-text``), not in
:data:`PORTABLE_FEATURES`: the shipped rankers trained with them lost the filings 0.07 mAP
and the demo's answer (``eval/RESULTS.md`` section 21).  Their twins ``open_page_rel``,
``open_page_rank``, ``open_page_z``, ``open_page_nb`` are: the same values on a question that names
no concept, unknown on one that does (``eval/RESULTS.md`` section 27).

:data:`PORTABLE_FEATURES` is the set the shipped rankers use: the structural
features (positions, depth), the fractions (coverage, number shares), the
normalised scores above and one count, ``same_word_anc`` -- no raw BM25 or
cosine value.  A count of question words found in the headings means the same
on any collection (its fraction alone hides that a long question matched four
heading words, not one); it was added when inner cross-validation on the
training families chose it (``eval/RESULTS.md`` section 11).

Features that need embeddings are only available when the corpus has vectors;
:func:`feature_names` gives the set for a corpus.  A value that does not apply
(no ancestors) is 0.
"""

from __future__ import annotations

from typing import Mapping, NamedTuple, Sequence

import numpy as np

from structrag.errors import ConfigError

from .concept_features import (  # asks_for_amount, question_years: question cues, importable from here
    asks_for_amount, concept_feature, concept_rows, doc_feature, mask, question_years, zscore,
)
from .doc_cues import DocCues
from .concepts import NO_EXPANSION, Expansion
from .corpus import Corpus
from .feature_sets import (  # the name sets, importable from here
    ALL_FEATURES, CONCEPT_FEATURES, DENSE_FEATURES, DOC_FEATURES, EVIDENCE_DIRECTION, HELD_FEATURES, KNOWN_FEATURES,
    LEXICAL_FEATURES, NORMALISED_DENSE, NORMALISED_LEXICAL, OPEN_PAGE_FEATURES, PAGE_TEXT_FEATURES, PORTABLE_DENSE,
    PORTABLE_FEATURES, PORTABLE_LEXICAL, QUERY_DENSE, QUERY_LEXICAL,
)
from .page_features import page_text_feature, page_text_scores

__all__ = [
    "PORTABLE_LEXICAL",
    "PORTABLE_DENSE",
    "PORTABLE_FEATURES",
    "portable_feature_names",
    "available_features",
    "needs_dense",
    "LEXICAL_FEATURES",
    "KNOWN_FEATURES",
    "DENSE_FEATURES",
    "ALL_FEATURES",
    "HELD_FEATURES",
    "EVIDENCE_DIRECTION",
    "evidence_constraints",
    "QUERY_LEXICAL",
    "QUERY_DENSE",
    "CONCEPT_FEATURES",
    "DOC_FEATURES",
    "PAGE_TEXT_FEATURES",
    "OPEN_PAGE_FEATURES",
    "question_years",
    "asks_for_amount",
    "QueryScores",
    "query_scores",
    "compute_features",
    "feature_names",
]

_NEEDS_DENSE = frozenset(DENSE_FEATURES + NORMALISED_DENSE + QUERY_DENSE)


def _distinct(tokens: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(tokens))


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
    if corpus.has_dense:
        return KNOWN_FEATURES
    return (LEXICAL_FEATURES + NORMALISED_LEXICAL + QUERY_LEXICAL + CONCEPT_FEATURES + DOC_FEATURES + PAGE_TEXT_FEATURES
            + OPEN_PAGE_FEATURES)


def needs_dense(names) -> bool:
    return any(n in _NEEDS_DENSE for n in names)


class QueryScores(NamedTuple):
    """Per-query work shared by the first stage and the features."""

    tokens: list[str]
    chunk_bm25: np.ndarray  # (n_chunks,)
    head_bm25: np.ndarray  # (n_nodes,)
    section_bm25: np.ndarray  # (n_nodes,)
    head_rows_per_term: list[np.ndarray]  # for each distinct query term, nodes whose heading has it
    query_vector: np.ndarray | None
    amount: bool = False
    chunk_rows_per_term: list[np.ndarray] | None = None  # for each distinct query term, chunks that have it
    n_terms: int = 0  # distinct query terms
    text_norm: str = ""  # the query normalised for section-name mentions (retrievers.mentions.normalise)
    expansion: Expansion = NO_EXPANSION  # the question's concepts (retrievers.concepts)
    x_chunk_bm25: np.ndarray | None = None  # (n_chunks,) BM25 of the expansion terms, None without any
    years: tuple[str, ...] = ()  # the years the question names
    doc_cues: DocCues | None = None  # per-document issuer/period agreement (retrievers.doc_cues); None: unknown
    page_text_bm25: np.ndarray | None = None  # (n_page_keys,) BM25 of each whole page; None: computed when a feature needs it


def query_scores(corpus: Corpus, tokens: Sequence[str], query_vector: np.ndarray | None = None,
                 *, amount: bool = False, text: str = "", expansion: Expansion = NO_EXPANSION,
                 doc_cues: DocCues | None = None, root_terms: Mapping[str, Sequence[int]] | None = None
                 ) -> QueryScores:
    """Scores shared by the first stage and the features (``amount``: see :func:`asks_for_amount`;
    ``text``: the query itself, for section-name mentions and years; ``expansion``: its concepts,
    :meth:`retrievers.concepts.ConceptVocabulary.expand`)."""
    from .mentions import normalise

    tokens = list(tokens)
    return QueryScores(
        tokens=tokens,
        chunk_bm25=corpus.bm25_chunks.scores(tokens),
        head_bm25=corpus.bm25_heads.scores(tokens),
        section_bm25=corpus.bm25_sections.scores(tokens),
        head_rows_per_term=corpus.bm25_heads.contains(tokens),
        query_vector=query_vector,
        amount=bool(amount),
        chunk_rows_per_term=concept_rows(corpus, tokens, expansion, root_terms),
        n_terms=len(set(tokens)),
        text_norm=normalise(text) if text else "",
        expansion=expansion,
        x_chunk_bm25=corpus.bm25_chunks.scores(list(expansion.terms)) if expansion.terms else None,
        years=question_years(text) if text else (),
        doc_cues=doc_cues,
    )


def _rank(v: np.ndarray) -> np.ndarray:
    """0 for the best value; equal values share the better rank ("min" ranking)."""
    order = np.argsort(-v, kind="stable")
    sv = v[order]
    r = np.arange(v.size, dtype=np.float64)
    # a tie takes the rank of the first of its run
    new_run = np.r_[True, sv[1:] != sv[:-1]]
    r = np.maximum.accumulate(np.where(new_run, r, 0))
    out = np.empty(v.size)
    out[order] = r
    return out


def _rel(v: np.ndarray) -> np.ndarray:
    top = float(v.max()) if v.size else 0.0
    return v / top if top > 0 else np.zeros_like(v)


def _idf_coverage(corpus: Corpus, qs: QueryScores, cand: np.ndarray, *, page: bool) -> np.ndarray:
    """Share of the query's idf mass (distinct terms, Lucene idf over the chunks) in each
    candidate chunk, or anywhere on its first page."""
    per_term = qs.chunk_rows_per_term or []
    n = max(corpus.n_chunks, 1)
    # a term missing from the collection has df 0: the largest idf, found nowhere
    missing = max(qs.n_terms - len(per_term), 0)
    idf_missing = np.log1p((n + 0.5) / 0.5)
    total = missing * idf_missing
    got = np.zeros(cand.size)
    if page:
        keys = corpus.chunk_page_key[cand]
        n_pages = int(corpus.chunk_page_key.max()) + 1
    for rows in per_term:
        idf = float(np.log1p((n - rows.size + 0.5) / (rows.size + 0.5)))
        total += idf
        if page:
            got += idf * mask(n_pages, corpus.chunk_page_key[rows])[keys]
        else:
            got += idf * mask(corpus.n_chunks, rows)[cand]
    return got / total if total > 0 else np.zeros(cand.size)


def _mentioned_nodes(corpus: Corpus, qs: QueryScores, nodes: np.ndarray) -> np.ndarray:
    """Boolean per node of ``nodes``: the query names its heading."""
    from .mentions import heading_keys, mentioned

    if not qs.text_norm or not corpus.node_titles:
        return np.zeros(nodes.size, dtype=bool)
    keys = corpus._mention_keys
    out = np.zeros(nodes.size, dtype=bool)
    for i, n in enumerate(nodes.tolist()):
        k = keys.get(n)
        if k is None:
            k = keys[n] = heading_keys(corpus.node_titles[n])
        out[i] = mentioned(qs.text_norm, k)
    return out


def compute_features(
    corpus: Corpus,
    qs: QueryScores,
    candidates: np.ndarray,
    names: Sequence[str] | None = None,
) -> np.ndarray:
    """Feature matrix ``(len(candidates), len(names))`` (float32), columns in ``names`` order."""
    names = tuple(names) if names is not None else feature_names(corpus)
    unknown = [n for n in names if n not in KNOWN_FEATURES]
    if unknown:
        raise ConfigError(f"unknown features {unknown}; known: {list(KNOWN_FEATURES)}")
    cand = np.asarray(candidates, dtype=np.int64)
    m = cand.shape[0]
    out = np.zeros((m, len(names)), dtype=np.float32)
    if m == 0:
        return out
    need_dense = needs_dense(names)
    if need_dense and (not corpus.has_dense or qs.query_vector is None):
        raise ConfigError("dense features need an index with embeddings and a query vector")

    cache: dict[str, np.ndarray] = {}
    anc = corpus.chunk_anc[cand]  # (m, D)
    valid = anc >= 0
    safe = np.where(valid, anc, 0)

    def get(name: str) -> np.ndarray:
        if name in cache:
            return cache[name]
        if name == "bm25":
            v = qs.chunk_bm25[cand]
        elif name == "bm25_anc_max":
            if corpus.n_nodes:
                s = np.where(valid, qs.head_bm25[safe], 0.0)
                v = s.max(axis=1)
            else:
                v = np.zeros(m)
        elif name == "same_word_anc":
            v = np.zeros(m)
            for rows in qs.head_rows_per_term:
                v += (mask(corpus.n_nodes, rows)[safe] & valid).any(axis=1)
        elif name == "pos":
            v = corpus.chunk_sib_index[cand]
        elif name == "pos_ratio":
            v = corpus.chunk_sib_index[cand] / np.maximum(corpus.chunk_sib_count[cand], 1)
        elif name == "bm25_section":
            node = corpus.chunk_node[cand]
            v = np.where(node >= 0, qs.section_bm25[np.maximum(node, 0)] if corpus.n_nodes else 0.0, 0.0)
        elif name == "depth":
            v = corpus.chunk_depth[cand]
        elif name == "sec_pos_ratio":
            node = corpus.chunk_node[cand]
            if corpus.n_nodes:
                nn = np.maximum(node, 0)
                r = corpus.node_sib_index[nn] / np.maximum(corpus.node_sib_count[nn], 1)
                v = np.where(node >= 0, r, 0.0)
            else:
                v = np.zeros(m)
        elif name == "page_pos":
            doc = corpus.chunk_doc[cand]
            v = corpus.chunk_first_page[cand] / np.maximum(corpus.doc_page_count[doc] - 1, 1)
        elif name == "bm25_rel":
            b = get("bm25")
            top = float(b.max())
            v = b / top if top > 0 else np.zeros(m)
        elif name == "page_bm25":
            n_pages = int(corpus.chunk_page_key.max()) + 1 if corpus.n_chunks else 0
            per_page = np.bincount(corpus.chunk_page_key, weights=qs.chunk_bm25, minlength=n_pages)
            v = per_page[corpus.chunk_page_key[cand]]
        elif name == "page_bm25_rel":
            p = get("page_bm25")
            top = float(p.max())
            v = p / top if top > 0 else np.zeros(m)
        elif name in ("coverage", "coverage_ctx", "page_coverage"):
            per_term = qs.chunk_rows_per_term or []
            hits = np.zeros(m)
            if name == "page_coverage":
                keys = corpus.chunk_page_key[cand]
                n_pages = int(corpus.chunk_page_key.max()) + 1
                for rows in per_term:
                    hits += mask(n_pages, corpus.chunk_page_key[rows])[keys]
            else:
                heads = qs.head_rows_per_term if name == "coverage_ctx" else None
                # a term's chunk rows and heading rows line up only by term: recompute per term
                terms = _distinct(qs.tokens)
                known_c = {t for t in terms if t in corpus.bm25_chunks.vocab_}
                known_h = {t for t in terms if t in corpus.bm25_heads.vocab_}
                rows_c = dict(zip([t for t in terms if t in known_c], per_term))
                rows_h = dict(zip([t for t in terms if t in known_h], qs.head_rows_per_term))
                for t in terms:
                    got = mask(corpus.n_chunks, rows_c[t])[cand] if t in rows_c else np.zeros(m, bool)
                    if heads is not None and t in rows_h:
                        got |= (mask(corpus.n_nodes, rows_h[t])[safe] & valid).any(axis=1)
                    hits += got
            v = hits / max(qs.n_terms, 1)
        elif name == "num_ratio":
            v = corpus.chunk_num_ratio[cand]
        elif name == "page_num_ratio":
            v = corpus.page_num_ratio[corpus.chunk_page_key[cand]]
        elif name == "length":
            v = corpus.chunk_len[cand]
        elif name == "q_amount":
            v = np.full(m, 1.0 if qs.amount else 0.0)
        elif name == "dense":
            v = corpus.chunk_vectors[cand] @ qs.query_vector
        elif name == "dense_path":
            node = corpus.chunk_node[cand]
            if corpus.n_nodes:
                sims = corpus.node_vectors[np.maximum(node, 0)] @ qs.query_vector
                v = np.where(node >= 0, sims, 0.0)
            else:
                v = np.zeros(m)
        elif name == "dense_rel":
            d = get("dense")
            v = d - float(d.max())
        elif name == "bm25_z":
            v = zscore(get("bm25").astype(np.float64))
        elif name == "bm25_rank":
            v = _rank(get("bm25").astype(np.float64))
        elif name == "anc_rel":
            v = _rel(get("bm25_anc_max"))
        elif name == "same_word_anc_frac":
            v = get("same_word_anc") / max(qs.n_terms, 1)
        elif name == "section_rel":
            v = _rel(get("bm25_section"))
        elif name == "page_bm25_z":
            v = zscore(get("page_bm25").astype(np.float64))
        elif name == "page_rank":
            keys = corpus.chunk_page_key[cand]
            pages, first = np.unique(keys, return_index=True)
            pr = _rank(get("page_bm25")[first].astype(np.float64))
            v = pr[np.searchsorted(pages, keys)]
        elif name == "length_rel":
            ln = corpus.chunk_len[cand].astype(np.float64)
            med = float(np.median(ln))
            v = ln / med if med > 0 else np.zeros(m)
        elif name in ("sec_mention", "q_sec_mention"):
            if "sec_mention" not in cache:
                nodes = np.unique(anc[valid]) if corpus.n_nodes else np.zeros(0, np.int64)
                hit = np.zeros(max(corpus.n_nodes, 1), dtype=bool)
                if nodes.size:
                    hit[nodes] = _mentioned_nodes(corpus, qs, nodes)
                cache["sec_mention"] = (hit[safe] & valid).any(axis=1).astype(np.float32)
            v = cache["sec_mention"] if name == "sec_mention" else np.full(m, float(cache["sec_mention"].any()))
        elif name == "dense_z":
            v = zscore(get("dense").astype(np.float64))
        elif name == "dense_rank":
            v = _rank(get("dense").astype(np.float64))
        elif name == "dense_path_z":
            node = corpus.chunk_node[cand]
            dp = get("dense_path").astype(np.float64)
            has = node >= 0
            v = np.zeros(m)
            if has.sum() > 1:
                v[has] = zscore(dp[has])
        elif name in ("idf_coverage", "page_idf_coverage"):
            v = _idf_coverage(corpus, qs, cand, page=name == "page_idf_coverage")
        elif name == "q_idf_top":
            v = np.full(m, float(get("page_idf_coverage").max()))
        elif name == "q_bm25_top_z":
            v = np.full(m, float(get("bm25_z").max()))
        elif name in CONCEPT_FEATURES:
            v = concept_feature(name, corpus, qs, cand, safe, valid)
        elif name in DOC_FEATURES:
            v = doc_feature(name, corpus, qs, cand)
        elif name in OPEN_PAGE_FEATURES and qs.expansion.concepts:
            v = np.full(m, np.nan)  # a question in the reader's words: its best whole page misleads
        elif name in PAGE_TEXT_FEATURES or name in OPEN_PAGE_FEATURES:
            if "_page_text" not in cache:  # only a ranker that reads the pages pays for their BM25
                cache["_page_text"] = (qs.page_text_bm25 if qs.page_text_bm25 is not None
                                       else page_text_scores(corpus, qs.tokens))
            v = page_text_feature(name, corpus, cache["_page_text"], cand)
        else:  # q_dense_top_z: the names were checked above
            v = np.full(m, float(get("dense_z").max()))
        v = np.asarray(v, dtype=np.float32)
        cache[name] = v
        return v

    for j, n in enumerate(names):
        out[:, j] = get(n)
    return out
