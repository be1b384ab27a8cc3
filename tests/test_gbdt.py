"""structrag.levels.gbdt: the numpy evaluator of LightGBM text models against lightgbm itself.

Each model is trained here by lightgbm on random data (NaNs, zeros, negative
and out-of-range categories included) or is one of the shipped models; the
evaluator must give ``Booster.predict``'s numbers to 1e-9.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")

from structrag.errors import ModelError  # noqa: E402
from structrag.levels.gbdt import TreeEnsemble, UnsupportedModel, load_model  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TOL = 1e-9


def _data(n=600, f=6, seed=0, nan=0.15, zero=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f))
    X[rng.random(X.shape) < zero] = 0.0
    X[rng.random(X.shape) < nan] = np.nan
    signal = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) ** 2 - np.isnan(X[:, 2])
    return X, signal, rng


def _probe(f, seed=1):
    """Rows that exercise the edge cases: NaN, exact zeros, values within 1e-35 of zero, huge values."""
    X, _, rng = _data(400, f, seed=seed, nan=0.2, zero=0.15)
    X[rng.random(X.shape) < 0.05] = 1e-40
    X[rng.random(X.shape) < 0.05] = -1e-36
    X[rng.random(X.shape) < 0.02] = 1e30
    X[rng.random(X.shape) < 0.02] = -np.inf
    return X


def _train(params, X, y, rounds=25, **ds):
    base = {"verbosity": -1, "num_leaves": 15, "min_data_in_leaf": 5, "seed": 0, "num_threads": 1}
    return lgb.train({**base, **params}, lgb.Dataset(X, label=y, **ds), num_boost_round=rounds)


def _same(booster, X, tmp_path=None, **kw):
    ens = TreeEnsemble.from_string(booster.model_to_string())
    want = booster.predict(X, num_threads=1, **kw)
    got = ens.predict(X, **kw)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL)
    return ens


@pytest.mark.parametrize("missing", ["nan", "zero", "none"])
def test_binary_with_each_missing_value_rule(missing):
    X, s, _ = _data()
    params = {"objective": "binary"}
    if missing == "zero":
        params["zero_as_missing"] = True
    elif missing == "none":
        params["use_missing"] = False
    b = _train(params, X, (s > 0.3).astype(int))
    ens = _same(b, _probe(X.shape[1]))
    _same(b, _probe(X.shape[1]), raw_score=True)
    # the missing types of the splits are the ones asked for (decision_type bits 2-3)
    types = {int(t) >> 2 & 3 for line in b.model_to_string().splitlines() if line.startswith("decision_type=")
             for t in line.split("=")[1].split()}
    assert {"nan": 2, "zero": 1, "none": 0}[missing] in types
    assert ens.objective.startswith("binary")


def test_binary_sigmoid_scale_and_default_left_both_ways():
    X, s, _ = _data(seed=3)
    b = _train({"objective": "binary", "sigmoid": 2.5}, X, (s > 0).astype(int), rounds=40)
    text = b.model_to_string()
    assert "sigmoid:2.5" in text
    dts = {int(t) for line in text.splitlines() if line.startswith("decision_type=") for t in line.split("=")[1].split()}
    assert dts & {2, 10} and dts & {0, 8}  # default-left and default-right splits both occur
    _same(b, _probe(X.shape[1]))


def test_categorical_splits():
    rng = np.random.default_rng(5)
    n = 800
    cat = rng.integers(0, 40, size=n).astype(float)
    X = np.column_stack([cat, rng.normal(size=n), rng.integers(0, 3, size=n).astype(float)])
    y = ((cat % 7 < 3) ^ (X[:, 1] > 0.5)).astype(int)
    X[rng.random(n) < 0.1, 0] = np.nan
    b = _train({"objective": "binary", "max_cat_to_onehot": 2, "cat_smooth": 1, "min_data_per_group": 5}, X, y,
               rounds=30, categorical_feature=[0, 2])
    assert any(line.startswith("cat_threshold=") for line in b.model_to_string().splitlines())
    P = np.column_stack([
        np.concatenate([np.arange(-3, 80, dtype=float), [np.nan, -0.5, 0.7, 3.99, 2.0**31, 1e12, -np.inf, np.inf]]),
        np.linspace(-2, 2, 91),
        np.resize([0.0, 1.0, 2.0, 5.0, np.nan, -1.0], 91),
    ])
    ens = _same(b, P)
    assert ens._any_cat


@pytest.mark.parametrize("objective", ["multiclass", "multiclassova"])
def test_multiclass(objective):
    X, s, _ = _data(seed=7)
    y = np.digitize(s, [-0.5, 0.5, 1.5])
    b = _train({"objective": objective, "num_class": 4}, X, y, rounds=15)
    ens = _same(b, _probe(X.shape[1]))
    assert ens.predict(_probe(X.shape[1])).shape == (400, 4)
    _same(b, _probe(X.shape[1]), raw_score=True)


@pytest.mark.parametrize("params", [
    {"objective": "regression"},
    {"objective": "regression", "reg_sqrt": True},
    {"objective": "regression_l1"},
    {"objective": "huber"},
    {"objective": "fair"},
    {"objective": "quantile", "alpha": 0.8},
    {"objective": "mape"},
    {"objective": "poisson"},
    {"objective": "gamma"},
    {"objective": "tweedie"},
    {"objective": "cross_entropy"},
    {"objective": "cross_entropy_lambda"},
], ids=lambda p: "-".join(str(v) for v in p.values()))
def test_regression_objectives(params):
    X, s, _ = _data(seed=11)
    y = s - s.min() + 0.1 if params["objective"] in ("poisson", "gamma", "tweedie", "mape", "regression") else s
    if params["objective"].startswith("cross_entropy"):
        y = 1 / (1 + np.exp(-s))
    _same(_train(params, X, y), _probe(X.shape[1]))


def test_lambdarank_and_random_forest_averaging():
    X, s, rng = _data(seed=13)
    rel = np.digitize(s, [0, 1]).astype(int)
    b = _train({"objective": "lambdarank"}, X, rel, group=[50] * 12)
    _same(b, _probe(X.shape[1]))
    rf = _train({"objective": "regression", "boosting": "rf", "bagging_fraction": 0.7, "bagging_freq": 1}, X, s)
    assert "average_output" in rf.model_to_string()
    _same(rf, _probe(X.shape[1]))


def test_single_leaf_trees_and_empty_input():
    X, s, _ = _data(n=40)
    b = _train({"objective": "regression", "min_data_in_leaf": 100}, X, s, rounds=3)  # no split possible
    assert "num_leaves=1" in b.model_to_string()
    ens = _same(b, _probe(X.shape[1]))
    assert ens.predict(np.zeros((0, X.shape[1]))).shape == (0,)


@pytest.mark.parametrize("name", ["structrag/levels/models/levels.txt", "retrievers/rank/models/default-lexical.txt",
                                  "retrievers/rank/models/default-dense.txt"])
def test_shipped_models(name):
    path = REPO / name
    b = lgb.Booster(model_file=str(path))
    ens = TreeEnsemble.from_file(path)
    assert ens.num_trees == b.num_trees() and ens.feature_names == tuple(b.feature_name())
    P = _probe(ens.num_features, seed=17) * 5
    np.testing.assert_allclose(ens.predict(P), b.predict(P, num_threads=1), rtol=0, atol=TOL)
    np.testing.assert_allclose(ens.predict(P.astype(np.float32)), b.predict(P.astype(np.float32), num_threads=1),
                               rtol=0, atol=TOL)


def test_unsupported_and_bad_models(tmp_path):
    X, s, _ = _data(seed=19, nan=0.0)
    lin = _train({"objective": "regression", "linear_tree": True}, X, s, rounds=5)
    p = tmp_path / "linear.txt"
    lin.save_model(str(p))
    with pytest.raises(UnsupportedModel, match="linear"):
        TreeEnsemble.from_file(p)
    fallback = load_model(p)  # lightgbm answers what numpy does not implement
    assert isinstance(fallback, lgb.Booster)

    bad = tmp_path / "bad.txt"
    bad.write_text("tree\nversion=v4\nmax_feature_idx=2\n\nTree=0\nnum_leaves=3\nleaf_value=1 2\n")
    with pytest.raises(ModelError, match="bad.txt"):
        TreeEnsemble.from_file(bad)
    with pytest.raises(ModelError, match="not found"):
        TreeEnsemble.from_file(tmp_path / "missing.txt")
    (tmp_path / "junk.txt").write_text("hello\n")
    with pytest.raises(ModelError, match="not a LightGBM text model"):
        TreeEnsemble.from_file(tmp_path / "junk.txt")
    ok = TreeEnsemble.from_string(_train({"objective": "regression"}, X, s, rounds=2).model_to_string())
    with pytest.raises(ModelError, match="takes 6 features"):
        ok.predict(np.zeros((2, 5)))


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_toc_and_help_do_not_import_the_heavy_libraries(tmp_path):
    """`structrag toc` predicts levels without lightgbm; `--help` and `import structrag` need no PyMuPDF."""
    from pdfgen import numbered_report

    pdf = tmp_path / "report.pdf"
    numbered_report(pdf)
    out = _run(f"""
        import contextlib, io, sys
        import structrag
        from structrag.cli import build_parser, main
        build_parser()
        print("after help:", sorted(m for m in ("pymupdf", "numpy", "lightgbm") if m in sys.modules))
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["toc", {str(pdf)!r}, "--ignore-outline"]) == 0
        print("after toc:", sorted(m for m in ("lightgbm", "sklearn", "pandas", "scipy", "pymupdf4llm")
                                   if m in sys.modules), "pymupdf" in sys.modules)
    """)
    assert "after help: []" in out
    assert "after toc: [] True" in out
