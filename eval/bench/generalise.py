"""Retrieval on documents and questions nobody tuned for: leave-one-family-out.

    nice -n 10 python -m eval.bench.generalise [--seeds 0] [--out structrag-out/generalise/generalise.json] \
        [--variants all] [--company-cv-seeds 0,1,2,3,4]

Query sets (page-level relevance, each query ranked within its own document):

* ``filings``: ``../shared/data/retrieval`` (67 FinanceBench + 36 MMLongBench-Doc
  "Financial report"); family = company;
* ``longdoc``: ``../shared/data/longdoc`` (150 MMLongBench-Doc questions on papers,
  manuals, brochures, legal and government files); family = ``family``;
* ``prospectus-zh``: ``eval/data/prospectus_zh_queries.jsonl`` (written for this
  project) over the three Chinese IPO prospectuses; one family (the CSRC template);
* ``prospectus-en``: ``eval/data/prospectus_style_en_queries.jsonl`` (written for this
  project), prospectus-style questions on English filings; one family;
* ``narrative-en``: ``eval/data/narrative_en_train_queries.jsonl`` (written for this project),
  questions on facts stated in the narrative of 12 filings of 7 companies none of which is in
  ``prospectus-en``; family = company (the same families as the filings', so holding out a company
  holds out its questions of both sets); ``--narrative-queries ''`` leaves it out.

Methods: BM25, dense, hybrid (RRF), the ranker, and the **page-BM25 baseline**
(BM25 over each page's whole PyMuPDF text, pages ranked directly).  The ranker is
scored **leave-one-family-out**: each query is ranked by a model trained on every
other family's queries, with no query on one of its documents either
(:func:`retrievers.rank.training.leave_one_family_out`); training groups are each
query's document candidates, plus the collection candidates for the filings (as
the shipped rankers train).  Per family: mAP and R@5 with 95% bootstrap intervals
(queries resampled).  Variants (``--variants``):

* ``portable``: the portable features (:data:`retrievers.rank.features.PORTABLE_FEATURES`),
  unweighted (``--balance``), monotone in the evidence features (``--monotone``;
  also for the company-out CV) -- the configuration that ships, chosen by inner
  cross-validation over the training families (``python -m eval.bench.nested run --final``);
* ``portable-weighted``: the same with family-balanced weights;
* ``portable-unconstrained``: the shipped design without the monotone constraints;
* ``portable-first``: the first shipped portable design: the portable set without
  ``same_word_anc``, family-balanced;
* ``raw22``: the 22 original features, family-balanced;
* ``no-mention``: ``portable`` without ``sec_mention`` / ``q_sec_mention``;
* ``no-concepts``: ``portable`` without the concept and year features
  (:data:`retrievers.rank.features.CONCEPT_FEATURES`): the shipped design before them;
* ``page-text``: ``no-open-page`` with the whole-page text features
  (:data:`retrievers.rank.features.PAGE_TEXT_FEATURES`, not monotone), not shipped: they lifted longdoc
  to page-BM25 but cost the filings and the demo's answer; older reports, run while they were in
  ``portable``, name this variant ``ranker:portable`` and the shipped design ``ranker:no-page-text``;
* ``no-open-page``: ``portable`` without the open-question page-text features
  (:data:`retrievers.rank.features.OPEN_PAGE_FEATURES`): the design shipped before them;
* ``filings-only``: ``portable`` trained on the filings alone (what training on
  10-K questions only gives elsewhere);
* ``no-narrative``: ``portable`` trained without the ``narrative-en`` questions (the training
  set before them); every set is still scored, so the two rows pair question by question;
* ``shipped-before``: the ranker shipped before this change (``--old-model``),
  scored as it is (in-sample on the filings).

Also: leave-one-set-out (train on the other query sets only), leave-one-company-out
on the filings trained on the filings alone (the company-out protocol, over
``--company-cv-seeds``), leave-one-prospectus-out on the Chinese set, the
tokenisers and dense models of the Chinese set, and section-naming questions
against the others.

Nothing here chooses a feature or a parameter: the configuration was fixed
before this ran; the variants are reported,
not selected from.
"""

