"""Runners and the `structrag eval` CLI on PDFs generated with PyMuPDF (real extraction, real index)."""

from __future__ import annotations

import json

import pymupdf
import pytest
from pdfgen import PDFBuilder

from eval import runners
from eval.cli import _method_options
from structrag.cli import main
from structrag.errors import ConfigError

BODY = ("Body text of this section runs along the whole line, long enough to look like a paragraph of a "
        "report, with ordinary words about revenue, costs and the outlook for the coming year.")
TOPICS = ["Revenue growth", "Operating costs", "Capital expenditure", "Liquidity", "Risk factors", "Outlook"]


def make_report_pdf(path, n_chapters=3):
    """Chapters (18 pt bold) with two sections (13 pt bold) each, one page per chapter; outline set."""
    b = PDFBuilder(footer=None)
    toc = []
    for c in range(n_chapters):
        b.new_page()
        title = f"{c + 1} {TOPICS[c % len(TOPICS)]}"
        b.heading(title, size=18)
        toc.append([1, title, c + 1])
        for s in range(2):
            b.para(BODY)
            sub = f"{c + 1}.{s + 1} {TOPICS[(c + s + 1) % len(TOPICS)]} in detail"
            b.heading(sub, size=13)
            toc.append([2, sub, c + 1])
            b.para(f"The {TOPICS[(c + s + 1) % len(TOPICS)].lower()} figure for chapter {c + 1} "
                   f"was {100 + 10 * c + s} million. " + BODY)
    b.save(path, toc=toc)
    return toc


def _head_commit():
    """HEAD of the checkout the eval package is imported from, read here independently (None without git)."""
    import subprocess
    from pathlib import Path

    import eval as eval_pkg

    try:
        out = subprocess.run(["git", "-C", str(Path(eval_pkg.__file__).resolve().parents[1]), "rev-parse", "HEAD"],
                             capture_output=True, text=True, timeout=10)
    except OSError:
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and len(sha) == 40 else None


@pytest.fixture(scope="module")
def pdf_folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("pdfs")
    make_report_pdf(d / "alpha.pdf", 3)
    make_report_pdf(d / "beta.pdf", 2)
    return d


def test_headings_level_only_and_outputs(pdf_folder, tmp_path):
    rep = runners.run_headings(pdf_folder, protocol="level-only", methods=["font-size", "numbering", "no-such"],
                               cache_dir=None, progress=False, command="pytest")
    assert rep.methods == ["font-size", "numbering"]
    assert "no-such" in rep.skipped_methods
    s = rep.scores("font-size")
    assert s.n_documents == 2
    # two clean font sizes: the font-size tree recovers the outline exactly
    assert s.micro_steds == 1.0 and s.path_accuracy == 1.0
    assert rep.scores("numbering").parent_accuracy == 1.0
    paths = rep.write(tmp_path / "out")
    names = {p.name for p in paths}
    assert {"headings_level-only.json", "headings_level-only.md", "headings_level-only_teds_vs_pages.png"} <= names
    d = json.loads((tmp_path / "out" / "headings_level-only.json").read_text())
    assert d["provenance"]["command"] == "pytest"
    assert d["provenance"]["commit"] == _head_commit()  # the checkout's commit, None only outside git
    assert d["summary"]["font-size"]["all"]["micro_steds"] == 1.0
    assert (tmp_path / "out" / "headings_level-only_teds_vs_pages.png").read_bytes()[:4] == b"\x89PNG"


def test_headings_end_to_end_detects_and_aligns(pdf_folder):
    rep = runners.run_headings(pdf_folder, protocol="end-to-end", methods=["font-size"], cache_dir=None,
                               progress=False, command="pytest")
    s = rep.scores("font-size")
    assert s.recall > 0.8 and s.aligned_micro_steds > 0.8
    assert "pruned Micro" in rep.to_markdown()


