"""Retrieval metrics: hand-computed cases, conventions, and ranx as an oracle on random runs."""

from __future__ import annotations

import math
import random
import warnings

import pytest

from eval import retrieval_metrics as M
from structrag.errors import ConfigError


def test_hand_computed_single_query():
    ranked = ["a", "x", "b", "y"]
    rel = {"a", "b"}
    assert M.average_precision(ranked, rel) == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert M.average_precision(ranked, rel, k=2) == pytest.approx(0.5)  # denominator stays |R|
    assert M.reciprocal_rank(["x", "b"], rel) == 0.5
    assert M.reciprocal_rank(["x", "b"], rel, k=1) == 0.0
    assert M.precision_at_k(ranked, rel, 5) == pytest.approx(2 / 5)  # k, not the list length
    assert M.recall_at_k(ranked, rel, 2) == 0.5
    assert M.recall_any_at_k(ranked, rel, 1) == 1.0
    assert M.recall_all_at_k(ranked, rel, 2) == 0.0
    assert M.recall_all_at_k(ranked, rel, 3) == 1.0
    dcg = 1 + 1 / math.log2(4)
    assert M.ndcg_at_k(ranked, rel, 10) == pytest.approx(dcg / (1 + 1 / math.log2(3)))
    # graded gains: the ideal order puts the gain-3 item first
    assert M.ndcg_at_k(["b", "a"], {"a": 3, "b": 1}) == pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))


def test_queries_without_relevant_items():
    run = {"q1": ["a"], "q2": ["b"]}
    qrels = {"q1": ["a"], "q2": []}
    s = M.evaluate(run, qrels, ["map", "recall@1"])
    assert s.n_queries == 1 and s.skipped == ("q2",)
    assert s.mean == {"map": 1.0, "recall@1": 1.0}
    assert math.isnan(s.per_query["q2"]["map"])
    z = M.evaluate(run, qrels, ["map"], no_relevant="zero")
    assert z.n_queries == 2 and z.mean["map"] == 0.5
    with pytest.raises(ConfigError, match="q2"):
        M.evaluate(run, qrels, ["map"], no_relevant="error")


def test_missing_and_unjudged_queries():
    s = M.evaluate({"q9": ["a"]}, {"q1": ["a"]}, ["mrr"])
    assert s.per_query["q1"]["mrr"] == 0.0  # not retrieved: an empty ranking
    assert s.unjudged == ("q9",)


def test_ties_keep_the_given_order():
    # equal scores: the retriever's own order decides (documented)
    s = M.evaluate({"q": {"x": 1.0, "a": 1.0}}, {"q": ["a"]}, ["mrr"])
    assert s.mean["mrr"] == 0.5


def test_validation_errors_say_what_is_wrong():
    with pytest.raises(ConfigError, match="appears twice"):
        M.evaluate({"q": ["a", "a"]}, {"q": ["a"]})
    with pytest.raises(ConfigError, match="unknown metric"):
        M.evaluate({}, {}, ["bleu"])
    with pytest.raises(ConfigError, match="needs a cutoff"):
        M.evaluate({}, {}, ["recall"])
    with pytest.raises(ConfigError, match="must be a number"):
        M.evaluate({"q": {"a": "high"}}, {"q": ["a"]})


def test_pages_from_hits_dedupes_in_first_hit_order():
    hits = [{"pages": [4, 5]}, {"pages": [2]}, {"pages": [5, 2, 7]}, [9], 4]
    assert M.pages_from_hits(hits) == [4, 5, 2, 7, 9]
    assert M.pages_from_hits(hits, limit=3) == [4, 5, 2]

    class Hit:
        pages = (3,)

    assert M.pages_from_hits([Hit()]) == [3]
    with pytest.raises(ConfigError, match="pages"):
        M.pages_from_hits([{"text": "no pages"}])


