"""Level predictors on real PDFs made with PyMuPDF, the `levels` CLI and the shipped model."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pymupdf")

from pdfgen import headings_pdf  # noqa: E402
from structrag.cli import main  # noqa: E402
from structrag.cli.levels import read_reference_headings  # noqa: E402
from structrag.levels.references import headings_for_reference  # noqa: E402
from structrag.errors import ReferenceFormatError  # noqa: E402
from structrag.extraction import extract  # noqa: E402
from structrag.levels import assign_levels, check_levels  # noqa: E402
from structrag.levels.learned import LearnedPredictor, default_model_path, load_booster, model_metadata  # noqa: E402

BODY = ("This paragraph is ordinary body text that runs across the page so that the document has a clear "
        "body style, which the heading detector and the level predictors compare headings against.")

# (text, size, bold, level)
NUMBERED = [
    ("1 Introduction", 18, True, 1), ("1.1 Scope", 14, True, 2), ("1.1.1 Definitions", 12, True, 3),
    ("1.1.2 Notation", 12, True, 3), ("1.2 Background", 14, True, 2), ("2 Method", 18, True, 1),
    ("2.1 Data", 14, True, 2), ("2.1.1 Sources", 12, True, 3), ("2.2 Model", 14, True, 2),
    ("3 Results", 18, True, 1), ("3.1 Accuracy", 14, True, 2), ("3.2 Speed", 14, True, 2),
]
# numbering and size disagree: "2.1" and "2.2" are printed as large as the chapters
DISAGREE = [
    ("1 Overview", 18, True, 1), ("1.1 Goals", 14, True, 2), ("1.2 Limits", 14, True, 2),
    ("2 Design", 18, True, 1), ("2.1 Storage", 18, True, 2), ("2.2 Transport", 18, True, 2),
    ("3 Outlook", 18, True, 1),
]


@pytest.fixture(scope="module")
def numbered(tmp_path_factory):
    p = tmp_path_factory.mktemp("levels") / "numbered.pdf"
    recs = headings_pdf(p, BODY, NUMBERED)
    return p, recs, extract(p, progress=False)


@pytest.fixture(scope="module")
def disagree(tmp_path_factory):
    p = tmp_path_factory.mktemp("levels") / "disagree.pdf"
    recs = headings_pdf(p, BODY, DISAGREE, per_page=4)
    return p, recs, extract(p, progress=False)


def _run(doc_fixture, predictor, **kw):
    _, recs, document = doc_fixture
    hs = headings_for_reference(recs, document)
    return assign_levels(document, hs, predictor=predictor, **kw)


def test_reference_headings_take_the_printed_style(numbered):
    _, recs, document = numbered
    hs = headings_for_reference(recs, document)
    assert [h.text for h in hs] == [r["text"] for r in recs]
    assert [round(h.size) for h in hs] == [s for _, s, _, _ in NUMBERED]
    assert all(h.bold for h in hs)
    assert hs[1].numbering is not None and hs[1].numbering.values == (1, 1)


@pytest.mark.parametrize("predictor", ["learned", "rules", "font-size", "size-rank", "numbering"])
def test_every_predictor_reads_a_clean_numbered_document(numbered, predictor):
    res = _run(numbered, predictor)
    assert [h.level for h in res.headings] == [lv for *_, lv in NUMBERED]


@pytest.mark.parametrize("memory", ["recent", "previous-n", "random", "branches"])
@pytest.mark.parametrize("granularity", ["heading", "page", 2])
def test_learned_is_valid_under_every_memory_and_granularity(numbered, memory, granularity):
    res = _run(numbered, "learned", memory=memory, granularity=granularity)
    assert check_levels([h.level for h in res.headings], 0) is None
    assert {h.level_source for h in res.headings} <= {"model", "projected"}
    assert all(0.0 <= h.confidence <= 1.0 for h in res.headings)


def test_numbering_beats_size_where_they_disagree(disagree):
    want = [lv for *_, lv in DISAGREE]
    assert [h.level for h in _run(disagree, "rules").headings] == want
    assert [h.level for h in _run(disagree, "numbering").headings] == want
    assert [h.level for h in _run(disagree, "learned").headings] == want
    fs = [h.level for h in _run(disagree, "font-size").headings]
    assert fs[4] == 1 and fs != want  # the font-size tree takes "2.1" for a chapter


def test_levels_cli(numbered, tmp_path, capsys):
    pdf, recs, _ = numbered
    ref = tmp_path / "ref.json"
    ref.write_text(json.dumps(recs))
    assert main(["levels", str(ref), "--pdf", str(pdf), "--predictor", "rules", "--memory", "branches"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [o["level"] for o in out] == [lv for *_, lv in NUMBERED]
    assert [o["page"] for o in out] == [r["page"] for r in recs]
    assert all(o["source"] == "rules" and 0 <= o["confidence"] <= 1 for o in out)
    dest = tmp_path / "out.json"
    assert main(["levels", str(ref), "--pdf", str(pdf), "--granularity", "2", "-o", str(dest)]) == 0
    assert [o["level"] for o in json.loads(dest.read_text())] == [lv for *_, lv in NUMBERED]


def test_levels_cli_rejects_bad_reference(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"text": "x", "page": 0, "bbox": None}]))
    with pytest.raises(ReferenceFormatError, match="1-based"):
        read_reference_headings(bad)
    assert main(["levels", str(bad)]) == 2
    assert "bad.json" in capsys.readouterr().err


def test_levels_cli_without_pdf_uses_text_only(tmp_path, capsys):
    ref = tmp_path / "ref.json"
    ref.write_text(json.dumps({"headings": [{"text": t, "page": 1, "bbox": None} for t, *_ in NUMBERED]}))
    assert main(["levels", str(ref), "--predictor", "numbering"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [o["level"] for o in out] == [lv for *_, lv in NUMBERED]


def test_shipped_model_loads_and_is_documented():
    path = default_model_path()
    assert path.is_file(), "the learned model must ship in the package"
    booster = load_booster(path)
    assert booster.num_trees() > 10
    meta = model_metadata()
    assert meta["seed"] == 0 and len(meta["documents"]) >= 10
    assert all(len(d["pdf_sha1"]) == 40 and len(d["toc_sha1"]) == 40 for d in meta["documents"])
    assert meta["features"] == list(booster.feature_name())


def test_learned_rejects_a_foreign_model(tmp_path):
    import lightgbm as lgb
    import numpy as np

    X = np.random.default_rng(0).random((50, 3))
    b = lgb.train({"objective": "binary", "verbosity": -1}, lgb.Dataset(X, label=(X[:, 0] > 0.5)), 2)
    p = tmp_path / "other.txt"
    b.save_model(str(p))
    from structrag.errors import ModelError

    with pytest.raises(ModelError, match="features"):
        LearnedPredictor(p)
    with pytest.raises(ModelError, match="not found"):
        LearnedPredictor(tmp_path / "missing.txt")
