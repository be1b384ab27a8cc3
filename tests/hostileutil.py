"""Helpers for the hostile-input tests: the command line run in this process, and every JSON file it reads.

(No tests here, and not named like a test module; test_hostile_cli and test_hostile_input import it.)
"""

from __future__ import annotations

import json
from pathlib import Path

from indexutil import make_report
from pdfgen import PDFBuilder
from structrag.cli import main

DEEP = "[" * 200_000 + "]" * 200_000  # past the JSON reader's recursion limit


def cli(capsys, *argv) -> tuple[int, str, str]:
    """``structrag ARGV`` in this process: (exit code, stdout, stderr); an exception fails the test."""
    capsys.readouterr()
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def one_error(capsys, *argv, names: tuple[str, ...] = ()) -> str:
    """Run the command; it must exit 2 with exactly one ``structrag: error:`` line holding each of ``names``."""
    rc, _, err = cli(capsys, *argv)
    lines = [ln for ln in err.splitlines() if ln.startswith("structrag: error:")]
    assert rc == 2 and len(lines) == 1, (rc, err)
    for n in names:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def plain_report(path: Path, pages: int = 3) -> Path:
    """Numbered sections one a page, no outline, saved uncompressed (the page tree can be edited as text)."""
    b = PDFBuilder(header=None)
    for i in range(1, pages + 1):
        b.new_page()
        b.heading(f"{i}. Section {i}", size=16)
        b.para()
    return b.save(path, garbage=0, deflate=False)


def headings_folder(root: Path, manifest: str | None = None, toc: str | None = None) -> Path:
    """A train-levels data folder: one report ``doc.pdf``, its outline ``doc.toc.json``, ``manifest.jsonl``."""
    root.mkdir()
    make_report(root / "doc.pdf")
    (root / "doc.toc.json").write_text(toc if toc is not None else json.dumps({"toc": [[1, "Item 1. Business", 1]]}))
    (root / "manifest.jsonl").write_text(manifest if manifest is not None else '{"doc_id": "doc"}\n')
    return root


def json_readers(tmp_path: Path, index_dir: Path):
    """For each JSON file a command reads: its name -> (the file, the command that reads it), all under
    ``tmp_path`` (a report PDF, a headings folder ``h/`` for train-levels) but the index of the queries."""
    pdf = make_report(tmp_path / "r.pdf")
    headings_folder(tmp_path / "h")
    f = tmp_path / "input.json"
    return {
        "levels reference": (f, ["levels", f]),
        "toc corrections": (f, ["toc", pdf, "--corrections", f]),
        "view corrections": (f, ["view", pdf, "--corrections", f, "-o", tmp_path / "v.html"]),
        "checkpoint": (f, ["toc", pdf, "--ignore-outline", "--checkpoint", f]),
        "manifest": (tmp_path / "h" / "manifest.jsonl", ["train-levels", "--data", tmp_path / "h",
                                                         "--out", tmp_path / "m.txt"]),
        "outline sidecar": (tmp_path / "h" / "doc.toc.json", ["train-levels", "--data", tmp_path / "h",
                                                              "--out", tmp_path / "m.txt"]),
        "index meta": (f, ["index", pdf, "--out", tmp_path / "ix", "--no-dense", "--quiet", "--meta", f]),
        "train-ranker queries": (f, ["train-ranker", f, "--index", index_dir, "--out", tmp_path / "rk.txt"]),
        "eval queries": (f, ["eval", "retrieval", f, "--index", index_dir, "--out", tmp_path / "ev", "--no-plots"]),
        "view queries": (f, ["view", index_dir, "--queries", f, "-o", tmp_path / "q.html"]),
    }


READERS = ["levels reference", "toc corrections", "view corrections", "checkpoint", "manifest", "outline sidecar",
           "index meta", "train-ranker queries", "eval queries", "view queries"]
