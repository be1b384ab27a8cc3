"""The index / query / train-ranker / demo sub-commands, through structrag's real CLI."""

from __future__ import annotations

import json
import sys

import pytest

from structrag.cli import main
from indexutil import lexical_index, make_report, write_queries


@pytest.fixture(scope="module")
def cli_index(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    return d, lexical_index(d)


def test_index_reports_and_is_idempotent(cli_index, capsys):
    d, out = cli_index
    capsys.readouterr()
    assert main(["index", str(d / "pdfs"), "--out", str(out), "--no-dense", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["unchanged"] == ["acme.pdf", "globex.pdf"] and rep["added"] == [] and rep["documents"] == 2
    assert rep["chunks"] == 10 and rep["dense_model"] is None


def test_query_json_shape(cli_index, capsys):
    _, out = cli_index
    capsys.readouterr()
    assert main(["query", str(out), "capital expenditures in 2024", "--mode", "bm25", "-k", "3", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert 1 <= len(hits) <= 3
    for h in hits:
        assert set(h) == {"doc", "chunk_id", "pages", "section_path", "score", "text", "identity"}
        assert isinstance(h["section_path"], list) and all(p >= 1 for p in h["pages"])
    assert hits[0]["doc"] == "acme.pdf" and hits[0]["pages"] == [2]  # 1-based
    assert hits[0]["section_path"][-1] == "Liquidity and Capital Resources"


def test_query_human_view_and_doc_filter(cli_index, capsys):
    _, out = cli_index
    capsys.readouterr()
    assert main(["query", str(out), "dividends", "--mode", "bm25", "--doc", "globex.pdf"]) == 0
    text = capsys.readouterr().out
    assert "globex.pdf  p. 2" in text and "Shareholder Returns" in text and "acme.pdf" not in text


def test_query_errors_exit_2(cli_index, tmp_path, capsys):
    _, out = cli_index
    capsys.readouterr()
    assert main(["query", str(tmp_path), "x"]) == 2
    assert "not a structrag index" in capsys.readouterr().err
    assert main(["query", str(out), "x", "--doc", "nope.pdf", "--mode", "bm25"]) == 2
    assert "no document named 'nope.pdf'" in capsys.readouterr().err
    assert main(["query", str(out), "x", "--mode", "dense"]) == 2
    assert "pip install structrag[dense]" in capsys.readouterr().err


def test_train_ranker_then_ranker_mode(cli_index, tmp_path, capsys):
    _, out = cli_index
    q = write_queries(tmp_path / "q.jsonl")
    model = tmp_path / "m.txt"
    assert main(["train-ranker", str(q), "--index", str(out), "--out", str(model), "--trees", "20",
                 "--candidates", "20"]) == 0
    assert "trained on 5 queries" in capsys.readouterr().out
    meta = json.loads(model.with_suffix(".json").read_text())
    assert meta["features"][:2] == ["pos", "pos_ratio"] and "bm25_z" in meta["features"]  # the portable set
    assert len(meta["metadata"]["queries_sha1"]) == 40
    # trained without --use: a new model file, and the index keeps the shipped ranker (and says so)
    assert main(["train-ranker", str(q), "--index", str(out), "--trees", "20", "--candidates", "20"]) == 0
    said = capsys.readouterr()
    assert not (out / "ranker.txt").exists() and (out / "rankers" / "q.txt").exists()
    assert "the index ranks with the ranker shipped with structrag" in said.out
    assert "5 queries are few for a ranker" in said.err
    assert main(["query", str(out), "risks faced by Globex", "--json", "-k", "2",
                 "--ranker", str(out / "rankers" / "q.txt")]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["doc"] == "globex.pdf"
    assert main(["train-ranker", str(q), "--index", str(out), "--trees", "20", "--candidates", "20", "--use"]) == 0
    assert (out / "ranker.txt").exists() and "the index ranks with its own model" in capsys.readouterr().out
    assert main(["query", str(out), "risks faced by Globex", "--json", "-k", "2"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["doc"] == "globex.pdf"


def test_index_bad_input_exit_code(tmp_path, capsys):
    bad = tmp_path / "bad.pdf"
    bad.write_text("no pdf here")
    assert main(["index", str(bad), "--out", str(tmp_path / "ix"), "--no-dense"]) == 2
    assert "bad.pdf" in capsys.readouterr().err


def test_demo_with_a_given_pdf(tmp_path, capsys):
    pdf = make_report(tmp_path / "acme.pdf")
    args = ["demo", str(pdf), "How much were capital expenditures in 2024?", "--cache", str(tmp_path / "c"),
            "--mode", "bm25", "-k", "2", "--no-dense"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "acme.pdf: 3 pages" in text and "Liquidity and Capital Resources" in text
    assert main(args + ["--json"]) == 0  # the second run reuses the cached index
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["pages"] == [2]


def test_demo_without_the_shared_report(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("STRUCTRAG_SHARED_DATA", str(tmp_path))
    import retrievers.demo as rc

    monkeypatch.setattr(rc, "_shared_data_dirs", lambda: [tmp_path])
    assert main(["demo", "--cache", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert "3M_2018_10K.pdf was not found" in err and "STRUCTRAG_SHARED_DATA" in err


def test_demo_on_the_shared_report(shared_data, tmp_path, capsys):
    """The README's main job: index a real 10-K and answer a question offline."""
    from pathlib import Path

    import structrag.levels

    # the 10-K has no outline: its headings are levelled by the shipped learned model
    if not (Path(structrag.levels.__file__).parent / "models" / "levels.txt").exists():
        pytest.skip("the learned level model is not in this checkout yet (structrag/levels/models/levels.txt)")
    assert main(["demo", "--cache", str(tmp_path), "--no-progress", "--mode", "bm25"]) == 0
    out = capsys.readouterr().out
    assert "3M_2018_10K.pdf: 160 pages" in out and "question:" in out and " 1. 3M_2018_10K.pdf" in out


def test_index_with_the_layout_model_stores_the_option(tmp_path, capsys):
    from retrievers import Index

    pdf = make_report(tmp_path / "acme.pdf")
    assert main(["index", str(pdf), "--out", str(tmp_path / "ix"), "--no-dense", "--layout-model", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] == 1
    with Index.open(tmp_path / "ix") as index:
        assert index.parse_options.layout_model is True


def test_index_says_what_it_found_and_each_failure_once(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["index", str(empty), "--out", str(tmp_path / "ix0"), "--no-dense"]) == 2
    err = capsys.readouterr().err
    assert "no PDF files found" in err and str(empty) in err
    pdf = make_report(tmp_path / "acme.pdf")
    odd = tmp_path / "missing\x1b[31m.pdf"  # a file name carrying a terminal escape
    assert main(["index", str(pdf), str(odd), "--out", str(tmp_path / "ix"), "--no-dense"]) == 1
    out = capsys.readouterr()
    assert "1 document, " in out.out and "1 documents" not in out.out
    assert out.err.count("missing") == 1 and "\x1b" not in out.err and "\\x1b" in out.err


@pytest.mark.parametrize("workers", ["1", "2"])
def test_index_progress_counts_pages_and_stays_quiet_when_piped(tmp_path, workers):
    import subprocess

    import pymupdf

    a, b = make_report(tmp_path / "a.pdf"), make_report(tmp_path / "b.pdf", extra="Globex's own page.")

    pages = sum(pymupdf.open(p).page_count for p in (a, b))
    argv = [sys.executable, "-m", "structrag.cli", "index", str(a), str(b), "--no-dense", "--workers", workers]
    shown = subprocess.run(argv + ["--out", str(tmp_path / "ix1"), "--progress"], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert f"/{pages} [" in shown.stderr and "page/s" in shown.stderr  # a bar by pages, to its end
    piped = subprocess.run(argv + ["--out", str(tmp_path / "ix2")], capture_output=True, text=True)
    assert piped.returncode == 0 and "page/s" not in piped.stderr and "%|" not in piped.stderr
