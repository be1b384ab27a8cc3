"""The pure parts of ``eval/bench/precision.py``: matching labels, precision arithmetic, sampling, the baseline.

No shared data needed; the labelled set itself is only checked for shape.
"""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from eval.bench import precision as P


def lab(page, text, label, source="layout:style", category=None):
    return {"doc": "d.pdf", "sha1": "s", "page": page, "text": text, "source": source, "label": label,
            "category": category, "note": ""}


# --------------------------------------------------------------------------- matching


def test_match_on_normalised_text_and_page():
    labels = [lab(3, "Item 7. Management’s Discussion", True), lab(4, "Total assets", False)]
    m = P.match_labels([(3, "ITEM 7 — MANAGEMENT'S DISCUSSION"), (5, "Total assets")], labels, "s")
    assert [x["text"] for x in m["kept"]] == ["Item 7. Management’s Discussion"]
    assert [x["text"] for x in m["lost"]] == ["Total assets"]  # same text, other page: not the same heading
    assert m["unlabelled"] == 1


def test_match_is_a_multiset():
    labels = [lab(9, "Officers", True), lab(9, "Officers", False)]
    m = P.match_labels([(9, "Officers")], labels, "s")
    assert len(m["kept"]) == 1 and len(m["lost"]) == 1 and m["unlabelled"] == 0
    m = P.match_labels([(9, "Officers")] * 3, labels, "s")
    assert len(m["kept"]) == 2 and not m["lost"] and m["unlabelled"] == 1


def test_match_nothing_detected_and_no_labels():
    m = P.match_labels([], [lab(1, "A", True)], "s")
    assert not m["kept"] and len(m["lost"]) == 1 and m["unlabelled"] == 0
    m = P.match_labels([(1, "A")], [], "s")
    assert not m["kept"] and not m["lost"] and m["unlabelled"] == 1


def test_label_key_folds_case_punctuation_and_page_type():
    assert P.label_key("s", "2", "NOTE 5 — Leases") == P.label_key("s", 2, "Note 5. leases")


# --------------------------------------------------------------------------- arithmetic


def test_precision_and_empty_case():
    assert P.precision([lab(0, "a", True), lab(0, "b", False), lab(0, "c", True), lab(0, "d", True)]) == 0.75
    assert math.isnan(P.precision([]))
    assert P.precision([lab(0, "a", False)]) == 0.0


def test_macro_skips_nan():
    assert P.macro([1.0, float("nan"), 0.5]) == 0.75
    assert math.isnan(P.macro([float("nan")]))
    assert math.isnan(P.macro([]))


# --------------------------------------------------------------------------- sampling


def test_stratum_names():
    assert P.stratum("contents", ("numbered item +2.0",)) == "contents"
    assert P.stratum("layout", ("size x1.40 +2.3", "numbered decimal +0.9")) == "layout:numbered"
    assert P.stratum("layout", ("size x1.40 +2.3", "bold +1.3")) == "layout:size"
    assert P.stratum("layout", ("bold +1.3", "smaller than body x0.85 -1.5")) == "layout:style"


def test_stratified_sample_floor_proportion_and_seed():
    items = ["a"] * 90 + ["b"] * 8 + ["c"] * 2
    idx = P.stratified_sample(items, 10, key=lambda x: x, seed=1)
    assert len(idx) == 10 and idx == sorted(idx) and len(set(idx)) == 10
    c = Counter(items[i] for i in idx)
    assert c["c"] == 2 and c["b"] >= 2 and c["a"] >= 5
    assert idx == P.stratified_sample(items, 10, key=lambda x: x, seed=1)
    assert idx != P.stratified_sample(items, 10, key=lambda x: x, seed=2)


def test_stratified_sample_small_and_many_strata():
    assert P.stratified_sample(["a", "b"], 5, key=lambda x: x, seed=0) == [0, 1]
    assert P.stratified_sample([], 5, key=lambda x: x, seed=0) == []
    items = list("abcdef")  # six strata, room for three: one each from three of them
    idx = P.stratified_sample(items, 3, key=lambda x: x, seed=0)
    assert len(idx) == 3 and len({items[i] for i in idx}) == 3


# --------------------------------------------------------------------------- the font-size baseline


def test_body_size_mode_and_tie():
    assert P.body_size([(10.0, 500), (12.0, 40), (9.9, 100)]) == 10.0  # 9.9 rounds into the 10.0 bin
    assert P.body_size([(10.0, 50), (12.0, 50)]) == 10.0  # a tie goes to the smaller size
    assert P.body_size([]) == 0.0