def test_pymupdf4llm_markdown_is_read_end_to_end(pdf_folder, tmp_path):
    pytest.importorskip("pymupdf4llm")
    rep = runners.run_headings(pdf_folder, protocol="end-to-end", methods=["pymupdf4llm-legacy"], doc_ids=["beta"],
                               cache_dir=tmp_path, progress=False, command="pytest")
    assert not rep.errors, rep.errors
    s = rep.per_document["pymupdf4llm-legacy"][0]
    assert s.n_pred > 0 and s.matched > 0
    assert list((tmp_path / "markdown").glob("*_pymupdf4llm-legacy_*.json"))  # cached for the next run
    assert runners.run_headings(pdf_folder, protocol="level-only", methods=["pymupdf4llm-legacy"], cache_dir=None,
                                progress=False).skipped_methods


def test_retrieval_runner_on_a_real_index(pdf_folder, tmp_path):
    from retrievers.index import Index

    idx = Index.build([pdf_folder / "alpha.pdf", pdf_folder / "beta.pdf"], tmp_path / "idx", dense=False,
                      progress=False)
    idx.close()
    qfile = tmp_path / "q.jsonl"
    qs = [
        {"qid": "q1", "query": "capital expenditure figure for chapter 2", "doc": "alpha.pdf", "relevant_pages": [1],
         "source": "a",
         "evidence": [{"page": 1, "text": "The capital expenditure figure for chapter 2 was 120 million."}]},
        {"qid": "q2", "query": "liquidity figure chapter 3", "doc": "alpha.pdf", "relevant_pages": [2], "source": "b",
         "evidence": []},
        {"qid": "q3", "query": "operating costs", "doc": "missing.pdf", "relevant_pages": [0], "source": "b"},
    ]
    qfile.write_text("\n".join(json.dumps(q) for q in qs) + "\n")
    rep = runners.run_retrieval(qfile, tmp_path / "idx", modes=["bm25", "dense"], ks=(1, 3), progress=False,
                                command="pytest")
    assert rep.modes == ["bm25"] and "dense" in rep.skipped_modes
    assert rep.missing_docs == ["missing.pdf"]
    page = rep.scores["page"]["bm25"]
    assert page.n_queries == 3
    assert page.per_query["q1"]["recall_any@1"] == 1.0  # the page says exactly this
    assert page.per_query["q3"]["map"] == 0.0
    assert rep.scores["passage"]["bm25"].n_queries == 1
    assert set(rep.by_source["page"]["bm25"]) == {"a", "b"}
    paths = rep.write(tmp_path / "out")
    assert (tmp_path / "out" / "retrieval_page_recall_at_k.png").exists() and paths
    assert "recall_any@1" in (tmp_path / "out" / "retrieval.md").read_text()
    # both settings: the collection run is reported beside, and another document's page never counts
    both = runners.run_retrieval(qfile, tmp_path / "idx", modes=["bm25"], ks=(1, 3), progress=False, scope="both")
    assert both.modes == ["bm25", "bm25@collection"]
    coll = both.scores["page"]["bm25@collection"]
    assert coll.n_queries == 3 and coll.per_query["q1"]["map"] <= page.per_query["q1"]["map"]
    with pytest.raises(ConfigError, match="scope"):
        runners.run_retrieval(qfile, tmp_path / "idx", modes=["bm25"], scope="everywhere")


def test_speed_runner_measures_in_child_processes(pdf_folder, tmp_path):
    rep = runners.run_speed([pdf_folder / "alpha.pdf"], methods=["get_text", "structrag-parse"], predictor="rules",
                            progress=False, command="pytest")
    assert not rep.errors, rep.errors
    s = rep.summary()
    assert s["get_text"]["pages"] == 3 and s["get_text"]["pages_per_s"] > 0
    assert s["structrag-parse"]["peak_rss_mb"] > 10
    rep.write(tmp_path / "out")
    assert (tmp_path / "out" / "speed_pages_per_s.png").exists()
    with pytest.raises(ConfigError):
        runners.run_speed([pdf_folder / "alpha.pdf"], methods=["magic"])


