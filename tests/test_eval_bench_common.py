"""The shared benchmark helpers of eval/bench/common.py: bootstrap intervals, the data folder, model caches."""

import json
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from eval.bench.common import (
    HeldOutModels,
    bootstrap_ci,
    bootstrap_diff,
    bootstrap_ratio,
    commit,
    data_dir,
    paired_diff,
    training_key,
)
from eval.shared_data import shared_data_dir
from structrag.errors import ConfigError


def test_ratio_of_identical_runs_is_exactly_one():
    a = np.linspace(0.0, 1.0, 50)
    r = bootstrap_ratio(a, a)
    assert r["ratio"] == 1.0 and r["ci95"] == [1.0, 1.0] and r["p_below_1.8"] == 1.0


def test_ratio_interval_contains_the_point_ratio_and_is_paired():
    rng = np.random.default_rng(3)
    b = rng.uniform(0.1, 0.5, 100)
    a = 2.0 * b  # per query exactly twice as good: a paired bootstrap sees no spread at all
    r = bootstrap_ratio(a, b)
    assert r["ratio"] == pytest.approx(2.0) and r["ci95"] == pytest.approx([2.0, 2.0])
    assert r["p_below_1.8"] == 0.0
    noisy = b * rng.uniform(1.0, 3.0, 100)
    r = bootstrap_ratio(noisy, b)
    assert r["ci95"][0] < r["ratio"] < r["ci95"][1]


def test_diff_signs_and_probability():
    rng = np.random.default_rng(5)
    b = rng.uniform(0.0, 0.6, 80)
    up = bootstrap_diff(b + 0.2, b)
    assert up["diff"] == pytest.approx(0.2) and up["p_not_above"] == 0.0
    down = bootstrap_diff(b, b + 0.2)
    assert down["ci95"][1] < 0 and down["p_not_above"] == 1.0
    mixed = bootstrap_diff(rng.permutation(b), b)  # same scores, shuffled across queries: no real difference
    assert mixed["ci95"][0] < 0 < mixed["ci95"][1]


# --------------------------------------------------------------------------- bootstrap: known cases


def _old_generalise_boot(values, n=2000, seed=0):
    """bench_generalise.boot as it was before eval.bench.common: the figures of RESULTS.md came from it."""
    v = np.asarray(values, float)
    idx = np.random.default_rng(seed).integers(0, v.size, size=(n, v.size))
    return [round(float(x), 3) for x in np.percentile(v[idx].mean(axis=1), [2.5, 97.5])]


def test_bootstrap_ci_known_cases():
    assert bootstrap_ci([0.4] * 30) == [0.4, 0.4]  # no spread: the interval is the mean
    lo, hi = bootstrap_ci([0.0, 1.0] * 50)
    assert lo < 0.5 < hi and hi - lo < 0.25  # the mean of 100 fair coins: about +-0.1
    assert all(np.isnan(bootstrap_ci([])))
    rng = np.random.default_rng(7)
    v = rng.uniform(0, 1, 40)
    assert bootstrap_ci(v) == _old_generalise_boot(v)
    assert bootstrap_ci(list(v), seed=1) != bootstrap_ci(list(v), seed=0)


def test_paired_diff_is_bootstrap_diff_over_shared_queries():
    rng = np.random.default_rng(11)
    a = {f"q{i}": {"map": float(x)} for i, x in enumerate(rng.uniform(0, 1, 30))}
    b = {f"q{i}": {"map": float(x)} for i, x in enumerate(rng.uniform(0, 1, 30))}
    b.pop("q3")  # scored by one side only: left out
    qids = sorted(a)
    d = paired_diff(a, b, qids)
    shared = [q for q in qids if q in b]
    full = bootstrap_diff([a[q]["map"] for q in shared], [b[q]["map"] for q in shared])
    assert d == {"diff": full["diff"], "ci95": full["ci95"]}
    assert paired_diff(a, {}, qids) == {}


# --------------------------------------------------------------------------- the data folder


@pytest.fixture
def no_env(monkeypatch):
    monkeypatch.delenv("STRUCTRAG_SHARED_DATA", raising=False)


def test_data_folder_flag_beats_env_beats_beside_the_repo(tmp_path, monkeypatch, no_env):
    repo = tmp_path / "work" / "repo"
    repo.mkdir(parents=True)
    beside = tmp_path / "work" / "shared" / "data"
    beside.mkdir(parents=True)
    assert shared_data_dir(repo=repo) == beside
    monkeypatch.setenv("STRUCTRAG_SHARED_DATA", str(tmp_path / "from-env"))
    assert shared_data_dir(repo=repo) == tmp_path / "from-env"  # named, so not checked
    assert shared_data_dir(tmp_path / "flag", repo=repo) == tmp_path / "flag"
    monkeypatch.setenv("STRUCTRAG_SHARED_DATA", "")
    assert shared_data_dir(repo=repo) == beside  # an empty variable names nothing


def test_data_folder_beside_a_worktree_and_missing(tmp_path, no_env):
    worktree = tmp_path / "work" / "wt" / "feature"  # git worktrees sit one folder further down
    worktree.mkdir(parents=True)
    assert shared_data_dir(repo=worktree) == tmp_path / "work" / "wt" / "shared" / "data"  # the usual place, absent
    with pytest.raises(ConfigError):
        shared_data_dir(repo=worktree, required=True)
    (tmp_path / "work" / "shared" / "data").mkdir(parents=True)
    assert shared_data_dir(repo=worktree, required=True) == tmp_path / "work" / "shared" / "data"


