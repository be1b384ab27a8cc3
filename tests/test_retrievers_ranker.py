"""LambdaRank ranker: it learns, its text model round-trips exactly; reciprocal-rank fusion."""

from __future__ import annotations

import json

import numpy as np
import pytest

from retrievers.rank.ranker import LambdaRanker, default_model_path
from retrievers.rank.search import rrf
from structrag.errors import ConfigError, ModelError

FEATURES = ("signal", "noise", "position")


def _data(seed: int, n_queries: int = 60, per: int = 30):
    """Relevance depends on `signal` and (less) on `position`; `noise` is noise."""
    rng = np.random.default_rng(seed)
    X, y, g = [], [], []
    for _ in range(n_queries):
        sig = rng.normal(size=per)
        pos = rng.integers(0, 10, size=per)
        noise = rng.normal(size=per)
        utility = sig - 0.3 * pos + 0.3 * rng.normal(size=per)
        lab = np.zeros(per, dtype=int)
        lab[np.argsort(-utility)[:3]] = 1
        X.append(np.c_[sig, noise, pos])
        y.append(lab)
        g.append(per)
    return np.concatenate(X).astype(np.float32), np.concatenate(y), np.array(g)


def _mrr(scores, y, g):
    out, start = [], 0
    for n in g:
        s, lab = scores[start : start + n], y[start : start + n]
        order = np.argsort(-s, kind="stable")
        hits = np.nonzero(lab[order])[0]
        out.append(1.0 / (hits[0] + 1) if hits.size else 0.0)
        start += n
    return float(np.mean(out))


def test_fit_learns_the_signal():
    X, y, g = _data(0)
    Xt, yt, gt = _data(1)
    model = LambdaRanker(FEATURES, n_estimators=80, seed=0).fit(X, y, g)
    learned = _mrr(model.predict(Xt), yt, gt)
    random_scores = _mrr(np.random.default_rng(2).normal(size=len(yt)), yt, gt)
    assert learned > 0.8 > random_scores + 0.3
    imp = model.feature_importance()
    assert imp["signal"] > imp["noise"]


def test_save_load_round_trip(tmp_path):
    X, y, g = _data(3)
    model = LambdaRanker(FEATURES, n_estimators=40, seed=5).fit(X, y, g, metadata={"data_sha1": "abc"})
    path = model.save(tmp_path / "m" / "ranker.txt")
    assert path.read_text().startswith("tree")  # LightGBM's text format
    meta = json.loads((tmp_path / "m" / "ranker.json").read_text())
    assert meta["features"] == list(FEATURES)
    assert meta["params"]["seed"] == 5 and meta["metadata"]["data_sha1"] == "abc"
    assert meta["metadata"]["n_queries"] == len(g)
    back = LambdaRanker.load(path)
    assert back.features == FEATURES and back.n_estimators == 40
    np.testing.assert_array_equal(back.predict(X), model.predict(X))


def test_training_is_deterministic():
    X, y, g = _data(4)
    a = LambdaRanker(FEATURES, n_estimators=30, seed=1).fit(X, y, g).predict(X)
    b = LambdaRanker(FEATURES, n_estimators=30, seed=1).fit(X, y, g).predict(X)
    np.testing.assert_array_equal(a, b)


def test_graded_labels():
    X, y, g = _data(6)
    y = y.copy()
    y[np.nonzero(y)[0][::3]] = 2
    model = LambdaRanker(FEATURES, n_estimators=20).fit(X, y, g)
    assert model.predict(X[:5]).shape == (5,)


def test_input_validation(tmp_path):
    X, y, g = _data(7, n_queries=5)
    m = LambdaRanker(FEATURES)
    with pytest.raises(ConfigError, match="not fitted"):
        m.predict(X)
    with pytest.raises(ConfigError, match="columns"):
        m.fit(X[:, :2], y, g)
    with pytest.raises(ConfigError, match="group sizes"):
        m.fit(X, y, g[:-1])
    with pytest.raises(ConfigError, match="non-negative integers"):
        m.fit(X, y - 1, g)
    with pytest.raises(ConfigError):
        LambdaRanker(())
    m.fit(X, y, g)
    with pytest.raises(ConfigError, match="columns"):
        m.predict(X[:, :1])
    assert m.predict(X[:0]).shape == (0,)


def test_load_errors(tmp_path):
    with pytest.raises(ModelError, match="metadata"):
        LambdaRanker.load(tmp_path / "missing.txt")
    (tmp_path / "x.json").write_text('{"format": "other"}')
    (tmp_path / "x.txt").write_text("not a model")
    with pytest.raises(ModelError, match="not a structrag ranker"):
        LambdaRanker.load(tmp_path / "x.txt")
    X, y, g = _data(8, n_queries=5)
    LambdaRanker(FEATURES, n_estimators=5).fit(X, y, g).save(tmp_path / "y.txt")
    (tmp_path / "y.txt").write_text("garbage")
    with pytest.raises(ModelError, match="LightGBM"):
        LambdaRanker.load(tmp_path / "y.txt")


