"""Build a synthetic training corpus: structured Markdown rendered into PDFs in many random publisher
templates, so that every heading's level and page is known exactly.  For TRAINING only, never to score.

    nice python -m eval.bench.synthetic_build --out .cache/synthetic --docs 300 --seed 0 \
        [--mirror /work/.mirror] [--jobs 2] [--styles 50] [--check]

Text comes from the Markdown trees of repository snapshots (:mod:`eval.bench.synthetic_text`), each
checked by the held-out guard first; templates from :mod:`eval.bench.synthetic_styles`; rendering from
:mod:`eval.bench.synthetic_render` and :mod:`eval.bench.synthetic_pages`.  The output has the layout of
the real corpus (``eval/data/corpus/README.md``), so
:func:`structrag.levels.references.load_reference_docs` reads it unchanged: ``<doc_id>.pdf``,
``<doc_id>.toc.json`` (``toc`` = ``[[level, title, page], ...]``, 1-based, titles as printed, the
contents page's own title not among them), ``manifest.jsonl``, plus ``<doc_id>.lines.json`` (the
non-heading lines that look like headings: ``text``, ``page``, ``kind``) and ``build.json`` (counts; with
``--check``, the share of labels that ``load_reference_docs`` locates).  Same seed, same files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from eval.bench.common import CACHE, REPO
from eval.bench.synthetic_text import (DEFAULT_REPOS, Block, Chapter, close_levels, parse_markdown, pieces,
                                       read_repo)

LICENCES = {"OWASP/ASVS": "CC-BY-SA-4.0", "OWASP/Top10": "CC-BY-SA-4.0", "cncf/tag-security": "CC-BY-4.0",
            "OWASP/www-project-top-10-for-large-language-model-applications": "CC-BY-SA-4.0",
            "AusDTO/dta-website": "CC-BY-4.0"}
TOPICS = {"OWASP/ASVS": "Application Security Verification", "OWASP/Top10": "Web Application Security Risks",
          "cncf/tag-security": "Cloud Native Security", "AusDTO/dta-website": "Digital Transformation",
          "OWASP/www-project-top-10-for-large-language-model-applications": "Generative AI Security"}
GUARD = REPO.parent / "shared" / "tools" / "heldout_guard.py"
MIN_PAGES, MAX_PAGES = 8, 60
PIECE_CHARS = 60_000  # a long Markdown file is cut into parts of about this size


@dataclass(frozen=True, slots=True)
class Source:
    """Text that a document may draw from: a run of pieces of one language, in path order."""

    repo: str
    commit: str
    language: str
    pieces: tuple[Chapter, ...]


def guard_ok(repo: str) -> bool:
    """The held-out guard's word on a repository (no guard beside the project: the repository is not used)."""
    if not GUARD.is_file():
        return False
    return subprocess.run([sys.executable, str(GUARD), "--repo", repo], capture_output=True).returncode == 0


def gather(mirror: Path, repos: tuple[str, ...]) -> list[Source]:
    """Every repository's chapters as sources: one per (repository, language), pieces in path order."""
    out = []
    for repo in repos:
        gd = mirror / repo.replace("/", "+") / "repo"
        if not gd.is_dir() or not guard_ok(repo):
            continue
        commit = subprocess.run(["git", "--git-dir", str(gd), "rev-parse", "HEAD"], check=True,
                                capture_output=True, text=True).stdout.strip()
        by_lang: dict[str, list[Chapter]] = {}
        for ch in read_repo(mirror, repo):
            by_lang.setdefault(ch.language, []).extend(pieces(ch, PIECE_CHARS))
        for lang in sorted(by_lang):
            out.append(Source(repo, commit, lang, tuple(by_lang[lang])))
    return out


def markdown_source(name: str, text: str, language: str = "en") -> Source:
    """A source from one Markdown text (no snapshot): for tests and for text from elsewhere."""
    chapter = Chapter(f"local:{name}", language, tuple(close_levels(parse_markdown(text))))
    return Source("local", "0" * 40, language, tuple(pieces(chapter, PIECE_CHARS)))


def chars_per_page(style) -> float:
    """A rough guess of the text a body page holds (corrected after a first render)."""
    import pymupdf

    r = pymupdf.paper_rect(style.page)
    width = r.width - 2 * style.margin - 18 * (style.columns - 1)
    height = r.height - 2 * style.margin
    return 0.62 * (width / (0.5 * style.body_size)) * (height / (style.line_height * style.body_size * 1.2))


def take(source: Source, start: int, chars: float) -> tuple[list[Block], list[str]]:
    """Pieces of ``source`` from ``start`` (wrapping round) until ``chars`` is reached, and on up to 1.5 times
    that while the text is still flat (depth 1).  A source of flat pages (blog posts) yields a flat text,
    which the caller drops, rather than all of itself."""
    blocks: list[Block] = []
    used: list[str] = []
    n = len(source.pieces)
    size = 0
    for k in range(n):
        piece = source.pieces[(start + k) % n]
        blocks.extend(piece.blocks)
        if piece.source not in used:
            used.append(piece.source)
        size += piece.size
        if size >= chars and (size >= 1.5 * chars or any(b.kind == "h" and b.level >= 2 for b in blocks)):
            break
    return close_levels(blocks), used