from __future__ import annotations

import argparse
import json
import re
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from eval.bench.common import REPO, bootstrap_ci, out_path, paired_diff
from eval.bench.generalise_tables import render
from eval.bench.generalise_build import DATA, index_dir
from eval.retrieval_metrics import evaluate
from retrievers.lexical.bm25 import SparseBM25
from retrievers.rank.features import (
    CONCEPT_FEATURES, LEXICAL_FEATURES, DENSE_FEATURES, OPEN_PAGE_FEATURES, PAGE_TEXT_FEATURES, PORTABLE_FEATURES, available_features,
    evidence_constraints,
)
from retrievers.index import Index
from retrievers.rank.ranker import LambdaRanker
from retrievers.rank.training import (
    TrainingSet, concat_training_sets, cross_validate, leave_one_family_out, load_queries, make_training_set,
)

DEPTH = 100
METRICS = ("map", "mrr", "recall_any@1", "recall_any@5", "recall_any@10")
ZH_QUERIES = REPO / "eval" / "data" / "prospectus_zh_queries.jsonl"
EN_QUERIES = REPO / "eval" / "data" / "prospectus_style_en_queries.jsonl"
NARRATIVE_QUERIES = REPO / "eval" / "data" / "narrative_en_train_queries.jsonl"
#: variants that take ``--monotone`` (the shipped design and its ablations)
MONOTONE_VARIANTS = ("portable", "portable-weighted", "no-mention", "filings-only", "no-concepts", "page-text",
                     "no-open-page", "no-narrative")
VARIANTS = ("portable", "no-open-page", "no-concepts", "page-text", "portable-weighted", "portable-unconstrained", "portable-first", "raw22", "no-mention", "filings-only",
            "no-narrative", "shipped-before")
RAW22 = LEXICAL_FEATURES + DENSE_FEATURES


# --- data ------------------------------------------------------------------------------------------
class Part:
    """One (query set, index) pair: the queries of a set whose documents are in one index."""

    def __init__(self, name: str, index: Index, queries: list, collection_groups: bool = False) -> None:
        self.name, self.index, self.queries, self.collection_groups = name, index, queries, collection_groups


def _with(q, *, set_name: str, family: str | None = None):
    return q._replace(qid=f"{set_name}:{q.qid}", family=family or q.family)


def load_parts(args) -> tuple[list[Part], dict[str, Index]]:
    cache = Path(args.cache)
    opened: dict[str, Index] = {}

    def ix(name: str, kind: str) -> Index:
        key = f"{name}-{kind}"
        if key not in opened:
            opened[key] = Index.open(index_dir(cache, name, kind))
        return opened[key]

    parts = []
    fil = [_with(q, set_name="filings") for q in load_queries(DATA / "retrieval" / "queries.jsonl")]
    parts.append(Part("filings", ix("filings", args.en_model), fil, collection_groups=True))
    ld = [_with(q, set_name="longdoc") for q in load_queries(DATA / "longdoc" / "queries.jsonl")]
    parts.append(Part("longdoc", ix("longdoc", args.en_model), ld))
    if Path(args.zh_queries).exists():
        zh = [_with(q, set_name="prospectus-zh", family="prospectus-zh") for q in load_queries(args.zh_queries)]
        parts.append(Part("prospectus-zh", ix("prospectus", args.zh_model), zh))
    if Path(args.en_queries).exists():
        raw = [json.loads(x) for x in Path(args.en_queries).read_text(encoding="utf-8").splitlines() if x.strip()]
        coll = {r["qid"]: r.get("collection") for r in raw}
        en = [_with(q, set_name="prospectus-en", family="prospectus-en") for q in load_queries(args.en_queries)]
        on_filings = [q for q in en if coll[q.qid.split(":", 1)[1]] == "retrieval"]
        on_headings = [q for q in en if coll[q.qid.split(":", 1)[1]] == "headings"]
        parts.append(Part("prospectus-en", ix("filings", args.en_model), on_filings))
        parts.append(Part("prospectus-en", ix("headings", args.en_model), on_headings))
    narrative = getattr(args, "narrative_queries", "")
    if narrative and Path(narrative).exists():
        # document groups only: their collection groups as well cost the filings and longdoc within their
        # documents (measured leave one family out, paired by question)
        nen = [_with(q, set_name="narrative-en") for q in load_queries(narrative)]
        parts.append(Part("narrative-en", ix("filings", args.en_model), nen))
    return [p for p in parts if p.queries], opened


