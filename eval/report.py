"""One command for the whole evaluation report: ``structrag eval report [--quick] [DATA]``.

Parts (``--part``), each written to its own sub-folder of ``--out`` and
stitched into ``report.md`` / ``report.json``:

``references``  the level-only reference set of ``DATA/headings`` and the
                entries that could not be located;
``levels``      heading trees, level-only protocol, every offline predictor
                (and ``vlm`` when a server is configured);
``end-to-end``  heading trees from the raw PDFs (outline ignored): structrag's
                predictors and pymupdf4llm's Markdown headings (legacy
                heuristics; and its layout model in the full run);
``retrieval``   page-level (and passage-level, FinanceBench evidence) mAP /
                MRR / nDCG / recall@k of bm25, dense, hybrid (RRF) and the
                ranker, on ``DATA/retrieval`` and ``DATA/longdoc``, each over an
                index built once under ``.cache/``;
``speed``       pages/s and peak RSS, one core: raw ``get_text("dict")``,
                pymupdf4llm (both modes), structrag parse and index, on the
                same first pages of several PDFs; plus structrag-index and
                get_text on the whole 1,321-page TikZ manual (peak memory).

``--quick`` keeps small subsets (three heading documents, the long-document
query set, 20 pages x 2 PDFs for speed) so that it runs in a few minutes
once the documents are cached.  Every part records the command, the git
commit and the library versions.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any, Sequence

from structrag.errors import ConfigError

from .provenance import provenance
from .shared_data import shared_data_dir
from .references import build_reference_set, default_cache_dir, write_reference_set

__all__ = ["run_report", "splice_report", "PARTS", "QUICK_HEADING_DOCS", "default_data_dir", "BEGIN_MARK", "END_MARK"]

PARTS = ("references", "levels", "end-to-end", "retrieval", "speed")
QUICK_HEADING_DOCS = ("US_DOT_2022_agency_plan", "An_Introduction_to_R", "Addiko_Bank_Sustainability_Report_2023")
QUICK_SPEED_PDFS = ("headings/An_Introduction_to_R.pdf", "headings/Verizon_2022_10_K.pdf")
FULL_SPEED_PDFS = (
    "headings/An_Introduction_to_R.pdf",
    "headings/Verizon_2022_10_K.pdf",
    "headings/JPMorgan_Chase_2023_Q2_10_Q.pdf",
    "headings/SMA_Solar_Annual_Report_2023.pdf",
    "headings/Debian_Policy_Manual.pdf",
    "headings/TikZ_PGF_manual.pdf",
)
BIG_PDF = "headings/TikZ_PGF_manual.pdf"


def default_data_dir() -> Path:
    """The shared data folder (:func:`eval.shared_data.shared_data_dir`); ConfigError when there is none."""
    return shared_data_dir(required=True)


def offline_predictor() -> str:
    """``learned`` when its model file is there, else ``rules`` (recorded in the report)."""
    from structrag.errors import StructragError
    from structrag.levels import make_predictor

    try:
        make_predictor("learned")
        return "learned"
    except StructragError:
        return "rules"


def _index_for(pdf_dir: Path, cache: Path | None, progress: bool | None, predictor: str) -> Path:
    """An index of every PDF in ``pdf_dir``, built once and cached by the files' names and sizes and the code."""
    from retrievers.index import Index

    files = sorted(pdf_dir.glob("*.pdf"))
    if not files:
        raise ConfigError("no PDFs to index", path=pdf_dir)
    repo = Path(__file__).resolve().parents[1]
    code = hashlib.sha1()  # any change to the parsing / indexing code rebuilds the index
    for src in sorted(list((repo / "structrag").rglob("*.py")) + list((repo / "retrievers").rglob("*.py"))):
        code.update(src.read_bytes())
    key = hashlib.sha1(json.dumps([[f.name, f.stat().st_size] for f in files] +
                                  [code.hexdigest(), predictor]).encode()).hexdigest()[:12]
    root = (cache or Path(os.environ.get("TMPDIR", "/tmp"))) / f"eval-index-{pdf_dir.parent.name}-{key}"
    ok = root / "EVAL_COMPLETE"
    if not ok.exists():
        idx = Index.build(files, root, dense="auto", workers=1, progress=progress,
                          parse_options={"predictor": predictor})
        failed = idx.last_report.failed if idx.last_report else []
        idx.close()
        if failed:  # not marked complete: the next run retries the failed files
            raise ConfigError(f"{len(failed)} PDF(s) could not be indexed, e.g. {failed[0][0]}: {failed[0][1]}",
                              path=root)
        ok.write_text(json.dumps({"predictor": predictor}), encoding="utf-8")
    return root


