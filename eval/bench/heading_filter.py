"""A learned filter over the rules' headings, trained across publishers, scored with publishers held out.

    nice python -m eval.bench.heading_filter --corpus /work/corpus/built [--synthetic /work/corpus/synthetic] \
        [--extract-cache /work/corpus/extract] [--folds 5] [--recall 0.98] [--json F] [--report F.md]

Material: :mod:`eval.bench.heading_filter_data` (detected headings with the outline ignored, their features,
training labels from the corpus's outlines and contents, the synthetic documents' exact headings and
negative lines, and the development labels).  The filter is a LightGBM classifier over the layout
headings only (a heading read from the printed contents is kept as it is).

**Protocol.**  Every real publisher (corpus family, development family) falls in one of ``--folds`` folds by
the sha1 of its name (:func:`eval.bench.corpus_levels.fold_of`); a document is scored by a model trained on
the other folds and the synthetic documents only.  The threshold is chosen inside the training folds: the
training folds' out-of-fold probabilities (inner folds, the same split) of the real documents' true headings,
the highest threshold that keeps ``--recall`` of them.  The round 1 and round 2 labels
(``eval/data/heading_precision_corpus_round*.jsonl``) are never trained on; they score precision (macro over
documents, bootstrap 95% interval) and true headings lost, the rules alone beside rules + filter, with the
font-size baseline (:mod:`eval.bench.precision`) on the same labels.  Outline recall is over the corpus's
outline documents (entries printed on their page, page window 1).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from eval.bench.common import CACHE, bootstrap_ci, data_dir, fmt, run_info, save_results
from eval.bench.corpus_levels import fold_of
from eval.bench.heading_filter_data import collect
from eval.bench.precision import macro, match_labels, precision

PARAMS = dict(n_estimators=300, learning_rate=0.05, num_leaves=15, min_child_samples=20, subsample=0.8,
              subsample_freq=1, colsample_bytree=0.8, reg_lambda=1.0, verbose=-1)


def fold(d: Mapping[str, Any], folds: int) -> str | None:
    """The document's fold (None: synthetic, always trained on, never scored)."""
    origin, name = d["family"].split(":", 1)
    return None if origin == "synthetic" else fold_of(name, folds)


