"""The features of a chunk's own text, its headings and its place in the tree, and of the query's scores.

One function per feature of :mod:`retrievers.rank.features` (which describes each): BM25 of the chunk,
its ancestor headings, its section and its page; the query words it covers; positions and depth;
number shares and length; dense similarities; their per-query normalised and rank forms; and the
query-level values.  Each takes the query's :class:`~retrievers.rank.candidates.Candidates`.
"""

from __future__ import annotations

import numpy as np

from .candidates import Candidates, mask, ranks, share_of_best, zscore
from .question import heading_keys, mentioned

# --- HELD's features ----------------------------------------------------------------------------


def bm25(c: Candidates) -> np.ndarray:
    return c.qs.chunk_bm25[c.rows]


def bm25_anc_max(c: Candidates) -> np.ndarray:
    if not c.corpus.n_nodes:
        return np.zeros(c.m)
    return np.where(c.valid, c.qs.head_bm25[c.safe], 0.0).max(axis=1)


def same_word_anc(c: Candidates) -> np.ndarray:
    v = np.zeros(c.m)
    for rows in c.qs.head_rows_per_term:
        v += (mask(c.corpus.n_nodes, rows)[c.safe] & c.valid).any(axis=1)
    return v


def pos(c: Candidates) -> np.ndarray:
    return c.corpus.chunk_sib_index[c.rows]


def pos_ratio(c: Candidates) -> np.ndarray:
    return c.corpus.chunk_sib_index[c.rows] / np.maximum(c.corpus.chunk_sib_count[c.rows], 1)


# --- beyond HELD -------------------------------------------------------------------------------


def bm25_section(c: Candidates) -> np.ndarray:
    node = c.corpus.chunk_node[c.rows]
    return np.where(node >= 0, c.qs.section_bm25[np.maximum(node, 0)] if c.corpus.n_nodes else 0.0, 0.0)


def depth(c: Candidates) -> np.ndarray:
    return c.corpus.chunk_depth[c.rows]


def sec_pos_ratio(c: Candidates) -> np.ndarray:
    corpus = c.corpus
    if not corpus.n_nodes:
        return np.zeros(c.m)
    node = corpus.chunk_node[c.rows]
    nn = np.maximum(node, 0)
    return np.where(node >= 0, corpus.node_sib_index[nn] / np.maximum(corpus.node_sib_count[nn], 1), 0.0)


def page_pos(c: Candidates) -> np.ndarray:
    corpus = c.corpus
    doc = corpus.chunk_doc[c.rows]
    return corpus.chunk_first_page[c.rows] / np.maximum(corpus.doc_page_count[doc] - 1, 1)


def bm25_rel(c: Candidates) -> np.ndarray:
    return share_of_best(c["bm25"])


def page_bm25(c: Candidates) -> np.ndarray:
    corpus = c.corpus
    n_pages = int(corpus.chunk_page_key.max()) + 1 if corpus.n_chunks else 0
    per_page = np.bincount(corpus.chunk_page_key, weights=c.qs.chunk_bm25, minlength=n_pages)
    return per_page[corpus.chunk_page_key[c.rows]]


def page_bm25_rel(c: Candidates) -> np.ndarray:
    return share_of_best(c["page_bm25"])


def _coverage(c: Candidates, *, headings: bool) -> np.ndarray:
    """Share of the distinct query terms found in each candidate (``headings``: or in its ancestor headings)."""
    corpus, qs = c.corpus, c.qs
    hits = np.zeros(c.m)
    # a term's chunk rows and heading rows line up only by term: recompute per term
    terms = list(dict.fromkeys(qs.tokens))
    rows_c = dict(zip([t for t in terms if t in corpus.bm25_chunks.vocab_], qs.chunk_rows_per_term or []))
    rows_h = dict(zip([t for t in terms if t in corpus.bm25_heads.vocab_], qs.head_rows_per_term))
    for t in terms:
        got = mask(corpus.n_chunks, rows_c[t])[c.rows] if t in rows_c else np.zeros(c.m, bool)
        if headings and t in rows_h:
            got |= (mask(corpus.n_nodes, rows_h[t])[c.safe] & c.valid).any(axis=1)
        hits += got
    return hits / max(qs.n_terms, 1)


def coverage(c: Candidates) -> np.ndarray:
    return _coverage(c, headings=False)


def coverage_ctx(c: Candidates) -> np.ndarray:
    return _coverage(c, headings=True)


def page_coverage(c: Candidates) -> np.ndarray:
    corpus = c.corpus
    hits = np.zeros(c.m)
    keys = corpus.chunk_page_key[c.rows]
    n_pages = int(corpus.chunk_page_key.max()) + 1
    for rows in c.qs.chunk_rows_per_term or []:
        hits += mask(n_pages, corpus.chunk_page_key[rows])[keys]
    return hits / max(c.qs.n_terms, 1)


def num_ratio(c: Candidates) -> np.ndarray:
    return c.corpus.chunk_num_ratio[c.rows]


def page_num_ratio(c: Candidates) -> np.ndarray:
    return c.corpus.page_num_ratio[c.corpus.chunk_page_key[c.rows]]


def length(c: Candidates) -> np.ndarray:
    return c.corpus.chunk_len[c.rows]


def q_amount(c: Candidates) -> np.ndarray:
    return np.full(c.m, 1.0 if c.qs.amount else 0.0)