# --- page-BM25 baseline ------------------------------------------------------------------------------
def page_texts(index: Index, cache: Path) -> dict[str, list[str]]:
    """PyMuPDF text of every page of every document of ``index`` (cached as JSON beside the index)."""
    f = cache / "gen" / f"pages-{Path(index.path).name}.json"
    if f.exists():
        return json.loads(f.read_text(encoding="utf-8"))
    import pymupdf

    out = {}
    for d in index.documents():
        with pymupdf.open(d.path) as doc:
            out[d.name] = [p.get_text() for p in doc]
    f.write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
    return out


class PageBM25:
    """BM25 over whole pages of a collection (idf over all its pages), ranking one document's pages."""

    def __init__(self, index: Index, cache: Path) -> None:
        texts = page_texts(index, cache)
        self.tok = index.tokenizer
        self.docs = list(texts)
        self.start = {}
        toks = []
        for d in self.docs:
            self.start[d] = (len(toks), len(toks) + len(texts[d]))
            toks.extend(self.tok.tokenize(t) for t in texts[d])
        self.bm25 = SparseBM25().fit(toks)

    def rank(self, query: str, doc: str, depth: int = DEPTH) -> list[int]:
        lo, hi = self.start[doc]
        s = self.bm25.scores(self.tok.tokenize(query))[lo:hi]
        order = np.argsort(-s, kind="stable")
        return [int(p) for p in order[:depth] if s[p] > 0]


# --- runs ------------------------------------------------------------------------------------------
def _pages(index: Index, rows, doc: str) -> list[int]:
    return [p for d, p in index.page_ranking(rows) if d == doc]


def baseline_runs(part: Part, pbm25: PageBM25) -> dict[str, dict[str, list]]:
    ix = part.index
    runs: dict[str, dict] = {"page-bm25": {}, "bm25": {}, "dense": {}, "hybrid": {}} if ix.has_dense else \
        {"page-bm25": {}, "bm25": {}}
    for q in part.queries:
        runs["page-bm25"][q.qid] = pbm25.rank(q.query, q.doc)
        qs = ix.query_scores(q.query, dense=True)
        for m in ("bm25", "dense", "hybrid") if ix.has_dense else ("bm25",):
            runs[m][q.qid] = _pages(ix, ix.rank(qs, k=DEPTH, doc=q.doc, mode=m, candidates=DEPTH).indices, q.doc)
    return runs


_FIRST_QUESTION = re.compile(r"^(.{12,}?\?)\s+\S")


def first_questions(queries) -> list:
    """Training-only copies of the questions that go on after their first question mark, cut there
    ("What is the FY2018 capital expenditure amount for 3M?" from "... ? Give a response ... shown in the
    cash flow statement."): users ask the short form, and the instruction that follows often names
    the statement, which would teach the ranker to wait for it.  Same document, family and relevant pages."""
    out = []
    for q in queries:
        m = _FIRST_QUESTION.match(q.query)
        if m and len(m.group(1).split()) >= 4:
            out.append(q._replace(qid=q.qid + "#first", query=m.group(1)))
    return out


