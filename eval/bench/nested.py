"""Nested leave-one-family-out: the ranker's configuration chosen without looking at the held-out family.

    nice -n 10 python -m eval.bench.nested prepare        # features + baselines, cached (.cache/gen/nested-*)
    nice -n 10 python -m eval.bench.nested run [--jobs 2] [--inner-folds 4]
    python -m eval.bench.nested render                    # tables of structrag-out/nested/nested.json

The query sets and families are those of :mod:`eval.bench.generalise` (filings by company,
longdoc by ``family``, the Chinese prospectus questions, the English prospectus-style
questions).  For each **outer** held-out family:

1. the training queries are every other family's, without any question on one of the
   held-out family's documents (two sets share filings);
2. the configuration is chosen by **inner** cross-validation over those training families
   only: the training families are split into ``--inner-folds`` groups (each query set
   spread over the groups; a family is never split), each group is held out in turn,
   every configuration is trained on the rest and scored on the held-out group; the
   criterion is the mean over the inner held-out families of their mAP (every family
   counts alike, however many questions it has);
3. the chosen configuration is trained on all the outer training queries and scores the
   outer family.  Nothing of the outer family is seen before its score.

Configurations (the grid was fixed before any run):

* features: ``raw`` (the 22 first features: raw BM25 and cosine values and their
  relative forms), ``portable`` (the per-query normalised set without the section
  mentions), ``both`` (their union);
* section mentions (``sec_mention``, ``q_sec_mention``): on / off;
* group weights: family-balanced / none;
* trees: 100, 250, 500, 1000 at learning rate 0.01 (one 1000-tree model per fold,
  scored at each prefix);
* a safeguard: the ranker's order fused with the BM25 order of the same candidates by
  weighted reciprocal rank, ``(1 - w) / (60 + rank_ranker) + w / (60 + rank_bm25)``,
  ``w`` in 0, 0.25, 0.5 (0 = the ranker alone).

``--final`` chooses the configuration the same way with every family (inner CV over all
families) -- the configuration the shipped rankers are trained with.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from eval.bench import common
from eval.bench.common import REPO
from eval.bench.generalise import (
    EN_QUERIES, RAW22, ZH_QUERIES, all_baseline_runs, load_parts, training_sets,
)
from eval.bench.nested_data import BASELINES, Data, pages_ap, query_ap, ranked_pages, top_pages
from retrievers.rank.features import (
    PORTABLE_FEATURES, QUERY_DENSE, QUERY_LEXICAL, available_features,
)

MENTIONS = ("sec_mention", "q_sec_mention")
# the portable set of the first nested run (without same_word_anc, which the second added)
PORTABLE_CORE = tuple(f for f in PORTABLE_FEATURES if f not in MENTIONS + ("same_word_anc",))
FEATURE_SETS = {
    "raw": RAW22,
    "portable": PORTABLE_CORE,
    "both": tuple(dict.fromkeys(RAW22 + PORTABLE_CORE)),
    # + idf-weighted coverage and the query-level features (one value per question)
    "portable+q": PORTABLE_CORE + QUERY_LEXICAL + QUERY_DENSE,
    # + the count of distinct query words in the ancestor headings (a count of words, not a score)
    "portable+swa": PORTABLE_CORE + ("same_word_anc",),
}
#: the grid searched (``--grid-*`` narrow it; the defaults are the grid of the first run)
GRID = {"features": ("raw", "portable", "both"), "mentions": (True, False), "balance": ("family", "none")}
TREES = (100, 250, 500, 1000)
FUSION = (0.0, 0.25, 0.5)


def fit_configs():
    """(features, mentions, balance): one model each per fold."""
    return list(itertools.product(GRID["features"], GRID["mentions"], GRID["balance"]))


def config_names(fs: str, mentions: bool) -> tuple[str, ...]:
    """``fs`` = a FEATURE_SETS key, with ``/mono`` for monotone evidence constraints."""
    return FEATURE_SETS[fs.removesuffix("/mono")] + (MENTIONS if mentions else ())


def config_label(c) -> str:
    fs, m, b, t, w = c
    return f"{fs}{'+mentions' if m else ''}, {'family-weighted' if b == 'family' else 'unweighted'}, {t} trees" + \
        (f", BM25 fusion w={w}" if w else "")


# --- prepare ----------------------------------------------------------------------------------------
def prepare(args) -> int:
    cache = Path(args.cache)
    t0 = time.perf_counter()
    parts, opened = load_parts(args)
    runs = all_baseline_runs(parts, cache)
    print(f"[{time.perf_counter() - t0:.0f}s] baselines", file=sys.stderr, flush=True)
    feats = tuple(f for f in dict.fromkeys(PORTABLE_FEATURES + RAW22 + QUERY_LEXICAL + QUERY_DENSE)
                  if all(f in available_features(p.index.corpus) for p in parts))
    test, train, _ = training_sets(parts, feats)
    print(f"[{time.perf_counter() - t0:.0f}s] features: {len(test.queries)} test groups, {len(train.queries)} "
          f"training groups, {train.X.shape[0]} rows", file=sys.stderr, flush=True)
    part_of = {q.qid: p for p in parts for q in p.queries}
    set_of = {q.qid: p.name for p in parts for q in p.queries}
    cand_pages = []
    for q, sl in zip(test.queries, test.query_slices()):
        c = part_of[q.qid].index.corpus
        cand_pages.append([c.pages_of(int(r)).tolist() for r in test.rows[sl]])
    meta = {
        "features": list(feats),
        "test": [{"qid": q.qid, "family": q.family, "set": set_of[q.qid], "doc": q.doc,
                  "relevant": list(q.relevant_pages), "source": q.source} for q in test.queries],
        "train": [{"qid": q.qid, "family": q.family, "doc": q.doc} for q in train.queries],
        "cand_pages": cand_pages,
        "baselines": {m: {q: r for q, r in runs[m].items()} for m in BASELINES},
        "indexes": sorted({f"{Path(p.index.path).name} ({p.index.dense_model}, cjk={p.index.tokenizer.cjk})"
                           for p in parts}),
        "queries_sha1": hashlib.sha1(b"".join(Path(f).read_bytes() for f in
                                              [args.zh_queries, args.en_queries]) ).hexdigest(),
    }
    out = cache / "gen"
    np.savez_compressed(out / "nested-features.npz", test_X=test.X, test_y=test.y, test_group=test.group,
                        test_rows=test.rows, train_X=train.X, train_y=train.y, train_group=train.group)
    (out / "nested-meta.json").write_text(json.dumps(meta, ensure_ascii=False))
    for ix in opened.values():
        ix.close()
    print(f"[{time.perf_counter() - t0:.0f}s] written {out}/nested-*", file=sys.stderr)
    return 0


# --- fitting (worker processes) ---------------------------------------------------------------------
_DATA: Data | None = None


def _init(cache: str) -> None:
    global _DATA
    os.environ["OMP_NUM_THREADS"] = "1"
    _DATA = Data(Path(cache))


def _fit_score(task) -> dict:
    """Fit one (features, mentions, balance) model on ``train`` groups; the scores of ``test`` queries
    at every tree count."""
    from retrievers.rank.ranker import LambdaRanker
    from retrievers.rank.training import family_weights

    d = _DATA
    (fs, m, bal), train_idx, test_idx, seed = task
    names = config_names(fs, m)
    cols = [d.features.index(f) for f in names]
    rows = np.concatenate([np.arange(d.train_sl[i].start, d.train_sl[i].stop) for i in train_idx])
    X = d.train_X[np.ix_(rows, cols)]
    y = d.train_y[rows]
    g = d.train_group[train_idx]
    w = family_weights(train_idx, key=lambda i: d.train_q[i]["family"]) if bal == "family" else None
    from retrievers.rank.features import evidence_constraints

    mono = evidence_constraints(names) if fs.endswith("/mono") else None
    model = LambdaRanker(names, seed=seed, n_estimators=max(TREES), learning_rate=0.01, monotone=mono).fit(
        X, y, g, group_weight=w)
    out = {}
    for i in test_idx:
        Xt = d.test_X[d.test_sl[i]][:, cols]
        out[i] = [model.booster_.predict(Xt, num_iteration=t, num_threads=1) for t in TREES]
    return {"key": (fs, m, bal), "scores": out}


def all_configs():
    return [(fs, m, b, t, w) for (fs, m, b) in fit_configs() for t in TREES for w in FUSION]


def inner_groups(data: Data, families: list[str], k: int) -> list[set[str]]:
    """Split ``families`` into ``k`` groups, each query set spread over them (round robin in
    name order, per set, continuing where the previous set stopped)."""
    groups = [set() for _ in range(k)]
    j = 0
    for s in sorted({data.set_of_family[f] for f in families}):
        for f in sorted(f for f in families if data.set_of_family[f] == s):
            groups[j % k].add(f)
            j += 1
    return [g for g in groups if g]


def outer_groups(data: Data, split: str) -> list[tuple[str, set[str]]]:
    """The outer folds: ``split`` = ``family`` (one family each) or ``SET=N,...`` (a set's families in N
    groups, round robin in name order; sets not named: one fold per family)."""
    if split == "family":
        return [(f, {f}) for f in data.families]
    n_of = {k: int(v) for k, v in (x.split("=") for x in split.split(","))}
    out = []
    for s in sorted(set(data.set_of_family.values())):
        fams = sorted(f for f in data.families if data.set_of_family[f] == s)
        n = n_of.get(s)
        if not n:
            out += [(f"{s}:{f}" if f != s else s, {f}) for f in fams]
            continue
        for k in range(n):
            g = set(fams[k::n])
            if g:
                out.append((f"{s}/{k + 1}", g))
    return out


def choose(data: Data, pool, excluded: set[str], k: int, seed: int, log) -> tuple[tuple, dict]:
    """The configuration with the best inner-CV criterion over the families not in ``excluded``."""
    fams = [f for f in data.families if f not in excluded]
    groups = inner_groups(data, fams, k)
    tasks = []
    for g in groups:
        tr = data.train_rows(excluded | g)
        te = data.test_of(g)
        for fc in fit_configs():
            tasks.append((fc, tr, te, seed))
    results = list(pool.map(_fit_score, tasks))
    # per config: AP of every inner held-out query
    ap: dict[tuple, dict[int, float]] = defaultdict(dict)
    for r in results:
        fs, m, b = r["key"]
        for i, per_t in r["scores"].items():
            for ti, t in enumerate(TREES):
                for w in FUSION:
                    ap[(fs, m, b, t, w)][i] = query_ap(data, i, per_t[ti], w)
    crit = {}
    for c, per in ap.items():
        by_f = defaultdict(list)
        for i, v in per.items():
            by_f[data.test_q[i]["family"]].append(v)
        crit[c] = float(np.mean([np.mean(v) for v in by_f.values()]))
    order = all_configs()
    best = max(order, key=lambda c: (round(crit[c], 6), -order.index(c)))
    return best, {config_label(c): round(v, 4) for c, v in sorted(crit.items(), key=lambda x: -x[1])[:10]}


def nested(args) -> int:
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    cache = Path(args.cache)
    data = Data(cache)
    t0 = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - t0:7.1f}s] {msg}", file=sys.stderr, flush=True)

    out_path = Path(args.out)
    state = json.loads(out_path.read_text()) if out_path.exists() and args.resume else {}
    state.setdefault("outer", {})
    state.update({"grid": {"features": {k: list(FEATURE_SETS[k.removesuffix("/mono")]) for k in GRID["features"]},
                           "mentions": list(MENTIONS) if True in GRID["mentions"] else [],
                           "mentions_off_tried": False in GRID["mentions"],
                           "trees": list(TREES), "fusion": list(FUSION), "balance": list(GRID["balance"])},
                  "inner_folds": args.inner_folds, "seed": args.seed, "criterion": "mean over inner held-out "
                  "families of the family's mAP"})
    folds = outer_groups(data, args.outer_split)
    state["outer_groups"] = {name: sorted(g) for name, g in folds}
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=get_context("spawn"), initializer=_init,
                             initargs=(str(cache),)) as pool:
        if args.final:
            best, top = choose(data, pool, set(), args.inner_folds, args.seed, log)
            state["final"] = {"config": list(best), "label": config_label(best), "top": top}
            log(f"final: {config_label(best)}")
        for name, fams in folds:
            if args.final or (args.only and name not in args.only.split(",")):
                break
            if name in state["outer"]:
                continue
            best, top = choose(data, pool, fams, args.inner_folds, args.seed, log)
            fs, m, b, t, w = best
            te = data.test_of(fams)
            r = list(pool.map(_fit_score, [((fs, m, b), data.train_rows(fams), te, args.seed)]))[0]
            ti = TREES.index(t)
            ranked = {i: ranked_pages(data, i, r["scores"][i][ti], w) for i in te}
            aps = {data.test_q[i]["qid"]: pages_ap(ranked[i], set(data.test_q[i]["relevant"])) for i in te}
            state["outer"][name] = {"families": sorted(fams), "config": list(best), "label": config_label(best),
                                    "top": top, "ap": aps,
                                    "top10": {data.test_q[i]["qid"]: top_pages(ranked[i]) for i in te}}
            out_path.parent.mkdir(parents=True, exist_ok=True)
            out_path.write_text(json.dumps(state, indent=1, ensure_ascii=False))
            log(f"outer {name} ({len(te)} q): {config_label(best)}; mAP {np.mean(list(aps.values())):.3f}")
    out_path.write_text(json.dumps(state, indent=1, ensure_ascii=False))
    return 0


# --- company-out CV on the filings (trained on the filings alone) ------------------------------------
def company_cv(args) -> int:
    """Leave-one-company-out on the filings, trained on the filings alone (document and collection
    groups), for the configuration ``--config`` (default: the final choice in ``--out``) and for the
    design shipped before (raw features, unweighted, 500 trees)."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    cache = Path(args.cache)
    data = Data(cache)
    out_path = Path(args.out)
    state = json.loads(out_path.read_text())
    final = tuple(json.loads(args.config)) if args.config else tuple(state["final"]["config"])
    configs = {"chosen": final, "before": ("raw", False, "none", 500, 0.0)}
    companies = sorted({q["family"] for q in data.test_q if q["set"] == "filings"})
    fil_train = [i for i, q in enumerate(data.train_q) if q["qid"].startswith("filings:")]
    seeds = [int(x) for x in args.seeds.split(",")]
    tasks, keys = [], []
    for name, (fs, m, b, t, w) in configs.items():
        for sd in seeds if name == "chosen" else seeds[:1]:
            for c in companies:
                docs = data.fam_docs[c]
                tr = [i for i in fil_train if data.train_q[i]["family"] != c and data.train_q[i]["doc"] not in docs]
                tasks.append(((fs, m, b), tr, [i for i in data.test_of({c}) if data.test_q[i]["set"] == "filings"], sd))
                keys.append((name, sd, t, w))
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=get_context("spawn"), initializer=_init,
                             initargs=(str(cache),)) as pool:
        results = list(pool.map(_fit_score, tasks))
    aps: dict = defaultdict(dict)
    for (name, sd, t, w), r in zip(keys, results):
        for i, per_t in r["scores"].items():
            aps[(name, sd)][data.test_q[i]["qid"]] = query_ap(data, i, per_t[TREES.index(t)], w)
    bm = {q["qid"]: v for q, v in zip(data.test_q, _baseline_ap(data, "bm25")) if q["set"] == "filings"}
    bm_map = float(np.mean(list(bm.values())))
    res = {"bm25": round(bm_map, 4), "configs": {k: list(v) for k, v in configs.items()}}
    for name in configs:
        per_seed = {str(sd): round(float(np.mean(list(aps[(name, sd)].values()))), 4)
                    for (n2, sd) in aps if n2 == name}
        vals = np.array(list(per_seed.values()))
        res[name] = {"map": per_seed, "mean": round(float(vals.mean()), 4),
                     "sd": round(float(vals.std(ddof=1)), 4) if vals.size > 1 else 0.0,
                     "ratio": round(float(vals.mean() / bm_map), 3),
                     "ap_seed0": aps[(name, seeds[0])]}
    state["company_cv"] = res
    out_path.write_text(json.dumps(state, indent=1, ensure_ascii=False))
    print(json.dumps({k: (v if not isinstance(v, dict) else {a: b for a, b in v.items() if a != "ap_seed0"})
                      for k, v in res.items()}, indent=1))
    return 0


