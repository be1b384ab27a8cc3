"""BM25: the bm25s sparse engine agrees with the rank-bm25 reference; persistence; top-k."""

from __future__ import annotations

import random

import numpy as np
import pytest

from retrievers.lexical.bm25 import ReferenceBM25, SparseBM25, top_k
from retrievers.lexical.tokenizer import tokenize
from structrag.errors import ConfigError, IndexFormatError

PASSAGES = [
    "Purchases of property, plant and equipment (PP&E) were $1,577 million in 2018.",
    "Capital expenditures are expected to be between $1.7 billion and $1.9 billion in 2019.",
    "Net sales increased 3.5 percent; organic local-currency sales grew in every business segment.",
    "The Company's effective tax rate was 23.4 percent, compared with 35.5 percent in 2017.",
    "Cash flows from operating activities were $6,439 million, up $199 million from 2017.",
    "Dividends paid to shareholders totaled $3.2 billion in 2018.",
    "Research, development and related expenses totaled $1,821 million.",
    "Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations",
    "",
    "Long-term debt maturities: 2019 $1,211 million, 2020 $1,330 million.",
    "Cash and cash equivalents at the end of the year were $2,853 million.",
    "The Company repurchased $4.9 billion of its own stock during 2018 (Form 10-K).",
]


def _random_corpus(seed: int, n: int = 300, vocab: int = 400):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    weights = [1 / (i + 1) for i in range(vocab)]  # Zipf-like, so idf varies widely
    # no empty passage: rank-bm25 divides 0 by 0 for one when b = 1 (bm25s scores it 0)
    return [rng.choices(words, weights, k=rng.randint(1, 60)) for _ in range(n)], words, rng


@pytest.mark.parametrize("idf", ["lucene", "robertson"])
@pytest.mark.parametrize("k1, b", [(1.5, 0.75), (1.2, 0.3), (0.9, 1.0), (2.0, 0.0)])
def test_sparse_engine_matches_reference(idf, k1, b):
    corpus, words, rng = _random_corpus(int(k1 * 100 + b * 10) + len(idf))
    engine = SparseBM25(k1=k1, b=b, idf=idf).fit(corpus)
    ref = ReferenceBM25(k1=k1, b=b, idf=idf).fit(corpus)
    for _ in range(25):
        q = rng.choices(words[:200], k=rng.randint(1, 6)) + ["never-seen"]
        a, r = engine.scores(q), ref.scores(q)
        assert a.shape == (len(corpus),)
        np.testing.assert_allclose(a, r, rtol=2e-5, atol=1e-5)
        # the same order of the top passages
        assert list(top_k(a, 10).indices) == list(top_k(r.astype(np.float32), 10).indices)


def test_parity_on_real_text_with_the_tokeniser():
    toks = [tokenize(p) for p in PASSAGES]
    engine, ref = SparseBM25().fit(toks), ReferenceBM25().fit(toks)
    for q in ["capital expenditure 2019", "cash", "1,577", "10-K stock repurchase", "tax rate 2017 2017"]:
        np.testing.assert_allclose(engine.scores(tokenize(q)), ref.scores(tokenize(q)), rtol=2e-5, atol=1e-5)
    best = engine.top_k(tokenize("How much were purchases of PP&E in 2018?"), 1)
    assert best.indices[0] == 0


def test_stock_okapi_equals_robertson_without_negative_idf():
    # rank-bm25's own idf differs from Robertson's only for terms in more than half the documents
    rng = random.Random(7)
    words = [f"t{i}" for i in range(200)]
    corpus = [rng.sample(words, 8) for _ in range(100)]  # every term in well under half the documents
    engine = SparseBM25(idf="robertson").fit(corpus)
    okapi = ReferenceBM25(idf="okapi").fit(corpus)
    for _ in range(10):
        q = rng.sample(words, 3)
        np.testing.assert_allclose(engine.scores(q), okapi.scores(q), rtol=2e-5, atol=1e-5)


def test_lucene_idf_never_negative():
    corpus = [["cash", "flow"], ["cash"], ["cash", "debt"]]
    s = SparseBM25().fit(corpus).scores(["cash"])
    assert (s > 0).all()
    assert (SparseBM25(idf="robertson").fit(corpus).scores(["cash"]) == 0).all()


def test_save_load_round_trip(tmp_path):
    toks = [tokenize(p) for p in PASSAGES]
    engine = SparseBM25(k1=1.2, b=0.5).fit(toks)
    engine.save(tmp_path / "bm")
    back = SparseBM25.load(tmp_path / "bm")
    assert (back.k1, back.b, back.idf, back.n_docs_) == (1.2, 0.5, "lucene", len(PASSAGES))
    q = tokenize("cash equivalents end of year")
    np.testing.assert_array_equal(back.scores(q), engine.scores(q))
    # nothing pickled: every array loads with allow_pickle=False
    for f in (tmp_path / "bm").rglob("*.npy"):
        np.load(f, allow_pickle=False)


def test_load_rejects_other_folders(tmp_path):
    with pytest.raises(IndexFormatError):
        SparseBM25.load(tmp_path)
    (tmp_path / "params.json").write_text('{"format": "something-else"}')
    with pytest.raises(IndexFormatError, match="not a structrag BM25 index"):
        SparseBM25.load(tmp_path)


def test_empty_corpus_and_query():
    e = SparseBM25().fit([])
    assert e.scores(["x"]).shape == (0,)
    e2 = SparseBM25().fit([[], []])
    np.testing.assert_array_equal(e2.scores(["x"]), [0, 0])
    e3 = SparseBM25().fit([["a"], ["b"]])
    np.testing.assert_array_equal(e3.scores([]), [0, 0])


def test_contains_lists_rows_per_distinct_term():
    e = SparseBM25().fit([["a", "b"], ["b"], ["c"]])
    rows = e.contains(["b", "zzz", "a", "b"])
    assert [sorted(r.tolist()) for r in rows] == [[0, 1], [0]]


def test_top_k_ties_and_rows():
    s = np.array([1.0, 3.0, 3.0, 0.5, 3.0], dtype=np.float32)
    t = top_k(s, 3)
    assert t.indices.tolist() == [1, 2, 4]  # ties by lower index
    assert top_k(s, 10).indices.tolist() == [1, 2, 4, 0, 3]
    t = top_k(s, 2, rows=np.array([0, 3, 4]))
    assert t.indices.tolist() == [4, 0]
    assert top_k(s, 0).indices.size == 0


def test_parameter_validation():
    with pytest.raises(ConfigError):
        SparseBM25(k1=-1)
    with pytest.raises(ConfigError):
        SparseBM25(b=1.5)
    with pytest.raises(ConfigError):
        SparseBM25(idf="bm25+")
    with pytest.raises(ConfigError, match="not fitted"):
        SparseBM25().scores(["a"])