def training_sets(parts: list[Part], features, *, augment: bool = True
                  ) -> tuple[TrainingSet, TrainingSet, list[Part]]:
    """(doc-scope groups of every part in order, training groups = those + the filings' collection groups
    [+ with ``augment``, the :func:`first_questions` of every part, doc-scope, never scored])."""
    tests, extra = [], []
    for p in parts:
        tests.append(make_training_set(p.index, p.queries, features=features, scope="doc", candidates=DEPTH))
        if p.collection_groups:
            extra.append(make_training_set(p.index, p.queries, features=features, scope="collection",
                                           candidates=DEPTH))
        short = first_questions(p.queries) if augment else []
        if short:
            extra.append(make_training_set(p.index, short, features=features, scope="doc", candidates=DEPTH))
    return concat_training_sets(tests), concat_training_sets(tests + extra), parts


def rows_to_run(test: TrainingSet, ranked, part_of) -> dict[str, list]:
    return {q.qid: _pages(part_of[q.qid].index, rows[:DEPTH], q.doc)
            for q, rows in zip(test.queries, ranked) if rows is not None}


# --- scoring ---------------------------------------------------------------------------------------
def per_query(run: dict, queries) -> dict[str, dict[str, float]]:
    res = evaluate({q.qid: run.get(q.qid, []) for q in queries}, {q.qid: set(q.relevant_pages) for q in queries},
                   METRICS)
    return res.per_query


def summarise(pq: dict, qids: list[str]) -> dict:
    out = {"n": len(qids)}
    for m in METRICS:
        vals = [pq[q][m] for q in qids]
        out[m] = round(float(np.mean(vals)), 4) if vals else float("nan")
    for m in ("map", "recall_any@5"):
        out[m + "_ci95"] = bootstrap_ci([pq[q][m] for q in qids])
    return out


