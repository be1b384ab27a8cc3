"""The pure parts of ``eval/bench/learned_detector.py``: reasons as features, held-out families, scoring.

No shared data needed: documents are built here in the shape :func:`collect` returns.
"""

from __future__ import annotations

import math

import pytest

from eval.bench import learned_detector as L
from structrag.model import Heading


def test_reason_names_lose_their_variable_part():
    rv = L.reason_values(("size x1.22 +1.6", "body style (31% of text) -2.0", "4 lines -1.5", "numbered decimal +0.9",
                          "repeated on 12 pages -1.5", "the page's body style (61% of its text) -2.0", "odd +0.3"))
    assert rv["size"] == pytest.approx(1.6) and rv["body style"] == pytest.approx(-2.0)
    assert rv["lines"] == pytest.approx(-1.5) and rv["numbered"] == pytest.approx(0.9)
    assert rv["repeated on pages"] == pytest.approx(-1.5) and rv["the page's body style"] == pytest.approx(-2.0)
    assert rv["other"] == pytest.approx(0.3)


def test_features_have_one_column_per_name():
    heads = [Heading(text="Item 7. Results:", page=2, bbox=(10, 20, 100, 30), block=0, block_end=1, score=3.2,
                     reasons=("bold +1.3", "ends with a colon -0.4")),
             Heading(text="OVERVIEW", page=2, bbox=(10, 50, 100, 60), block=1, block_end=2, source="contents")]
    rows = L.features(heads, page_count=5)
    assert len(rows) == 2 and all(len(r) == len(L.FEATURES) for r in rows)
    col = dict(zip(L.FEATURES, rows[0]))
    assert col["colon"] == 1.0 and col["r:bold"] == pytest.approx(1.3) and col["on_page"] == 2.0
    assert dict(zip(L.FEATURES, rows[1]))["contents"] == 1.0 and dict(zip(L.FEATURES, rows[1]))["rank_on_page"] == 1.0


def _doc(name, family, xs, ys, labels):
    heads = [(0, f"h{k}") for k in range(len(xs))]
    return {"doc": name, "family": family, "labelled": bool(labels), "x": xs, "y": ys, "heads": heads,
            "labels": labels, "sha1": "s", "ref": []}


def test_a_held_out_family_is_scored_by_a_model_that_never_saw_it():
    # heading-like rows have a high first column; table-like rows a low one, in every family
    def rows(n, hi):
        return [[(3.0 if hi else -1.0) + 0.01 * k] + [0.0] * (len(L.FEATURES) - 1) for k in range(n)]

    docs = []
    for fam in ("a", "b", "c"):
        xs = rows(6, True) + rows(6, False)
        ys = [1] * 6 + [0] * 6
        labels = [{"page": 0, "text": f"h{k}", "label": k < 6} for k in range(12)]
        docs.append(_doc(f"{fam}.pdf", fam, xs, ys, labels))
    res = L.run(docs)
    assert res["families"] == ["a", "b", "c"] and len(res["rows"]) == 3
    for r in res["rows"]:
        assert r["rules"]["precision"] == pytest.approx(0.5)  # the rules keep all twelve
        assert r["learned"]["precision"] == pytest.approx(1.0) and r["learned"]["lost_true"] == 0
    assert res["precision_gain"]["mean"] == pytest.approx(0.5)
    assert math.isnan(res["learned_outline_recall"]["macro"]) or res["learned_outline_recall"]["docs"] == 0


def test_family_falls_back_to_the_issuer():
    assert L.family_of("3M_2018_10K", {}) == "3m"
    assert L.family_of("AES_2020_10_K", {"AES_2020_10_K": "aes-filings"}) == "aes-filings"