def test_passage_level_units():
    evidence = [
        {"page": 3, "text": "Net revenue increased 12 percent to 4.2 billion driven by volume growth"},
        {"page": 8, "text": "Capital expenditures were 1,577 million in fiscal 2018"},
    ]
    hits = [
        {"pages": [1], "text": "Unrelated discussion of the board of directors"},
        {"pages": [8], "text": "Cash flows. Capital expenditures were 1,577 million in fiscal 2018, up from"},
        {"pages": [2], "text": "Net revenue increased 12 percent to 4.2 billion driven by volume growth"},  # wrong page
        {"pages": [3], "text": "net revenue increased 12 percent to 4.2 billion, driven by volume growth."},
    ]
    units = M.passages_from_hits(hits, evidence)
    assert units == ["hit:0", "e1", "hit:2", "e0"]
    assert M.passages_from_hits(hits, evidence, check_page=False)[:3] == ["hit:0", "e1", "e0"]
    s = M.evaluate({"q": units}, {"q": ["e0", "e1"]}, ["recall_all@4", "map"])
    assert s.mean["recall_all@4"] == 1.0 and s.mean["map"] == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert M.evidence_overlap("", "x y z") == 0.0


# --- ranx oracle ----------------------------------------------------------------
ORACLE = [
    ("map", "map"),
    ("map@5", "map@5"),
    ("mrr", "mrr"),
    ("mrr@3", "mrr@3"),
    ("precision@1", "precision@1"),
    ("precision@5", "precision@5"),
    ("recall@1", "recall@1"),
    ("recall@5", "recall@5"),
    ("recall@10", "recall@10"),
    ("recall_any@5", "hit_rate@5"),
    ("ndcg@10", "ndcg@10"),
    ("ndcg@3", "ndcg@3"),
]


def _random_case(rng: random.Random, graded: bool):
    run, qrels = {}, {}
    for q in range(40):
        pool = [f"p{i}" for i in range(30)]
        rng.shuffle(pool)
        n = rng.randint(0, 15)
        # strictly decreasing scores: ranx and we must see the same order
        run[f"q{q}"] = {d: 100.0 - i - rng.random() * 0.5 for i, d in enumerate(pool[:n])}
        rel = rng.sample(pool, rng.randint(1, 4))
        qrels[f"q{q}"] = {d: (rng.randint(1, 3) if graded else 1) for d in rel}
    return run, qrels


@pytest.mark.parametrize("graded", [False, True])
def test_metrics_agree_with_ranx(graded):
    ranx = pytest.importorskip("ranx")
    rng = random.Random(11 + graded)
    run, qrels = _random_case(rng, graded)
    ours = M.evaluate(run, qrels, [a for a, _ in ORACLE])
    # ranx needs a non-empty run per query; an empty ranking scores 0 everywhere
    rrun = {q: (r if r else {"__none__": 0.0}) for q, r in run.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(rrun), [b for _, b in ORACLE], return_mean=False,
                               make_comparable=True)
    qids = list(qrels)  # ranx orders queries by id
    order = sorted(range(len(qids)), key=lambda i: qids[i])
    for a, b in ORACLE:
        for pos, i in enumerate(order):
            assert ours.per_query[qids[i]][a] == pytest.approx(float(theirs[b][pos]), abs=1e-9), (a, qids[i])
        assert ours.mean[a] == pytest.approx(float(theirs[b].mean()), abs=1e-9)


def test_recall_all_against_its_definition_on_random_runs():
    rng = random.Random(5)
    run, qrels = _random_case(rng, False)
    s = M.evaluate(run, qrels, ["recall_all@5", "recall@5"])
    for q, rel in qrels.items():
        ranked = sorted(run[q], key=lambda d: -run[q][d])[:5]
        assert s.per_query[q]["recall_all@5"] == float(set(rel) <= set(ranked))
        # all-hit implies recall 1
        if s.per_query[q]["recall_all@5"] == 1.0:
            assert s.per_query[q]["recall@5"] == 1.0