# --- main ------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.generalise", description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=str(REPO / ".cache"))
    ap.add_argument("--en-model", default="minilm", help="dense index of the English sets (minilm / e5)")
    ap.add_argument("--zh-model", default="e5", help="dense index of the Chinese set (e5 / minilm; with a "
                    "tokeniser: e5-jieba, e5-jieba-search)")
    ap.add_argument("--zh-queries", default=str(ZH_QUERIES))
    ap.add_argument("--en-queries", default=str(EN_QUERIES))
    add_narrative_arg(ap)
    ap.add_argument("--seeds", default="0", help="ranker seeds of the leave-one-family-out run")
    ap.add_argument("--company-cv-seeds", default="0,1,2,3,4")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--old-model", default=None, help="the ranker shipped before (default: git HEAD~ copy made by "
                    "the caller; skipped when absent)")
    ap.add_argument("--trees", type=int, default=500)
    ap.add_argument("--monotone", choices=["evidence", "none"], default="evidence",
                    help="monotone evidence constraints of the shipped design (chosen by python -m eval.bench.nested run --final)")
    ap.add_argument("--balance", choices=["none", "family"], default="none",
                    help="group weights of the shipped design (chosen by python -m eval.bench.nested run --final)")
    ap.add_argument("--jobs", type=int, default=3, help="folds trained in parallel worker processes")
    ap.add_argument("--learning-rate", type=float, default=0.01)
    ap.add_argument("--out", default=out_path("generalise", "generalise.json"))
    ap.add_argument("--zh-choices-only", action="store_true",
                    help="only the Chinese tokeniser and dense-model comparison (fast)")
    ap.add_argument("--lofo-families", default=None,
                    help="comma list: score only these families leave-one-family-out (the others get no ranker row)")
    ap.add_argument("--no-set-folds", action="store_true",
                    help="skip leave-one-set-out and leave-one-prospectus-out")
    ap.add_argument("--train-shipped", default=None, metavar="DIR",
                    help="train the shipped rankers on every query set into DIR (retrievers/rank/models) and stop")
    args = ap.parse_args(argv)
    if args.train_shipped:
        parts, opened = load_parts(args)
        print(json.dumps(train_shipped(args, parts, Path(args.train_shipped)), indent=1))
        for ix in opened.values():
            ix.close()
        return 0
    if args.zh_choices_only:
        got = zh_choices(args, Path(args.cache))
        print(json.dumps(got, indent=1))
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"zh_choices": got}, indent=1))
        return 0
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    t0 = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - t0:7.1f}s] {msg}", file=sys.stderr, flush=True)

    cache = Path(args.cache)
    parts, opened = load_parts(args)
    params = {"n_estimators": args.trees, "learning_rate": args.learning_rate}
    lofo_params = {**params, "n_jobs": args.jobs}
    seeds = [int(s) for s in args.seeds.split(",")]
    variants = [v for v in args.variants.split(",") if v]
    part_of = {q.qid: p for p in parts for q in p.queries}
    queries = [q for p in parts for q in p.queries]
    set_of = {q.qid: p.name for p in parts for q in p.queries}
    result = {"sets": {}, "params": params, "seeds": seeds, "en_model": args.en_model, "zh_model": args.zh_model,
              "variants": variants}

    # baselines
    runs = all_baseline_runs(parts, cache)
    log("baselines done")

    # features: everything any variant needs, once
    feats = tuple(f for f in dict.fromkeys(PORTABLE_FEATURES + RAW22 + PAGE_TEXT_FEATURES)
                  if all(f in available_features(p.index.corpus) for p in parts))
    test, train, _ = training_sets(parts, feats)
    log(f"training sets: {len(test.queries)} test groups, {len(train.queries)} training groups, {len(feats)} features")
    portable = tuple(f for f in PORTABLE_FEATURES if f in feats)
    spec = {
        "portable": (portable, args.balance, None),
        "portable-weighted": (portable, "family", None),
        "portable-unconstrained": (portable, args.balance, None),
        "portable-first": (tuple(f for f in portable if f != "same_word_anc"), "family", None),
        "raw22": (tuple(f for f in RAW22 if f in feats), "family", None),
        "no-mention": (tuple(f for f in portable if f not in ("sec_mention", "q_sec_mention")), args.balance, None),
        "no-concepts": (tuple(f for f in portable if f not in CONCEPT_FEATURES), args.balance, None),
        "page-text": (tuple(f for f in portable if f not in OPEN_PAGE_FEATURES)
                      + tuple(f for f in PAGE_TEXT_FEATURES if f in feats), args.balance, None),
        "no-open-page": (tuple(f for f in portable if f not in OPEN_PAGE_FEATURES), args.balance, None),
        "filings-only": (portable, args.balance, lambda s: s == "filings"),
        "no-narrative": (portable, args.balance, lambda s: s != "narrative-en"),
    }
    per_seed_map = defaultdict(dict)
    for v in variants:
        if v == "shipped-before":
            if not args.old_model or not Path(args.old_model).exists():
                continue
            model = LambdaRanker.load(args.old_model)
            if not set(model.features) <= set(feats):
                continue
            cols = [feats.index(f) for f in model.features]
            ranked = []
            for sl in test.query_slices():
                s = model.predict(test.X[sl][:, cols])
                ranked.append(test.rows[sl][np.argsort(-s, kind="stable")])
            runs["ranker:shipped-before"] = rows_to_run(test, ranked, part_of)
            continue
        names, balance, only = spec[v]
        mono = monotone_for(args, names) if v in MONOTONE_VARIANTS else None
        tr = train
        if only:  # a predicate on the query set: the training groups it keeps
            keep = [i for i, q in enumerate(train.queries) if only(set_of[q.qid.split("#", 1)[0]])]  # "#first" copies
            tr = train.subset(keep)
        for sd in seeds if v == "portable" else seeds[:1]:
            # with ``only``, trained on some sets: the held-out families are left out of them as usual
            ranked = leave_one_family_out(test, train=tr, features=names, seed=sd, balance=balance,
                                          families=args.lofo_families.split(",") if args.lofo_families else None,
                                          monotone=mono, **lofo_params)
            run = rows_to_run(test, ranked, part_of)
            if sd == seeds[0]:
                runs[f"ranker:{v}"] = run
            per_seed_map[v][sd] = run
            log(f"LOFO {v} seed {sd} done")

    # leave-one-set-out: no question of the held-out set's kind in training at all
    if not args.no_set_folds:
        set_folds(args, test, train, set_of, part_of, portable, seeds, lofo_params, runs, log)
    score_and_finish(args, result, runs, parts, queries, set_of, test, per_seed_map, params, cache, log, opened,
                     portable, t0)
    return 0