def test_font_size_rank_and_selection():
    pages = [[("Annual report", 20.0, 13), ("body text " * 20, 10.0, 200)],
             [("Risk Factors", 12.0, 12), ("more body " * 20, 10.0, 200), ("10", 10.0, 2)]]
    chosen = P.font_size_rank(pages)
    assert chosen == {(0, "annual report"), (1, "risk factors")}
    assert P.baseline_selects(lab(1, "Item 1A. Risk Factors", True), pages[1], chosen)
    assert not P.baseline_selects(lab(0, "Risk Factors", True), pages[0], chosen)  # other page
    assert not P.baseline_selects(lab(1, "10", False), pages[1], chosen)  # body-size line


def test_printed_entries_page_window():
    texts = ["cover", "contents", "item 1 business overview", "risk factors text"]
    entries = [("Item 1. Business", 1, 2), ("Risk Factors", 1, 2), ("Exhibits", 1, 3), ("Nowhere", 1, None)]
    assert P.printed_entries(entries, texts) == [("Item 1. Business", 1, 2), ("Risk Factors", 1, 2)]


# --------------------------------------------------------------------------- the labelled set's shape


def test_labelled_set_shape():
    rows = []
    files = sorted(P.LABELS.parent.glob("heading_precision_labels*.jsonl"))
    assert sorted(f.name for f in files[1:]) == sorted(f"heading_precision_labels_round{k}.jsonl" for k in range(2, 17))
    for f in files:
        got = P.load_labels(f)
        assert len(got) >= 130, f  # rounds 12-14 drew what the earlier rounds left (up to 40 a document, then all)
        rows += got
    # rounds 15 and 16 are documents no earlier round drew from: other years and filings of the same publishers
    first = {r["doc"] for f in files if not f.name.endswith(("round15.jsonl", "round16.jsonl")) for r in P.load_labels(f)}
    later = [{r["doc"] for r in P.load_labels(P.LABELS.parent / f"heading_precision_labels_round{k}.jsonl")}
             for k in (15, 16)]
    assert len(later[0]) == 13 and len(later[1]) == 11 and not (first & later[0] or first & later[1])
    assert later[0] & later[1] == {"3M_2022_10K.pdf"}  # round 16 drew 40 more of the one below 0.90 in round 15
    for r in rows:
        assert set(r) == {"doc", "sha1", "page", "text", "source", "label", "category", "note"}
        assert isinstance(r["label"], bool) and isinstance(r["page"], int) and len(r["sha1"]) == 40
        assert (r["category"] is None) == r["label"]
        assert r["label"] or r["category"] in P.CATEGORIES
    keys = Counter(P.label_key(r["sha1"], r["page"], r["text"]) for r in rows)
    assert max(keys.values()) == 1  # one label per heading, across the rounds too (drawn with --exclude)


def _a_set_apart(name: str, labels: int, docs: int, marks: str) -> list[dict]:
    """The label set ``name``'s shape, and no document shared with a set whose file name lacks ``marks``."""
    rows = P.load_labels(P.LABELS.parent / name)
    assert len(rows) == labels and len({r["doc"] for r in rows}) == docs
    for r in rows:
        assert (r["category"] is None) == r["label"] and (r["label"] or r["category"] in P.CATEGORIES)
    others = {r["doc"] for f in P.LABELS.parent.glob("heading_precision_*.jsonl") if marks not in f.name
              for r in P.load_labels(f)}
    assert not others & {r["doc"] for r in rows}
    return rows


def test_labels_on_documents_of_other_families_have_the_same_shape():
    _a_set_apart("heading_precision_dev_other_families.jsonl", 200, 8, "_dev_other_families")


def test_the_development_set_of_other_kinds_has_the_same_shape():
    _a_set_apart("heading_precision_dev_other_kinds.jsonl", 223, 12, "_other_kinds")


def test_the_test_set_of_chinese_prospectuses_has_the_same_shape():
    rows = _a_set_apart("heading_precision_test_prospectus_zh.jsonl", 90, 3, "_prospectus_zh")
    assert Counter(r["doc"] for r in rows) == Counter({r["doc"]: 30 for r in rows})
    assert "prospectus-zh" in P.SEARCH  # the benchmark finds them in the shared data's folder


def test_the_test_set_of_other_families_shares_no_document_with_any_other_label_set():
    _a_set_apart("heading_precision_test_other_families.jsonl", 153, 8, "test_other_families")


