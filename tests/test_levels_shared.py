"""Integration tests of level reconstruction on the shared outline data (skip without it)."""

from __future__ import annotations

import json

import pytest

from structrag.levels import assign_levels
from structrag.levels.references import load_reference_docs
from structrag.levels.training import oracle_level, train_model
from treeutil import parents  # noqa: E402

SMALL = ["US_DOT_2022_agency_plan", "Addiko_Bank_Sustainability_Report_2023"]


@pytest.fixture(scope="module")
def small_refs(shared_data, tmp_path_factory):
    return load_reference_docs(shared_data / "headings", doc_ids=SMALL,
                               cache_dir=tmp_path_factory.mktemp("doc-cache"), progress=False)


def test_reference_headings_follow_the_outline(small_refs, shared_data):
    for ref in small_refs:
        toc = json.loads((shared_data / "headings" / f"{ref.doc_id}.toc.json").read_text())["toc"]
        assert [h.level for h in ref.headings] == [lv for lv, _, _ in toc]
        assert ref.located >= 0.8 * len(toc)
        assert all(h.level_source == "reference" for h in ref.headings)


def test_oracle_reproduces_the_reference_tree(small_refs):
    for ref in small_refs:
        levels = [h.level for h in ref.headings]
        tp = parents(levels)
        last, ps = {}, []
        for i, q in enumerate(tp):
            ps.append(last.get(q))
            last[q] = i
        branch: list[int] = []
        for i, lv in enumerate(levels):
            if i:
                assert oracle_level(branch, i, tp, ps) == lv
            del branch[lv - 1:]
            branch.append(i)


def test_training_is_reproducible(small_refs, tmp_path):
    a, meta = train_model(small_refs, rounds=20, dagger_rounds=1, dagger_folds=2)
    b, _ = train_model(small_refs, rounds=20, dagger_rounds=1, dagger_folds=2)
    assert a.model_to_string() == b.model_to_string()
    assert {d["doc_id"] for d in meta["documents"]} == set(SMALL)
    assert meta["rows"] > 100 and meta["positives"] > 50


def test_train_levels_cli_writes_model_and_metadata(shared_data, tmp_path):
    from structrag.cli import main

    out = tmp_path / "m" / "levels.txt"
    rc = main(["train-levels", "--data", str(shared_data / "headings"), "--docs", *SMALL, "--out", str(out),
               "--rounds", "15", "--dagger-rounds", "0", "--cache", str(tmp_path / "cache")])
    assert rc == 0 and out.is_file()
    meta = json.loads(out.with_suffix(".json").read_text())
    assert sorted(d["doc_id"] for d in meta["documents"]) == sorted(SMALL)
    ref = load_reference_docs(shared_data / "headings", doc_ids=SMALL[:1], cache_dir=tmp_path / "cache")[0]
    trained = assign_levels(ref.document, ref.headings, predictor="learned", model_path=str(out))
    shipped = assign_levels(ref.document, ref.headings, predictor="learned")
    assert len(trained.headings) == len(ref.headings)
    assert all(h.level_source == "model" for h in trained.headings)
    # the model written is the model used: its scores are not the shipped model's
    conf = [h.confidence for h in trained.headings]
    assert conf != [h.confidence for h in shipped.headings]
    from structrag.levels.learned import LearnedPredictor

    again = assign_levels(ref.document, ref.headings, predictor=LearnedPredictor(model_path=out))
    assert [h.confidence for h in again.headings] == conf


def test_shipped_model_on_a_manual(shared_data, tmp_path):
    ref = load_reference_docs(shared_data / "headings", doc_ids=["An_Introduction_to_R"],
                              cache_dir=tmp_path)[0]
    levels = [h.level for h in ref.headings]
    for predictor in ("learned", "rules"):
        got = [h.level for h in assign_levels(ref.document, ref.headings, predictor=predictor).headings]
        agree = sum(a == b for a, b in zip(parents(got), parents(levels))) / len(levels)
        assert agree >= 0.8, (predictor, agree)