def run_report(
    data: str | os.PathLike | None = None,
    *,
    out_dir: str | os.PathLike = "structrag-out/report",
    quick: bool = False,
    parts: Sequence[str] | None = None,
    index_dir: str | os.PathLike | None = None,
    progress: bool | None = None,
    command: str | None = None,
) -> Path:
    """Run the report parts and write ``out_dir/report.md`` (returned) and ``report.json``."""
    from .runners import default_heading_methods, run_headings, run_retrieval, run_speed

    data_dir = Path(data) if data is not None else default_data_dir()
    parts = list(parts) if parts else list(PARTS)
    bad = [p for p in parts if p not in PARTS]
    if bad:
        raise ConfigError(f"unknown report part(s) {bad}; known: {list(PARTS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cache = default_cache_dir()
    prov = provenance(command)
    sections: list[str] = []
    summary: dict[str, Any] = {"provenance": prov, "quick": quick, "data": str(data_dir), "parts": {}}
    timings: dict[str, float] = {}
    doc_ids = list(QUICK_HEADING_DOCS) if quick else None
    refs = None
    predictor = offline_predictor()
    summary["offline_predictor"] = predictor

    if "references" in parts or "levels" in parts or "end-to-end" in parts:
        t0 = time.perf_counter()
        refs = build_reference_set(data_dir / "headings", doc_ids=doc_ids, cache_dir=cache, progress=progress)
        if "references" in parts:
            write_reference_set(refs, out / "references")
            rr = refs.report()
            sections.append(
                f"## Reference set\n\n{len(refs)} documents, {rr['entries']} outline entries, {rr['located']} located "
                f"on their page ({100 * rr['located_share']:.1f}%); the unlocated ones are listed in "
                f"[references/report.md](references/report.md).\n")
            summary["parts"]["references"] = {k: rr[k] for k in ("entries", "located", "located_share")}
        timings["references"] = time.perf_counter() - t0

    for part, protocol in (("levels", "level-only"), ("end-to-end", "end-to-end")):
        if part not in parts:
            continue
        t0 = time.perf_counter()
        methods = list(default_heading_methods(protocol))
        if quick and protocol == "end-to-end":
            methods = [m for m in methods if m != "pymupdf4llm"]  # the layout model needs ~1 s/page
        rep = run_headings(refs.documents, protocol=protocol, methods=methods, cache_dir=cache,
                           progress=progress, command=prov["command"])
        rep.reference_report = {"entries": refs.report()["entries"], "located": refs.report()["located"]}
        rep.write(out / part)
        sections.append(rep.to_markdown() + f"\n![TEDS per document]({part}/headings_{protocol}_teds_vs_pages.png)\n")
        summary["parts"][part] = {m: rep.scores(m).to_dict(documents=False) for m in rep.methods}
        timings[part] = time.perf_counter() - t0

    if "retrieval" in parts:
        t0 = time.perf_counter()
        sets = ["longdoc"] if quick else ["retrieval", "longdoc"]
        summary["parts"]["retrieval"] = {}
        for name in sets:
            qfile = data_dir / name / "queries.jsonl"
            idx = Path(index_dir) if (index_dir and name == "retrieval") else _index_for(data_dir / name / "pdfs",
                                                                                         cache, progress, predictor)
            rep = run_retrieval(qfile, idx, progress=progress, command=prov["command"])
            rep.write(out / f"retrieval-{name}")
            sections.append(rep.to_markdown().replace("## Retrieval", f"## Retrieval: {name}/", 1) +
                            "".join(f"\n![recall@k {lv}](retrieval-{name}/retrieval_{lv}_recall_at_k.png)\n"
                                    for lv in rep.levels))
            summary["parts"]["retrieval"][name] = {lv: {m: s.mean for m, s in ms.items()}
                                                   for lv, ms in rep.scores.items()}
        timings["retrieval"] = time.perf_counter() - t0

    if "speed" in parts:
        t0 = time.perf_counter()
        pdfs = [data_dir / p for p in (QUICK_SPEED_PDFS if quick else FULL_SPEED_PDFS)]
        rep = run_speed(pdfs, methods=("get_text", "pymupdf4llm-legacy", "pymupdf4llm", "structrag-parse",
                                       "structrag-index"),
                        max_pages=20 if quick else 40, predictor=predictor, progress=progress,
                        command=prov["command"])
        rep.write(out / "speed")
        sections.append(rep.to_markdown().replace("## Speed", f"## Speed, first {rep.options['max_pages']} pages", 1)
                        + "\n![pages/s](speed/speed_pages_per_s.png)\n")
        summary["parts"]["speed"] = rep.summary()
        if not quick:
            big = run_speed([data_dir / BIG_PDF], methods=("get_text", "structrag-index"), predictor=predictor,
                            progress=progress, command=prov["command"])
            big.write(out / "speed-full-document")
            sections.append(big.to_markdown().replace("## Speed", "## Speed and peak memory, whole TikZ manual", 1))
            summary["parts"]["speed-full-document"] = big.summary()
        timings["speed"] = time.perf_counter() - t0

    summary["seconds"] = timings
    head = [
        "# structrag evaluation report" + (" (quick)" if quick else ""),
        "",
        f"Command: `{prov['command']}`  ",
        f"Commit: `{prov['commit']}`{' (uncommitted changes in tracked files)' if prov.get('dirty') else ''}  ",
        f"Date: {prov['time']}; machine: {prov['machine']}; Python {prov['python']}  ",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in prov["versions"].items() if v) + "  ",
        f"Data: `{data_dir}`; parts: {', '.join(parts)}; wall time: "
        + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()),
        "",
        "Metric definitions: `eval/trees/` and `eval/retrieval_metrics.py` docstrings. "
        f"Offline level predictor for indexing and speed: `{predictor}`"
        + ("" if predictor == "learned" else " (the learned model file is not installed)") + ".",
        "",
    ]
    md = "\n".join(head) + "\n" + "\n".join(sections)
    (out / "report.md").write_text(md, encoding="utf-8")
    (out / "report.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
    return out / "report.md"


BEGIN_MARK = "<!-- structrag eval report: begin (generated, do not edit by hand) -->"
END_MARK = "<!-- structrag eval report: end -->"
_IMAGE = re.compile(r"^!\[[^\]]*\]\(([^)]+)\)\s*$")
_LINK = re.compile(r"\[([^\]]+)\]\(((?!https?:)[^)]+)\)")


def splice_report(results: str | os.PathLike, report_md: str | os.PathLike, *, depth: int = 2) -> Path:
    """Put a generated ``report.md`` into ``results`` between :data:`BEGIN_MARK` and :data:`END_MARK`.

    Everything outside the markers is kept.  Headings are demoted by
    ``depth`` levels; images and links into the (git-ignored) output folder
    become plain paths, so the embedded text has no dead links.
    """
    results, report_md = Path(results), Path(report_md)
    text = results.read_text(encoding="utf-8") if results.is_file() else ""
    if BEGIN_MARK not in text or END_MARK not in text or text.index(BEGIN_MARK) > text.index(END_MARK):
        raise ConfigError("no place for the generated report", path=str(results),
                          hint=f"put the two lines {BEGIN_MARK!r} and {END_MARK!r} where it should go")
    folder = report_md.parent
    lines = []
    fenced = False
    for line in report_md.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced or line.lstrip().startswith("```"):
            lines.append(line)  # a "#" in a code block is a comment, not a heading
            continue
        m = _IMAGE.match(line)
        if m:
            lines.append(f"(plot: `{folder / m.group(1)}`)")
            continue
        if line.startswith("#"):
            line = "#" * depth + line
        lines.append(_LINK.sub(lambda k: f"{k.group(1)} (`{folder / k.group(2)}`)", line))
    head, rest = text.split(BEGIN_MARK, 1)
    _, tail = rest.split(END_MARK, 1)
    tmp = results.with_name(results.name + ".tmp")
    tmp.write_text(head + BEGIN_MARK + "\n" + "\n".join(lines).strip("\n") + "\n" + END_MARK + tail, encoding="utf-8")
    os.replace(tmp, results)
    return results
