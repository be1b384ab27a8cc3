"""Hierarchy features on a hand-made section tree, checked value by value."""

from __future__ import annotations

import numpy as np
import pytest

from retrievers.ingest.sections import doc_nodes
from retrievers.lexical.bm25 import ReferenceBM25
from retrievers.lexical.tokenizer import Tokenizer
from retrievers.rank.features import ALL_FEATURES, HELD_FEATURES, LEXICAL_FEATURES, compute_features
from retrievers.rank.query import query_scores
from retrievers.store.corpus import ChunkRecord, Corpus, DocRecord
from structrag.errors import ConfigError

TOK = Tokenizer()
I7 = "Item 7. Management's Discussion and Analysis"
LIQ = "Liquidity and Capital Resources"
RES = "Results of Operations"
I8 = "Item 8. Financial Statements"
CF = "Consolidated Statement of Cash Flows"

# (text, section_path, sibling_index, sibling_count, pages)
DOC_A = [
    ("Annual report on Form 10-K for the year 2018.", (), 0, 1, (0,)),
    ("This discussion covers the results and the financial condition.", (I7,), 0, 1, (1,)),
    ("Capital expenditures were 1,577 million in 2018, funded by operating cash.", (I7, LIQ), 0, 2, (2,)),
    ("The Company expects capital spending of 1.7 billion in 2019.", (I7, LIQ), 1, 2, (3, 4)),
    ("Net sales rose 3.5 percent; operating income grew in all segments.", (I7, RES), 0, 1, (4,)),
    ("The financial statements follow.", (I8,), 0, 1, (6,)),
    ("Purchases of property, plant and equipment 1,577; dividends paid 3,193.", (I8, CF), 0, 1, (8,)),
]
DOC_B = [
    ("Liquidity remained strong; capital needs are met by cash.", ("Liquidity",), 0, 1, (0,)),
    ("Risk factors include competition.", ("Risk Factors",), 0, 1, (1,)),
]
PAGES = {"a.pdf": 10, "b.pdf": 3}
QUERY = "capital expenditures and liquidity"


def _records(rows, base):
    return [ChunkRecord(base + i, p, si, sn, sp, TOK.tokenize(t)) for i, (t, sp, si, sn, p) in enumerate(rows)]


