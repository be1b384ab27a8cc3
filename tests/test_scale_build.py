"""The distractor rebuild (issue 48): PDFs read from a git snapshot, sha1 checked, docs.jsonl written."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from eval.bench import scale_build
from tests.pdfgen import numbered_report


def _git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)


def _snapshot(tmp_path: Path) -> tuple[Path, str, bytes]:
    """A bare mirror ``o+r/repo`` holding one report PDF; its commit and the PDF's bytes."""
    work = tmp_path / "work"
    work.mkdir()
    pdf = numbered_report(work / "report.pdf")
    _git("init", "-q", cwd=work)
    _git("add", "report.pdf", cwd=work)
    _git("commit", "-q", "-m", "x", cwd=work)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, check=True, capture_output=True,
                            text=True).stdout.strip()
    mirror = tmp_path / "mirror"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirror / "o+r" / "repo")], check=True,
                   capture_output=True)
    return mirror, commit, Path(pdf).read_bytes()


def _row(commit: str, data: bytes, pages: int) -> dict:
    return {"doc_id": "acme--report--abc", "repository": "o/r", "commit": commit, "path": "report.pdf",
            "sha1": hashlib.sha1(data).hexdigest(), "licence": "none found", "issuer": "Acme", "year": 2022,
            "form": "10-K", "pages": pages}


def test_build_writes_the_pdf_and_docs_jsonl(tmp_path):
    import pymupdf

    mirror, commit, data = _snapshot(tmp_path)
    with pymupdf.open(stream=data, filetype="pdf") as d:
        pages = d.page_count
    out = tmp_path / "out"
    report = scale_build.build([_row(commit, data, pages)], out, mirror)
    assert report["documents"] == 1 and report["pages"] == pages and not report["missing"]
    assert (out / "acme--report--abc.pdf").read_bytes() == data
    doc = json.loads((out / "docs.jsonl").read_text(encoding="utf-8"))
    assert doc == {"doc_id": "acme--report--abc", "file": "acme--report--abc.pdf", "sha1": hashlib.sha1(data).hexdigest(),
                   "pages": pages, "issuer": "Acme", "year": 2022, "form": "10-K"}
    assert report["forms"] == {"10-K": 1}


def test_a_changed_file_fails_the_sha1_check(tmp_path):
    mirror, commit, data = _snapshot(tmp_path)
    row = _row(commit, data + b"%changed\n", 1)  # the manifest knew other bytes than the snapshot holds
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps(row) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    rc = scale_build.main(["--out", str(out), "--mirror", str(mirror), "--manifest", str(manifest)])
    assert rc == 1
    assert json.loads((out / "build.json").read_text())["sha1_mismatch"] == ["acme--report--abc"]
    assert not (out / "acme--report--abc.pdf").exists()


def test_a_missing_snapshot_is_reported(tmp_path):
    _, commit, data = _snapshot(tmp_path)
    report = scale_build.build([_row(commit, data, 1)], tmp_path / "out", tmp_path / "nowhere")
    assert report["missing"] == ["acme--report--abc"] and report["documents"] == 0
