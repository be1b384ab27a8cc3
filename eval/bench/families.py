"""Leave-one-family-out figures for heading trees: the headline for documents nobody tuned for.

Every outline-bearing PDF of ``../shared/data`` is a reference document: the 17 of ``headings/``
(their cleaned ``.toc.json``) and the PDFs of ``retrieval/``, ``longdoc/`` and ``prospectus-zh/``
whose own bookmarks have at least 8 entries, of which at least half are printed on their pages
(editorial outlines — an earnings release whose bookmarks name exhibits nobody printed — teach
nothing about printed headings and are listed as skipped).  Each belongs to a *family*, one
publisher's template (``eval/data/families.json``; longdoc's own family labels otherwise): one
company's filings, one agency's reports, one manual series, one paper template.

For each family the learned level model is trained on the documents of every *other* family
(DAgger cross-fitting included) and scored on the family's documents, so no figure here comes
from a model that saw the family.  Training sources are compared:

* ``headings``: the 17 documents of ``headings/`` (what the shipped model trains on today);
* ``outlines``: plus every other outline-bearing PDF (filings, papers, manuals, a prospectus);
* ``contents``: plus pseudo-labels — the PDFs without a usable outline, their headings and levels read
  off their printed contents page (:func:`structrag.pipeline.read_contents`); they only ever train.

Scored, per family and pooled by group (business / manual / paper):

* level-only Micro-STEDS (reference headings given, levels predicted) for the leave-one-family-out
  models, today's shipped model (in-sample on ``headings/``: flagged), and the baselines a user
  would write — font-size tree, size-rank, rules;
* end to end from the raw PDF with the outline ignored: heading recall and precision and projected
  TEDS (predicted headings that match no outline entry dropped), layout only and with the printed
  contents page allowed (``contents="auto"``) where the library offers it.

Usage::

    python -m eval.bench.families --json structrag-out/families/families.json --report structrag-out/families/families.md
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

import structrag.levels
from eval.bench.common import CACHE, REPO, HeldOutModels, data_dir, fmt, run_info, save_results
from eval.runners import score_end_to_end, score_level_only
from eval.trees import DocumentScores, pool
from structrag.files import file_sha1
from structrag.levels.base import project_levels
from structrag.levels.learned import LearnedPredictor
from structrag.levels.references import (
    ReferenceDoc,
    cached_extract,
    load_reference_docs,
    outline_reference_docs,
    printed_share,
)
from structrag.levels.training import train_model  # noqa: E402

FAMILIES_FILE = REPO / "eval" / "data" / "families.json"
EXTRA_FOLDERS = ("retrieval/pdfs", "longdoc/pdfs", "prospectus-zh")
GROUPS = ("business", "manual", "paper")
BASELINES = ("font-size", "size-rank", "rules")


# ---------------------------------------------------------------------------
# reference documents and their families


def load_families(path: Path = FAMILIES_FILE) -> tuple[dict[str, str], dict[str, str]]:
    """(doc_id -> family, family -> group) from the project's family file."""
    d = json.loads(path.read_text(encoding="utf-8"))
    return dict(d["families"]), dict(d.get("groups", {}))


def _longdoc_families(data: Path) -> dict[str, str]:
    out = {}
    f = data / "longdoc" / "docs.jsonl"
    if f.is_file():
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                out[Path(r["file"]).stem] = r.get("family", "")
    return out


def collect_references(data: Path, cache: Path | None, *, min_entries: int = 8, min_printed: float = 0.5,
                       ) -> tuple[list[ReferenceDoc], dict[str, str], list[tuple[str, str]]]:
    """Every outline-bearing reference document, its family, and the PDFs skipped (with why)."""

    families, groups = load_families()
    longdoc = _longdoc_families(data)
    refs = list(load_reference_docs(data / "headings", cache_dir=cache, progress=False))
    pdfs = [pdf for folder in EXTRA_FOLDERS for pdf in sorted((data / folder).glob("*.pdf"))]
    extra, skipped = outline_reference_docs(pdfs, cache_dir=cache, min_entries=min_entries,
                                            min_printed=min_printed, skip_sha1={r.pdf_sha1 for r in refs})
    for r in extra:
        fam = families.get(r.doc_id) or longdoc.get(r.doc_id) or r.doc_id
        refs.append(replace(r, group=groups.get(fam, "business")))
    family_of = {r.doc_id: families.get(r.doc_id) or longdoc.get(r.doc_id) or r.doc_id for r in refs}
    return refs, family_of, skipped