def company_cv_nested(args) -> int:
    """Leave-one-company-out on the filings (trained on the filings alone, document groups), the
    feature set chosen for each held-out company by inner CV over the other companies only (3 groups
    of companies, round robin; criterion: mean over inner companies of their mAP), from
    ``--grid-features``, with ``--grid-mentions``' first value, unweighted, 500 trees."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    cache = Path(args.cache)
    data = Data(cache)
    mentions = GRID["mentions"][0]
    companies = sorted({q["family"] for q in data.test_q if q["set"] == "filings"})
    fil_train = {i for i, q in enumerate(data.train_q) if q["qid"].startswith("filings:")}

    def rows_without(excluded: set[str]) -> list[int]:
        return [i for i in data.train_rows(excluded) if i in fil_train]

    def tests_of(cs: set[str]) -> list[int]:
        return [i for i in data.test_of(cs) if data.test_q[i]["set"] == "filings"]

    inner_tasks, inner_keys = [], []
    for c in companies:
        rest = [x for x in companies if x != c]
        for k in range(3):
            g = set(rest[k::3])
            for fs in GRID["features"]:
                inner_tasks.append(((fs, mentions, "none"), rows_without({c} | g), tests_of(g), args.seed))
                inner_keys.append((c, fs))
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=get_context("spawn"), initializer=_init,
                             initargs=(str(cache),)) as pool:
        inner = list(pool.map(_fit_score, inner_tasks))
        crit: dict = defaultdict(lambda: defaultdict(list))  # company -> fs -> per inner company mAPs
        for (c, fs), r in zip(inner_keys, inner):
            by_c = defaultdict(list)
            for i, per_t in r["scores"].items():
                by_c[data.test_q[i]["family"]].append(query_ap(data, i, per_t[TREES.index(500)], 0.0))
            crit[c][fs] += [float(np.mean(v)) for v in by_c.values()]
        chosen = {c: max(GRID["features"], key=lambda fs: (round(float(np.mean(crit[c][fs])), 6),
                                                            -GRID["features"].index(fs))) for c in companies}
        outer = list(pool.map(_fit_score, [((chosen[c], mentions, "none"), rows_without({c}), tests_of({c}), args.seed)
                                           for c in companies]))
    aps = {}
    for r in outer:
        for i, per_t in r["scores"].items():
            aps[data.test_q[i]["qid"]] = query_ap(data, i, per_t[TREES.index(500)], 0.0)
    bm = float(np.mean([v for q, v in zip(data.test_q, _baseline_ap(data, "bm25")) if q["set"] == "filings"]))
    res = {"grid": list(GRID["features"]), "mentions": mentions, "seed": args.seed, "bm25": round(bm, 4),
           "map": round(float(np.mean(list(aps.values()))), 4),
           "ratio": round(float(np.mean(list(aps.values()))) / bm, 3), "chosen": chosen,
           "inner": {c: {fs: round(float(np.mean(v)), 4) for fs, v in d.items()} for c, d in crit.items()}, "ap": aps}
    out_path = Path(args.out)
    state = json.loads(out_path.read_text()) if out_path.exists() else {}
    state["company_cv_nested"] = res
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(state, indent=1, ensure_ascii=False))
    print(json.dumps({k: v for k, v in res.items() if k not in ("ap", "inner")}, indent=1))
    return 0


def _baseline_ap(data: Data, method: str) -> list[float]:
    runs = data.meta["baselines"][method]
    return [pages_ap([[p] for p in runs.get(q["qid"], [])], set(q["relevant"])) for q in data.test_q]


def main(argv=None) -> int:
    global FUSION
    ap = argparse.ArgumentParser(prog="python -m eval.bench.nested", description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=["prepare", "run", "companycv", "companycv-nested", "render"])
    ap.add_argument("--cache", default=str(REPO / ".cache"))
    ap.add_argument("--en-model", default="minilm")
    ap.add_argument("--zh-model", default="e5-jieba-search")
    ap.add_argument("--zh-queries", default=str(ZH_QUERIES))
    ap.add_argument("--en-queries", default=str(EN_QUERIES))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--inner-folds", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--outer-split", default="filings=3,longdoc=3",
                    help="outer folds: 'family' (each family alone) or SET=N,... (a set's families in N groups)")
    ap.add_argument("--only", default=None, help="comma list of outer folds to run (default: all)")
    ap.add_argument("--final", action="store_true", help="choose the shipped configuration by inner CV on all families")
    ap.add_argument("--resume", action="store_true", help="keep the outer folds already in --out")
    ap.add_argument("--out", default=common.out_path("nested", "nested.json"))
    ap.add_argument("--config", default=None, help='companycv: a configuration as JSON, e.g. \'["both", true, "family", 500, 0.25]\'')
    ap.add_argument("--fixed", default=common.out_path("generalise", "generalise.json"),
                    help="render: the fixed-configuration LOFO run of python -m eval.bench.generalise")
    ap.add_argument("--old-model", default=str(REPO / ".cache" / "old-models" / "default-dense.txt"),
                    help="render: the ranker shipped before (git show a27f6fc:retrievers/models/default-dense.txt)")
    ap.add_argument("--report", default=None, help="render: also write the tables to this file")
    ap.add_argument("--seeds", default="0,1,2", help="companycv: seeds of the chosen configuration")
    ap.add_argument("--grid-features", default=",".join(GRID["features"]),
                    help=f"run: feature sets searched, of {sorted(FEATURE_SETS)}; NAME/mono adds monotone "
                         "evidence constraints (retrievers.rank.features.EVIDENCE_DIRECTION)")
    ap.add_argument("--grid-mentions", default="on,off", help="run: section mentions searched (on, off)")
    ap.add_argument("--grid-balance", default="family,none", help="run: group weights searched (family, none)")
    ap.add_argument("--grid-fusion", default=",".join(str(w) for w in FUSION),
                    help="run: BM25 rank-fusion weights searched")
    args = ap.parse_args(argv)
    unknown = {f.removesuffix("/mono") for f in args.grid_features.split(",")} - set(FEATURE_SETS)
    if unknown:
        ap.error(f"unknown feature sets {sorted(unknown)}; known: {sorted(FEATURE_SETS)}")
    GRID["features"] = tuple(args.grid_features.split(","))
    GRID["mentions"] = tuple({"on": True, "off": False}[x] for x in args.grid_mentions.split(","))
    GRID["balance"] = tuple(args.grid_balance.split(","))
    FUSION = tuple(float(x) for x in args.grid_fusion.split(","))
    if args.step == "prepare":
        return prepare(args)
    if args.step == "run":
        return nested(args)
    if args.step == "companycv":
        return company_cv(args)
    if args.step == "companycv-nested":
        return company_cv_nested(args)
    from eval.bench.nested_tables import render

    return render(args)


if __name__ == "__main__":
    sys.exit(main())
