"""Benchmark runners: heading trees, retrieval, speed — each method side by side.

>>> from eval.runners import run_headings, run_retrieval, run_speed          # doctest: +SKIP
>>> rep = run_headings("shared/data/headings", protocol="level-only")       # doctest: +SKIP
>>> rep.write("eval/out/headings")                                          # doctest: +SKIP

Every report carries :func:`eval.provenance.provenance` (command, git commit,
versions) and writes a Markdown table, the full JSON (per document / per
query) and PNG plots (:mod:`eval.plots`, matplotlib).

Heading methods
---------------
- structrag level predictors by registered name (``font-size``, ``size-rank``,
  ``numbering``, ``rules``, ``learned``, ``vlm``, ...).  *Level-only*: the
  reference headings (outline entries located on their pages) are given and
  only their levels are predicted (:func:`structrag.levels.assign_levels`).
  *End-to-end*: :func:`structrag.pipeline.parse_document` from the extracted
  PDF with the outline ignored (it is the answer key), headings detected,
  levels predicted.
- ``pymupdf4llm`` / ``pymupdf4llm-legacy``: the ``#`` headings of
  ``pymupdf4llm.to_markdown`` (with its layout model / with its font-size
  heuristics), read the MPDocBench way (end-to-end only).  Run in a child
  process (pymupdf4llm's import switches PyMuPDF's layout hook on) and cached.

A method that fails on a document scores an empty prediction there (so it is
never flattered) and the error is listed in the report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from structrag.errors import ConfigError, StructragError

from . import retrieval_metrics as RM
from . import trees as T
from .provenance import provenance
from .references import ReferenceDocument, build_reference_set, default_cache_dir

__all__ = [
    "MARKDOWN_METHODS",
    "default_heading_methods",
    "vlm_configured",
    "HeadingsReport",
    "run_headings",
    "load_queries",
    "RetrievalReport",
    "run_retrieval",
    "SPEED_METHODS",
    "SpeedReport",
    "run_speed",
    "markdown_pages",
]

MARKDOWN_METHODS = ("pymupdf4llm", "pymupdf4llm-legacy")
SPEED_METHODS = ("get_text", "pymupdf4llm", "pymupdf4llm-legacy", "structrag-parse", "structrag-index")


def vlm_configured() -> bool:
    """A VLM server is configured through the environment (``STRUCTRAG_MODEL`` and a base URL)."""
    return bool(os.environ.get("STRUCTRAG_MODEL")) and bool(
        os.environ.get("STRUCTRAG_BASE_URL") or os.environ.get("OPENAI_BASE_URL"))


def default_heading_methods(protocol: str) -> tuple[str, ...]:
    base = ("font-size", "numbering", "rules", "learned") + (("vlm",) if vlm_configured() else ())
    return base if protocol == "level-only" else ("pymupdf4llm-legacy", "pymupdf4llm") + base


def _worker_env(single_core: bool = True) -> dict[str, str]:
    env = dict(os.environ)
    if single_core:
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
                  "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "ORT_NUM_THREADS"):
            env[k] = "1"
        env["TOKENIZERS_PARALLELISM"] = "false"
    repo = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = repo + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _run_worker(args: list[str], *, timeout: float | None = None) -> dict[str, Any]:
    # the file, not ``-m eval._worker``: importing the eval package would add its imports to every baseline
    cmd = [sys.executable, str(Path(__file__).with_name("_worker.py")), *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_worker_env())
    except subprocess.TimeoutExpired:
        raise StructragError(f"timed out after {timeout:.0f} s: {' '.join(args)}") from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise StructragError(f"worker failed ({' '.join(args[:2])}): " + " | ".join(tail))
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise StructragError(f"worker printed no result ({' '.join(args[:2])})")
    return json.loads(lines[-1])


def markdown_pages(pdf: str | os.PathLike, method: str, *, sha1: str, cache_dir: Path | None,
                   timeout: float | None = None) -> tuple[list[str], float]:
    """Per-page Markdown of ``pymupdf4llm`` (``method`` in MARKDOWN_METHODS) and the seconds it took."""
    if method not in MARKDOWN_METHODS:
        raise ConfigError(f"unknown Markdown method {method!r}; known: {MARKDOWN_METHODS}")
    from importlib import metadata

    version = metadata.version("pymupdf4llm")
    cache = None
    if cache_dir is not None:
        cache = Path(cache_dir) / "markdown" / f"{sha1}_{method}_{version}.json"
        if cache.is_file():
            d = json.loads(cache.read_text(encoding="utf-8"))
            return d["pages"], float(d["seconds"])
    out = Path(cache) if cache is not None else Path(os.environ.get("TMPDIR", "/tmp")) / f"md_{sha1}_{method}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    res = _run_worker(["markdown", method, str(pdf), str(out)], timeout=timeout)
    d = json.loads(out.read_text(encoding="utf-8"))
    if cache is None:
        out.unlink(missing_ok=True)
    return d["pages"], float(res["seconds"])


# --------------------------------------------------------------------------
# Headings
# --------------------------------------------------------------------------
@dataclass
class HeadingsReport:
    """Scores of several methods on one reference set under one protocol."""

    protocol: str
    methods: list[str]
    documents: list[dict[str, Any]]
    per_document: dict[str, list[T.DocumentScores]]
    seconds: dict[str, dict[str, float]]
    errors: dict[str, list[str]]
    skipped_methods: dict[str, str]
    reference_report: dict[str, Any]
    provenance: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)

    def groups(self) -> list[str]:
        return sorted({d["group"] for d in self.documents if d["group"]})

    def scores(self, method: str, group: str | None = None) -> T.TreeScores:
        docs = self.per_document[method]
        if group is not None:
            ids = {d["doc_id"] for d in self.documents if d["group"] == group}
            docs = [d for d in docs if d.name in ids]
        return T.pool(docs)

    def to_dict(self) -> dict[str, Any]:
        summary = {}
        for m in self.methods:
            summary[m] = {"all": self.scores(m).to_dict(documents=False)}
            for g in self.groups():
                summary[m][g] = self.scores(m, g).to_dict(documents=False)
            summary[m]["seconds"] = sum(self.seconds[m].values())
        return {
            "kind": "headings",
            "protocol": self.protocol,
            "provenance": self.provenance,
            "options": self.options,
            "methods": self.methods,
            "skipped_methods": self.skipped_methods,
            "documents": self.documents,
            "summary": summary,
            "per_document": {m: [d.to_dict() for d in ds] for m, ds in self.per_document.items()},
            "seconds": self.seconds,
            "errors": self.errors,
            "reference_report": self.reference_report,
        }

    def to_markdown(self) -> str:
        p = self.provenance
        e2e = self.protocol == "end-to-end"
        lines = [
            f"## Heading trees, {self.protocol} protocol",
            "",
            f"`{p['command']}` at commit `{p['commit']}`{' (dirty tree)' if p.get('dirty') else ''}, {p['time']}.",
            f"{len(self.documents)} documents, {sum(d['pages'] for d in self.documents)} pages, "
            f"{sum(d['entries'] for d in self.documents)} reference headings "
            f"({self.reference_report.get('located', '?')} located on their page).",
            "",
        ]
        head = "| method | group | Micro-STEDS | Macro-STEDS |"
        sep = "|---|---|---:|---:|"
        if e2e:
            head += " pruned Micro | aligned Micro | aligned Macro | P | R | F1 |"
            sep += "---:|---:|---:|---:|---:|---:|"
        head += " parent acc | path acc | s |"
        sep += "---:|---:|---:|"
        lines += [head, sep]
        for m in self.methods:
            for g in [None] + self.groups():
                s = self.scores(m, g)
                if s.n_documents == 0:
                    continue
                secs = sum(v for k, v in self.seconds[m].items()
                           if g is None or any(d["doc_id"] == k and d["group"] == g for d in self.documents))
                row = f"| {m} | {g or 'all'} ({s.n_documents}) | {s.micro_steds:.4f} | {s.macro_steds:.4f} |"
                if e2e:
                    row += (f" {s.pruned_micro_steds:.4f} | {s.aligned_micro_steds:.4f} | {s.aligned_macro_steds:.4f} |"
                            f" {s.precision:.3f} | {s.recall:.3f} | {s.f1:.3f} |")
                row += f" {s.parent_accuracy:.3f} | {s.path_accuracy:.3f} | {secs:.1f} |"
                lines.append(row)
        if self.skipped_methods:
            lines += ["", "Not run: " + "; ".join(f"`{k}` ({v})" for k, v in self.skipped_methods.items()) + "."]
        for m, ids in self.options.get("in_sample", {}).items():
            lines += ["", f"**In-sample:** the `{m}` model was trained on {len(ids)} of these {len(self.documents)} "
                      "documents, so its scores on them overstate what it does on new ones; "
                      "`eval/bench_levels.py` scores it leave-one-document-out."]
        errs = [(m, e) for m, es in self.errors.items() for e in es]
        if errs:
            lines += ["", "Failures (scored as empty predictions):", ""]
            lines += [f"- `{m}`: {e}" for m, e in errs[:30]]
            if len(errs) > 30:
                lines.append(f"- ... {len(errs) - 30} more in the JSON")
        if e2e:
            lines += ["", "*pruned*: predicted headings aligned to no reference heading removed (outlines are partial); "
                      "*aligned*: pruned and relabelled with the reference texts, so only structure counts. "
                      "Parent/path accuracy over reference headings (unmatched = wrong)."]
        lines += ["", "Per document (TEDS" + (" / aligned TEDS / recall" if e2e else " / path acc") + "):", ""]
        lines.append("| doc | pages | refs | " + " | ".join(self.methods) + " |")
        lines.append("|---|---:|---:|" + "---|" * len(self.methods))
        by = {m: {d.name: d for d in self.per_document[m]} for m in self.methods}
        for d in self.documents:
            cells = []
            for m in self.methods:
                s = by[m].get(d["doc_id"])
                if s is None:
                    cells.append("-")
                elif e2e:
                    cells.append(f"{s.teds:.3f} / {s.aligned_teds:.3f} / {s.recall:.2f}")
                else:
                    cells.append(f"{s.teds:.3f} / {s.path_accuracy:.2f}")
            lines.append(f"| {d['doc_id']} | {d['pages']} | {d['entries']} | " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    def write(self, out_dir: str | os.PathLike, *, plots: bool = True) -> list[Path]:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        stem = f"headings_{self.protocol}"
        paths = [out / f"{stem}.json", out / f"{stem}.md"]
        paths[0].write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False), encoding="utf-8")
        paths[1].write_text(self.to_markdown(), encoding="utf-8")
        if plots:
            from .plots import plot_teds_vs_length

            png = out / f"{stem}_teds_vs_pages.png"
            plot_teds_vs_length(self, png)
            paths.append(png)
        return paths


def _parse_options(method: str, options: Mapping[str, Mapping[str, Any]] | None) -> dict[str, Any]:
    return dict((options or {}).get(method, {}))


def _in_sample(refs: Sequence[ReferenceDocument], method: str, opts: Mapping[str, Any]) -> list[str]:
    """Documents the ``learned`` model was trained on (its metadata lists their sha1s)."""
    if method != "learned":
        return []
    from structrag.levels.learned import model_metadata

    try:
        meta = model_metadata(opts.get("model_path"))
    except (OSError, ValueError):
        return []
    seen = {d.get("pdf_sha1") for d in meta.get("documents", [])}
    return [r.doc_id for r in refs if r.sha1 in seen]


def _predict_level_only(ref: ReferenceDocument, method: str, opts: dict[str, Any]) -> T.Outline:
    from structrag.levels import assign_levels

    res = assign_levels(ref.document, ref.unlabelled(), predictor=method, progress=False, **opts)
    return T.Outline.from_items([(h.text, h.level, h.page) for h in res.headings], name=ref.doc_id)


def _predict_end_to_end(ref: ReferenceDocument, method: str, opts: dict[str, Any], cache: Path | None,
                        timeout: float | None) -> tuple[T.Outline, float | None]:
    if method in MARKDOWN_METHODS:
        pages, secs = markdown_pages(ref.pdf, method, sha1=ref.sha1, cache_dir=cache, timeout=timeout)
        return T.outline_from_markdown(pages, name=ref.doc_id), secs
    from structrag.pipeline import parse_document

    parsed = parse_document(ref.document, outline="ignore", predictor=method, progress=False, **opts)
    return T.as_outline(parsed.tree, name=ref.doc_id), None


def _method_available(method: str, protocol: str) -> str | None:
    """Why ``method`` cannot run (None: it can)."""
    if method in MARKDOWN_METHODS:
        if protocol == "level-only":
            return "Markdown converters choose their own headings: end-to-end only"
        try:
            import importlib.util

            if importlib.util.find_spec("pymupdf4llm") is None:
                return "pymupdf4llm is not installed (pip install structrag[eval])"
        except ImportError:
            return "pymupdf4llm is not installed"
        return None
    if method == "vlm" and not vlm_configured():
        return "no VLM server configured (set STRUCTRAG_BASE_URL and STRUCTRAG_MODEL)"
    from structrag.levels import make_predictor

    try:
        make_predictor(method)
    except StructragError as exc:
        return str(exc)
    except TypeError:
        return None  # needs options the caller passes per document
    return None


def run_headings(
    data: str | os.PathLike | Sequence[ReferenceDocument],
    *,
    protocol: str = "level-only",
    methods: Sequence[str] | None = None,
    doc_ids: Iterable[str] | None = None,
    method_options: Mapping[str, Mapping[str, Any]] | None = None,
    cache_dir: str | os.PathLike | None = "default",
    threshold: float = 0.8,
    page_window: int | None = 1,
    markdown_timeout: float | None = None,
    progress: bool | None = None,
    command: str | None = None,
) -> HeadingsReport:
    """Score heading-tree ``methods`` on a folder of outline-bearing PDFs (or prebuilt references).

    ``method_options``: ``{method: {option: value}}`` passed to that
    predictor.  ``markdown_timeout`` bounds each pymupdf4llm conversion.
    """
    from tqdm.auto import tqdm

    if protocol not in ("level-only", "end-to-end"):
        raise ConfigError(f"protocol must be 'level-only' or 'end-to-end', got {protocol!r}")
    cache = default_cache_dir() if cache_dir == "default" else (Path(cache_dir) if cache_dir else None)
    if isinstance(data, (str, os.PathLike)):
        refset = build_reference_set(data, doc_ids=doc_ids, cache_dir=cache, progress=progress)
        refs, ref_report = list(refset.documents), refset.report()
    else:
        refs = list(data)
        n = sum(len(r.entries) for r in refs)
        ref_report = {"entries": n, "located": sum(r.located for r in refs)}
    if not refs:
        raise ConfigError("no outline-bearing PDFs to evaluate", path=str(data) if isinstance(data, (str, os.PathLike)) else None)
    methods = list(methods) if methods else list(default_heading_methods(protocol))
    skipped: dict[str, str] = {}
    active = []
    for m in methods:
        why = _method_available(m, protocol)
        if why:
            skipped[m] = why
        else:
            active.append(m)
    per_doc: dict[str, list[T.DocumentScores]] = {m: [] for m in active}
    seconds: dict[str, dict[str, float]] = {m: {} for m in active}
    errors: dict[str, list[str]] = {m: [] for m in active}
    enabled = sys.stderr.isatty() if progress is None else progress
    bar = tqdm(total=len(refs) * len(active), desc=f"headings {protocol}", disable=not enabled, file=sys.stderr)
    for ref in refs:
        gold = ref.outline()
        for m in active:
            opts = _parse_options(m, method_options)
            t0 = time.perf_counter()
            try:
                if protocol == "level-only":
                    pred, secs = _predict_level_only(ref, m, opts), None
                else:
                    pred, secs = _predict_end_to_end(ref, m, opts, cache, markdown_timeout)
            except (StructragError, RuntimeError, ValueError) as exc:
                errors[m].append(f"{ref.doc_id}: {exc}")
                pred, secs = T.Outline.empty(ref.doc_id), None
            seconds[m][ref.doc_id] = secs if secs is not None else time.perf_counter() - t0
            per_doc[m].append(T.score_document(pred, gold, protocol=protocol, threshold=threshold,
                                               page_window=page_window, name=ref.doc_id))
            bar.update(1)
    bar.close()
    docs = [{"doc_id": r.doc_id, "group": r.group, "pages": r.document.page_count, "entries": len(r.entries),
             "located": r.located, "depth": r.depth, "sha1": r.sha1} for r in refs]
    return HeadingsReport(
        protocol=protocol,
        methods=active,
        documents=docs,
        per_document=per_doc,
        seconds=seconds,
        errors={m: e for m, e in errors.items() if e},
        skipped_methods=skipped,
        reference_report=ref_report,
        provenance=provenance(command),
        options={"threshold": threshold, "page_window": page_window, "method_options": dict(method_options or {}),
                 "in_sample": {m: ids for m in active if (ids := _in_sample(refs, m, _parse_options(m, method_options)))}},
    )


# --------------------------------------------------------------------------
# Retrieval
# --------------------------------------------------------------------------
def load_queries(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Queries in the shared ``queries.jsonl`` shape (``qid``, ``query``, ``doc``, ``relevant_pages`` 0-based,
    optional ``evidence`` [{page, text}] and ``source``)."""
    from structrag.errors import ReferenceFormatError

    p = Path(path)
    if not p.is_file():
        raise ReferenceFormatError("queries file not found", path=p)
    out = []
    seen = set()
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReferenceFormatError(f"line {n}: not JSON ({exc})", path=p) from None
        for key in ("qid", "query", "relevant_pages"):
            if key not in q:
                raise ReferenceFormatError(f"line {n}: missing {key!r}", path=p)
        if not isinstance(q["relevant_pages"], list) or not all(isinstance(x, int) for x in q["relevant_pages"]):
            raise ReferenceFormatError(f"line {n}: relevant_pages must be a list of 0-based page ints", path=p)
        if q["qid"] in seen:
            raise ReferenceFormatError(f"line {n}: duplicate qid {q['qid']!r}", path=p)
        seen.add(q["qid"])
        out.append(q)
    return out


