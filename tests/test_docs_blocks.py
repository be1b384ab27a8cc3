"""Every Python and shell block of README.md and docs/*.md runs as written, and the guide keeps its shape.

Blocks are the fenced ``bash``, ``sh``, ``console`` and ``python`` blocks.  The blocks of one page run in
order in one working directory, because a page reads as a tutorial (the index one block builds is the
index the next block searches); the test of a later block first runs the page's earlier blocks.  Shell
blocks run under ``bash -e -o pipefail``, Python blocks under this interpreter, with its ``bin`` folder
first on PATH.  The README's first block (the set-up commands) is not run here: CI runs it (``.ci/run``).

The working directory holds the files the guide names:

* ``report.pdf``: one long report with an outline and a printed contents page;
* ``reports/``: a collection, ``3M_2018_10K.pdf`` (3M's 10-K for 2018) and one other filing;
* ``headings/``: two PDFs with their cleaned outlines (``<doc_id>.toc.json``) and a ``manifest.jsonl``,
  laid out like the shared ``headings/`` folder;
* ``queries.jsonl``: questions on ``reports/`` with their relevant pages (0-based);
* ``report.corrections.json``: a corrections file made on ``report.pdf`` (a deleted heading, a changed
  level), as the HTML view exports it.

With the shared data (``../shared/data`` or ``$STRUCTRAG_SHARED_DATA``) these are the real documents
(linked, never copied); without it they are generated with ``tests/pdfgen.py`` under the same names.

A block is configured by an HTML comment on the line before it, invisible on the rendered page:
``<!-- docs-test: KEY=VALUE; KEY=VALUE -->`` with

* ``skip=REASON``: not run (what it needs cannot exist on a test machine: a GPU server, a download);
* ``needs=shared-data``: skipped without the shared data; ``needs=python:MODULE``: skipped when MODULE
  cannot be imported;
* ``server=PORT``: the loopback OpenAI-compatible test server (``eval.bench.vlm_server``) listens on
  ``127.0.0.1:PORT`` while the block runs, so a block written for vLLM or Ollama runs against it;
* ``timeout=SECONDS`` (default 300).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import REPO, SHARED_DATA  # noqa: E402

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LANGUAGES = {"bash": "shell", "sh": "shell", "console": "shell", "python": "python"}
_FENCE = re.compile(r"^```([\w+-]*)\s*$")
_DIRECTIVE = re.compile(r"^<!--\s*docs-test:\s*(.*?)\s*-->\s*$")
_KEYS = {"skip", "needs", "server", "timeout"}


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    language: str  # "shell" or "python"
    code: str
    options: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def parse_blocks(page: Path) -> list[Block]:
    """The runnable blocks of a Markdown page, with the options of the directive before each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1).lower(), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        if j == len(lines):
            raise AssertionError(f"{page.name}:{start + 1}: a code block is never closed")
        options: dict = {}
        before = lines[start - 1] if start > 0 else ""
        d = _DIRECTIVE.match(before)
        if d:
            for part in filter(None, (p.strip() for p in d.group(1).split(";"))):
                key, _, value = part.partition("=")
                if key not in _KEYS:
                    raise AssertionError(f"{page.name}:{start}: unknown docs-test key {key!r}")
                options[key] = value
        if lang in LANGUAGES:
            blocks.append(Block(page, start + 1, LANGUAGES[lang], "\n".join(lines[start + 1:j]) + "\n", options))
        i = j + 1
    return blocks


BLOCKS = {page: parse_blocks(page) for page in PAGES}
# the README's first block is the set-up commands, which CI runs itself
RUNNABLE = [b for page, bs in BLOCKS.items() for b in (bs[1:] if page.name == "README.md" else bs)]


# --------------------------------------------------------------------------- the files the guide names

_SHARED_REPORT = "headings/US_DOT_2022_agency_plan.pdf"
_SHARED_REPORTS = ("retrieval/pdfs/3M_2018_10K.pdf", "retrieval/pdfs/PEPSICO_2023_8K_dated-2023-05-05.pdf")
_HEADING_DOCS = ("An_Introduction_to_R", "US_DOT_2022_agency_plan")


