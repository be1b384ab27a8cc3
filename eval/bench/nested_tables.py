"""Markdown tables of a nested run (``python -m eval.bench.nested render``)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from eval.bench.common import bootstrap_ci, paired_diff
from eval.bench.nested_data import BASELINES, Data, pages_ap, ranked_pages, top_pages

__all__ = ["render"]


def _r5(pages: list[int], rel: set[int]) -> float:
    return float(any(p in rel for p in pages[:5]))


def render(args) -> int:
    """Markdown tables of ``--out`` (with the old rankers and the fixed-design LOFO of ``--fixed``)."""
    from retrievers.rank.ranker import LambdaRanker

    data = Data(Path(args.cache))
    state = json.loads(Path(args.out).read_text())
    fixed = json.loads(Path(args.fixed).read_text())["groups"] if Path(args.fixed).exists() else {}
    rel = {q["qid"]: set(q["relevant"]) for q in data.test_q}
    per: dict[str, dict[str, tuple[float, float]]] = defaultdict(dict)  # method -> qid -> (AP, R@5)
    for m in BASELINES:
        for q in data.test_q:
            pages = data.meta["baselines"][m].get(q["qid"], [])
            per[m][q["qid"]] = (pages_ap([[p] for p in pages], rel[q["qid"]]), _r5(pages, rel[q["qid"]]))
    if Path(args.old_model).exists():
        old = LambdaRanker.load(args.old_model)
        cols = [data.features.index(f) for f in old.features]
        for i, q in enumerate(data.test_q):
            ranked = ranked_pages(data, i, old.predict(data.test_X[data.test_sl[i]][:, cols]), 0.0)
            per["old"][q["qid"]] = (pages_ap(ranked, rel[q["qid"]]), _r5(top_pages(ranked), rel[q["qid"]]))
    cv = state.get("company_cv", {})
    for q, ap in cv.get("before", {}).get("ap_seed0", {}).items():
        per["old"][q] = (ap, float("nan"))  # the filings: the old design's company-out CV
    for name, o in state["outer"].items():
        for q, ap in o["ap"].items():
            per["nested"][q] = (ap, _r5(o["top10"][q], rel[q]))
    groups: dict[str, list[str]] = defaultdict(list)
    for q in data.test_q:
        groups[f"set:{q['set']}"].append(q["qid"])
        if q["set"] in ("filings", "longdoc"):
            groups[f"family:{q['set']}:{q['family']}"].append(q["qid"])
    keys = [k for k in ("set:filings", "set:longdoc", "set:prospectus-zh", "set:prospectus-en") if k in groups]
    fam_keys = sorted(k for k in groups if k.startswith("family:"))
    lines: list[str] = []

    def mean(m, qids, j=0):
        v = [per[m][q][j] for q in qids if q in per[m]]
        return float(np.mean(v)) if v else float("nan")

    def ci(m, qids, j=0):
        lo, hi = bootstrap_ci([per[m][q][j] for q in qids if q in per[m]])
        return f"[{lo:.2f}, {hi:.2f}]"

    def fixed_map(k):
        g = fixed.get(k.replace("set:", "set:") if k.startswith("set:") else k, {})
        return g.get("ranker:portable", {}).get("map", float("nan"))

    lines.append("### Old rankers, the fixed new design, the nested choice (mAP)\n")
    lines.append("| group | n | BM25 | hybrid | old shipped (held out) | new design, LOFO (fixed config) | "
                 "**nested LOFO** | nested − max(BM25, hybrid) | nested − old |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k in keys + fam_keys:
        qids = groups[k]
        base = max(mean("bm25", qids), mean("hybrid", qids))
        nm, om = mean("nested", qids), mean("old", qids)
        lines.append(f"| {k.split(':', 1)[1]} | {len(qids)} | {mean('bm25', qids):.3f} | {mean('hybrid', qids):.3f} | "
                     f"{om:.3f} | {fixed_map(k):.3f} | **{nm:.3f}** | {nm - base:+.3f} | {nm - om:+.3f} |")

    lines.append("\n### Nested leave-one-family-out beside the baselines (mAP [95%] / R@5)\n")
    lines.append("| group | n | page-BM25 | BM25 | dense | hybrid | **nested ranker** | nested − max(BM25, hybrid) [95%] |")
    lines.append("|---|---:|---|---|---|---|---|---|")
    for k in keys + fam_keys:
        qids = groups[k]
        cells = [f"{mean(m, qids):.3f} / {mean(m, qids, 1):.3f}" for m in BASELINES]
        b = "bm25" if mean("bm25", qids) >= mean("hybrid", qids) else "hybrid"
        d = paired_diff({q: {"map": per["nested"][q][0]} for q in qids}, {q: {"map": per[b][q][0]} for q in qids}, qids)
        lines.append(f"| {k.split(':', 1)[1]} | {len(qids)} | " + " | ".join(cells) +
                     f" | **{mean('nested', qids):.3f} {ci('nested', qids)} / {mean('nested', qids, 1):.3f}** | "
                     f"{d['diff']:+.3f} [{d['ci95'][0]:+.2f}, {d['ci95'][1]:+.2f}] vs {b} |")

    lines.append("\n### The configuration each outer fold chose (inner CV over its training families)\n")
    lines.append("| outer fold | families | questions | chosen | inner criterion (best) | outer mAP |")
    lines.append("|---|---|---:|---|---:|---:|")
    for name, o in state["outer"].items():
        top = next(iter(o["top"].values()))
        lines.append(f"| {name} | {', '.join(o['families'])} | {len(o['ap'])} | {o['label']} | {top:.3f} | "
                     f"{np.mean(list(o['ap'].values())):.3f} |")
    if "final" in state:
        f = state["final"]
        lines.append(f"\nInner CV over every family (the shipped choice): **{f['label']}**. Best ten: " +
                     "; ".join(f"{k} {v:.3f}" for k, v in f["top"].items()))
    counts = Counter(o["label"] for o in state["outer"].values())
    lines.append("\nChosen by the outer folds: " + "; ".join(f"{k} ×{v}" for k, v in counts.most_common()))
    # targets
    fam_all = [k for k in fam_keys] + [k for k in keys if k in ("set:prospectus-zh", "set:prospectus-en")]
    ok = [k for k in fam_all if mean("nested", groups[k]) >= max(mean("bm25", groups[k]), mean("hybrid", groups[k])) - 0.01]
    lines.append(f"\nFamilies with nested ≥ max(BM25, hybrid) − 0.01: {len(ok)} of {len(fam_all)}; below: " +
                 ", ".join(f"{k.split(':', 1)[1]} ({mean('nested', groups[k]) - max(mean('bm25', groups[k]), mean('hybrid', groups[k])):+.3f}, "
                           f"n={len(groups[k])})" for k in fam_all if k not in ok))
    if cv:
        c, b = cv.get("chosen", {}), cv.get("before", {})
        lines.append(f"\nCompany-out CV on the filings (trained on the filings alone): chosen configuration "
                     f"{c.get('mean', float('nan')):.3f} ± {c.get('sd', 0):.3f} over seeds {', '.join(c.get('map', {}))} "
                     f"({c.get('ratio', float('nan')):.2f}× BM25 {cv['bm25']:.3f}); the design shipped before "
                     f"(raw features, unweighted, 500 trees) {b.get('mean', float('nan')):.3f} ({b.get('ratio', float('nan')):.2f}×)")
    text = "\n".join(lines)
    print(text)
    if args.report:
        Path(args.report).write_text(text + "\n", encoding="utf-8")
    return 0