def plan(sources: list[Source], docs: int, styles: int, seed: int) -> list[tuple[int, int, int]]:
    """(document, source, start piece) for each document: a style never gets the same start twice."""
    rng = random.Random(f"synthetic-plan:{seed}")
    weights = [sum(p.size for p in s.pieces) for s in sources]
    taken: set[tuple[int, int, int]] = set()
    out = []
    for i in range(docs):
        for _ in range(50):
            s = rng.choices(range(len(sources)), weights)[0]
            start = rng.randrange(len(sources[s].pieces))
            if (i % styles, s, start) not in taken:
                break
        taken.add((i % styles, s, start))
        out.append((i, s, start))
    return out


_SOURCES: list[Source] = []


def _init(sources: list[Source]) -> None:
    global _SOURCES
    _SOURCES = sources


def _laid_out(body, style) -> tuple[bytes, dict[str, int], int, int] | list[str]:
    """The body laid out with no labelled line lost (:func:`eval.bench.synthetic_render.lost_lines`), and
    how many column breaks that took; else the texts that could not be printed whole on their page.

    A heading broken at the end of a column, or a table whose rest MuPDF dropped there, moves to the
    top of the next column (all the broken ones at once: a needless break only leaves a gap).  A table
    that still loses lines there (longer than a column, or cells cut off) is printed as paragraphs
    instead; any other part that starts a column and is still not found cannot be mended.
    """
    from eval.bench.synthetic_render import LayoutError, layout, lost_lines

    fixes = 0
    for _ in range(12):
        try:
            pdf, where, pages = layout(body, style)
        except LayoutError as exc:
            return [str(exc)]
        lost = lost_lines(pdf, where, body)
        if not lost:
            return pdf, where, pages, fixes
        stuck = []
        for part in sorted({body.part_of.get(key, 0) for key in lost}):
            if part in body.flat and part in body.breaks:
                body.flatten(part)
            elif part in body.breaks or part == 0:
                stuck.append(part)
            else:
                body.breaks[part] = "column"
                fixes += 1
        if stuck:
            return [body.parts[p][:120] for p in stuck]
    return ["no layout after 12 rounds"]


def render_one(i: int, s: int, start: int, style_k: int, seed: int,
               page_range: tuple[int, int] = (MIN_PAGES, MAX_PAGES)) -> dict:
    """Render document ``i``: its files' contents, or why it was dropped.

    The text is resized until the pages fall within ``page_range`` (three tries at most); a body that
    :func:`_laid_out` cannot lay out drops the document.
    """
    from eval.bench.synthetic_pages import assemble
    from eval.bench.synthetic_render import body_html
    from eval.bench.synthetic_styles import draw_style

    style = draw_style(style_k, seed)
    source = _SOURCES[s]
    target = random.Random(f"synthetic-doc:{seed}:{i}").randint(10, 45)
    chars = target * chars_per_page(style)
    resized = 0
    while True:
        blocks, used = take(source, start, chars)
        rng = random.Random(f"synthetic-doc:{seed}:{i}:render")
        first = next((b.text for b in blocks if b.kind == "h" and b.level == 1), "")
        topic = TOPICS.get(source.repo, "Report")
        title = rng.choice((topic, f"{topic}: {first}" if 0 < len(first) <= 50 else topic, first or topic))
        if not any(b.kind == "h" and b.level >= 2 for b in blocks):
            return {"i": i, "dropped": "flat text (depth 1)"}
        body = body_html(tuple(blocks), style, rng, "")
        done = _laid_out(body, style)
        if isinstance(done, list):
            return {"i": i, "dropped": "lost: " + " | ".join(done[:3])}
        pdf, where, pages, fixes = done
        if not page_range[0] <= pages + 2 <= page_range[1] and pages and resized < 3:
            chars *= target / pages
            resized += 1
            continue
        break
    rendered = assemble(pdf, where, body, style, rng, title)
    if not page_range[0] <= rendered.pages <= page_range[1] or not rendered.toc:
        return {"i": i, "dropped": f"{rendered.pages} pages, {len(rendered.toc)} headings"}
    return {"i": i, "style": style.family, "repo": source.repo, "commit": source.commit,
            "language": source.language, "used": used, "rendered": rendered, "column_breaks": fixes}


