"""Level models trained across hundreds of publishers, scored with every publisher held out.

    nice python -m eval.bench.corpus_levels --corpus .cache/corpus [--synthetic .cache/synthetic] \
        [--folds 5] [--variants shared,corpus,synthetic] [--end-to-end] \
        [--json structrag-out/corpus_levels/corpus_levels.json] [--report structrag-out/corpus_levels/corpus_levels.md]

Reference documents (each a PDF with headings and levels):

* ``shared``: the outline documents of ``../shared/data`` (:func:`eval.bench.families.collect_references`)
  and, for training only, its contents pseudo-labels (:func:`eval.bench.families.contents_pseudo_references`);
* ``corpus``: the many-publisher corpus (``eval/data/corpus/README.md``; built by
  ``python -m eval.bench.corpus_build``).  Its outline documents train and score; its documents labelled
  by their printed contents train, and are scored in a table of their own (the labels are structrag's
  own reading of the contents page, so agreement with them is a weak figure);
* ``synthetic`` (``--synthetic``): rendered documents with exact levels, for training only.

**Protocol: publishers held out by folds.**  Each family (one publisher's template) is put in one of
``--folds`` folds by the sha1 of its name; a document is scored by a model trained on the other folds
only (DAgger cross-fitting inside), so no score comes from a model that saw the document's publisher.
With 250+ publishers, folds cost five trainings instead of one per publisher and hold out the same
thing.  Training-source variants (``--variants``):

* ``shared``: the shared data only (what the shipped model's design trains on);
* ``corpus``: plus every corpus document;
* ``corpus-outline``: plus the corpus's outline documents only (do contents labels help?);
* ``synthetic``: ``corpus`` plus the synthetic documents.

Scored level-only (reference headings given, levels predicted; :func:`eval.runners.score_level_only`)
beside the shipped model (in-sample on ``headings/``, flagged) and the 20-line baselines (font-size tree,
size rank).  Per set: documents, families, micro-STEDS, macro-STEDS over documents and over families,
with a 95% interval over families (families resampled).  ``--end-to-end`` adds the projected tree
similarity and recall from the raw PDF (outline ignored, printed contents allowed) for the outline
documents, with the model of the best variant.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from eval.bench.common import CACHE, HeldOutModels, bootstrap_ci, data_dir, fmt, run_info, save_results
from eval.bench.families import collect_references, contents_pseudo_references
from eval.runners import score_end_to_end, score_level_only
from eval.trees import DocumentScores, pool
from structrag.levels.learned import LearnedPredictor
from structrag.levels.references import ReferenceDoc, load_reference_docs
from structrag.levels.training import train_model

VARIANTS = ("shared", "corpus", "corpus-outline", "synthetic")
BASELINES = ("font-size", "size-rank")


class Sources:
    """Every reference document with its family, origin (shared / corpus / synthetic) and label kind."""

    def __init__(self) -> None:
        self.refs: list[ReferenceDoc] = []
        self.family: dict[str, str] = {}
        self.origin: dict[str, str] = {}
        self.label: dict[str, str] = {}

    def add(self, refs: Sequence[ReferenceDoc], family: Callable[[ReferenceDoc], str], origin: str, label: str) -> None:
        for r in refs:
            if not r.headings:
                continue
            self.refs.append(r)
            self.family[r.doc_id] = family(r)
            self.origin[r.doc_id] = origin
            self.label[r.doc_id] = label

    def scored(self, label: str) -> list[ReferenceDoc]:
        """The real documents labelled ``label`` ("outline" or "contents"); synthetic ones never score."""
        return [r for r in self.refs if self.label[r.doc_id] == label and self.origin[r.doc_id] != "synthetic"]


def fold_of(family: str, folds: int) -> str:
    """The fold a publisher falls in: fixed by its name alone, so every run splits the same way."""
    return str(int(hashlib.sha1(family.encode("utf-8")).hexdigest()[:8], 16) % folds)


def _manifest(folder: Path) -> dict[str, dict]:
    return {r["doc_id"]: r for r in (json.loads(x) for x in (folder / "manifest.jsonl").read_text(
        encoding="utf-8").splitlines() if x.strip())}


def load_sources(args) -> Sources:
    cache = Path(args.cache)
    src = Sources()
    shared, family_of, _ = collect_references(args.data, cache)
    src.add(shared, lambda r: family_of[r.doc_id], "shared", "outline")
    pseudo, pseudo_family = contents_pseudo_references(args.data, cache, {r.pdf_sha1 for r in shared})
    src.add(pseudo, lambda r: pseudo_family[r.doc_id], "shared", "contents")
    for origin, folder in (("corpus", args.corpus), ("synthetic", args.synthetic)):
        if folder is None:
            continue
        rows = _manifest(Path(folder))
        refs = load_reference_docs(folder, cache_dir=Path(args.extract_cache))
        label = {r.doc_id: rows[r.doc_id].get("label", "outline") for r in refs}
        # grouped by label (a stable sort): the training order, and so the models, do not depend on the manifest's
        for r in sorted(refs, key=lambda r: label[r.doc_id]):
            src.add([replace(r, group=r.group or origin)], lambda r: f"{origin}:{rows[r.doc_id]['family']}", origin,
                    label[r.doc_id])
    return src


def _train_sources(src: Sources, variant: str) -> Callable[[ReferenceDoc], bool]:
    origin, label = src.origin, src.label
    return {
        "shared": lambda r: origin[r.doc_id] == "shared",
        "corpus": lambda r: origin[r.doc_id] in ("shared", "corpus"),
        "corpus-outline": lambda r: origin[r.doc_id] == "shared" or (origin[r.doc_id] == "corpus"
                                                                     and label[r.doc_id] == "outline"),
        "synthetic": lambda r: True,
    }[variant]


def fold_models(src: Sources, variants: Sequence[str], folds: int, cache: Path) -> dict[str, HeldOutModels]:
    rows: dict = {}  # teacher-forced rows shared by every variant's trainings (the expensive part)

    def train(docs, **kw):
        return train_model(docs, **{**kw, "rows_cache": rows})

    return {v: HeldOutModels(src.refs, cache, folder="corpus-folds", name=f"{v}-f{folds}",
                             group_of=lambda r: fold_of(src.family[r.doc_id], folds),
                             include=_train_sources(src, v), train=train)
            for v in variants}


def per_family(refs: Sequence[ReferenceDoc], family: dict[str, str], value: Callable[[ReferenceDoc], float]) -> dict:
    """The mean over publishers of each publisher's mean ``value``, its 95% interval (publishers resampled)."""
    by_family: dict[str, list[float]] = defaultdict(list)
    for r in refs:
        by_family[family[r.doc_id]].append(value(r))
    fam = [float(np.mean(v)) for v in by_family.values()]
    return {"documents": len(refs), "families": len(by_family),
            "mean": float(np.mean(fam)) if fam else float("nan"), "ci95": bootstrap_ci(fam)}


