"""Training and scoring material for the learned heading filter (:mod:`eval.bench.heading_filter`).

Per document, with the outline ignored: the detected headings, their features
(:func:`structrag.headings.filter_features.heading_features`, ruling lines included) and a training label
each, cached as JSON under ``.cache/heading_filter/`` (keyed by the document's sha1 and the feature list):

* **corpus** (``--corpus``, the many-publisher build): 1 when the heading matches an outline or printed
  contents entry of ``<doc_id>.toc.json`` printed on its page (or the page before or after); otherwise no
  label (outlines are partial, so "not in the outline" is no evidence);
* **synthetic** (``--synthetic``): 1 for a heading of the rendered toc, 0 for a line of
  ``<doc_id>.lines.json`` (table headers, captions, covers ...) or any other detected heading, none where
  the heading is only part of (or holds) a true heading's text;
* **dev**: the development labels read from the pages (``eval/data/heading_precision_labels*.jsonl`` and
  ``heading_precision_dev_*.jsonl``) on the shared data's documents.

The round 1 and 2 labels of the corpus (``heading_precision_corpus_round*.jsonl``) are kept apart as
``eval_labels`` (never a training label), with the font-size baseline's choice of each.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any, Mapping, Sequence

from structrag.headings.filter_features import FEATURES, document_drawings, heading_features
from structrag.text import normalize_title

from eval.bench.common import CACHE, REPO
from eval.bench.precision import (baseline_selects, find_pdf, font_size_rank, label_key, load_labels, outline_of,
                                  page_lines, printed_entries, sha1_of)

DATA = REPO / "eval" / "data"
EVAL_ROUNDS = (DATA / "heading_precision_corpus_round1.jsonl", DATA / "heading_precision_corpus_round2.jsonl")
#: the held-out filings' labels (rounds 15 and 16: documents no rule was written from) stay out of training,
#: so that the shipped filter can still be scored on them
HELD_OUT_LABELS = (DATA / "heading_precision_labels_round15.jsonl", DATA / "heading_precision_labels_round16.jsonl")
DEV_LABELS = tuple(f for f in sorted(DATA.glob("heading_precision_labels*.jsonl")) if f not in HELD_OUT_LABELS) \
    + tuple(sorted(DATA.glob("heading_precision_dev_*.jsonl")))
FEATURE_KEY = hashlib.sha1(json.dumps(FEATURES).encode()).hexdigest()[:8]


def _manifest(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def _detect(path: Path, extract_cache: Path | None):
    from structrag.levels.references import cached_extract
    from structrag.pipeline import detect_headings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        doc = cached_extract(path, cache_dir=extract_cache)
        t1 = time.perf_counter()
        heads = detect_headings(doc, outline="ignore")
        t2 = time.perf_counter()
    return doc, heads, {"extract_s": t1 - t0, "detect_s": t2 - t1}


def _features(path: Path, doc, heads, timing: dict) -> list[list[float]]:
    import pymupdf

    t0 = time.perf_counter()
    with pymupdf.open(path) as pdf:
        drawn = document_drawings(pdf, [h.page for h in heads if h.source == "layout"])
    t1 = time.perf_counter()
    rows = heading_features(doc, heads, drawn)
    timing.update(drawings_s=t1 - t0, features_s=time.perf_counter() - t1, pages=doc.page_count)
    return rows


def _page_texts(doc) -> list[str]:
    """Each page's text, normalised (body and furniture), to tell which outline entries are printed."""
    pages = [[] for _ in range(doc.page_count)]
    for b in (*doc.blocks, *doc.furniture):
        if 0 <= b.page < doc.page_count:
            pages[b.page].append(b.text)
    return [normalize_title(" ".join(p)) for p in pages]


def _in_ref(text: str, page: int, ref_keys: set[tuple[str, int]]) -> bool:
    t = normalize_title(text)
    return any((t, page + d) in ref_keys for d in (-1, 0, 1))


def corpus_labels(heads, ref) -> list[int | None]:
    keys = {(normalize_title(t), p) for t, _, p in ref}
    return [1 if _in_ref(h.text, h.page, keys) else None for h in heads]


def synthetic_labels(heads, toc: Sequence[Sequence], negatives: Sequence[Mapping[str, Any]]) -> list[int | None]:
    """1 / 0 / None per detected heading of a synthetic document (toc and negative lines' pages 1-based)."""
    true = {(normalize_title(t), int(p) - 1) for _, t, p in toc}
    by_page: dict[int, list[str]] = defaultdict(list)
    for _, t, p in toc:
        by_page[int(p) - 1].append(normalize_title(t))
    neg: dict[int, list[str]] = defaultdict(list)
    for x in negatives:
        neg[int(x["page"]) - 1].append(normalize_title(x["text"]))
    out: list[int | None] = []
    for h in heads:
        t = normalize_title(h.text)
        near = range(h.page - 1, h.page + 2)
        if _in_ref(h.text, h.page, true):
            out.append(1)
        elif any(t and (t == n or (len(t) >= 4 and t in n)) for q in near for n in neg.get(q, ())):
            out.append(0)
        elif any(t and (t in n or n in t) for q in near for n in by_page.get(q, ())):
            out.append(None)  # a piece of a true heading, or one joined with more: no evidence either way
        else:
            out.append(0)
    return out