def retrieval_metric_names(ks: Sequence[int]) -> list[str]:
    names = ["map", "mrr", "ndcg@10", "precision@1", "precision@5"]
    for k in ks:
        names += [f"recall@{k}", f"recall_any@{k}", f"recall_all@{k}"]
    return names


@dataclass
class RetrievalReport:
    modes: list[str]
    levels: list[str]
    scores: dict[str, dict[str, RM.RetrievalScores]]  # level -> mode -> scores
    by_source: dict[str, dict[str, dict[str, dict[str, float]]]]  # level -> mode -> source -> mean
    ks: list[int]
    n_queries: int
    missing_docs: list[str]
    skipped_modes: dict[str, str]
    ms_per_query: dict[str, float]
    provenance: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "retrieval",
            "provenance": self.provenance,
            "options": self.options,
            "modes": self.modes,
            "levels": self.levels,
            "ks": self.ks,
            "n_queries": self.n_queries,
            "missing_docs": self.missing_docs,
            "skipped_modes": self.skipped_modes,
            "ms_per_query": self.ms_per_query,
            "mean": {lv: {m: s.mean for m, s in ms.items()} for lv, ms in self.scores.items()},
            "n_scored": {lv: {m: s.n_queries for m, s in ms.items()} for lv, ms in self.scores.items()},
            "by_source": self.by_source,
            "per_query": {lv: {m: s.per_query for m, s in ms.items()} for lv, ms in self.scores.items()},
        }

    def to_markdown(self) -> str:
        p = self.provenance
        lines = [
            "## Retrieval",
            "",
            f"`{p['command']}` at commit `{p['commit']}`{' (dirty tree)' if p.get('dirty') else ''}, {p['time']}.",
            f"{self.n_queries} queries; each searched within its own document; chunk hits reduced to distinct "
            "pages in first-hit order (page level) or to the evidence passages they cover (passage level).",
            "",
        ]
        cols = ["map", "mrr", "ndcg@10"] + [f"recall_any@{k}" for k in (1, 5, 10) if k in self.ks] + \
               [f"recall_all@{k}" for k in (5, 10) if k in self.ks] + [f"recall@{k}" for k in (1, 5, 10) if k in self.ks]
        for lv in self.levels:
            lines += [f"### {lv} level", "", "| mode | queries | " + " | ".join(cols) + " | ms/query |",
                      "|---|---:|" + "---:|" * (len(cols) + 1)]
            for m in self.modes:
                s = self.scores[lv].get(m)
                if s is None:
                    continue
                lines.append(f"| {m} | {s.n_queries} | " + " | ".join(f"{s.mean[c]:.3f}" for c in cols) +
                             f" | {self.ms_per_query.get(m, float('nan')):.1f} |")
            srcs = sorted({src for m in self.modes for src in self.by_source.get(lv, {}).get(m, {})})
            if len(srcs) > 1:
                lines += ["", "| mode | source | queries | map | mrr | recall_any@5 | recall_all@5 |",
                          "|---|---|---:|---:|---:|---:|---:|"]
                for m in self.modes:
                    for src in srcs:
                        d = self.by_source[lv].get(m, {}).get(src)
                        if d:
                            lines.append(f"| {m} | {src} | {int(d['n'])} | {d['map']:.3f} | {d['mrr']:.3f} | "
                                         f"{d.get('recall_any@5', float('nan')):.3f} | "
                                         f"{d.get('recall_all@5', float('nan')):.3f} |")
            lines.append("")
        if self.options.get("ranker_model"):
            lines.append(f"`ranker` model: `{self.options['ranker_model']}` -- if it was trained on these queries, "
                         "its figures are in-sample (eval/bench_retrieval.py reports leave-one-company-out ones).")
        if self.skipped_modes:
            lines.append("Not run: " + "; ".join(f"`{k}` ({v})" for k, v in self.skipped_modes.items()) + ".")
        if self.missing_docs:
            lines.append(f"Queries on documents missing from the index (scored as empty rankings): "
                         f"{', '.join(self.missing_docs)}.")
        return "\n".join(lines) + "\n"

    def write(self, out_dir: str | os.PathLike, *, plots: bool = True) -> list[Path]:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "retrieval.json", out / "retrieval.md"]
        paths[0].write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False), encoding="utf-8")
        paths[1].write_text(self.to_markdown(), encoding="utf-8")
        if plots:
            from .plots import plot_recall_curves

            for lv in self.levels:
                png = out / f"retrieval_{lv}_recall_at_k.png"
                plot_recall_curves(self, png, level=lv)
                paths.append(png)
        return paths