def summarise(refs: Sequence[ReferenceDoc], family: dict[str, str], scores: dict[str, DocumentScores]) -> dict:
    p = pool([scores[r.doc_id] for r in refs])
    f = per_family(refs, family, lambda r: scores[r.doc_id].teds)
    return {"documents": f["documents"], "families": f["families"], "micro_steds": p.micro_steds,
            "macro_steds": p.macro_steds, "family_macro_steds": f["mean"], "family_ci95": f["ci95"]}


def _sets(src: Sources, refs: Sequence[ReferenceDoc]) -> dict[str, list[ReferenceDoc]]:
    out: dict[str, list[ReferenceDoc]] = defaultdict(list)
    for r in refs:
        out["all"].append(r)
        out[src.origin[r.doc_id]].append(r)
        out[f"{src.origin[r.doc_id]}/{r.group or 'other'}"].append(r)
    return dict(sorted(out.items()))


def level_only(src: Sources, refs: Sequence[ReferenceDoc], models: dict[str, HeldOutModels], folds: int,
               baselines: Sequence[str] = BASELINES) -> dict:
    predictors: dict[str, Callable[[ReferenceDoc], Any]] = {}
    for name, m in models.items():
        predictors[f"learned/{name}"] = lambda r, m=m: LearnedPredictor(
            booster=m.booster(fold_of(src.family[r.doc_id], folds)))
    predictors["learned/shipped"] = lambda r: "learned"
    for b in baselines:
        predictors[b] = lambda r, b=b: b
    out: dict[str, Any] = {}
    for pname, make in predictors.items():
        scores = {r.doc_id: score_level_only(r.document, r.headings, make(r), name=r.doc_id)[0] for r in refs}
        out[pname] = {"documents": {k: round(v.teds, 4) for k, v in scores.items()},
                      "sets": {k: summarise(v, src.family, scores) for k, v in _sets(src, refs).items()}}
        a = out[pname]["sets"]["all"]
        print(f"  level-only {pname:24} micro {a['micro_steds']:.3f} family-macro {a['family_macro_steds']:.3f}",
              file=sys.stderr, flush=True)
    return out


def end_to_end(src: Sources, refs: Sequence[ReferenceDoc], model: HeldOutModels | None, folds: int) -> dict:
    """Projected tree similarity and recall from the raw PDF, outline ignored, printed contents allowed."""
    out: dict[str, Any] = {}
    for name in ("learned", "font-size"):
        scores: dict[str, DocumentScores] = {}
        for r in refs:
            pred = name if name != "learned" or model is None else LearnedPredictor(
                booster=model.booster(fold_of(src.family[r.doc_id], folds)))
            scores[r.doc_id], _ = score_end_to_end(r.document, r.headings, pred, name=r.doc_id, contents="auto")
        sets = {}
        for k, v in _sets(src, refs).items():
            p = pool([scores[r.doc_id] for r in v])
            f = per_family(v, src.family, lambda r: scores[r.doc_id].pruned_teds)
            sets[k] = {"documents": f["documents"], "families": f["families"], "recall": p.recall,
                       "precision": p.precision, "projected_micro_steds": p.pruned_micro_steds,
                       "projected_family_macro": f["mean"], "family_ci95": f["ci95"]}
        out[name] = {"documents": {k: {"recall": round(v.recall, 4), "projected": round(v.pruned_teds, 4)}
                                   for k, v in scores.items()}, "sets": sets}
        a = sets["all"]
        print(f"  end-to-end {name:10} recall {a['recall']:.3f} projected {a['projected_micro_steds']:.3f}",
              file=sys.stderr, flush=True)
    return out