def contents_pseudo_references(data: Path, cache: Path | None, exclude_sha1: set[str], *,
                               min_headings: int = 8) -> tuple[list[ReferenceDoc], dict[str, str]]:
    """Pseudo-labelled documents: PDFs without a usable outline, headings and levels from their printed contents.

    Only the main contents run's located entries (levels from the contents layout) are kept, and
    only documents with at least ``min_headings`` of them.  Families: the company of a filing
    (``retrieval/docs.jsonl``), longdoc's family labels, the prospectus family.
    """
    try:
        from structrag.pipeline import read_contents
    except ImportError:
        return [], {}
    families, groups = load_families()
    longdoc = _longdoc_families(data)
    companies: dict[str, str] = {}
    f = data / "retrieval" / "docs.jsonl"
    if f.is_file():
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                companies[Path(r["file"]).stem] = f"{str(r.get('company', '')).lower()}-filings"
    out: list[ReferenceDoc] = []
    family_of: dict[str, str] = {}
    for folder in EXTRA_FOLDERS:
        for pdf in sorted((data / folder).glob("*.pdf")):
            sha1 = file_sha1(pdf)
            if sha1 in exclude_sha1:
                continue
            doc = cached_extract(pdf, sha1=sha1, cache_dir=cache)
            if len(doc.outline) >= 8 and printed_share(doc, doc.outline) >= 0.5:
                continue  # an outline document: it is a reference already
            res = read_contents(doc)
            hs = tuple(h for h in res.headings if h.level_source == "contents" and h.level is not None)
            if not res.usable or len(hs) < min_headings:
                continue
            # entries that were not located leave gaps: make the levels a valid sequence again
            levels = project_levels([int(h.level) for h in hs], 0)
            hs = tuple(replace(h, level=lv) for h, lv in zip(hs, levels))
            fam = families.get(pdf.stem) or companies.get(pdf.stem) or longdoc.get(pdf.stem) or pdf.stem
            toc_sha1 = hashlib.sha1(json.dumps([[h.level, h.text, h.page] for h in hs]).encode()).hexdigest()
            out.append(ReferenceDoc(doc_id=f"{pdf.stem}#contents", group=groups.get(fam, "business"), document=doc,
                                    headings=hs, pdf_sha1=sha1, toc_sha1=toc_sha1,
                                    located=sum(1 for h in hs if h.bbox is not None)))
            family_of[f"{pdf.stem}#contents"] = fam
    return out, family_of


# ---------------------------------------------------------------------------
# leave-one-family-out models


def family_models(refs: Sequence[ReferenceDoc], family_of: dict[str, str], cache: Path | None, *,
                  sources: Callable[[ReferenceDoc], bool], name: str, seed: int = 0) -> HeldOutModels:
    """One learned level model per held-out family, trained on the other families (cached under ``cache/lofo``).

    ``sources`` picks the training documents among the others (e.g. only ``headings/``'s).
    """
    return HeldOutModels(refs, cache, folder="lofo", group_of=lambda r: family_of[r.doc_id], include=sources,
                         name=name, seed=seed)


# ---------------------------------------------------------------------------
# scoring


def _pooled(scores: Sequence[DocumentScores]) -> dict:
    p = pool(scores)
    return {"n_documents": p.n_documents, "micro_steds": p.micro_steds, "macro_steds": p.macro_steds,
            "parent_accuracy": p.parent_accuracy, "recall": p.recall, "precision": p.precision,
            "pruned_micro_steds": p.pruned_micro_steds}


def _by_group(refs: Sequence[ReferenceDoc], scores: dict[str, DocumentScores]) -> dict:
    out = {g: _pooled([scores[r.doc_id] for r in refs if r.group == g and r.doc_id in scores]) for g in GROUPS}
    out["all"] = _pooled([scores[r.doc_id] for r in refs if r.doc_id in scores])
    return out