def _mode_available(index: Any, mode: str) -> str | None:
    if mode in ("dense", "hybrid") and not index.has_dense:
        return "the index was built without dense vectors"
    if mode == "ranker":
        try:
            r = index.ranker  # a property on retrievers.Index
            if callable(r):
                r()
        except StructragError as exc:
            return str(exc)
    return None


def _ranker_source(index: Any) -> str | None:
    """Which ranker model the ``ranker`` mode uses: the index's own file or the shipped default."""
    path = getattr(index, "path", None)
    if path is not None and (Path(path) / "ranker.txt").exists():
        return str(Path(path) / "ranker.txt")
    try:
        from retrievers.ranker import default_model_path

        return str(default_model_path(bool(getattr(index, "has_dense", False))))
    except ImportError:  # pragma: no cover
        return None


def run_retrieval(
    queries: str | os.PathLike | Sequence[Mapping[str, Any]],
    index: Any,
    *,
    modes: Sequence[str] | None = None,
    ks: Sequence[int] = (1, 2, 3, 5, 10, 20),
    depth: int = 50,
    levels: Sequence[str] = ("page", "passage"),
    passage_threshold: float = 0.5,
    scope: str = "document",
    progress: bool | None = None,
    command: str | None = None,
) -> RetrievalReport:
    """Score search ``modes`` of ``index`` (a :class:`retrievers.Index` or its directory) on ``queries``.

    ``scope="document"`` searches each query within its own ``doc`` (the
    FinanceBench / MMLongBench-Doc setting); ``"collection"`` searches all
    documents and counts a page relevant only in the query's document.
    ``depth`` chunks are retrieved per query and mode.
    """
    from tqdm.auto import tqdm

    if scope not in ("document", "collection"):
        raise ConfigError(f"scope must be 'document' or 'collection', got {scope!r}")
    bad = set(levels) - {"page", "passage"}
    if bad:
        raise ConfigError(f"unknown relevance level(s) {sorted(bad)}; use 'page' and/or 'passage'")
    qs = load_queries(queries) if isinstance(queries, (str, os.PathLike)) else [dict(q) for q in queries]
    opened = False
    if isinstance(index, (str, os.PathLike)):
        from retrievers.index import Index

        index, opened = Index.open(index), True
    try:
        from retrievers.index import MODES

        modes = list(modes) if modes else list(MODES)
        skipped, active = {}, []
        for m in modes:
            if m not in MODES:
                raise ConfigError(f"unknown mode {m!r}; known: {list(MODES)}")
            why = _mode_available(index, m)
            (skipped.__setitem__(m, why) if why else active.append(m))
        ranker_model = _ranker_source(index) if "ranker" in active else None
        names = {d.name for d in index.documents()}
        missing = sorted({q.get("doc") for q in qs if q.get("doc") and q.get("doc") not in names})
        runs: dict[str, dict[str, dict[str, list]]] = {lv: {m: {} for m in active} for lv in levels}
        ms: dict[str, float] = {}
        enabled = sys.stderr.isatty() if progress is None else progress
        for m in active:
            t0 = time.perf_counter()
            for q in tqdm(qs, desc=f"retrieval {m}", disable=not enabled, leave=False, file=sys.stderr):
                doc = q.get("doc")
                if doc in missing:
                    hits = []
                else:
                    hits = index.search(q["query"], k=depth, doc=doc if scope == "document" else None, mode=m)
                    if scope == "collection":
                        hits = [h if h.doc == doc else h._replace(pages=tuple(-1 - p for p in h.pages))
                                for h in hits]  # pages of other documents never match
                if "page" in levels:
                    runs["page"][m][q["qid"]] = RM.pages_from_hits(hits)
                if "passage" in levels and q.get("evidence"):
                    runs["passage"][m][q["qid"]] = RM.passages_from_hits(hits, q["evidence"],
                                                                         threshold=passage_threshold)
            ms[m] = 1000 * (time.perf_counter() - t0) / max(1, len(qs))
    finally:
        if opened:
            index.close()
    names_ = retrieval_metric_names(ks)
    scores: dict[str, dict[str, RM.RetrievalScores]] = {}
    by_source: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for lv in levels:
        if lv == "page":
            qrels = {q["qid"]: q["relevant_pages"] for q in qs}
        else:
            qrels = {q["qid"]: [f"e{i}" for i in range(len(q["evidence"]))] for q in qs if q.get("evidence")}
            if not qrels:
                continue
        scores[lv], by_source[lv] = {}, {}
        for m in active:
            s = RM.evaluate(runs[lv][m], qrels, names_)
            scores[lv][m] = s
            groups: dict[str, list[str]] = {}
            for q in qs:
                if q["qid"] in qrels and q["qid"] not in s.skipped:
                    groups.setdefault(str(q.get("source", "")), []).append(q["qid"])
            by_source[lv][m] = {
                src: {"n": float(len(ids)), **{n: sum(s.per_query[i][n] for i in ids) / len(ids) for n in names_}}
                for src, ids in groups.items()
            }
    return RetrievalReport(
        modes=active, levels=list(scores), scores=scores, by_source=by_source, ks=list(ks), n_queries=len(qs),
        missing_docs=[str(d) for d in missing], skipped_modes=skipped, ms_per_query=ms,
        provenance=provenance(command),
        options={"depth": depth, "scope": scope, "passage_threshold": passage_threshold,
                 "ranker_model": ranker_model},
    )