def _sha1(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


def _ten_k(path: Path) -> Path:
    """A short 10-K of 3M for 2018: a cover the identity rules read, items, and a cash-flow statement."""
    from pdfgen import LOREM, PDFBuilder

    b = PDFBuilder(footer="{page}")
    b.new_page()
    for line, size, bold in [("UNITED STATES", 14, True), ("SECURITIES AND EXCHANGE COMMISSION", 14, True),
                             ("Washington, D.C. 20549", 10, False), ("FORM 10-K", 18, True),
                             ("ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934",
                              10, False),
                             ("For the fiscal year ended December 31, 2018", 10, False),
                             ("3M COMPANY", 16, True), ("(Exact name of registrant as specified in its charter)", 8, False)]:
        b.text(line, size=size, bold=bold, gap_after=10)
    b.new_page()
    b.heading("PART I", size=14)
    b.heading("Item 1. Business", size=12)
    b.para("3M is a diversified technology company with four business segments: Industrial, Safety and "
           "Graphics, Health Care, and Consumer.")
    b.para(LOREM)
    b.heading("Item 1A. Risk Factors", size=12)
    b.para("The company's results are affected by competitive conditions, raw material prices and currencies.")
    b.new_page()
    b.heading("PART II", size=14)
    b.heading("Item 7. Management's Discussion and Analysis", size=12)
    b.heading("Capital Expenditures", size=11)
    b.para("Capital expenditures were $1,577 million in 2018 and $1,373 million in 2017, mainly for new plants "
           "and equipment. Dividends paid to shareholders were $3,193 million.")
    b.para(LOREM)
    b.new_page()
    b.heading("Item 8. Financial Statements", size=12)
    b.heading("Consolidated Statement of Cash Flows", size=11)
    b.row([(0, "(Millions)"), (300, "2018"), (360, "2017")], bold=True)
    b.row([(0, "Net income"), (300, "5,363"), (360, "4,869")])
    b.row([(0, "Purchases of property, plant and equipment (PP&E)"), (300, "(1,577)"), (360, "(1,373)")])
    b.row([(0, "Dividends paid to shareholders"), (300, "(3,193)"), (360, "(2,803)")])
    return b.save(path)


def _generated_queries() -> list[dict]:
    doc = "3M_2018_10K.pdf"
    return [
        {"qid": "gen-capex", "query": "What was 3M's capital expenditure in 2018?", "doc": doc, "relevant_pages": [2, 3]},
        {"qid": "gen-segments", "query": "Which business segments does 3M have?", "doc": doc, "relevant_pages": [1]},
        {"qid": "gen-dividends", "query": "How much did 3M pay in dividends in 2018?", "doc": doc,
         "relevant_pages": [2, 3]},
        {"qid": "gen-risks", "query": "What risks affect 3M's results?", "doc": doc, "relevant_pages": [1]},
        {"qid": "gen-northwind", "query": "What is the outlook for next year?", "doc": "northwind_2024.pdf",
         "relevant_pages": [2]},
    ]


def _headings_folder(folder: Path) -> None:
    """``headings/`` laid out like the shared folder: PDFs, cleaned outlines, a manifest."""
    folder.mkdir()
    rows = []
    for n, doc_id in enumerate(_HEADING_DOCS):
        pdf = folder / f"{doc_id}.pdf"
        if SHARED_DATA is not None:
            src = SHARED_DATA / "headings"
            pdf.symlink_to(src / pdf.name)
            (folder / f"{doc_id}.toc.json").symlink_to(src / f"{doc_id}.toc.json")
            continue
        from pdfgen import numbered_report
        import pymupdf

        numbered_report(pdf, chapters=3 + n, with_toc=True, header=None)
        with pymupdf.open(pdf) as d:
            toc, pages = d.get_toc(simple=True), d.page_count
        (folder / f"{doc_id}.toc.json").write_text(json.dumps(
            {"doc_id": doc_id, "source": "generated by tests/test_docs_blocks.py", "pages": pages, "toc": toc}))
        rows.append({"doc_id": doc_id, "group": "business" if n else "manual", "pages": pages, "entries": len(toc),
                     "depth": max(t[0] for t in toc), "sha1": _sha1(pdf)})
    if SHARED_DATA is not None:
        wanted = set(_HEADING_DOCS)
        lines = (SHARED_DATA / "headings" / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [r for r in map(json.loads, filter(None, lines)) if r["doc_id"] in wanted]
    (folder / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _corrections(pdf: Path, out: Path) -> None:
    """What the view exports after a person deleted the last heading and moved one a level down."""
    from structrag import parse_pdf

    parsed = parse_pdf(pdf)
    located = [h for h in parsed.headings if h.bbox is not None]
    gone, moved = located[-1], next(h for h in located[1:] if h.level == 1 or h.level == 2)
    new_level = moved.level + 1

    def rec(h):
        return {"page": h.page + 1, "text": h.text, "bbox": [round(v, 2) for v in h.bbox]}

    fixed = [{**rec(h), "level": new_level if h is moved else h.level} for h in located if h is not gone]
    out.write_text(json.dumps({
        "format": "structrag-corrections", "schema_version": "1.0",
        "document": {"name": pdf.name, "sha1": _sha1(pdf), "pages": parsed.document.page_count},
        "corrections": [{"op": "delete", **rec(gone)}, {"op": "level", **rec(moved), "level": new_level}],
        "headings": fixed}, indent=1))


@pytest.fixture(scope="session")
def materials(tmp_path_factory) -> Path:
    """The files every page's working directory starts with (real ones linked, generated ones built once)."""
    root = tmp_path_factory.mktemp("docs-materials")
    _EMBEDDINGS[:] = [tmp_path_factory.mktemp("docs-embeddings") / "embeddings.sqlite"]
    (root / "reports").mkdir()
    if SHARED_DATA is not None:
        (root / "report.pdf").symlink_to(SHARED_DATA / _SHARED_REPORT)
        for rel in _SHARED_REPORTS:
            (root / "reports" / Path(rel).name).symlink_to(SHARED_DATA / rel)
        lines = (SHARED_DATA / "retrieval" / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        queries = [q for q in map(json.loads, filter(None, lines)) if q["doc"] == "3M_2018_10K.pdf"]
    else:
        from pdfgen import build_report_pdf

        build_report_pdf(root / "report.pdf")
        _ten_k(root / "reports" / "3M_2018_10K.pdf")
        build_report_pdf(root / "reports" / "northwind_2024.pdf")
        queries = _generated_queries()
    (root / "queries.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries))
    _headings_folder(root / "headings")
    _corrections(root / "report.pdf", root / "report.corrections.json")
    return root


def _fill(workdir: Path, materials: Path) -> None:
    for item in materials.iterdir():
        target = workdir / item.name
        if item.is_dir() and not item.is_symlink():
            shutil.copytree(item, target, symlinks=True)
        elif item.is_symlink():
            target.symlink_to(os.readlink(item))
        else:
            shutil.copy2(item, target)


# --------------------------------------------------------------------------- running blocks

@contextlib.contextmanager
def _openai_server(port: int):
    """The recording OpenAI-compatible test server, bound to ``port`` (it picks a free port otherwise)."""
    from eval.bench import vlm_server

    real = vlm_server.ThreadingHTTPServer
    vlm_server.ThreadingHTTPServer = lambda _addr, handler: real(("127.0.0.1", port), handler)
    try:
        server = vlm_server.OpenAIServer().start()
    except OSError as exc:
        pytest.skip(f"port {port} for the test model server is taken: {exc}")
    finally:
        vlm_server.ThreadingHTTPServer = real
    try:
        yield server
    finally:
        server.stop()
    assert not server.errors, server.errors


_EMBEDDINGS: list[Path] = []  # one embedding cache for the session: the pages embed the same chunks


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    if _EMBEDDINGS:
        env["STRUCTRAG_EMBEDDING_CACHE"] = str(_EMBEDDINGS[0])
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    for name in ("STRUCTRAG_BACKEND", "STRUCTRAG_BASE_URL", "STRUCTRAG_MODEL", "STRUCTRAG_API_KEY",
                 "OPENAI_BASE_URL", "OPENAI_API_KEY", "PYTHONPATH"):
        env.pop(name, None)
    if SHARED_DATA is not None:
        env["STRUCTRAG_SHARED_DATA"] = str(SHARED_DATA)
    return env


def _skip_reason(block: Block) -> str | None:
    if "skip" in block.options:
        return block.options["skip"] or "marked skip"
    for need in filter(None, block.options.get("needs", "").split(",")):
        if need == "shared-data" and SHARED_DATA is None:
            return "needs ../shared/data (or $STRUCTRAG_SHARED_DATA)"
        if need.startswith("python:") and importlib.util.find_spec(need.split(":", 1)[1]) is None:
            return f"needs the Python module {need.split(':', 1)[1]}"
    return None


def _run(block: Block, workdir: Path) -> subprocess.CompletedProcess:
    if block.language == "shell":
        cmd = ["bash", "-e", "-o", "pipefail", "-c", block.code]
    else:
        cmd = [sys.executable, "-c", block.code]
    server = _openai_server(int(block.options["server"])) if "server" in block.options else contextlib.nullcontext()
    with server:
        return subprocess.run(cmd, cwd=workdir, env=_environment(), capture_output=True, text=True,
                              timeout=float(block.options.get("timeout", 300)))


@dataclass
class _PageRun:
    workdir: Path
    done: int = 0  # blocks of the page run (or skipped) so far
    failed: str | None = None


_RUNS: dict[Path, _PageRun] = {}


@pytest.fixture(scope="session")
def page_runs(tmp_path_factory, materials):
    def get(page: Path) -> _PageRun:
        if page not in _RUNS:
            workdir = tmp_path_factory.mktemp(page.stem.lower())
            _fill(workdir, materials)
            _RUNS[page] = _PageRun(workdir)
        return _RUNS[page]

    return get


def _advance(state: _PageRun, block: Block) -> None:
    """Run the page's blocks up to and including ``block``; failures are remembered for the later blocks."""
    page_blocks = [b for b in RUNNABLE if b.page == block.page]
    for b in page_blocks[state.done:page_blocks.index(block) + 1]:
        state.done += 1
        if _skip_reason(b) is not None:
            continue
        if state.failed is not None:
            raise AssertionError(f"an earlier block of this page failed ({state.failed})")
        try:
            r = _run(b, state.workdir)
        except subprocess.TimeoutExpired as exc:
            state.failed = b.name
            raise AssertionError(f"{b.name} ran past {exc.timeout:.0f} s") from None
        if r.returncode != 0:
            state.failed = b.name
            raise AssertionError(f"{b.name} exited with {r.returncode}\n--- block\n{b.code}--- stdout (end)\n"
                                 f"{r.stdout[-3000:]}\n--- stderr (end)\n{r.stderr[-5000:]}")


@pytest.mark.slow
@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.name)
def test_block_runs_as_written(block: Block, page_runs) -> None:
    reason = _skip_reason(block)
    state = page_runs(block.page)
    if reason is not None:
        _advance(state, block)  # keeps the page's order when a skipped block comes first
        pytest.skip(reason)
    _advance(state, block)


# --------------------------------------------------------------------------- the guide's shape

def test_blocks_hold_no_placeholders() -> None:
    """A block a reader copies must run: no ``...`` or ``…`` standing for something left out."""
    bad = [f"{b.name}: {line.strip()}" for b in RUNNABLE for line in b.code.splitlines()
           if re.search(r"\.\.\.|…", line)]
    assert not bad, "placeholders in runnable blocks:\n" + "\n".join(bad)


def test_every_block_language_is_known() -> None:
    """Code that runs is marked bash/sh/console/python (so it is tested); other fences name what they hold."""
    for page in PAGES:
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            m = _FENCE.match(line)
            if m and m.group(1).lower() in ("shell", "zsh", "py", "python3", "pycon", "ipython"):
                raise AssertionError(f"{page.name}:{n}: use bash or python as the block's language")


def test_readme_starts_with_the_two_setup_commands() -> None:
    first = BLOCKS[REPO / "README.md"][0]
    assert first.line == 3 and REPO.joinpath("README.md").read_text(encoding="utf-8").startswith("# structrag\n")
    commands = first.code.strip().splitlines()
    assert len(commands) == 2
    assert commands[1] in (REPO / ".ci" / "run").read_text(encoding="utf-8"), "CI must run the README's test command"


def test_the_guide_keeps_its_size() -> None:
    assert len((REPO / "README.md").read_text(encoding="utf-8")) <= 15_000
    for page in [REPO / "README.md", *(REPO / "docs").glob("*.md")]:
        lines = page.read_text(encoding="utf-8").count("\n")
        assert lines <= 1000, f"{page.name}: {lines} lines"
    assert (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8").count("\n") < 400


def test_links_resolve() -> None:
    """Every relative link and image of the guide names a file of the repository."""
    link = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
    for page in PAGES:
        for target in link.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+://", target):
                continue
            assert (page.parent / target).exists(), f"{page.name}: broken link {target}"


def test_the_guide_does_not_cite_the_old_notebook() -> None:
    cite = re.compile(r"RESULTS|eval/reports|history/|[Ii]ssue ?#?\d+")
    for page in PAGES:
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            assert not cite.search(line), f"{page.name}:{n}: {line.strip()}"