def add_narrative_arg(ap: argparse.ArgumentParser) -> None:
    """``--narrative-queries``: the narrative-fact questions on the filings (a set of :func:`load_parts`)."""
    ap.add_argument("--narrative-queries", default=str(NARRATIVE_QUERIES),
                    help="narrative-fact questions on the filings, family = company ('' leaves them out)")


def monotone_for(args, names) -> dict[str, int] | None:
    """The ranker's monotone constraints for ``names`` under ``--monotone``."""
    return evidence_constraints(names) if args.monotone == "evidence" else None


def set_folds(args, test, train, set_of, part_of, portable, seeds, lofo_params, runs, log):
    """Leave-one-set-out and, on the Chinese set, leave-one-prospectus-out."""
    if not args.lofo_families:
        set_test = test._replace(queries=[q._replace(family=set_of[q.qid]) for q in test.queries])
        set_train = train._replace(queries=[q._replace(family=set_of[q.qid]) for q in train.queries])
        ranked = leave_one_family_out(set_test, train=set_train, features=portable, seed=seeds[0], balance=args.balance,
                                      monotone=monotone_for(args, portable),
                                      **lofo_params)
        runs["ranker:leave-one-set-out"] = rows_to_run(set_test, ranked, part_of)
        log("leave-one-set-out done")

    # the Chinese set by prospectus: a new issuer, the kind of question known
    zh = [q for q in test.queries if set_of[q.qid] == "prospectus-zh"]
    if zh:
        doc_test = test._replace(queries=[q._replace(family=(q.doc if set_of[q.qid] == "prospectus-zh" else q.family))
                                          for q in test.queries])
        doc_train = train._replace(queries=[q._replace(family=(q.doc if set_of[q.qid] == "prospectus-zh" else q.family))
                                            for q in train.queries])
        ranked = leave_one_family_out(doc_test, train=doc_train, features=portable, seed=seeds[0], balance=args.balance,
                                      monotone=monotone_for(args, portable),
                                      families=sorted({q.doc for q in zh}), **lofo_params)
        runs["ranker:leave-one-prospectus-out"] = rows_to_run(doc_test, ranked, part_of)
        log("leave-one-prospectus-out done")


