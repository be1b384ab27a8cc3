"""`structrag toc` as a user runs it: a real subprocess on real PDFs."""

from __future__ import annotations

import json
import subprocess
import sys

import pymupdf
import pytest

from pdfgen import numbered_report


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "structrag.cli", *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    d = tmp_path_factory.mktemp("toc")
    return numbered_report(d / "report.pdf", chapters=2, sections=2, subsections=1, with_toc=True)


def test_text_view(report):
    r = run("toc", report)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("report.pdf: ") and "outline" in lines[0]
    assert lines[1] == "1 Chapter One  (p. 1)"
    assert lines[2] == "  1.1 Section 1.1 results  (p. 1)"
    assert lines[3] == "    1.1.1 Detail 1.1.1 discussion  (p. 1)"
    assert r.stderr == ""  # no progress bar when not on a terminal


def test_json_shape(report):
    r = run("toc", report, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["document"] == "report.pdf" and out["pages"] == pymupdf.open(report).page_count
    h = out["headings"][0]
    assert {"text", "level", "page", "bbox", "source", "score"} <= set(h)
    assert h["text"] == "1 Chapter One" and h["level"] == 1 and h["page"] == 1 and h["source"] == "outline"
    assert len(h["bbox"]) == 4 and h["bbox"][0] < h["bbox"][2]
    assert [x["level"] for x in out["headings"]][:3] == [1, 2, 3]


def test_markdown(report):
    r = run("toc", report, "--markdown")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[:3] == ["# 1 Chapter One", "## 1.1 Section 1.1 results",
                                         "### 1.1.1 Detail 1.1.1 discussion"]


@pytest.mark.parametrize("predictor", ["font-size", "learned"])
def test_ignore_outline_detects_and_predicts(report, predictor):
    r = run("toc", report, "--json", "--ignore-outline", "--predictor", predictor)
    assert r.returncode == 0, r.stderr
    hs = json.loads(r.stdout)["headings"]
    assert [h["source"] for h in hs] == ["layout"] * len(hs)
    assert [h["text"] for h in hs][:3] == ["1 Chapter One", "1.1 Section 1.1 results",
                                           "1.1.1 Detail 1.1.1 discussion"]
    assert [h["level"] for h in hs][:3] == [1, 2, 3]


def test_errors_name_the_file(tmp_path, report):
    enc = tmp_path / "locked.pdf"
    pymupdf.open(report).save(enc, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="pw", owner_pw="o")
    r = run("toc", enc)
    assert r.returncode == 2 and "locked.pdf" in r.stderr and "password" in r.stderr
    assert "Traceback" not in r.stderr
    assert run("toc", enc, "--password", "pw").returncode == 0
    txt = tmp_path / "a.txt"
    txt.write_text("no pdf")
    r = run("toc", txt)
    assert r.returncode == 2 and "a.txt" in r.stderr and "Traceback" not in r.stderr