def _shipped_in_sample() -> set[str]:
    """sha1s of the PDFs today's shipped level model was trained on (from its metadata)."""
    meta = Path(structrag.levels.__file__).with_name("models").glob("*.json")
    out: set[str] = set()
    for m in meta:
        try:
            out |= {d["pdf_sha1"] for d in json.loads(m.read_text()).get("documents", [])}
        except (ValueError, KeyError):
            pass
    return out


def level_only(refs, family_of, models: dict[str, HeldOutModels], baselines=BASELINES, shipped: bool = True) -> dict:
    """Level-only scores per predictor: the leave-one-family-out models, the shipped one, baselines."""
    out: dict[str, Any] = {}
    predictors: dict[str, Callable[[ReferenceDoc], Any]] = {}
    for name, fm in models.items():
        predictors[f"learned/{name}"] = lambda r, fm=fm: LearnedPredictor(booster=fm.booster(family_of[r.doc_id]))
    if shipped:
        predictors["learned/shipped"] = lambda r: "learned"
    for b in baselines:
        predictors[b] = lambda r, b=b: b
    for pname, make in predictors.items():
        scores: dict[str, DocumentScores] = {}
        for r in refs:
            s, _ = score_level_only(r.document, r.headings, make(r), name=r.doc_id)
            scores[r.doc_id] = s
        out[pname] = {"documents": {k: {"teds": v.teds, "parent_accuracy": v.parent_accuracy, "size": v.size}
                                    for k, v in scores.items()},
                      "pooled": _by_group(refs, scores)}
        p = out[pname]["pooled"]
        print(f"  level-only {pname:22} business {p['business']['micro_steds']:.3f} "
              f"manual {p['manual']['micro_steds']:.3f} paper {p['paper']['micro_steds']:.3f}",
              file=sys.stderr, flush=True)
    return out


def _supports_contents() -> bool:
    from structrag.pipeline import parse_document

    return "contents" in inspect.signature(parse_document).parameters


def end_to_end(refs, family_of, model: HeldOutModels, predictors=("learned", "font-size", "size-rank"),
               modes: Sequence[str] = ("ignore", "auto")) -> dict:
    """From the raw PDF, outline ignored: recall, precision, projected TEDS; layout only and with contents."""
    modes = tuple(modes) if _supports_contents() else ("ignore",)
    out: dict[str, Any] = {}
    for mode in modes:
        for name in predictors:
            scores: dict[str, DocumentScores] = {}
            sources: dict[str, dict[str, int]] = {}
            for r in refs:
                pred = LearnedPredictor(booster=model.booster(family_of[r.doc_id])) if name == "learned" else name
                kw = {"contents": mode} if _supports_contents() else {}
                scores[r.doc_id], parsed = score_end_to_end(r.document, r.headings, pred, name=r.doc_id, **kw)
                count: dict[str, int] = defaultdict(int)
                for h in parsed.headings:
                    count[h.source] += 1
                sources[r.doc_id] = dict(count)
            key = f"{name}/contents={mode}"
            out[key] = {
                "documents": {k: {"recall": v.recall, "precision": v.precision, "pruned_teds": v.pruned_teds,
                                  "n_pred": v.n_pred, "n_ref": v.n_ref, "sources": sources[k]}
                              for k, v in scores.items()},
                "pooled": _by_group(refs, scores),
            }
            p = out[key]["pooled"]
            print(f"  end-to-end {key:28} business recall {p['business']['recall']:.3f} "
                  f"projected {p['business']['pruned_micro_steds']:.3f}", file=sys.stderr, flush=True)
    return out


# ---------------------------------------------------------------------------
# report