def _vectors(n, seed):
    v = np.random.default_rng(seed).normal(size=(n, 8)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def corpus():
    na = len(doc_nodes([r[1] for r in DOC_A]).paths)
    nb = len(doc_nodes([r[1] for r in DOC_B]).paths)
    docs = [
        DocRecord("a.pdf", PAGES["a.pdf"], _records(DOC_A, 100), _vectors(len(DOC_A), 1), _vectors(na, 2)),
        DocRecord("b.pdf", PAGES["b.pdf"], _records(DOC_B, 200), _vectors(len(DOC_B), 3), _vectors(nb, 4)),
    ]
    return Corpus.build(docs, TOK)


def test_nodes_are_path_prefixes_in_first_seen_order():
    nodes = doc_nodes([r[1] for r in DOC_A])
    assert nodes.paths == [(I7,), (I7, LIQ), (I7, RES), (I8,), (I8, CF)]
    assert nodes.chunk_leaf == [-1, 0, 1, 1, 2, 3, 4]
    assert nodes.chunk_anc[3] == [0, 1]
    assert nodes.node_parent == [-1, 0, 0, -1, 3]
    assert list(zip(nodes.node_sib_index, nodes.node_sib_count)) == [(0, 2), (0, 2), (1, 2), (1, 2), (0, 1)]


def test_corpus_layout(corpus):
    assert corpus.doc_names == ["a.pdf", "b.pdf"]
    assert corpus.doc_chunk_start.tolist() == [0, 7, 9]
    assert corpus.n_nodes == 7
    assert corpus.chunk_rowid.tolist() == [100, 101, 102, 103, 104, 105, 106, 200, 201]
    assert corpus.pages_of(3).tolist() == [3, 4]
    # doc b's nodes are numbered after doc a's
    assert corpus.chunk_node.tolist() == [-1, 0, 1, 1, 2, 3, 4, 5, 6]


def test_feature_values(corpus):
    tokens = TOK.tokenize(QUERY)
    assert tokens == ["capit", "expenditur", "liquid"]
    qv = _vectors(1, 9)[0]
    qs = query_scores(corpus, tokens, qv)
    cand = np.arange(corpus.n_chunks)
    X = compute_features(corpus, qs, cand, ALL_FEATURES)
    f = {name: X[:, j] for j, name in enumerate(ALL_FEATURES)}

    # BM25 of the chunk text: the rank-bm25 reference over all chunks
    chunk_tokens = [TOK.tokenize(r[0]) for r in DOC_A + DOC_B]
    np.testing.assert_allclose(f["bm25"], ReferenceBM25().fit(chunk_tokens).scores(tokens), rtol=1e-5)

    # BM25AncMax: reference BM25 (b = 0.3) over the heading texts of the nodes
    heads = [I7, LIQ, RES, I8, CF, "Liquidity", "Risk Factors"]
    hb = ReferenceBM25(b=0.3).fit([TOK.tokenize(h) for h in heads]).scores(tokens)
    anc = [[], [0], [0, 1], [0, 1], [0, 2], [3], [3, 4], [5], [6]]
    expected = [max((hb[a] for a in ch), default=0.0) for ch in anc]
    np.testing.assert_allclose(f["bm25_anc_max"], expected, rtol=1e-5)
    assert f["bm25_anc_max"][2] == pytest.approx(hb[1]) and hb[1] > hb[0] == 0

    # SameWordAnc: distinct query terms in any ancestor heading
    assert f["same_word_anc"].tolist() == [0, 0, 2, 2, 0, 0, 0, 1, 0]  # "capital" + "liquidity" under LIQ

    # Pos / PosRatio among the chunks of the section
    assert f["pos"].tolist() == [0, 0, 0, 1, 0, 0, 0, 0, 0]
    assert f["pos_ratio"].tolist() == [0, 0, 0, 0.5, 0, 0, 0, 0, 0]

    # BM25 of the whole section: the chunks of a section share it
    sections = [[], [], [], [], [], [], []]
    for (t, sp, *_), leaf in zip(DOC_A + DOC_B, [-1, 0, 1, 1, 2, 3, 4, 5, 6]):
        if leaf >= 0:
            sections[leaf] += TOK.tokenize(t)
    sb = ReferenceBM25().fit(sections).scores(tokens)
    np.testing.assert_allclose(f["bm25_section"], [0.0] + [sb[n] for n in [0, 1, 1, 2, 3, 4, 5, 6]], rtol=1e-5)
    assert f["bm25_section"][2] == f["bm25_section"][3] > 0

    assert f["depth"].tolist() == [0, 1, 2, 2, 2, 1, 2, 1, 1]
    assert f["sec_pos_ratio"].tolist() == [0, 0, 0, 0, 0.5, 0.5, 0, 0, 0.5]
    np.testing.assert_allclose(f["page_pos"], [0, 1 / 9, 2 / 9, 3 / 9, 4 / 9, 6 / 9, 8 / 9, 0, 1 / 2])
    np.testing.assert_allclose(f["bm25_rel"], f["bm25"] / f["bm25"].max(), rtol=1e-6)

    # dense features: dot products with the stored unit vectors
    np.testing.assert_allclose(f["dense"], corpus.chunk_vectors @ qv, rtol=1e-5)
    leaf = corpus.chunk_node
    exp_path = np.where(leaf >= 0, corpus.node_vectors[np.maximum(leaf, 0)] @ qv, 0.0)
    np.testing.assert_allclose(f["dense_path"], exp_path, rtol=1e-5)
    assert f["dense_rel"].max() == 0 and (f["dense_rel"] <= 0).all()


def test_candidate_subset_and_column_order(corpus):
    qs = query_scores(corpus, TOK.tokenize(QUERY))
    full = compute_features(corpus, qs, np.arange(corpus.n_chunks), LEXICAL_FEATURES)
    cand = np.array([6, 2, 8])
    sub = compute_features(corpus, qs, cand, LEXICAL_FEATURES)
    # per-candidate features equal the full matrix's rows; bm25_rel is relative to the candidate list
    keep = [j for j, n in enumerate(LEXICAL_FEATURES) if n not in ("bm25_rel", "page_bm25_rel")]
    np.testing.assert_allclose(sub[:, keep], full[cand][:, keep])
    j = LEXICAL_FEATURES.index("bm25_rel")
    assert sub[:, j].max() == pytest.approx(1.0)
    rev = compute_features(corpus, qs, cand, HELD_FEATURES[::-1])
    np.testing.assert_allclose(rev, sub[:, : len(HELD_FEATURES)][:, ::-1])


def test_errors_and_empty(corpus):
    qs = query_scores(corpus, TOK.tokenize(QUERY))
    assert compute_features(corpus, qs, np.array([], dtype=np.int64)).shape == (0, len(ALL_FEATURES))
    with pytest.raises(ConfigError, match="unknown features"):
        compute_features(corpus, qs, np.array([0]), ["bm25", "nope"])
    with pytest.raises(ConfigError, match="query vector"):
        compute_features(corpus, qs, np.array([0]), ["dense"])


def test_query_without_known_terms(corpus):
    qs = query_scores(corpus, TOK.tokenize("zebra"))
    X = compute_features(corpus, qs, np.arange(corpus.n_chunks), LEXICAL_FEATURES)
    for name in ("bm25", "bm25_anc_max", "same_word_anc", "bm25_section", "bm25_rel"):
        assert (X[:, LEXICAL_FEATURES.index(name)] == 0).all()


def test_save_load_keeps_everything(corpus, tmp_path):
    corpus.save(tmp_path / "c", vectors=True)
    back = Corpus.load(tmp_path / "c")
    qv = _vectors(1, 9)[0]
    cand = np.arange(corpus.n_chunks)
    a = compute_features(corpus, query_scores(corpus, TOK.tokenize(QUERY), qv), cand)
    b = compute_features(back, query_scores(back, TOK.tokenize(QUERY), qv), cand)
    np.testing.assert_array_equal(a, b)
    assert back.doc_names == corpus.doc_names


def test_page_and_content_features():
    rows = [
        ("Cash flows: purchases of equipment 1,577 and 2,000.", ("Statements",), 0, 2, (0,)),
        ("Capital expenditures of the year.", ("Statements",), 1, 2, (0,)),
        ("Narrative text about capital strategy and people.", ("Strategy",), 0, 1, (1,)),
    ]
    corpus = Corpus.build([DocRecord("c.pdf", 2, _records(rows, 1))], TOK)
    names = ("bm25", "page_bm25", "num_ratio", "length", "q_amount")
    for query, amount in (("capital expenditures 1,577", True), ("strategy", False)):
        from retrievers.rank.question import asks_for_amount

        assert asks_for_amount(query) is amount
        qs = query_scores(corpus, TOK.tokenize(query), amount=asks_for_amount(query))
        X = compute_features(corpus, qs, np.array([0, 1, 2]), names)
        bm25, page = X[:, 0], X[:, 1]
        # the two chunks of page 0 share the sum of their BM25; page 1 has only its own
        assert page[0] == page[1] == pytest.approx(bm25[0] + bm25[1]) and page[2] == pytest.approx(bm25[2])
        assert X[:, 4].tolist() == [float(amount)] * 3
    toks0 = TOK.tokenize(rows[0][0])
    assert X[0, 3] == len(toks0)
    assert X[0, 2] == pytest.approx(sum(t.isdigit() for t in toks0) / len(toks0)) and X[2, 2] == 0
    # page_num_ratio: the mean number share of the page's chunks, so page 0's caption chunk (no number) shares it
    pnr = compute_features(corpus, qs, np.array([1, 0, 2]), ("page_num_ratio", "num_ratio"))
    page0 = (sum(t.isdigit() for t in toks0) / len(toks0) + 0.0) / 2
    assert pnr[:, 0].tolist() == pytest.approx([page0, page0, 0.0])
    assert pnr[0, 1] == 0 < pnr[0, 0] < pnr[1, 1]


def test_coverage_features(corpus):
    # "capit", "expenditur", "liquid": chunk 2 has capit + expenditur, its heading LIQ has capit + liquid
    qs = query_scores(corpus, TOK.tokenize(QUERY))
    names = ("coverage", "coverage_ctx", "page_coverage", "page_bm25_rel")
    X = compute_features(corpus, qs, np.array([2, 3, 6, 7]), names)
    np.testing.assert_allclose(X[:, 0], [2 / 3, 1 / 3, 0, 2 / 3])  # chunk 7: "liquidity ... capital"
    np.testing.assert_allclose(X[:, 1], [1, 2 / 3, 0, 2 / 3])
    np.testing.assert_allclose(X[:, 2], [2 / 3, 1 / 3, 0, 2 / 3])
    assert X[:, 3].max() == pytest.approx(1.0)


def test_idf_coverage_and_query_level_features(corpus):
    # 9 chunks; "capit" is in chunks 2, 3, 7 (df 3), "expenditur" in 2 and "liquid" in 7 (df 1 each);
    # the heading "Liquidity ..." is not chunk text, so it does not count
    def idf(df, n=9):
        return np.log1p((n - df + 0.5) / (df + 0.5))

    qs = query_scores(corpus, TOK.tokenize(QUERY))
    names = ("idf_coverage", "page_idf_coverage", "q_idf_top", "q_bm25_top_z", "bm25_z")
    cand = np.array([2, 3, 4, 6, 7])
    X = compute_features(corpus, qs, cand, names)
    total = idf(3) + 2 * idf(1)
    np.testing.assert_allclose(X[:, 0], np.array([idf(3) + idf(1), idf(3), 0, 0, idf(3) + idf(1)]) / total, rtol=1e-6)
    # chunk 3 spans pages 3-4 and counts from its first page, 3: it shares no page with chunk 4 (page 4)
    np.testing.assert_allclose(X[:, 1], X[:, 0], rtol=1e-6)
    # one value per query: the best page coverage and the best z-score among the candidates
    assert X[:, 2].tolist() == pytest.approx([X[:, 1].max()] * 5)
    assert X[:, 3].tolist() == pytest.approx([X[:, 4].max()] * 5)
    # a word the collection lacks weighs as the rarest possible, and is found nowhere
    qs2 = query_scores(corpus, TOK.tokenize("capital zebra"))
    X2 = compute_features(corpus, qs2, np.array([2, 5]), ("idf_coverage",))
    np.testing.assert_allclose(X2[:, 0], [idf(3) / (idf(3) + idf(0)), 0], rtol=1e-6)
    # no known term: zeros, not a division by zero
    X3 = compute_features(corpus, query_scores(corpus, []), cand, names)
    assert not X3.any()


def test_query_level_dense_feature(corpus):
    q = _vectors(1, 9)[0]
    qs = query_scores(corpus, TOK.tokenize(QUERY), q)
    X = compute_features(corpus, qs, np.array([0, 1, 2, 3]), ("q_dense_top_z", "dense_z"))
    assert X[:, 0].tolist() == pytest.approx([X[:, 1].max()] * 4)
    with pytest.raises(ConfigError):
        compute_features(corpus, query_scores(corpus, TOK.tokenize(QUERY)), np.array([0]), ("q_dense_top_z",))


def test_the_registry_orders_the_columns_the_shipped_rankers_read():
    """The shipped LightGBM rankers read their columns by position: the registry's shipped columns, in
    order, are the feature lists of their metadata, with no gap and no repeat."""
    import json

    from retrievers.rank import features as F
    from retrievers.rank.ranker import default_model_path

    for dense, names in ((False, F.PORTABLE_LEXICAL), (True, F.PORTABLE_FEATURES)):
        path = default_model_path(dense)
        meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        assert list(names) == meta["features"]
        assert f"feature_names={' '.join(names)}\n" in path.read_text(encoding="utf-8")
    columns = sorted(f.column for f in F.FEATURES if f.column is not None)
    assert columns == list(range(len(F.PORTABLE_FEATURES)))


def test_the_registry_gives_every_name_set_and_describes_every_feature():
    from retrievers.rank import features as F

    names = [f.name for f in F.FEATURES]
    assert len(set(names)) == len(names) and F.KNOWN_FEATURES == tuple(names)
    assert all(f.group in F.GROUPS and f.direction in (-1, 0, 1) and callable(f.compute) for f in F.FEATURES)
    # each group's set, in registry order; the sets cover the registry once
    sets = (F.LEXICAL_FEATURES, F.DENSE_FEATURES, F.NORMALISED_LEXICAL, F.NORMALISED_DENSE, F.QUERY_LEXICAL,
            F.QUERY_DENSE, F.CONCEPT_FEATURES, F.DOC_FEATURES, F.PAGE_TEXT_FEATURES, F.OPEN_PAGE_FEATURES)
    assert sum(sets, ()) == F.KNOWN_FEATURES
    assert F.HELD_FEATURES == ("bm25", "bm25_anc_max", "same_word_anc", "pos", "pos_ratio")
    assert F.EVIDENCE_DIRECTION == {f.name: f.direction for f in F.FEATURES if f.direction}
    assert F.needs_dense(["dense_z"]) and not F.needs_dense(F.PORTABLE_LEXICAL)
    for f in F.FEATURES:  # the module docstring lists each feature with what it means
        assert f"``{f.name}``" in F.__doc__ and f.about.split()[0] in F.__doc__


def test_a_feature_reads_another_as_the_ranker_does(corpus):
    """A feature built on another reads its float32 value, computed once per call."""
    from retrievers.rank.candidates import Candidates

    calls = []

    def base(c):
        calls.append(1)
        return np.array([1.0, 1.0 + 1e-9, 3.0])

    c = Candidates(corpus, query_scores(corpus, TOK.tokenize(QUERY)), np.array([0, 1, 2]),
                   {"base": base, "twice": lambda c: c["base"] * 2})
    assert c["twice"].dtype == np.float32 and c["twice"].tolist() == [2.0, 2.0, 6.0]
    assert c["base"][0] == c["base"][1] and len(calls) == 1