def dev_labels(heads, labels: Sequence[Mapping[str, Any]], sha1: str) -> list[int | None]:
    want: dict[tuple, list] = defaultdict(list)
    for lab in labels:
        want[label_key(sha1, lab["page"], lab["text"])].append(lab)
    out: list[int | None] = []
    for h in heads:
        bucket = want.get(label_key(sha1, h.page, h.text))
        out.append(int(bool(bucket.pop(0)["label"])) if bucket else None)
    return out


def _baseline(path: Path, labels: Sequence[Mapping[str, Any]]) -> list[bool]:
    """Whether the font-size baseline selects each labelled heading (:mod:`eval.bench.precision`)."""
    lines = page_lines(path)
    chosen = font_size_rank(lines)
    return [baseline_selects(lab, lines[int(lab["page"])], chosen) for lab in labels]


def one_document(path: Path, origin: str, family: str, *, toc: Sequence | None = None, label: str = "",
                 negatives: Sequence | None = None, labels: Sequence | None = None,
                 eval_labels: Sequence | None = None, extract_cache: Path | None = None) -> dict[str, Any]:
    sha1 = sha1_of(path)
    doc, heads, timing = _detect(path, extract_cache)
    x = _features(path, doc, heads, timing)
    ref: list = []
    if origin == "corpus":
        ref = printed_entries([(t, lv, p - 1) for lv, t, p in toc or ()], _page_texts(doc))
        y = corpus_labels(heads, ref)
    elif origin == "synthetic":
        y = synthetic_labels(heads, toc or (), negatives or ())
    else:
        y = dev_labels(heads, labels or (), sha1)
        ref = printed_entries(outline_of(path), _page_texts(doc))
    ev = list(eval_labels or ())
    base = _baseline(path, ev) if ev else []
    return {"doc": path.name, "origin": origin, "family": family, "label": label, "sha1": sha1,
            "pages": doc.page_count, "x": x, "y": y, "heads": [[h.page, h.text, h.source] for h in heads],
            "ref": [[t, lv, p] for t, lv, p in ref], "eval_labels": ev, "baseline": base, "timing": timing}


def _cached(cache: Path, key: str, make) -> dict[str, Any]:
    f = cache / f"{key}_{FEATURE_KEY}.json"
    if f.is_file():
        return json.loads(f.read_text(encoding="utf-8"))
    d = make()
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps(d), encoding="utf-8")
    return d


def collect(corpus: Path | None, synthetic: Path | None, data: Path | None, *, cache: Path = CACHE / "heading_filter",
            extract_cache: Path | None = None, limit: int | None = None) -> list[dict[str, Any]]:
    """Every document's record (see the module's doc), read from the cache where it is there."""
    from eval.bench.families import load_families
    from eval.bench.learned_detector import family_of

    ev: dict[str, list] = defaultdict(list)
    for f in EVAL_ROUNDS:
        for lab in load_labels(f):
            ev[lab["doc"]].append({**lab, "round": f.stem.rsplit("_", 1)[-1]})
    jobs = []
    for origin, folder in (("corpus", corpus), ("synthetic", synthetic)):
        if folder is None:
            continue
        for r in _manifest(folder)[:limit]:
            pdf = folder / f"{r['doc_id']}.pdf"
            toc = json.loads((folder / f"{r['doc_id']}.toc.json").read_text(encoding="utf-8"))["toc"]
            negs = (json.loads((folder / f"{r['doc_id']}.lines.json").read_text(encoding="utf-8"))
                    if origin == "synthetic" else None)
            jobs.append((pdf, dict(origin=origin, family=f"{origin}:{r['family']}", toc=toc, label=r.get("label", ""),
                                   negatives=negs, eval_labels=ev.get(pdf.name),
                                   extract_cache=extract_cache if origin == "corpus" else None)))
    if data is not None:
        dev: dict[str, list] = defaultdict(list)
        for f in DEV_LABELS:
            for lab in load_labels(f):
                dev[lab["doc"]].append(lab)
        families, _ = load_families()
        for name in sorted(dev)[:limit]:
            pdf = find_pdf(data, name)
            if pdf is not None:
                jobs.append((pdf, dict(origin="dev", family=f"dev:{family_of(Path(name).stem, families)}",
                                       labels=dev[name], label="dev")))
    out = []
    for k, (pdf, kw) in enumerate(jobs):
        key = f"{kw['origin']}_{sha1_of(pdf)[:16]}"
        out.append(_cached(cache, key, lambda: one_document(pdf, **kw)))
        d = out[-1]
        print(f"[{k + 1}/{len(jobs)}] {d['origin']:9s} {d['doc'][:60]:60s} {len(d['heads']):4d} headings, "
              f"{sum(v is not None for v in d['y']):4d} labelled", file=sys.stderr)
    return out
