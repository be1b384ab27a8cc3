"""Heading-tree runner: level-only and end-to-end scores of several methods side by side.

The per-document steps (:func:`predict_level_only`, :func:`predict_end_to_end` and the scored
:func:`score_level_only`, :func:`score_end_to_end`) are what the benchmarks under ``eval/bench``
run too, so that there is one way a method's headings are produced and scored.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from structrag.errors import ConfigError, StructragError

from .. import trees as T
from ..provenance import provenance
from ..references import ReferenceDocument, build_reference_set, default_cache_dir
from ._child import MARKDOWN_METHODS, markdown_pages

__all__ = [
    "default_heading_methods",
    "vlm_configured",
    "HeadingsReport",
    "run_headings",
    "predict_level_only",
    "predict_end_to_end",
    "score_level_only",
    "score_end_to_end",
]


def vlm_configured() -> bool:
    """A VLM server is configured through the environment (``STRUCTRAG_MODEL`` and a base URL)."""
    return bool(os.environ.get("STRUCTRAG_MODEL")) and bool(
        os.environ.get("STRUCTRAG_BASE_URL") or os.environ.get("OPENAI_BASE_URL"))


def default_heading_methods(protocol: str) -> tuple[str, ...]:
    base = ("font-size", "numbering", "rules", "learned") + (("vlm",) if vlm_configured() else ())
    return base if protocol == "level-only" else ("pymupdf4llm-legacy", "pymupdf4llm") + base



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
                      "`python -m eval.bench.levels` scores it leave-one-document-out."]
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
            from ..plots import plot_teds_vs_length

            png = out / f"{stem}_teds_vs_pages.png"
            plot_teds_vs_length(self, png)
            paths.append(png)
        return paths



def predict_level_only(document: Any, headings: Sequence[Any], predictor: Any, *, name: str = "",
                       **options: Any) -> tuple[T.Outline, dict[str, Any]]:
    """The outline ``predictor`` (a name or a predictor object) makes of ``headings`` by predicting their
    levels (text, page and style given), and the run's stats."""
    from structrag.levels import assign_levels

    res = assign_levels(document, headings, predictor=predictor, progress=False, **options)
    return T.Outline.from_items([(h.text, h.level, h.page) for h in res.headings], name=name), res.stats


def predict_end_to_end(document: Any, predictor: Any, *, name: str = "", **options: Any) -> tuple[T.Outline, Any]:
    """The outline of the heading tree parsed from ``document`` with its own outline ignored (it is the
    answer key), and the :class:`structrag.pipeline.ParsedDocument`."""
    from structrag.pipeline import parse_document

    parsed = parse_document(document, outline="ignore", predictor=predictor, progress=False, **options)
    return T.as_outline(parsed.tree, name=name), parsed


def score_level_only(document: Any, reference: Sequence[Any], predictor: Any, *, name: str = "",
                     **options: Any) -> tuple[T.DocumentScores, dict[str, Any]]:
    """Level-only scores of ``predictor`` on ``reference`` headings (levels set), and the run's stats."""
    pred, stats = predict_level_only(document, reference, predictor, name=name, **options)
    return T.score_document(pred, reference, protocol="level-only", name=name), stats


def score_end_to_end(document: Any, reference: Any, predictor: Any, *, name: str = "",
                     **options: Any) -> tuple[T.DocumentScores, Any]:
    """End-to-end scores of the tree parsed from ``document`` against ``reference``, and the parsed document."""
    pred, parsed = predict_end_to_end(document, predictor, name=name, **options)
    return T.score_document(pred, reference, protocol="end-to-end", name=name), parsed


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
    return predict_level_only(ref.document, ref.unlabelled(), method, name=ref.doc_id, **opts)[0]


def _predict_end_to_end(ref: ReferenceDocument, method: str, opts: dict[str, Any], cache: Path | None,
                        timeout: float | None) -> tuple[T.Outline, float | None]:
    if method in MARKDOWN_METHODS:
        pages, secs = markdown_pages(ref.pdf, method, sha1=ref.sha1, cache_dir=cache, timeout=timeout)
        return T.outline_from_markdown(pages, name=ref.doc_id), secs
    return predict_end_to_end(ref.document, method, name=ref.doc_id, **opts)[0], None


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
    options: Mapping[str, Any] | None = None,
    method_options: Mapping[str, Mapping[str, Any]] | None = None,
    cache_dir: str | os.PathLike | None = "default",
    threshold: float = 0.8,
    page_window: int | None = 1,
    markdown_timeout: float | None = None,
    progress: bool | None = None,
    command: str | None = None,
) -> HeadingsReport:
    """Score heading-tree ``methods`` on a folder of outline-bearing PDFs (or prebuilt references).

    ``options``: parse options every method takes (fields of
    :class:`structrag.options.ParseOptions`; level-only: the level options
    only); ``method_options``: ``{method: {option: value}}`` passed to that
    predictor, winning over ``options``.  ``markdown_timeout`` bounds each pymupdf4llm conversion.
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
    # by pages: one long document's methods take minutes, and a bar by documents would stand still
    pages = {r.doc_id: max(r.document.page_count, 1) for r in refs}
    bar = tqdm(total=sum(pages.values()) * len(active), desc=f"headings {protocol}", unit="page",
               disable=not enabled, file=sys.stderr)
    for ref in refs:
        gold = ref.outline()
        for m in active:
            opts = {**(options or {}), **_parse_options(m, method_options)}
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
            bar.update(pages[ref.doc_id])
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