def test_bench_data_dir_joins_parts(monkeypatch, tmp_path):
    monkeypatch.setenv("STRUCTRAG_SHARED_DATA", str(tmp_path))
    assert data_dir("retrieval", "queries.jsonl") == tmp_path / "retrieval" / "queries.jsonl"
    assert data_dir("headings", explicit=tmp_path / "x") == tmp_path / "x" / "headings"


def test_commit_is_the_checkouts_short_sha():
    c = commit()
    assert c == "unknown" or (len(c) == 7 and all(ch in "0123456789abcdef" for ch in c))
    assert commit(mark_dirty=True).startswith(c)


# --------------------------------------------------------------------------- held-out model caches


class _Ref(NamedTuple):
    doc_id: str
    family: str
    pdf_sha1: str = "p"
    toc_sha1: str = "t"
    headings: tuple = (1, 2)
    located: int = 2


class _Booster:
    def __init__(self, docs):
        self.docs = docs

    def save_model(self, path):
        Path(path).write_text(",".join(self.docs))


REFS = [_Ref("a", "f1"), _Ref("b", "f1"), _Ref("c", "f2"), _Ref("d", "f3")]


def test_training_key_names_the_training_set_code_and_params():
    k = training_key(REFS[:3], "0:300:1")
    assert training_key(list(reversed(REFS[:3])), "0:300:1") == k  # a set: order does not matter
    assert training_key(REFS[:2], "0:300:1") != k
    assert training_key([REFS[0]._replace(toc_sha1="u"), *REFS[1:3]], "0:300:1") != k  # a relabelled document
    assert training_key(REFS[:3], "1:300:1") != k
    assert len(k) == 16


def test_held_out_models_train_once_and_reload_from_the_cache(tmp_path):
    calls = []

    def train(docs, **kw):
        calls.append(([r.doc_id for r in docs], kw))
        return _Booster([r.doc_id for r in docs]), {}

    def load(path):
        return ("loaded", Path(path).read_text())

    lofo = HeldOutModels(REFS, tmp_path, folder="lofo", group_of=lambda r: r.family, name="outlines",
                         include=lambda r: r.doc_id != "d", train=train, load=load)
    assert [r.doc_id for r in lofo.training_docs("f1")] == ["c"]  # f1 held out, d not a source
    b = lofo.booster("f1")
    assert b.docs == ["c"] and lofo.booster("f1") is b and len(calls) == 1
    assert calls[0][1]["seed"] == 0 and "rows_cache" in calls[0][1]
    path = lofo.path("f1")
    assert path.parent == tmp_path / "lofo" and path.name.startswith("outlines_") and path.read_text() == "c"
    again = HeldOutModels(REFS, tmp_path, folder="lofo", group_of=lambda r: r.family, name="outlines",
                          include=lambda r: r.doc_id != "d", train=train, load=load)
    assert again.booster("f1") == ("loaded", "c") and len(calls) == 1
    loo = HeldOutModels(REFS, None, folder="loo", train=train, load=load)  # by document, no disk cache
    assert [r.doc_id for r in loo.training_docs("b")] == ["a", "c", "d"] and loo.path("b") is None
    loo.booster("b")
    assert len(calls) == 2


# --------------------------------------------------------------------------- every benchmark runs


def test_every_benchmark_module_imports_and_answers_help():
    """One child (the benchmarks set environment variables at import) imports every eval.bench module
    and runs ``main(["--help"])`` where there is one."""
    import subprocess
    import sys

    import eval.bench

    names = sorted(p.stem for p in Path(eval.bench.__file__).parent.glob("*.py") if p.stem != "__init__")
    code = (
        "import contextlib, importlib, io, sys\n"
        "bad = []\n"
        f"for n in {names!r}:\n"
        "    m = importlib.import_module('eval.bench.' + n)\n"
        "    if hasattr(m, 'main'):\n"
        "        out = io.StringIO()\n"
        "        try:\n"
        "            with contextlib.redirect_stdout(out):\n"
        "                m.main(['--help'])\n"
        "            bad.append(n + ': no SystemExit')\n"
        "        except SystemExit as e:\n"
        "            if e.code not in (0, None) or 'usage: python -m eval.bench.' + n not in out.getvalue():\n"
        "                bad.append(n + ': ' + repr(e.code) + ' ' + out.getvalue()[:80])\n"
        "print('BAD', bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       cwd=Path(eval.bench.__file__).parents[2])
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert {"levels", "families", "retrieval", "nested", "common", "snapshot"} <= set(names)


def test_no_benchmark_edits_sys_path_or_imports_tests():
    import eval

    root = Path(eval.__file__).parent
    for f in root.rglob("*.py"):
        src = f.read_text(encoding="utf-8")
        assert "sys.path" not in src, f
        assert "from tests" not in src and "import tests" not in src and "import openai_server" not in src, f


def test_save_results_writes_what_is_asked(tmp_path):
    from eval.bench.common import save_results

    seen = []
    save_results({"x": float("nan"), "n": 2}, str(tmp_path / "a" / "r.json"), str(tmp_path / "r.md"),
                 lambda res, path: seen.append((res["n"], path)))
    assert json.loads((tmp_path / "a" / "r.json").read_text())["n"] == 2 and seen == [(2, tmp_path / "r.md")]
    save_results({"n": 3}, None, None, lambda res, path: seen.append(res))
    assert len(seen) == 1