def test_cli_eval_commands(pdf_folder, tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["eval", "references", str(pdf_folder), "--out", str(out / "refs"), "--no-cache"]) == 0
    assert (out / "refs" / "alpha.ref.json").exists()
    assert main(["eval", "headings", str(pdf_folder), "--predictor", "font-size,rules", "--no-cache",
                 "--no-plots", "--out", str(out / "h"), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "| font-size | all (2) | 1.0000 |" in text
    d = json.loads((out / "h" / "headings_level-only.json").read_text())
    assert d["provenance"]["command"].startswith("structrag eval headings (in-process call: ")
    assert '"predictor": ["font-size,rules"]' in d["provenance"]["command"]
    assert _method_options(["vlm.zoom=1.5", "learned.model_path=m.txt"]) == {"vlm": {"zoom": 1.5},
                                                                             "learned": {"model_path": "m.txt"}}
    with pytest.raises(ConfigError):
        _method_options(["zoom=1"])


def test_vlm_method_runs_against_a_real_loopback_server(pdf_folder, monkeypatch):
    pytest.importorskip("openai")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from openai_server import OpenAIServer, levels_by_title

    truth = {}
    for name in ("alpha", "beta"):
        with pymupdf.open(pdf_folder / f"{name}.pdf") as d:
            truth.update({t: lv for lv, t, _ in d.get_toc()})
    monkeypatch.delenv("STRUCTRAG_MODEL", raising=False)
    assert "vlm" not in runners.default_heading_methods("level-only")
    with OpenAIServer(levels_by_title(truth)) as srv:
        monkeypatch.setenv("STRUCTRAG_BASE_URL", srv.base_url)
        monkeypatch.setenv("STRUCTRAG_MODEL", "test-vlm")
        assert "vlm" in runners.default_heading_methods("level-only")
        rep = runners.run_headings(pdf_folder, protocol="level-only", methods=["vlm"], cache_dir=None,
                                   progress=False)
        assert not rep.errors and rep.methods == ["vlm"]
        assert rep.scores("vlm").micro_steds == 1.0
        assert srv.requests  # the answers really came over HTTP


def test_learned_scores_on_its_training_documents_are_flagged_in_sample(pdf_folder, tmp_path):
    import shutil

    from structrag.files import file_sha1
    from structrag.levels.learned import default_model_path

    model = tmp_path / "levels.txt"
    shutil.copy(default_model_path(), model)
    # metadata as `structrag train-levels` writes it: alpha.pdf was a training document, beta.pdf not
    model.with_suffix(".json").write_text(json.dumps(
        {"documents": [{"doc_id": "alpha", "pdf_sha1": file_sha1(pdf_folder / "alpha.pdf")}]}))
    rep = runners.run_headings(pdf_folder, protocol="level-only", methods=["learned", "font-size"], cache_dir=None,
                               method_options={"learned": {"model_path": str(model)}}, progress=False)
    assert rep.options["in_sample"] == {"learned": ["alpha"]}
    assert "**In-sample:** the `learned` model was trained on 1 of these 2 documents" in rep.to_markdown()
    rep = runners.run_headings(pdf_folder, protocol="level-only", methods=["font-size"], cache_dir=None,
                               progress=False)
    assert rep.options["in_sample"] == {} and "In-sample" not in rep.to_markdown()


def test_report_is_spliced_between_the_markers_of_results_md(tmp_path):
    from eval.report import BEGIN_MARK, END_MARK, splice_report

    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").write_text("# report\n\nsee [refs](references/report.md)\n\n![plot](levels/t.png)\n\n"
                                   "## part\n\n| a |\n|---|\n| 1 |\n\n```bash\n# a comment\n```\n")
    results = tmp_path / "RESULTS.md"
    results.write_text(f"# Results\n\nhand-written\n\n{BEGIN_MARK}\nold text\n{END_MARK}\n\ntrailer\n")
    splice_report(results, out / "report.md")
    text = results.read_text()
    assert "old text" not in text and text.startswith("# Results\n\nhand-written") and text.endswith("\ntrailer\n")
    body = text.split(BEGIN_MARK)[1].split(END_MARK)[0]
    assert "\n### report\n" in body and "\n#### part\n" in body and "| 1 |" in body
    assert f"refs (`{out / 'references/report.md'}`)" in body and "](" not in body
    assert f"(plot: `{out / 'levels/t.png'}`)" in body
    assert "\n# a comment\n" in body  # code-block comments are not demoted
    splice_report(results, out / "report.md")  # idempotent
    assert results.read_text() == text
    results.write_text("no markers")
    with pytest.raises(ConfigError, match="no place for the generated report"):
        splice_report(results, out / "report.md")
    assert results.read_text() == "no markers"