def write_report(res: dict, path: Path) -> None:
    L: list[str] = []
    L += ["# Heading trees, leave one family out", "",
          f"Command: `{res['command']}` — commit `{res['commit']}`, {res['date']}, {res['machine']}.", "",
          "Every learned figure comes from a model that never saw the scored document's family "
          "(publisher/template). Reference = the PDF outline (partial trees: precision is a lower bound).", ""]
    L += ["## Documents and families", "", "| document | family | group | headings | located | pages |",
          "|---|---|---|---:|---:|---:|"]
    for d in res["documents"]:
        L.append(f"| {d['doc_id']} | {d['family']} | {d['group']} | {d['headings']} | {d['located']} | {d['pages']} |")
    if res["skipped"]:
        L += ["", "Skipped: " + "; ".join(f"{a} ({b})" for a, b in res["skipped"]) + "."]
    if res.get("pseudo_labelled"):
        L += ["", f"Pseudo-labelled from printed contents (training only, variant `contents`): "
              f"{len(res['pseudo_labelled'])} documents — "
              + ", ".join(f"{d['doc_id'].split('#')[0]} ({d['headings']} headings, depth {d['depth']})"
                          for d in res["pseudo_labelled"]) + "."]
    L += ["", "## Level-only, Micro-STEDS (reference headings given)", "",
          "| predictor | business | manual | paper | all | business parent acc. |", "|---|---:|---:|---:|---:|---:|"]
    for name, d in res["level_only"].items():
        p = d["pooled"]
        flag = " (in-sample on headings/)" if name == "learned/shipped" else ""
        L.append(f"| {name}{flag} | {fmt(p['business']['micro_steds'])} | {fmt(p['manual']['micro_steds'])} | "
                 f"{fmt(p['paper']['micro_steds'])} | {fmt(p['all']['micro_steds'])} | "
                 f"{fmt(p['business']['parent_accuracy'])} |")
    L += ["", "Per held-out family (level-only Micro-STEDS of the family's documents):", "",
          "| family | documents | " + " | ".join(res["level_only"]) + " |",
          "|---|---:|" + "---:|" * len(res["level_only"])]
    fams: dict[str, list[str]] = defaultdict(list)
    for d in res["documents"]:
        fams[d["family"]].append(d["doc_id"])
    for fam, ids in sorted(fams.items()):
        cells = []
        for name, d in res["level_only"].items():
            docs = d["documents"]
            size = sum(docs[i]["size"] for i in ids)
            ted = sum((1 - docs[i]["teds"]) * docs[i]["size"] for i in ids)
            cells.append(fmt(1 - ted / size if size else float("nan")))
        L.append(f"| {fam} | {len(ids)} | " + " | ".join(cells) + " |")
    e2e = res.get("end_to_end", {})
    if e2e:
        L += ["", "## End to end, outline ignored (layout only vs printed contents allowed)", "",
              "| predictor / contents | business recall | business precision | business projected Micro-STEDS | "
              "manual recall | manual projected | paper recall | paper projected |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for name, d in e2e.items():
            p = d["pooled"]
            L.append(f"| {name} | {fmt(p['business']['recall'])} | {fmt(p['business']['precision'])} | "
                     f"{fmt(p['business']['pruned_micro_steds'])} | {fmt(p['manual']['recall'])} | "
                     f"{fmt(p['manual']['pruned_micro_steds'])} | {fmt(p['paper']['recall'])} | "
                     f"{fmt(p['paper']['pruned_micro_steds'])} |")
        keys = [k for k in e2e if k.startswith("learned/")]
        L += ["", "Per document (learned, leave-one-family-out): recall / precision / projected TEDS", "",
              "| document | family | " + " | ".join(keys) + " | heading sources (contents=auto) |",
              "|---|---|" + "---|" * len(keys) + "---|"]
        for d in res["documents"]:
            cells = []
            for k in keys:
                x = e2e[k]["documents"][d["doc_id"]]
                cells.append(f"{fmt(x['recall'])} / {fmt(x['precision'])} / {fmt(x['pruned_teds'])}")
            src = e2e[keys[-1]]["documents"][d["doc_id"]]["sources"]
            L.append(f"| {d['doc_id']} | {d['family']} | " + " | ".join(cells) + " | "
                     + ", ".join(f"{a} {b}" for a, b in sorted(src.items())) + " |")
        for label, sel in (("the 11 business documents of headings/ (the target set)",
                            lambda d: d["group"] == "business" and d["in_headings"]),
                           ("every business document", lambda d: d["group"] == "business"),
                           ("every document", lambda d: True)):
            macro = {}
            for k in e2e:
                rs = [e2e[k]["documents"][d["doc_id"]]["recall"] for d in res["documents"] if sel(d)]
                ps = [e2e[k]["documents"][d["doc_id"]]["precision"] for d in res["documents"] if sel(d)]
                macro[k] = (sum(rs) / len(rs), sum(ps) / len(ps)) if rs else (float("nan"), float("nan"))
            L += ["", f"Macro heading recall / precision over {label}: "
                  + "; ".join(f"{k} **{fmt(v[0])}** / {fmt(v[1])}" for k, v in macro.items()) + "."]
    L += ["", f"Training time of the leave-one-family-out models: {res['train_seconds']:.0f} s; "
          f"whole run {res['total_seconds']:.0f} s."]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(L) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.families", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=data_dir(), help="the shared data folder")
    ap.add_argument("--cache", default=str(CACHE / "levels"))
    ap.add_argument("--sources", default="headings,outlines,contents",
                    help="training-source variants to compare (headings, outlines, contents)")
    ap.add_argument("--end-to-end-model", default="outlines", help="which variant runs end to end")
    ap.add_argument("--no-end-to-end", action="store_true")
    ap.add_argument("--only", default="",
                    help="score only these groups or families (comma-separated, e.g. business or "
                         "jpmorgan-filings); the models still train on every other family, so figures match a full run")
    ap.add_argument("--quick", action="store_true",
                    help="the learned model only: no baselines, no shipped model, end to end with the contents allowed")
    ap.add_argument("--json", default=None)
    ap.add_argument("--report", default=None)
    args = ap.parse_args(argv)
    if not (args.data / "headings" / "manifest.jsonl").is_file():
        print(f"no headings/manifest.jsonl under {args.data}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    cache = Path(args.cache) if args.cache else None
    refs, family_of, skipped = collect_references(args.data, cache)
    headings_ids = {json.loads(x)["doc_id"] for x in
                    (args.data / "headings" / "manifest.jsonl").read_text().splitlines() if x.strip()}
    wanted = [v for v in args.sources.split(",") if v]
    pseudo: list[ReferenceDoc] = []
    if "contents" in wanted:
        pseudo, pseudo_families = contents_pseudo_references(args.data, cache, {r.pdf_sha1 for r in refs})
        family_of.update(pseudo_families)
    pseudo_ids = {r.doc_id for r in pseudo}
    variants = {
        "headings": lambda r: r.doc_id in headings_ids,
        "outlines": lambda r: r.doc_id not in pseudo_ids,
        "contents": lambda r: True,
    }
    # the pseudo-labelled documents only ever train; every score is on outline documents
    models = {v: family_models(refs + pseudo, family_of, cache, sources=variants[v], name=v) for v in wanted}
    res: dict[str, Any] = {
        **run_info("eval.bench.families", argv),
        "documents": [{"doc_id": r.doc_id, "family": family_of[r.doc_id], "group": r.group,
                       "in_headings": r.doc_id in headings_ids,
                       "headings": len(r.headings), "located": r.located, "pages": r.document.page_count}
                      for r in refs],
        "skipped": skipped,
        "pseudo_labelled": [{"doc_id": r.doc_id, "family": family_of[r.doc_id], "headings": len(r.headings),
                             "depth": max(int(h.level) for h in r.headings)} for r in pseudo],
        "shipped_in_sample": sorted(r.doc_id for r in refs if r.pdf_sha1 in _shipped_in_sample()),
    }
    only = {x for x in args.only.split(",") if x}
    scored = [r for r in refs if not only or r.group in only or family_of[r.doc_id] in only]
    if only:
        res["documents"] = [d for d in res["documents"] if d["doc_id"] in {r.doc_id for r in scored}]
    if args.quick:
        res["level_only"] = level_only(scored, family_of, models, baselines=(), shipped=False)
    else:
        res["level_only"] = level_only(scored, family_of, models)
    if not args.no_end_to_end:
        res["end_to_end"] = end_to_end(scored, family_of, models[args.end_to_end_model],
                                       **({"predictors": ("learned",), "modes": ("auto",)} if args.quick else {}))
    res["train_seconds"] = sum(m.train_seconds for m in models.values())
    res["total_seconds"] = time.perf_counter() - t0
    save_results(res, args.json, args.report, write_report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