def score_and_finish(args, result, runs, parts, queries, set_of, test, per_seed_map, params, cache, log, opened,
                     portable, t0):
    pq = {m: per_query(r, [q for q in queries if q.qid in r]) for m, r in runs.items()}
    groups: dict[str, list[str]] = defaultdict(list)
    for q in queries:
        s = set_of[q.qid]
        groups[f"set:{s}"].append(q.qid)
        groups[f"family:{s}:{q.family}"].append(q.qid)
        if s == "filings":
            groups[f"source:{q.source}"].append(q.qid)
        if q.names_section is not None:
            groups[f"names_section:{s}:{'yes' if q.names_section else 'no'}"].append(q.qid)
    detected = detected_mentions(parts)
    for q in queries:
        groups[f"mention_detected:{'yes' if detected[q.qid] else 'no'}"].append(q.qid)
    table = {}
    for g, qids in groups.items():
        table[g] = {m: summarise(pq[m], [q for q in qids if q in pq[m]]) for m in pq
                    if any(q in pq[m] for q in qids)}
        if "ranker:portable" in pq:
            table[g]["diff_ranker_vs"] = {b: paired_diff(pq["ranker:portable"], pq[b], qids)
                                          for b in ("bm25", "hybrid", "dense", "page-bm25", "ranker:page-text", "ranker:no-open-page",
                                                    "ranker:no-narrative") if b in pq}
    result["groups"] = table
    # per question, so two runs pair up later (mAP of every method)
    result["per_query_map"] = {m: {q: round(v["map"], 4) for q, v in d.items()} for m, d in pq.items()}
    result["per_seed"] = {v: {str(sd): {g: round(float(np.mean([per_query(run, [q for q in queries if q.qid in run])[x]["map"]
                                                                  for x in qids if x in run])), 4)
                                        for g, qids in groups.items() if g.startswith("set:")}
                              for sd, run in d.items()} for v, d in per_seed_map.items()}
    result["detected_mention_share"] = {s: round(float(np.mean([detected[q.qid] for q in queries if set_of[q.qid] == s])), 3)
                                        for s in {p.name for p in parts}}
    log("scored")

    # the company-out protocol on the filings: leave-one-company-out, trained on the filings alone
    fil = [p for p in parts if p.name == "filings"][0]
    if not [s for s in args.company_cv_seeds.split(",") if s]:
        fil = None
    fil_doc = make_training_set(fil.index, fil.queries, features=portable, scope="doc", candidates=DEPTH) if fil else None
    fil_col = make_training_set(fil.index, fil.queries, features=portable, scope="collection", candidates=DEPTH) if fil else None
    cv = {}
    bm = pq["bm25"]
    bm_map = float(np.mean([bm[q.qid]["map"] for q in fil_doc.queries])) if fil else 0.0
    for sd in [int(s) for s in args.company_cv_seeds.split(",") if s]:
        ranked = cross_validate(fil_doc, also=[fil_col], seed=sd,
                                monotone=monotone_for(args, portable),
                                **params)
        run = {q.qid: _pages(fil.index, rows[:DEPTH], q.doc) for q, rows in zip(fil_doc.queries, ranked)}
        p = per_query(run, fil_doc.queries)
        cv[str(sd)] = round(float(np.mean([p[q.qid]["map"] for q in fil_doc.queries])), 4)
    if cv:
        vals = np.array(list(cv.values()))
        result["company_cv"] = {"map": cv, "mean": round(float(vals.mean()), 4),
                                "sd": round(float(vals.std(ddof=1)), 4) if vals.size > 1 else 0.0,
                                "bm25": round(bm_map, 4), "ratio": round(float(vals.mean() / bm_map), 3)}
        log("company CV done")
    result["zh_choices"] = zh_choices(args, cache)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False))
    print(render(result))
    for ix in opened.values():
        ix.close()
    return 0


def all_baseline_runs(parts: list[Part], cache: Path) -> dict[str, dict]:
    """Every baseline's ranked pages of every query of ``parts`` (method -> qid -> pages); the
    page-BM25 of an index is built once however many parts share it."""
    runs: dict[str, dict] = defaultdict(dict)
    page_bm25: dict[str, PageBM25] = {}
    for p in parts:
        key = str(p.index.path)
        if key not in page_bm25:
            page_bm25[key] = PageBM25(p.index, cache)
        for m, r in baseline_runs(p, page_bm25[key]).items():
            runs[m].update(r)
    return runs


