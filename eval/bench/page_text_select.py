"""Which page-text configuration ships: chosen by cross-validation over families.

    nice -n 10 python -m eval.bench.page_text_select [--folds 4] [--jobs 2] [--out structrag-out/page_text_select/page-text-select.json]

The first design (the four :data:`retrievers.rank.features.PAGE_TEXT_FEATURES`, monotone in the evidence
ones) lifted longdoc above page-BM25 but cost the filings 0.065 mAP leave-one-family-out.  The candidates below were fixed after that result and before
this ran; the choice among them must not read the leave-one-family-out folds, so it is made the
way the shipped design was chosen (``python -m eval.bench.nested run --final``): the families of
every query set are dealt round-robin (by name) into ``--folds`` groups, a family never split,
each group is held out in turn (with every training question on its documents), and the
criterion is the mean over families of their mAP, every family counting alike.

Candidates:

* ``none``: the portable features without the page-text ones (what shipped before);
* ``all``: with the four page-text features, monotone (the first design);
* ``all-free``: the same without monotone constraints on the page-text features (a prior learnt
  on 10-K questions may then turn a page-BM25 match down);
* ``rel-rank``: only ``page_text_rel`` and ``page_text_rank``, monotone;
* ``gated-amount`` / ``gated-concept`` (added after the first design's result, fixed before this ran again): ``all-free``
  with the page-text features unknown (NaN) on questions that ask for an amount (``q_amount``) / that
  name a concept (``q_concept``): the filings' loss came from statement questions whose best whole
  page is not the answer.  ``gated-concept`` is :data:`retrievers.rank.features.OPEN_PAGE_FEATURES`, which
  it chose and which ships; ``none`` is the portable set without either.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from eval.bench.common import REPO, out_path
from eval.bench.generalise import (
    EN_QUERIES, ZH_QUERIES, load_parts, per_query, rows_to_run, training_sets,
)
from retrievers.rank.features import (
    OPEN_PAGE_FEATURES, PAGE_TEXT_FEATURES, PORTABLE_FEATURES, available_features, evidence_constraints,
)
from retrievers.rank.training import leave_one_family_out

CANDIDATES = ("none", "all", "all-free", "rel-rank", "gated-amount", "gated-concept")
#: the constraints of the monotone forms (the direction in which each can only help)
PAGE_MONOTONE = {"page_text_rel": 1, "page_text_z": 1, "page_text_rank": -1}


def candidate(name: str, feats: tuple[str, ...]) -> tuple[tuple[str, ...], dict[str, int]]:
    """(features, monotone constraints) of candidate ``name``."""
    base = tuple(f for f in feats if f not in PAGE_TEXT_FEATURES and f not in OPEN_PAGE_FEATURES)
    if name == "none":
        return base, evidence_constraints(base)
    if name == "gated-concept":
        names = base + OPEN_PAGE_FEATURES
        return names, evidence_constraints(names)
    names = base + (("page_text_rel", "page_text_rank") if name == "rel-rank" else PAGE_TEXT_FEATURES)
    mono = evidence_constraints(names)  # the page-text features are not among them (the chosen form)
    if name not in ("all-free", "gated-amount", "gated-concept"):
        mono.update({k: v for k, v in PAGE_MONOTONE.items() if k in names})
    return names, mono


def gated(ts, name: str):
    """``ts`` with the page-text columns NaN on the questions candidate ``name`` gates off (else ``ts``)."""
    if not name.startswith("gated-"):
        return ts
    if name == "gated-concept":
        return ts  # the library's OPEN_PAGE_FEATURES are gated already
    cue = {"gated-amount": "q_amount"}[name]
    X = ts.X.copy()
    off = X[:, ts.features.index(cue)] == 1
    for f in PAGE_TEXT_FEATURES:
        if f in ts.features:
            X[off, ts.features.index(f)] = np.nan
    return ts._replace(X=X)


def fold_of(queries, set_of: dict[str, str], folds: int) -> dict[str, str]:
    """Family -> fold group: each set's families, sorted by name, dealt round-robin (a family never split)."""
    by_set = defaultdict(set)
    for q in queries:
        by_set[set_of[q.qid]].add(q.family)
    out, k = {}, 0
    for s in sorted(by_set):
        for fam in sorted(by_set[s]):
            out[fam] = f"fold{k % folds}"
            k += 1
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.page_text_select", description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=str(REPO / ".cache"))
    ap.add_argument("--en-model", default="minilm")
    ap.add_argument("--zh-model", default="e5-jieba-search")
    ap.add_argument("--zh-queries", default=str(ZH_QUERIES))
    ap.add_argument("--en-queries", default=str(EN_QUERIES))
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--candidates", default=",".join(CANDIDATES))
    ap.add_argument("--trees", type=int, default=500)
    ap.add_argument("--learning-rate", type=float, default=0.01)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=out_path("page_text_select", "page-text-select.json"))
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    t0 = time.perf_counter()
    parts, opened = load_parts(args)
    feats = tuple(f for f in PORTABLE_FEATURES + PAGE_TEXT_FEATURES
                  if all(f in available_features(p.index.corpus) for p in parts))
    test, train, _ = training_sets(parts, feats)
    set_of = {q.qid: p.name for p in parts for q in p.queries}
    part_of = {q.qid: p for p in parts for q in p.queries}
    fold = fold_of(test.queries, set_of, args.folds)
    family = {q.qid: q.family for q in test.queries}
    ftest = test._replace(queries=[q._replace(family=fold[q.family]) for q in test.queries])
    ftrain = train._replace(queries=[q._replace(family=fold.get(q.family, q.family)) for q in train.queries])
    result = {"folds": args.folds, "fold_of": fold, "candidates": {}, "command": " ".join(
        ["python", "-m", "eval.bench.page_text_select", *(argv or sys.argv[1:])])}
    for c in args.candidates.split(","):
        names, mono = candidate(c, feats)
        ranked = leave_one_family_out(gated(ftest, c), train=gated(ftrain, c), features=names, seed=0, balance="none", monotone=mono,
                                      n_estimators=args.trees, learning_rate=args.learning_rate, n_jobs=args.jobs)
        run = rows_to_run(ftest, ranked, part_of)
        pq = per_query(run, test.queries)
        fam_map = defaultdict(list)
        for q in test.queries:
            fam_map[family[q.qid]].append(pq[q.qid]["map"])
        set_map = defaultdict(list)
        for q in test.queries:
            set_map[set_of[q.qid]].append(pq[q.qid]["map"])
        result["candidates"][c] = {
            "criterion_mean_family_map": round(float(np.mean([np.mean(v) for v in fam_map.values()])), 4),
            "per_set_map": {s: round(float(np.mean(v)), 4) for s, v in set_map.items()},
            "features": list(names)}
        print(f"[{time.perf_counter() - t0:7.1f}s] {c}: {result['candidates'][c]['criterion_mean_family_map']} "
              f"{result['candidates'][c]['per_set_map']}", file=sys.stderr, flush=True)
    best = max(result["candidates"], key=lambda c: result["candidates"][c]["criterion_mean_family_map"])
    result["chosen"] = best
    result["seconds"] = round(time.perf_counter() - t0, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False))
    print(json.dumps({c: v["criterion_mean_family_map"] for c, v in result["candidates"].items()} | {"chosen": best}))
    for ix in opened.values():
        ix.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
