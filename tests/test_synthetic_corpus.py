"""The synthetic training corpus (eval/bench/synthetic_build.py): documents rendered from a Markdown text
written here, read back by load_reference_docs as the real corpus is."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pymupdf")

from eval.bench.synthetic_build import build, markdown_source  # noqa: E402
from eval.bench.synthetic_styles import draw_style  # noqa: E402
from eval.bench.synthetic_text import close_levels, parse_markdown  # noqa: E402
from structrag.levels.references import load_reference_docs  # noqa: E402
from structrag.text import normalize_title  # noqa: E402

HEADINGS = [
    (1, "Purpose of this review"), (2, "Scope and approach"), (3, "Systems in scope"), (3, "Excluded services"),
    (2, "Sources of evidence"), (1, "Findings on access control"), (2, "Identity providers"),
    (3, "Federated sign-in"), (4, "Token lifetimes"), (4, "Session revocation"), (3, "Local accounts"),
    (2, "Privileged access"), (1, "Findings on data protection"), (2, "Encryption at rest"),
    (2, "Backups and retention"), (3, "Offsite copies"), (1, "Recommendations"),
]
WORDS = ("the agency reviewed each control against its stated objective and recorded the evidence "
         "that staff provided during interviews workshops and document reviews").split()


def _paragraph(k: int, n: int = 70) -> str:
    return " ".join(WORDS[(k * 7 + j) % len(WORDS)] for j in range(n)).capitalize() + "."


def _markdown() -> str:
    out = ["---", "title: ignored front matter", "---"]
    for k, (level, title) in enumerate(HEADINGS):
        out += ["#" * level + " " + title, "", _paragraph(k), "", _paragraph(k + 1, 50), ""]
        if k == 2:
            out += ["| System | Owner | Status |", "|---|---|---|", "| Payroll | Finance | Reviewed |",
                    "| Portal | Digital | Open |", ""]
        if k == 5:
            out += ["- first [linked](https://example.org) point", "- second point with **bold** words", "",
                    "![a diagram](img/diagram.png)", "", "```", "grant read on audit to reviewer;", "```", ""]
    return "\n".join(out)


def _seed_with_front_pages() -> int:
    """A seed whose first two templates both print a cover and a contents page."""
    return next(s for s in range(200) if all(draw_style(k, s).cover and draw_style(k, s).contents for k in (0, 1)))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    seed = _seed_with_front_pages()
    outs = []
    for run in ("a", "b"):
        out = tmp_path_factory.mktemp(f"synthetic-{run}")
        report = build([markdown_source("review.md", _markdown())], out, docs=2, styles=2, seed=seed, jobs=1,
                       page_range=(1, 60))
        outs.append((out, report))
    return outs


def test_markdown_levels_are_kept_and_closed_up():
    blocks = close_levels(parse_markdown(_markdown()))
    assert [(b.level, b.text) for b in blocks if b.kind == "h"] == HEADINGS
    text = " ".join(b.text + " ".join(b.items) for b in blocks)
    assert "https://" not in text and "diagram" not in text and "**" not in text
    assert "first linked point" in text
    # a heading two levels below the one above it is closed up to one level below
    gap = close_levels(parse_markdown("# A\n\ntext\n\n### B\n\ntext\n\n## C\n"))
    assert [(b.level, b.text) for b in gap if b.kind == "h"] == [(1, "A"), (2, "B"), (2, "C")]


def test_every_label_is_located_on_its_page_with_the_source_level(built, tmp_path):
    out, report = built[0]
    assert report["documents"] == 2 and report["families"] == 2 and not report["dropped"]
    docs = load_reference_docs(out, cache_dir=tmp_path / "cache", progress=False)
    assert len(docs) == 2
    for doc in docs:
        toc = json.loads((out / f"{doc.doc_id}.toc.json").read_text(encoding="utf-8"))["toc"]
        assert len(doc.headings) == len(toc) == len(HEADINGS)
        assert doc.located == len(toc)
        for (level, title, page), h, (src_level, src_title) in zip(toc, doc.headings, HEADINGS):
            assert h.bbox is not None and h.page == page - 1  # found on the page the label names
            assert level == src_level == h.level
            assert normalize_title(title).endswith(normalize_title(src_title))  # numbered or capitalised


def test_same_seed_gives_identical_files(built):
    (a, _), (b, _) = built
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    assert any(n.endswith(".toc.json") for n in names)
    for name in names:
        if name.endswith((".toc.json", ".lines.json", ".jsonl", ".pdf")):
            assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_cover_and_contents_lines_are_negatives_not_labels(built):
    out, _ = built[0]
    for row in map(json.loads, (out / "manifest.jsonl").read_text(encoding="utf-8").splitlines()):
        assert row["group"] == "synthetic" and row["label"] == "synthetic" and row["family"].startswith("synthetic-")
        toc = json.loads((out / f"{row['doc_id']}.toc.json").read_text(encoding="utf-8"))["toc"]
        lines = json.loads((out / f"{row['doc_id']}.lines.json").read_text(encoding="utf-8"))
        titles = {normalize_title(t) for _, t, _ in toc}
        cover = [x for x in lines if x["kind"] == "cover"]
        assert cover and all(x["page"] == 1 for x in cover)
        assert not any(normalize_title(x["text"]) in titles for x in cover)
        contents = [x for x in lines if x["kind"] == "contents"]
        assert contents and all(x["page"] == 2 for x in contents)
        assert toc[0][2] > max(x["page"] for x in contents)  # the body starts after the front pages
        assert normalize_title(contents[0]["text"]) in {"contents", "table of contents"}
        assert not any(normalize_title(t) in {"contents", "table of contents"} for _, t, _ in toc)


def test_a_heading_broken_at_a_column_end_moves_to_the_next_column():
    import random

    from eval.bench.synthetic_build import _laid_out
    from eval.bench.synthetic_render import body_html, layout, lost_lines
    from eval.bench.synthetic_text import Block

    style = draw_style(0, 0)
    title = "A long heading that must wrap onto a second line in every template that is drawn"
    broken = 0
    for n in range(8, 40):
        blocks = (Block("h", "Opening", 1),) + tuple(Block("p", _paragraph(k, 12)) for k in range(n)) \
            + (Block("h", title, 2), Block("p", _paragraph(1)))
        body = body_html(blocks, style, random.Random(0), "")
        pdf, where, _ = layout(body, style)
        broken += bool(lost_lines(pdf, where, body))
        pdf, where, _, _ = _laid_out(body, style)
        assert not lost_lines(pdf, where, body)
    assert broken  # some of these layouts do break the heading, and each was mended