@pytest.mark.parametrize("dense", [False, True])
def test_shipped_models_load_and_rank_by_the_evidence(dense):
    """The shipped rankers are the documented design: portable features only, monotone in the
    evidence (more matching words or a closer embedding never lowers a candidate), and they
    discriminate (a model whose scores ignore the evidence would pass a shape check)."""
    from retrievers.rank.features import EVIDENCE_DIRECTION, PORTABLE_FEATURES

    p = default_model_path(dense)
    model = LambdaRanker.load(p)
    meta = json.loads(p.with_suffix(".json").read_text())
    assert meta["metadata"]["queries_sha1"] and meta["metadata"]["seed"] == model.seed
    assert any(f.startswith("dense") for f in model.features) == dense
    assert set(model.features) <= set(PORTABLE_FEATURES)
    evidence = {f: d for f, d in EVIDENCE_DIRECTION.items() if f in model.features}
    assert model.monotone == evidence and evidence
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(400, len(model.features))).astype(np.float32)
    base = model.predict(X)
    assert base.shape == (400,) and np.unique(np.round(base, 6)).size > 20
    for f, direction in evidence.items():
        j = model.features.index(f)
        moved = X.copy()
        moved[:, j] += direction * rng.uniform(0.1, 3, size=len(X)).astype(np.float32)
        assert (model.predict(moved) >= base - 1e-9).all(), f
    # a candidate better on every evidence feature than another (the rest equal) scores higher somewhere
    best = X.copy()
    for f, direction in evidence.items():
        best[:, model.features.index(f)] += 3 * direction
    assert (model.predict(best) > base + 1e-6).mean() > 0.5


def test_rrf():
    ids, s = rrf([[1, 2, 3], [3, 1, 4]])
    # 1: 1/61 + 1/62, 3: 1/63 + 1/61, 2: 1/62, 4: 1/63
    assert ids.tolist() == [1, 3, 2, 4]
    assert s[0] == pytest.approx(1 / 61 + 1 / 62)
    ids, _ = rrf([[1, 2], [2, 1]])
    assert ids.tolist() == [1, 2]  # a tie keeps first appearance
    ids, _ = rrf([[1, 2], [2, 1]], weights=[1, 2])
    assert ids.tolist() == [2, 1]
    assert rrf([]).__len__() == 2 and rrf([])[0].size == 0
    with pytest.raises(ConfigError):
        rrf([[1]], k=0)
    with pytest.raises(ConfigError):
        rrf([[1]], weights=[1, 2])


def test_monotone_constraint_holds_against_the_data(tmp_path):
    # relevance falls with column 0 in the data; constrained to +1, the score may not fall with it
    rng = np.random.default_rng(3)
    n_q, per = 80, 20
    X = rng.normal(size=(n_q * per, 2)).astype(np.float32)
    y = ((-X[:, 0] + 0.3 * X[:, 1] + 0.3 * rng.normal(size=n_q * per)) > 0.8).astype(int)
    g = [per] * n_q
    free = LambdaRanker(["a", "b"], n_estimators=60, learning_rate=0.1).fit(X, y, g)
    tied = LambdaRanker(["a", "b"], n_estimators=60, learning_rate=0.1, monotone={"a": 1}).fit(X, y, g)
    grid = np.column_stack([np.linspace(-3, 3, 61), np.zeros(61)]).astype(np.float32)
    assert np.diff(free.predict(grid)).min() < 0  # the free model follows the data down
    assert np.diff(tied.predict(grid)).min() >= 0
    back = LambdaRanker.load(tied.save(tmp_path / "m.txt"))
    assert back.monotone == {"a": 1} and np.allclose(back.predict(grid), tied.predict(grid))
    with pytest.raises(ConfigError, match="not in the model"):
        LambdaRanker(["a"], monotone={"z": 1})
    with pytest.raises(ConfigError, match="-1, 0 or 1"):
        LambdaRanker(["a"], monotone={"a": 2})


def test_evidence_directions_cover_the_portable_scores():
    from retrievers.rank.features import EVIDENCE_DIRECTION, KNOWN_FEATURES, PORTABLE_FEATURES, evidence_constraints

    assert set(EVIDENCE_DIRECTION) <= set(KNOWN_FEATURES)
    got = evidence_constraints(PORTABLE_FEATURES)
    assert got["bm25_z"] == 1 and got["dense_rank"] == -1 and got["page_rank"] == -1
    # structure and question-type features stay free: their effect depends on the question
    assert not {"pos", "depth", "page_pos", "num_ratio", "page_num_ratio", "q_amount", "length_rel"} & set(got)