# --------------------------------------------------------------------------
# Speed
# --------------------------------------------------------------------------
@dataclass
class SpeedReport:
    methods: list[str]
    runs: list[dict[str, Any]]  # one per (method, pdf): pages, wall_s, cpu_s, peak_rss_mb, ...
    errors: list[str]
    provenance: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, dict[str, float]]:
        out = {}
        for m in self.methods:
            rs = [r for r in self.runs if r["method"] == m]
            if not rs:
                continue
            pages = sum(r["pages"] for r in rs)
            wall = sum(r["wall_s"] for r in rs)
            cpu = sum(r["cpu_s"] for r in rs)
            out[m] = {"pages": pages, "wall_s": wall, "cpu_s": cpu, "pages_per_s": pages / wall if wall else 0.0,
                      "pages_per_cpu_s": pages / cpu if cpu else 0.0,
                      "peak_rss_mb": max(r["peak_rss_mb"] for r in rs),
                      "baseline_rss_mb": max(r.get("baseline_rss_mb", 0.0) for r in rs), "documents": len(rs)}
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "speed", "provenance": self.provenance, "options": self.options, "methods": self.methods,
                "summary": self.summary(), "runs": self.runs, "errors": self.errors}

    def to_markdown(self) -> str:
        p = self.provenance
        s = self.summary()
        lines = [
            "## Speed (one core, one process per method and document)",
            "",
            f"`{p['command']}` at commit `{p['commit']}`{' (dirty tree)' if p.get('dirty') else ''}, {p['time']}, "
            f"{p['machine']}. Load average at start: {self.options.get('loadavg')}.",
            "",
            "| method | documents | pages | wall s | pages/s | pages/CPU-s | peak RSS MB | RSS after imports MB |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for m, d in s.items():
            lines.append(f"| {m} | {d['documents']} | {d['pages']} | {d['wall_s']:.1f} | {d['pages_per_s']:.1f} | "
                         f"{d['pages_per_cpu_s']:.1f} | {d['peak_rss_mb']:.0f} | {d['baseline_rss_mb']:.0f} |")
        ratios = []
        if "structrag-index" in s:
            idx = s["structrag-index"]["pages_per_s"]
            for ref in ("pymupdf4llm", "pymupdf4llm-legacy"):
                if ref in s and s[ref]["pages_per_s"]:
                    ratios.append(f"structrag-index / {ref} = {idx / s[ref]['pages_per_s']:.1f}x (target >= 20x)")
            if "get_text" in s and idx:
                ratios.append(f"get_text / structrag-index = {s['get_text']['pages_per_s'] / idx:.2f}x "
                              "(target <= 4x)")
        if ratios:
            lines += [""] + [f"- {r}" for r in ratios]
        lines += ["", "| method | document | pages | wall s | pages/s | peak RSS MB |", "|---|---|---:|---:|---:|---:|"]
        for r in self.runs:
            lines.append(f"| {r['method']} | {r['document']} | {r['pages']} | {r['wall_s']:.2f} | "
                         f"{r['pages'] / r['wall_s'] if r['wall_s'] else 0:.1f} | {r['peak_rss_mb']:.0f} |")
        if self.errors:
            lines += ["", "Failures:", ""] + [f"- {e}" for e in self.errors]
        return "\n".join(lines) + "\n"

    def write(self, out_dir: str | os.PathLike, *, plots: bool = True) -> list[Path]:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "speed.json", out / "speed.md"]
        paths[0].write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False), encoding="utf-8")
        paths[1].write_text(self.to_markdown(), encoding="utf-8")
        if plots:
            from .plots import plot_speed

            png = out / "speed_pages_per_s.png"
            plot_speed(self, png)
            paths.append(png)
        return paths


