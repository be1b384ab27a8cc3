"""Would a learned filter over the rules' headings beat the rules?

The layout rules (:mod:`structrag.headings.detect`) give every heading a score and named reasons.  This
benchmark trains a LightGBM classifier over those reasons and a few more block features (length, words,
capitals, position, how many headings share the page) to say which detected headings are real, and keeps a
heading only where the classifier says so.  It is measured as the rules are, leave one family out:

* **training labels**: the labelled precision set (``eval/data/heading_precision_labels.jsonl``: true and
  false headings judged by reading the pages) and the detected headings that match a printed entry of a
  document's outline (true); detected headings with neither are left out of training (outlines are partial
  trees, so "not in the outline" is no evidence of "not a heading");
* **held out**: every family (one publisher's template) of the labelled documents in turn, its documents
  and labels never in training; the classifier's threshold is 0.5 on class-balanced weights, never tuned
  on a held-out family;
* **reported**: labelled macro precision, true labelled headings lost, and recall of the printed outline
  entries, rules alone beside rules + the learned filter, per held-out family and macro.

Usage::

    python -m eval.bench.learned_detector [--labels FILE ...] [--out FILE.json] [--md FILE.md]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Mapping, Sequence

from structrag.headings.filter_features import REASONS, reason_values
from structrag.text import latin_capitals, normalize_title

from eval.bench.common import bootstrap_ci, data_dir, fmt, run_info
from eval.bench.families import load_families
from eval.bench.precision import (LABELS, detect, find_pdf, label_key, load_labels, macro, outline_of,
                                  page_lines, precision, printed_entries, sha1_of)

FEATURES = ("score", "contents", "chars", "words", "capitals", "digits", "colon", "page_rel", "on_page",
            "rank_on_page", "y_top", "other_reasons") + tuple(f"r:{r}" for r in REASONS)


def features(heads: Sequence[Any], page_count: int) -> list[list[float]]:
    """One row of :data:`FEATURES` per detected heading of one document."""
    per_page = Counter(h.page for h in heads)
    rank: dict[int, int] = {}
    seen: Counter = Counter()
    for k, h in enumerate(heads):
        rank[k] = seen[h.page]
        seen[h.page] += 1
    rows = []
    for k, h in enumerate(heads):
        t = h.text
        rv = reason_values(h.reasons)
        rows.append([
            float(h.score), float(h.source == "contents"), float(len(t)), float(len(t.split())),
            float(latin_capitals(t)), sum(c.isdigit() for c in t) / max(len(t), 1),
            float(t.rstrip().endswith((":", "："))), h.page / max(page_count - 1, 1), float(per_page[h.page]),
            float(rank[k]), float(h.bbox[1]) if h.bbox is not None else -1.0, rv.get("other", 0.0),
            *(rv.get(r, 0.0) for r in REASONS),
        ])
    return rows


def family_of(stem: str, families: Mapping[str, str]) -> str:
    """The document's family from the project's family file, else its issuer (a filing's first name part)."""
    return families.get(stem) or stem.split("_")[0].lower()


def collect(data: Path, labels: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per document: its family, detected headings' features, labels (1, 0 or None) and printed outline entries."""
    by_doc: dict[str, list] = defaultdict(list)
    for lab in labels:
        by_doc[lab["doc"]].append(lab)
    families, _ = load_families()
    paths = {name: find_pdf(data, name) for name in by_doc}
    for p in sorted((data / "headings").glob("*.pdf")):
        paths.setdefault(p.name, p)
    docs = []
    for name, path in sorted(paths.items()):
        if path is None:
            continue
        sha1 = sha1_of(path)
        doc, heads = detect(path)
        want: dict[tuple, list] = defaultdict(list)
        for lab in by_doc.get(name, ()):
            want[label_key(sha1, lab["page"], lab["text"])].append(lab)
        lines = page_lines(path)
        texts = [normalize_title(" ".join(t for t, _, _ in ls)) for ls in lines]
        ref = printed_entries(outline_of(path), texts)
        ref_keys = {(normalize_title(t), p) for t, _, p in ref}
        y: list[int | None] = []
        for h in heads:
            bucket = want.get(label_key(sha1, h.page, h.text))
            if bucket:
                y.append(int(bool(bucket.pop(0)["label"])))
            elif any((normalize_title(h.text), h.page + d) in ref_keys for d in (-1, 0, 1)):
                y.append(1)
            else:
                y.append(None)
        docs.append({"doc": name, "family": family_of(Path(name).stem, families), "labelled": name in by_doc,
                     "x": features(heads, doc.page_count), "y": y, "heads": [(h.page, h.text) for h in heads],
                     "labels": by_doc.get(name, []), "sha1": sha1, "ref": ref})
        print(f"{name:48s} {len(heads):5d} headings, {sum(v is not None for v in y):4d} with a label",
              file=sys.stderr)
    return docs


def _fit(train: Sequence[Mapping[str, Any]], seed: int):
    import lightgbm as lgb
    import numpy as np

    x, y, w = [], [], []
    for d in train:
        for row, v in zip(d["x"], d["y"]):
            if v is not None:
                x.append(row)
                y.append(v)
    n1 = sum(y) or 1
    n0 = (len(y) - sum(y)) or 1
    w = [0.5 / n1 if v else 0.5 / n0 for v in y]  # balanced: the threshold 0.5 means even odds
    model = lgb.LGBMClassifier(n_estimators=200, learning_rate=0.05, num_leaves=8, min_child_samples=5,
                               subsample=0.8, subsample_freq=1, colsample_bytree=0.8, random_state=seed,
                               verbose=-1)
    model.fit(np.asarray(x, dtype=float), np.asarray(y), sample_weight=np.asarray(w) * len(y))
    return model


def _scores(d: Mapping[str, Any], keep: Sequence[bool]) -> dict[str, float]:
    """Labelled precision, true labels lost and outline recall of one document's kept headings."""
    from eval.bench.precision import match_labels
    from eval.trees import heading_prf

    heads = [h for h, k in zip(d["heads"], keep) if k]
    m = match_labels(heads, d["labels"], d["sha1"])
    rec = heading_prf([(t, 1, p) for p, t in heads], d["ref"], page_window=1).recall if d["ref"] else math.nan
    return {"precision": precision(m["kept"]) if d["labels"] else math.nan,
            "lost_true": sum(1 for lab in m["lost"] if lab["label"]),
            "outline_recall": rec, "detected": len(heads)}


def run(docs: Sequence[Mapping[str, Any]], threshold: float = 0.5, seed: int = 0) -> dict[str, Any]:
    import numpy as np

    held_families = sorted({d["family"] for d in docs if d["labelled"]})
    rows = []
    for fam in held_families:
        train = [d for d in docs if d["family"] != fam]
        model = _fit(train, seed)
        for d in (d for d in docs if d["family"] == fam):
            p = model.predict_proba(np.asarray(d["x"], dtype=float))[:, 1] if d["x"] else np.zeros(0)
            rules = _scores(d, [True] * len(d["heads"]))
            learned = _scores(d, [q >= threshold for q in p])
            rows.append({"doc": d["doc"], "family": fam, "rules": rules, "learned": learned})
    out: dict[str, Any] = {"rows": rows, "threshold": threshold, "families": held_families}
    for arm in ("rules", "learned"):
        for col in ("precision", "outline_recall"):
            vals = [r[arm][col] for r in rows if not math.isnan(r[arm][col])]
            out[f"{arm}_{col}"] = {"macro": macro(vals), "ci95": bootstrap_ci(vals), "docs": len(vals)}
        out[f"{arm}_lost_true"] = sum(r[arm]["lost_true"] for r in rows)
        out[f"{arm}_detected"] = sum(r[arm]["detected"] for r in rows)
    diffs = [r["learned"]["precision"] - r["rules"]["precision"] for r in rows
             if not math.isnan(r["learned"]["precision"]) and not math.isnan(r["rules"]["precision"])]
    out["precision_gain"] = {"mean": macro(diffs), "ci95": bootstrap_ci(diffs)}
    return out


def to_markdown(res: Mapping[str, Any], info: Mapping[str, str]) -> str:
    lines = [f"# Learned filter over the rules' headings, leave one family out ({info.get('commit', '')})", "",
             "| document | family | rules precision | learned precision | true lost (learned) | rules outline recall"
             " | learned outline recall | detected rules → learned |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in res["rows"]:
        a, b = r["rules"], r["learned"]
        lines.append(f"| {r['doc']} | {r['family']} | {fmt(a['precision'])} | {fmt(b['precision'])} | {b['lost_true']} | "
                     f"{fmt(a['outline_recall'])} | {fmt(b['outline_recall'])} | {a['detected']} → {b['detected']} |")
    lines += ["", f"- threshold {res['threshold']} (class-balanced weights; not tuned)"]
    for arm in ("rules", "learned"):
        p, o = res[f"{arm}_precision"], res[f"{arm}_outline_recall"]
        lines.append(f"- **{arm}**: labelled macro precision {fmt(p['macro'])} (95% CI {fmt(p['ci95'][0])}–{fmt(p['ci95'][1])},"
                     f" {p['docs']} documents); outline recall macro {fmt(o['macro'])} ({o['docs']} documents);"
                     f" true labels lost {res[f'{arm}_lost_true']}; detected {res[f'{arm}_detected']}")
    g = res["precision_gain"]
    lines.append(f"- learned − rules, per document: {g['mean']:+.3f} (95% CI {g['ci95'][0]:+.3f} to {g['ci95'][1]:+.3f})")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.learned_detector", description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=None, help="shared data folder (default ../shared/data)")
    ap.add_argument("--labels", type=Path, action="append", default=None,
                    help="the labelled headings (JSON lines; repeat to pool the rounds; default round 1)")
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--out", type=Path, default=None, help="JSON report")
    ap.add_argument("--md", type=Path, default=None, help="Markdown report")
    args = ap.parse_args(argv)
    data = data_dir(explicit=args.data)
    if not (data / "headings").is_dir():
        ap.error("no shared data: pass --data DIR (the folder holding headings/)")
    docs = collect(data, [lab for f in (args.labels or [LABELS]) for lab in load_labels(f)])
    res = run(docs, threshold=args.threshold)
    res["info"] = run_info("eval.bench.learned_detector", argv)
    md = to_markdown(res, res["info"])
    if args.out:
        args.out.write_text(json.dumps(res, indent=1, default=float), encoding="utf-8")
    if args.md:
        args.md.write_text(md, encoding="utf-8")
    sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