def dense(c: Candidates) -> np.ndarray:
    return c.corpus.chunk_vectors[c.rows] @ c.qs.query_vector


def dense_path(c: Candidates) -> np.ndarray:
    corpus = c.corpus
    if not corpus.n_nodes:
        return np.zeros(c.m)
    node = corpus.chunk_node[c.rows]
    return np.where(node >= 0, corpus.node_vectors[np.maximum(node, 0)] @ c.qs.query_vector, 0.0)


def dense_rel(c: Candidates) -> np.ndarray:
    d = c["dense"]
    return d - float(d.max())


# --- normalised and rank-based --------------------------------------------------------------------


def bm25_z(c: Candidates) -> np.ndarray:
    return zscore(c["bm25"].astype(np.float64))


def bm25_rank(c: Candidates) -> np.ndarray:
    return ranks(c["bm25"].astype(np.float64))


def anc_rel(c: Candidates) -> np.ndarray:
    return share_of_best(c["bm25_anc_max"])


def same_word_anc_frac(c: Candidates) -> np.ndarray:
    return c["same_word_anc"] / max(c.qs.n_terms, 1)


def section_rel(c: Candidates) -> np.ndarray:
    return share_of_best(c["bm25_section"])


def page_bm25_z(c: Candidates) -> np.ndarray:
    return zscore(c["page_bm25"].astype(np.float64))


def page_rank(c: Candidates) -> np.ndarray:
    keys = c.corpus.chunk_page_key[c.rows]
    pages, first = np.unique(keys, return_index=True)
    return ranks(c["page_bm25"][first].astype(np.float64))[np.searchsorted(pages, keys)]


def length_rel(c: Candidates) -> np.ndarray:
    ln = c.corpus.chunk_len[c.rows].astype(np.float64)
    med = float(np.median(ln))
    return ln / med if med > 0 else np.zeros(c.m)


def _mentioned_nodes(c: Candidates, nodes: np.ndarray) -> np.ndarray:
    """Boolean per node of ``nodes``: the query names its heading."""
    corpus, text = c.corpus, c.qs.text_norm
    if not text or not corpus.node_titles:
        return np.zeros(nodes.size, dtype=bool)
    keys = corpus._mention_keys
    out = np.zeros(nodes.size, dtype=bool)
    for i, n in enumerate(nodes.tolist()):
        k = keys.get(n)
        if k is None:
            k = keys[n] = heading_keys(corpus.node_titles[n])
        out[i] = mentioned(text, k)
    return out


def sec_mention(c: Candidates) -> np.ndarray:
    n_nodes = c.corpus.n_nodes
    nodes = np.unique(c.anc[c.valid]) if n_nodes else np.zeros(0, np.int64)
    hit = np.zeros(max(n_nodes, 1), dtype=bool)
    if nodes.size:
        hit[nodes] = _mentioned_nodes(c, nodes)
    return (hit[c.safe] & c.valid).any(axis=1).astype(np.float32)


def q_sec_mention(c: Candidates) -> np.ndarray:
    return np.full(c.m, float(c["sec_mention"].any()))


def dense_z(c: Candidates) -> np.ndarray:
    return zscore(c["dense"].astype(np.float64))


def dense_rank(c: Candidates) -> np.ndarray:
    return ranks(c["dense"].astype(np.float64))


def dense_path_z(c: Candidates) -> np.ndarray:
    has = c.corpus.chunk_node[c.rows] >= 0
    v = np.zeros(c.m)
    if has.sum() > 1:
        v[has] = zscore(c["dense_path"].astype(np.float64)[has])
    return v


def _idf_coverage(c: Candidates, *, page: bool) -> np.ndarray:
    """Share of the query's idf mass (distinct terms, Lucene idf over the chunks) in each
    candidate chunk, or anywhere on its first page."""
    corpus, qs = c.corpus, c.qs
    per_term = qs.chunk_rows_per_term or []
    n = max(corpus.n_chunks, 1)
    # a term missing from the collection has df 0: the largest idf, found nowhere
    missing = max(qs.n_terms - len(per_term), 0)
    idf_missing = np.log1p((n + 0.5) / 0.5)
    total = missing * idf_missing
    got = np.zeros(c.m)
    if page:
        keys = corpus.chunk_page_key[c.rows]
        n_pages = int(corpus.chunk_page_key.max()) + 1
    for rows in per_term:
        idf = float(np.log1p((n - rows.size + 0.5) / (rows.size + 0.5)))
        total += idf
        if page:
            got += idf * mask(n_pages, corpus.chunk_page_key[rows])[keys]
        else:
            got += idf * mask(corpus.n_chunks, rows)[c.rows]
    return got / total if total > 0 else np.zeros(c.m)


def idf_coverage(c: Candidates) -> np.ndarray:
    return _idf_coverage(c, page=False)


def page_idf_coverage(c: Candidates) -> np.ndarray:
    return _idf_coverage(c, page=True)


# --- query-level (one value per query) -----------------------------------------------------------


def q_idf_top(c: Candidates) -> np.ndarray:
    return np.full(c.m, float(c["page_idf_coverage"].max()))


def q_bm25_top_z(c: Candidates) -> np.ndarray:
    return np.full(c.m, float(c["bm25_z"].max()))


def q_dense_top_z(c: Candidates) -> np.ndarray:
    return np.full(c.m, float(c["dense_z"].max()))