def run_speed(
    pdfs: Sequence[str | os.PathLike],
    *,
    methods: Sequence[str] = ("get_text", "structrag-parse", "structrag-index", "pymupdf4llm-legacy", "pymupdf4llm"),
    max_pages: int | None = None,
    predictor: str = "learned",
    core: int | None = None,
    timeout: float | None = None,
    progress: bool | None = None,
    command: str | None = None,
) -> SpeedReport:
    """Pages/s and peak memory of each method on each PDF, one child process each, pinned to one core.

    ``structrag-parse`` = extract + detect + levels (outline ignored so the
    level predictor runs); ``structrag-index`` = that + chunks + BM25 index
    (``retrievers.Index.build``, no dense vectors).  ``max_pages`` limits every
    method to the first pages (pymupdf4llm is slow).  Timings exclude imports.
    """
    from tqdm.auto import tqdm

    bad = [m for m in methods if m not in SPEED_METHODS]
    if bad:
        raise ConfigError(f"unknown speed method(s) {bad}; known: {list(SPEED_METHODS)}")
    if core is None:
        try:
            core = max(os.sched_getaffinity(0))
        except AttributeError:  # pragma: no cover - not Linux
            core = -1
    loadavg = None
    try:
        loadavg = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover
        pass
    runs, errors = [], []
    enabled = sys.stderr.isatty() if progress is None else progress
    jobs = [(m, Path(p)) for p in pdfs for m in methods]
    for m, pdf in tqdm(jobs, desc="speed", disable=not enabled, file=sys.stderr):
        args = ["speed", m, str(pdf), "--core", str(core), "--predictor", predictor]
        if max_pages is not None:
            args += ["--max-pages", str(max_pages)]
        try:
            r = _run_worker(args, timeout=timeout)
        except StructragError as exc:
            errors.append(f"{m} on {pdf.name}: {exc}")
            continue
        r.update(method=m, document=pdf.name)
        runs.append(r)
    return SpeedReport(list(methods), runs, errors, provenance(command),
                       {"max_pages": max_pages, "predictor": predictor, "core": core, "loadavg": loadavg})