def _write(out: Path, seed: int, r: dict) -> dict:
    """Write one document's files; its manifest row."""
    rd = r["rendered"]
    doc_id = f"synthetic-{seed}-{r['i']:04d}"
    (out / f"{doc_id}.pdf").write_bytes(rd.pdf)
    paths = ", ".join(u.split(":", 1)[1] for u in r["used"])
    head = {"doc_id": doc_id, "source": (f"rendered from github.com/{r['repo']} @ {r['commit'][:12]}: {paths}" if r["repo"] != "local"
                      else f"rendered from {paths}"),
            "license": LICENCES.get(r["repo"], "unknown"), "family": r["style"], "label": "synthetic",
            "pages": rd.pages}
    body = json.dumps(head, ensure_ascii=False)[:-1]
    toc_lines = ",\n  ".join(json.dumps(list(t), ensure_ascii=False) for t in rd.toc)
    (out / f"{doc_id}.toc.json").write_text(f'{body}, "toc": [\n  {toc_lines}\n]}}\n', encoding="utf-8")
    (out / f"{doc_id}.lines.json").write_text(
        "[\n" + ",\n".join(json.dumps(x, ensure_ascii=False) for x in rd.lines) + "\n]\n", encoding="utf-8")
    return {"doc_id": doc_id, "group": "synthetic", "family": r["style"], "label": "synthetic",
            "language": r["language"], "pages": rd.pages, "entries": len(rd.toc),
            "depth": max(t[0] for t in rd.toc), "sha1": hashlib.sha1(rd.pdf).hexdigest()}


def build(sources: list[Source], out: Path, docs: int, styles: int, seed: int, jobs: int,
          page_range: tuple[int, int] = (MIN_PAGES, MAX_PAGES)) -> dict:
    """Render and write the corpus; the counts that ``build.json`` holds."""
    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    todo = plan(sources, docs, styles, seed)
    args = ([i for i, _, _ in todo], [s for _, s, _ in todo], [st for _, _, st in todo],
            [i % styles for i, _, _ in todo], [seed] * len(todo), [page_range] * len(todo))
    results, rows = [], []
    if jobs <= 1:
        _init(sources)
        for r in map(render_one, *args):
            results.append(r)
            rows += [] if "dropped" in r else [_write(out, seed, r)]
    else:
        with ProcessPoolExecutor(max_workers=jobs, initializer=_init, initargs=(sources,)) as pool:
            for r in pool.map(render_one, *args):  # written as they come: a long build shows its progress
                results.append(r)
                rows += [] if "dropped" in r else [_write(out, seed, r)]
    done = [r for r in results if "dropped" not in r]
    (out / "manifest.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows),
                                        encoding="utf-8")
    levels: Counter[int] = Counter()
    kinds: Counter[str] = Counter()
    for r in done:
        levels.update(t[0] for t in r["rendered"].toc)
        kinds.update(x["kind"] for x in r["rendered"].lines)
    return {"seed": seed, "documents": len(rows), "dropped": {r["i"]: r["dropped"] for r in results if "dropped" in r},
            "column_breaks_added": sum(r["column_breaks"] for r in done),
            "families": len({x["family"] for x in rows}), "pages": sum(x["pages"] for x in rows),
            "headings": sum(levels.values()), "headings_per_level": {str(k): levels[k] for k in sorted(levels)},
            "negatives_per_kind": dict(sorted(kinds.items())),
            "languages": dict(Counter(x["language"] for x in rows).most_common()),
            "build_seconds": round(time.perf_counter() - t0, 1)}


def _located(out: str, doc_id: str, cache: str) -> tuple[int, int]:
    from structrag.levels.references import load_reference_docs

    [doc] = load_reference_docs(out, cache_dir=cache, doc_ids=[doc_id], progress=False)
    return doc.located, len(doc.headings)


def check(out: Path, cache: Path, jobs: int) -> dict:
    """The share of labels that :func:`structrag.levels.references.load_reference_docs` locates."""
    ids = [json.loads(x)["doc_id"] for x in (out / "manifest.jsonl").read_text(encoding="utf-8").splitlines() if x]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        got = list(pool.map(_located, [str(out)] * len(ids), ids, [str(cache)] * len(ids)))
    located, total = sum(a for a, _ in got), sum(b for _, b in got)
    worst = sorted(((a / b if b else 1.0), i) for (a, b), i in zip(got, ids))[:5]
    return {"located": located, "entries": total, "located_share": round(located / total, 4) if total else 0.0,
            "worst": [[i, round(s, 3)] for s, i in worst]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.synthetic_build", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(CACHE / "synthetic"), help="where the corpus goes (default .cache/synthetic)")
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--styles", type=int, default=None, help="templates (families); default docs/6, at least 2")
    ap.add_argument("--mirror", default="/work/.mirror", help="the fetch tool's mirror folder")
    ap.add_argument("--repos", default=",".join(DEFAULT_REPOS), help="comma-separated owner/name snapshots")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--check", action="store_true", help="also measure the labels load_reference_docs locates")
    ap.add_argument("--cache", default=str(CACHE / "synthetic-extract"), help="extracted documents for --check")
    args = ap.parse_args(argv)
    sources = gather(Path(args.mirror), tuple(r for r in args.repos.split(",") if r))
    if not sources:
        print(f"no usable snapshot under {args.mirror} (fetch the repositories, or pass --mirror)", file=sys.stderr)
        return 1
    styles = args.styles or max(2, args.docs // 6)
    report = build(sources, Path(args.out), args.docs, styles, args.seed, args.jobs)
    if args.check:
        report["check"] = check(Path(args.out), Path(args.cache), args.jobs)
    (Path(args.out) / "build.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