def test_a_proportional_draw_has_no_floor():
    items = ["a"] * 18 + ["b"] * 2
    picked = P.stratified_sample(items, 10, key=lambda x: x, seed=1, floor=0)
    assert len(picked) == 10 and sum(items[i] == "b" for i in picked) == 1  # 2 of 20 -> 1 of 10
    floored = P.stratified_sample(items, 10, key=lambda x: x, seed=1)
    assert sum(items[i] == "b" for i in floored) == 2


@pytest.mark.parametrize("argv", [["--labels", "/nonexistent/labels.jsonl"]])
def test_main_without_labels(argv, capsys):
    assert P.main(argv) == 2


def test_weighted_precision_reweights_strata():
    labels = [lab(0, "a", True, "contents"), lab(0, "b", True, "contents"),
              lab(0, "c", False, "layout:style"), lab(0, "d", True, "layout:style")]
    assert P.precision(labels) == 0.75
    # the detector's mix: 1 contents heading for 3 style ones
    assert P.weighted_precision(labels, {"contents": 10, "layout:style": 30}) == pytest.approx(0.25 * 1 + 0.75 * 0.5)
    # a stratum with labels but no detections now is left out, the weights renormalised
    assert P.weighted_precision(labels, {"layout:style": 5, "layout:size": 7}) == 0.5
    assert math.isnan(P.weighted_precision(labels, {}))
    assert math.isnan(P.weighted_precision([], {"contents": 3}))


def test_second_judgement_of_round_4_covers_the_same_headings():
    first = P.load_labels(P.LABELS.parent / "heading_precision_labels_round4.jsonl")
    second = P.load_labels(P.LABELS.parent / "heading_precision_agreement_round4.jsonl")
    key = lambda r: P.label_key(r["sha1"], r["page"], r["text"])  # noqa: E731
    assert sorted(map(key, first)) == sorted(map(key, second))
    for r in second:
        assert isinstance(r["label"], bool) and (r["category"] is None) == r["label"]
        assert r["label"] or r["category"] in P.CATEGORIES


# --------------------------------------------------------------------------- a flat folder of PDFs


def _two_section_pdf(path) -> None:
    import pymupdf

    body = "The body text of this section goes on for a while, as body text does in a report. " * 2
    with pymupdf.open() as pdf:
        for title in ("1 Introduction", "2 Methods"):
            page = pdf.new_page()
            page.insert_text((72, 90), title, fontsize=18, fontname="hebo")
            y = 130
            for _ in range(12):
                page.insert_text((72, y), body[:90], fontsize=10)
                y += 14
        pdf.save(path)


def test_data_may_name_a_flat_folder_of_pdfs(tmp_path):
    # the many-publisher corpus build keeps <doc_id>.pdf at its top level, no headings/ or retrieval/pdfs/
    pdf = tmp_path / "flat--doc--000000.pdf"
    _two_section_pdf(pdf)
    assert P.find_pdf(tmp_path, pdf.name) == pdf
    assert P.find_pdf(tmp_path, "absent.pdf") is None
    _, heads = P.detect(pdf)
    sha1 = P.sha1_of(pdf)
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"doc": pdf.name, "sha1": sha1, "page": h.page, "text": h.text,
                                          "source": P.stratum(h.source, h.reasons), "label": True,
                                          "category": None, "note": ""}) + "\n" for h in heads))
    out = tmp_path / "out.json"
    assert P.main(["--data", str(tmp_path), "--labels", str(labels), "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["missing"] == [] and [r["doc"] for r in res["rows"]] == [pdf.name]
    assert res["rows"][0]["kept"] == len(heads) >= 2 and res["precision"]["macro"] == 1.0


def test_the_first_corpus_round_has_the_same_shape():
    rows = _a_set_apart("heading_precision_corpus_round1.jsonl", 350, 35, "_corpus_")
    assert Counter(r["doc"] for r in rows) == Counter({r["doc"]: 10 for r in rows})


def test_the_second_corpus_round_has_the_same_shape_and_no_document_of_the_first():
    rows = _a_set_apart("heading_precision_corpus_round2.jsonl", 360, 36, "_corpus_")
    assert Counter(r["doc"] for r in rows) == Counter({r["doc"]: 10 for r in rows})
    first = {r["doc"] for r in P.load_labels(P.LABELS.parent / "heading_precision_corpus_round1.jsonl")}
    assert not first & {r["doc"] for r in rows}  # held out by document from round 1