def _rows(docs: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, y, real = [], [], []
    for d in docs:
        for row, v, h in zip(d["x"], d["y"], d["heads"]):
            if v is not None and h[2] == "layout":
                x.append(row)
                y.append(v)
                real.append(d["origin"] != "synthetic")
    return np.asarray(x, float), np.asarray(y, int), np.asarray(real, bool)


def fit(docs: Sequence[Mapping[str, Any]], seed: int = 0):
    """A classifier over the labelled layout headings of ``docs``, classes balanced, real and synthetic equal."""
    import lightgbm as lgb

    x, y, real = _rows(docs)
    w = np.ones(len(y))
    for r in (True, False):  # each of the four (real?, class) cells weighs a quarter
        for c in (0, 1):
            m = (real == r) & (y == c)
            if m.any():
                w[m] = 0.25 * len(y) / m.sum()
    model = lgb.LGBMClassifier(random_state=seed, **PARAMS)
    model.fit(x, y, sample_weight=w)
    return model


def probabilities(model, d: Mapping[str, Any]) -> np.ndarray:
    return model.predict_proba(np.asarray(d["x"], float))[:, 1] if d["x"] else np.zeros(0)


def choose_threshold(train: Sequence[Mapping[str, Any]], folds: int, recall: float, seed: int = 0) -> float:
    """The highest threshold keeping ``recall`` of the real training documents' true layout headings, out of fold."""
    groups = sorted({fold(d, folds) for d in train} - {None})
    pos: list[float] = []
    for g in groups:
        inner = fit([d for d in train if fold(d, folds) != g], seed)
        for d in (d for d in train if fold(d, folds) == g):
            p = probabilities(inner, d)
            pos += [float(q) for q, v, h in zip(p, d["y"], d["heads"]) if v == 1 and h[2] == "layout"]
    if not pos:
        return 0.5
    return float(np.quantile(np.asarray(pos), 1.0 - recall))


def keep_mask(d: Mapping[str, Any], p: np.ndarray, threshold: float) -> list[bool]:
    return [h[2] != "layout" or bool(q >= threshold) for h, q in zip(d["heads"], p)]


def score(d: Mapping[str, Any], keep: Sequence[bool]) -> dict[str, Any]:
    """Per round: labelled precision and true labels lost; outline recall, of one document's kept headings."""
    from eval.trees import heading_prf

    heads = [(h[0], h[1]) for h, k in zip(d["heads"], keep) if k]
    out: dict[str, Any] = {"detected": len(heads)}
    ref = [tuple(r) for r in d["ref"]]
    out["outline_recall"] = (heading_prf([(t, 1, p) for p, t in heads], ref, page_window=1).recall
                             if ref and d["label"] == "outline" else math.nan)
    if d["origin"] == "dev":  # the development labels, as training labels: this document's family held out
        ys = [(v, k) for v, k in zip(d["y"], keep) if v is not None]
        kept = [v for v, k in ys if k]
        out["dev"] = {"precision": sum(kept) / len(kept) if kept else math.nan,
                      "lost_true": sum(1 for v, k in ys if v and not k),
                      "removed_false": sum(1 for v, k in ys if not v and not k)}
    for rnd in sorted({lab["round"] for lab in d["eval_labels"]}):
        labs = [lab for lab in d["eval_labels"] if lab["round"] == rnd]
        m = match_labels(heads, labs, d["sha1"])
        out[rnd] = {"precision": precision(m["kept"]), "lost_true": sum(1 for lab in m["lost"] if lab["label"]),
                    "removed_false": sum(1 for lab in m["lost"] if not lab["label"])}
    return out


def run(docs: Sequence[Mapping[str, Any]], folds: int, recall: float, seed: int = 0) -> dict[str, Any]:
    rows, thresholds = [], {}
    for g in sorted({fold(d, folds) for d in docs} - {None}):
        train = [d for d in docs if fold(d, folds) != g]
        held = [d for d in docs if fold(d, folds) == g and d["origin"] in ("corpus", "dev")]
        if not held:
            continue
        t = choose_threshold(train, folds, recall, seed)
        model = fit(train, seed)
        thresholds[g] = t
        for d in held:
            p = probabilities(model, d)
            base = {}
            for rnd in sorted({lab["round"] for lab in d["eval_labels"]}):
                labs = [lab for lab, s in zip(d["eval_labels"], d["baseline"]) if lab["round"] == rnd and s]
                base[rnd] = precision(labs)
            rows.append({"doc": d["doc"], "family": d["family"], "fold": g, "label": d["label"],
                         "rules": score(d, [True] * len(d["heads"])), "filter": score(d, keep_mask(d, p, t)),
                         "font_size": base})
        print(f"fold {g}: threshold {t:.3f}, {len(held)} documents held out", file=sys.stderr)
    return summarise(rows, thresholds, recall)


def _stat(vals: Sequence[float]) -> dict[str, Any]:
    v = [x for x in vals if not math.isnan(x)]
    return {"macro": macro(v), "ci95": bootstrap_ci(v), "docs": len(v)}


def summarise(rows: Sequence[Mapping[str, Any]], thresholds: Mapping[str, float], recall: float) -> dict[str, Any]:
    out: dict[str, Any] = {"rows": list(rows), "thresholds": dict(thresholds), "recall_target": recall, "rounds": {}}
    for rnd in ("round1", "round2", "dev"):
        rs = [r for r in rows if rnd in r["rules"]]
        res: dict[str, Any] = {}
        for arm in ("rules", "filter"):
            res[arm] = _stat([r[arm][rnd]["precision"] for r in rs])
            res[arm]["lost_true"] = sum(r[arm][rnd]["lost_true"] for r in rs)
            res[arm]["removed_false"] = sum(r[arm][rnd]["removed_false"] for r in rs)
        res["font_size"] = _stat([r["font_size"].get(rnd, math.nan) for r in rs])
        diffs = [r["filter"][rnd]["precision"] - r["rules"][rnd]["precision"] for r in rs
                 if not math.isnan(r["filter"][rnd]["precision"]) and not math.isnan(r["rules"][rnd]["precision"])]
        res["gain"] = {"mean": macro(diffs), "ci95": bootstrap_ci(diffs)}
        out["rounds"][rnd] = res
    for arm in ("rules", "filter"):
        corpus = [r for r in rows if r["family"].startswith("corpus:")]
        out[f"{arm}_outline_recall"] = _stat([r[arm]["outline_recall"] for r in corpus])
        out[f"{arm}_detected"] = sum(r[arm]["detected"] for r in corpus)
    return out


def report(res: Mapping[str, Any], path: Path) -> None:
    path.write_text(to_markdown(res), encoding="utf-8")


def to_markdown(res: Mapping[str, Any]) -> str:
    info = res.get("info", {})
    L = [f"# Learned heading filter, publishers held out ({info.get('commit', '')})", "",
         f"Command: `{info.get('command', '')}`", "",
         f"Thresholds per fold (kept {res['recall_target']:.2f} of the training folds' true headings): "
         + ", ".join(f"{g}: {t:.3f}" for g, t in sorted(res["thresholds"].items())), "",
         "| labels | rules precision | rules + filter | gain (95% CI) | font-size baseline | true lost rules → filter |"
         " false removed |", "|---|---:|---:|---:|---:|---:|---:|"]
    for rnd, r in res["rounds"].items():
        a, b, f, g = r["rules"], r["filter"], r["font_size"], r["gain"]
        name = {"round1": "corpus round 1", "round2": "corpus round 2", "dev": "development labels"}[rnd]
        L.append(f"| {name} ({a['docs']} docs) | {fmt(a['macro'])} [{fmt(a['ci95'][0])}, {fmt(a['ci95'][1])}] | "
                 f"{fmt(b['macro'])} [{fmt(b['ci95'][0])}, {fmt(b['ci95'][1])}] | {g['mean']:+.3f} "
                 f"[{g['ci95'][0]:+.3f}, {g['ci95'][1]:+.3f}] | {fmt(f['macro'])} ({f['docs']} docs) | "
                 f"{a['lost_true']} → {b['lost_true']} | {b['removed_false']} |")
    a, b = res["rules_outline_recall"], res["filter_outline_recall"]
    L += ["", f"- outline recall on the corpus's outline documents ({a['docs']}): rules {fmt(a['macro'])} "
          f"[{fmt(a['ci95'][0])}, {fmt(a['ci95'][1])}], rules + filter {fmt(b['macro'])} [{fmt(b['ci95'][0])}, "
          f"{fmt(b['ci95'][1])}]; headings detected {res['rules_detected']} → {res['filter_detected']}"]
    if "speed" in res:
        s = res["speed"]
        L.append(f"- speed, whole parse (outline ignored), {s['documents']} documents, {s['pages']} pages: "
                 f"{s['base_pps']:.0f} pages/s without the filter, {s['filter_pps']:.0f} pages/s with it")
    return "\n".join(L) + "\n"


def save(docs: Sequence[Mapping[str, Any]], folds: int, recall: float, out: Path, seed: int = 0) -> float:
    """Train on every document, the threshold chosen across all the publisher folds; write the model's files."""
    import json

    from structrag.headings.filter_features import FEATURES

    t = choose_threshold(docs, folds, recall, seed)
    model = fit(docs, seed)
    out.mkdir(parents=True, exist_ok=True)
    model.booster_.save_model(str(out / "heading_filter.txt"))
    meta = {"features": list(FEATURES), "threshold": round(t, 6), "recall_target": recall, "folds": folds,
            "documents": len(docs), "trained_by": "python -m eval.bench.heading_filter --save"}
    (out / "heading_filter.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return t


def speed(folder: Path, n: int) -> dict[str, Any]:
    """Whole-parse pages/s (:func:`structrag.pipeline.parse_pdf`, outline ignored) without and with the filter,
    on the first ``n`` documents of ``folder``'s manifest, the two runs alternating document by document."""
    import json
    import time
    import warnings

    from structrag.pipeline import parse_pdf

    rows = [json.loads(x) for x in (folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    secs = {False: 0.0, True: 0.0}
    pages = 0
    for r in rows[:n]:
        path = folder / f"{r['doc_id']}.pdf"
        for on in (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                doc = parse_pdf(path, outline="ignore", heading_filter=on, progress=False)
                secs[on] += time.perf_counter() - t0
        pages += doc.document.page_count
    return {"documents": min(n, len(rows)), "pages": pages, "base_pps": pages / secs[False],
            "filter_pps": pages / secs[True]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.heading_filter", description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, required=True, help="the many-publisher corpus build")
    ap.add_argument("--synthetic", type=Path, default=None, help="the synthetic build (training only)")
    ap.add_argument("--data", type=Path, default=None, help="shared data folder (development labels)")
    ap.add_argument("--no-dev", action="store_true", help="leave the development labels out")
    ap.add_argument("--extract-cache", type=Path, default=None, help="extraction cache of the corpus build")
    ap.add_argument("--cache", type=Path, default=CACHE / "heading_filter")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--recall", type=float, default=0.98, help="share of training true headings kept")
    ap.add_argument("--save", type=Path, default=None,
                    help="instead: train on everything and write the model here (structrag/headings/models)")
    ap.add_argument("--speed", type=int, default=0, metavar="N",
                    help="also time the whole parse without and with the filter on the corpus's first N documents")
    ap.add_argument("--json", default=None)
    ap.add_argument("--report", default=None)
    args = ap.parse_args(argv)
    data = None if args.no_dev else data_dir(explicit=args.data)
    docs = collect(args.corpus, args.synthetic, data if data is not None and data.is_dir() else None,
                   cache=args.cache, extract_cache=args.extract_cache)
    if args.save is not None:
        t = save(docs, args.folds, args.recall, args.save)
        print(f"model and threshold {t:.3f} written to {args.save}", file=sys.stderr)
        return 0
    res = run(docs, args.folds, args.recall)
    if args.speed:
        res["speed"] = speed(args.corpus, args.speed)
    res["info"] = run_info("eval.bench.heading_filter", argv)
    save_results(res, args.json, args.report, report)
    sys.stdout.write(to_markdown(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
