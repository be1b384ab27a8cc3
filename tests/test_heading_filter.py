"""The learned heading filter (issue 47): its features, its labels for training, and the shipped model on a
generated PDF whose ruled table the rules take a line of for a heading."""

from __future__ import annotations

import pymupdf
import pytest

from eval.bench.heading_filter_data import synthetic_labels
from structrag.errors import ConfigError
from structrag.extraction import extract
from structrag.headings.filter_features import FEATURES, document_drawings, heading_features
from structrag.model import Heading
from structrag.options import ParseOptions
from structrag.pipeline import detect_headings

from pdfgen import ruled_table_report

TABLE_WORDS = ("2024", "Retail Banking", "Corporate Lending", "Deposits", "Group Total")


def _table_line(text: str) -> bool:
    return any(w in text for w in TABLE_WORDS)


def test_the_filter_drops_a_tables_lines_and_keeps_the_real_headings(tmp_path):
    doc = extract(ruled_table_report(tmp_path / "t.pdf"))
    rules = [h.text for h in detect_headings(doc, outline="ignore")]
    assert any(_table_line(t) for t in rules)  # the rules alone take the header row for a heading
    kept = [h.text for h in detect_headings(doc, outline="ignore", heading_filter=True)]
    assert not any(_table_line(t) for t in kept)
    assert kept == ["Annual Review", "Segment Results", "Outlook"]


def test_the_option_is_checked():
    assert ParseOptions().resolved()["heading_filter"] is False  # off unless asked for
    with pytest.raises(ConfigError, match="heading_filter must be True or False"):
        ParseOptions(heading_filter="yes")


def test_features_see_the_tables_rules_and_figures(tmp_path):
    path = ruled_table_report(tmp_path / "t.pdf")
    doc = extract(path)
    heads = detect_headings(doc, outline="ignore")
    with pymupdf.open(path) as pdf:
        drawn = document_drawings(pdf, [h.page for h in heads])
    rows = heading_features(doc, heads, drawn)
    assert len(rows) == len(heads) and all(len(r) == len(FEATURES) for r in rows)
    cols = [dict(zip(FEATURES, r)) for r in rows]
    table = next(c for h, c in zip(heads, cols) if _table_line(h.text))
    title = next(c for h, c in zip(heads, cols) if h.text == "Segment Results")
    assert table["rules_near"] >= 1 and table["rules_below"] >= 3  # ruled under every row
    assert title["rules_near"] == 0
    assert table["next_rows"] == 1.0 and title["next_rows"] == 0.0  # figures rows follow the header row
    assert table["page_rows"] > 0.1
    # without the drawings the ruling features are zero, the others unchanged
    plain = [dict(zip(FEATURES, r)) for r in heading_features(doc, heads, None)]
    assert plain[0]["rules_page"] == 0 and plain[0]["size_rel"] == cols[0]["size_rel"]


def _h(text: str, page: int) -> Heading:
    return Heading(text=text, page=page, bbox=(0, 0, 10, 10), block=0, block_end=1)


def test_synthetic_labels_true_negative_and_unknown():
    toc = [[1, "Risk Management", 2], [2, "Credit Risk in Retail Lending", 3]]
    negatives = [{"text": "Table 3 Exposure by segment", "page": 3, "kind": "table_header"}]
    heads = [_h("Risk Management", 1), _h("Table 3 Exposure by segment", 2), _h("Credit Risk", 2),
             _h("At a glance", 4)]
    # a toc title; a negative line; a piece of a true heading (no evidence); any other detected heading
    assert synthetic_labels(heads, toc, negatives) == [1, 0, None, 0]


def _doc(name, family, origin, xs, ys, eval_labels=()):
    heads = [[0, f"h{k}", "layout"] for k in range(len(xs))]
    return {"doc": name, "family": family, "origin": origin, "label": "outline", "sha1": "s", "x": xs, "y": ys,
            "heads": heads, "ref": [], "eval_labels": list(eval_labels), "baseline": [True] * len(eval_labels)}


def test_publishers_are_held_out_and_the_threshold_comes_from_training_folds():
    from eval.bench import heading_filter as HF

    def rows(n, hi):  # heading-like rows high in the first column, table-like rows low, in every family
        return [[(3.0 if hi else -1.0) + 0.01 * k] + [0.0] * (len(FEATURES) - 1) for k in range(n)]

    docs = [_doc(f"s{k}.pdf", f"synthetic:style{k}", "synthetic", rows(8, True) + rows(8, False), [1] * 8 + [0] * 8)
            for k in range(3)]
    for k in range(8):
        labs = [{"page": 0, "text": f"h{j}", "label": j < 8, "round": "round2"} for j in range(16)]
        docs.append(_doc(f"c{k}.pdf", f"corpus:pub{k}", "corpus", rows(8, True) + rows(8, False),
                         [1] * 8 + [None] * 8, labs))
    res = HF.run(docs, folds=3, recall=0.98)
    assert {r["doc"] for r in res["rows"]} == {f"c{k}.pdf" for k in range(8)}  # synthetic documents never scored
    for r in res["rows"]:
        assert r["fold"] == HF.fold(next(d for d in docs if d["doc"] == r["doc"]), 3)
    r2 = res["rounds"]["round2"]
    assert r2["rules"]["macro"] == pytest.approx(0.5) and r2["filter"]["macro"] == pytest.approx(1.0)
    assert r2["filter"]["lost_true"] == 0 and r2["filter"]["removed_false"] == 8 * 8
    assert all(0.0 < t < 1.0 for t in res["thresholds"].values())


def test_a_model_saved_for_other_features_is_refused_with_the_fix(tmp_path):
    import json

    from structrag.errors import ModelError
    from structrag.headings.learned_filter import filter_model_files

    (tmp_path / "heading_filter.json").write_text(json.dumps({"features": ["only_one"], "threshold": 0.5}))
    with pytest.raises(ModelError, match="other features") as e:
        filter_model_files(tmp_path)
    assert "heading_filter --save" in (e.value.hint or "")