def train_shipped(args, parts: list[Part], out_dir: Path) -> dict:
    """The shipped rankers: portable features, every query of every set, ``--balance`` weights
    (``default-dense``: with the dense features; ``default-lexical``: without)."""
    import hashlib

    from retrievers.rank.features import PORTABLE_LEXICAL
    from retrievers.rank.training import train_ranker
    from structrag.files import file_sha1

    files = [DATA / "retrieval" / "queries.jsonl", DATA / "longdoc" / "queries.jsonl", Path(args.zh_queries),
             Path(args.en_queries)] + ([Path(args.narrative_queries)] if args.narrative_queries else [])
    sha = {f.name: file_sha1(f) for f in files if f.exists()}
    meta = {"queries_files": sha, "queries_sha1": hashlib.sha1("".join(sorted(sha.values())).encode()).hexdigest(),
            "seed": 0,
            "documents_sha1": sorted({d.sha1 for p in parts for d in p.index.documents()}),
            "indexes": sorted({f"{Path(p.index.path).name} ({p.index.dense_model}, cjk={p.index.tokenizer.cjk})"
                               for p in parts}),
            "families": len({q.family for p in parts for q in p.queries}), "balance": args.balance,
            "groups": "each query's document candidates, plus the filings' collection candidates",
            "command": " ".join(["python", "-m", "eval.bench.generalise", *sys.argv[1:]])}
    out = {}
    todo = [("default-lexical", PORTABLE_LEXICAL)]
    if all(p.index.has_dense for p in parts):
        todo.insert(0, ("default-dense", PORTABLE_FEATURES))
    for name, feats in todo:
        _, train, _ = training_sets(parts, feats)
        model = train_ranker(train, seed=0, balance=args.balance, metadata=meta, n_estimators=args.trees,
                             monotone=monotone_for(args, feats),
                             learning_rate=args.learning_rate)
        path = model.save(out_dir / f"{name}.txt")
        out[name] = {"path": str(path), "queries": len(train.queries), "features": list(feats)}
    return out


def zh_choices(args, cache: Path) -> dict:
    """The Chinese set's BM25 (chunks and whole pages) under each CJK tokenisation, and its dense
    retrieval under each model: the Chinese tokeniser and model choices, measured on the development set."""
    if not Path(args.zh_queries).exists():
        return {}
    qs = [_with(q, set_name="prospectus-zh") for q in load_queries(args.zh_queries)]
    out: dict = {"bm25": {}, "dense": {}}
    for mode in ("bigram", "jieba", "jieba-search", "jieba-search+bigram"):
        d = index_dir(cache, "prospectus", f"lexical-{mode}")
        if not (d / "index.sqlite").exists():
            continue
        with Index.open(d) as ix:
            pb = PageBM25(ix, cache)
            run = {q.qid: _pages(ix, ix.rank(q.query, k=DEPTH, doc=q.doc, mode="bm25").indices, q.doc) for q in qs}
            prun = {q.qid: pb.rank(q.query, q.doc) for q in qs}
        out["bm25"][mode] = {"chunks": summarise(per_query(run, qs), [q.qid for q in qs]),
                             "pages": summarise(per_query(prun, qs), [q.qid for q in qs])}
    # dense models: on the documents each index has (MiniLM was embedded for one prospectus only),
    # every model scored on the same questions
    have = {}
    for key in ("e5", "minilm"):
        d = index_dir(cache, "prospectus", key)
        if (d / "index.sqlite").exists():
            with Index.open(d) as ix:
                have[key] = {x.name for x in ix.documents()}
    common = set.intersection(*have.values()) if have else set()
    sub = [q for q in qs if q.doc in common]
    for key in have:
        with Index.open(index_dir(cache, "prospectus", key)) as ix:
            run = {q.qid: _pages(ix, ix.rank(q.query, k=DEPTH, doc=q.doc, mode="dense").indices, q.doc) for q in sub}
            bm = {q.qid: _pages(ix, ix.rank(q.query, k=DEPTH, doc=q.doc, mode="bm25").indices, q.doc) for q in sub}
        out["dense"][key] = {"docs": sorted(common), **summarise(per_query(run, sub), [q.qid for q in sub]),
                             "bm25_same_questions": summarise(per_query(bm, sub), [q.qid for q in sub])}
    return out


def detected_mentions(parts: list[Part]) -> dict[str, bool]:
    """Whether each query names one of its document's headings (:mod:`retrievers.rank.question`)."""
    from retrievers.rank.question import heading_keys, mentioned, normalise

    out = {}
    for p in parts:
        c = p.index.corpus
        for q in p.queries:
            d = c.doc_id(q.doc)
            qn = normalise(q.query)
            nodes = range(int(c.doc_node_start[d]), int(c.doc_node_start[d + 1])) if d is not None else ()
            out[q.qid] = any(mentioned(qn, heading_keys(c.node_titles[n])) for n in nodes)
    return out


if __name__ == "__main__":
    sys.exit(main())