def write_report(res: dict, path: Path) -> None:
    lines = [f"# Levels across publishers (commit {res['commit']}, {res['date']})", "",
             f"`{res['command']}`", "",
             f"{res['counts']['documents']} reference documents from {res['counts']['families']} publishers "
             f"({res['counts']['by_origin']}); folds by publisher: {res['folds']}.", ""]
    for table, key in (("Level-only, outline documents", "level_only"),
                       ("Level-only, contents-labelled documents (weak labels)", "level_only_contents")):
        part = res.get(key)
        if not part:
            continue
        lines += [f"## {table}", "", "| predictor | set | docs | families | micro | macro | family macro [95% CI] |",
                  "|---|---|---|---|---|---|---|"]
        for pname, r in part.items():
            for s, v in r["sets"].items():
                ci = v["family_ci95"]
                lines.append(f"| {pname} | {s} | {v['documents']} | {v['families']} | {fmt(v['micro_steds'])} | "
                             f"{fmt(v['macro_steds'])} | {fmt(v['family_macro_steds'])} [{fmt(ci[0])}, {fmt(ci[1])}] |")
        lines.append("")
    if res.get("end_to_end"):
        lines += ["## End to end (outline ignored, contents allowed)", "",
                  "| predictor | set | docs | recall | precision | projected micro | family macro [95% CI] |",
                  "|---|---|---|---|---|---|---|"]
        for pname, r in res["end_to_end"].items():
            for s, v in r["sets"].items():
                ci = v["family_ci95"]
                lines.append(f"| {pname} | {s} | {v['documents']} | {fmt(v['recall'])} | {fmt(v['precision'])} | "
                             f"{fmt(v['projected_micro_steds'])} | {fmt(v['projected_family_macro'])} "
                             f"[{fmt(ci[0])}, {fmt(ci[1])}] |")
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.corpus_levels", description=__doc__.split("\n\n")[1])
    ap.add_argument("--data", type=Path, default=data_dir(), help="the shared data folder")
    ap.add_argument("--corpus", default=str(CACHE / "corpus"), help="the built corpus (eval.bench.corpus_build)")
    ap.add_argument("--synthetic", default=None, help="a built synthetic corpus (training only)")
    ap.add_argument("--cache", default=str(CACHE / "levels"), help="shared documents and trained models")
    ap.add_argument("--extract-cache", default=str(CACHE / "corpus-extract"),
                    help="extracted corpus and synthetic documents (corpus_build's --cache)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--variants", default="shared,corpus",
                    help=f"training sources, of {', '.join(VARIANTS)} ('' for the shipped model and baselines only)")
    ap.add_argument("--end-to-end", default=None, metavar="VARIANT",
                    help="also score from the raw PDF with this variant's models")
    ap.add_argument("--json", default=None)
    ap.add_argument("--report", default=None)
    args = ap.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown or ("synthetic" in variants and not args.synthetic):
        ap.error(f"unknown variants {unknown}" if unknown else "the synthetic variant needs --synthetic DIR")
    if not Path(args.corpus, "manifest.jsonl").is_file():
        ap.error(f"no corpus at {args.corpus}: build it with python -m eval.bench.corpus_build --out {args.corpus}")
    t0 = time.perf_counter()
    src = load_sources(args)
    models = fold_models(src, variants, args.folds, Path(args.cache))
    by_origin: dict[str, int] = defaultdict(int)
    for r in src.refs:
        by_origin[f"{src.origin[r.doc_id]}/{src.label[r.doc_id]}"] += 1
    res: dict[str, Any] = {**run_info("eval.bench.corpus_levels", argv), "folds": args.folds,
                           "counts": {"documents": len(src.refs), "families": len(set(src.family.values())),
                                      "by_origin": dict(sorted(by_origin.items()))},
                           "families": src.family}
    res["level_only"] = level_only(src, src.scored("outline"), models, args.folds)
    res["level_only_contents"] = level_only(src, src.scored("contents"), models, args.folds, baselines=())
    if args.end_to_end:
        res["end_to_end"] = end_to_end(src, src.scored("outline"), models.get(args.end_to_end), args.folds)
    res["train_seconds"] = sum(m.train_seconds for m in models.values())
    res["total_seconds"] = time.perf_counter() - t0
    save_results(res, args.json, args.report, write_report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
