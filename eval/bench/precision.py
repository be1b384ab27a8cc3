"""Heading precision on a hand-labelled set of detected headings.

The labels (``eval/data/heading_precision_labels.jsonl``, described in
``eval/data/heading_precision_labels.md``) are detected headings, sampled at random per
document and stratified by where the heading came from (:func:`stratum`), each judged a real
heading of its document or not by reading the page.  This benchmark re-runs detection with the
PDF outline ignored on the labelled documents and reports, per document and macro-averaged:

* **precision** on the labelled headings that are still detected (matched by document sha1,
  page and :func:`structrag.text.normalize_title` of the text, :func:`match_labels`), with a
  bootstrap 95% interval over documents (:func:`eval.bench.common.bootstrap_ci`);
* the labelled headings **no longer detected**: true ones lost (a recall cost), false ones
  removed (a gain);
* **coverage**: detected headings that carry no label (a change of the detector that invents new
  headings is judged on the old labels only; many unlabelled ones mean the set needs relabelling);
* **outline recall**: share of the outline's entries printed on their page (or the page before
  or after) that a detected heading matches, :func:`eval.trees.heading_prf` as in
  ``eval/bench/detection.py`` (the outline is the shared ``*.toc.json`` when there is one beside
  the PDF, else the PDF's own bookmarks; documents with neither are left out of that column);
* detected headings per page beside outline entries per page;
* the **font-size rank baseline** (a line is a heading when its font size exceeds the document's
  body size, the size mode over characters, :func:`font_size_rank`): its precision on the same
  labels, counting a labelled heading as selected when one of its lines is.  Both precisions are
  measured on headings the detector proposed, so the baseline's figure says how well font size
  alone separates the detector's true headings from its false ones, not the baseline's precision
  over everything it would select.

Usage::

    python -m eval.bench.precision [--data DIR] [--labels FILE ...] [--out FILE.json] [--md FILE.md]
    python -m eval.bench.precision --sample FILE [--per-doc 17] [--seed 23] [--floor 2] [--exclude LABELS ...] PDF...

``--labels`` may be given more than once to pool label sets (the held-out rounds,
``eval/data/heading_precision_labels_round*.jsonl``); a new sample to label is drawn with
``--floor 0`` (in proportion to the strata) and ``--exclude`` for every set already labelled.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import warnings
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from structrag.text import normalize_title

from eval.bench.common import REPO, bootstrap_ci, data_dir, fmt, run_info

LABELS = REPO / "eval" / "data" / "heading_precision_labels.jsonl"
#: where a labelled document is looked for, below the shared data folder
SEARCH = ("headings", "retrieval/pdfs", "longdoc/pdfs", "longdoc", "prospectus-zh")
CATEGORIES = ("table", "fragment", "name", "closing", "chart", "cover", "furniture", "body", "other")


# --------------------------------------------------------------------------- pure parts


def stratum(source: str, reasons: Sequence[str]) -> str:
    """The sampling stratum of a detected heading: its source, layout ones split by their strongest evidence.

    ``contents`` (a printed contents entry), ``layout:numbered`` (a numbering was read),
    ``layout:size`` (larger than the body), ``layout:style`` (bold, capitals, colour... only).
    """
    if source != "layout":
        return source
    if any(r.startswith("numbered") for r in reasons):
        return "layout:numbered"
    if any(r.startswith("size x") for r in reasons):
        return "layout:size"
    return "layout:style"


def stratified_sample(items: Sequence[Any], k: int, *, key, seed: int, floor: int = 2) -> list[int]:
    """Indices of ``k`` items drawn at random, stratified by ``key(item)``, in input order.

    Each stratum gets ``min(floor, its size)`` first, the rest goes by largest remainder in
    proportion to stratum size; all items when there are no more than ``k``.
    """
    if k >= len(items):
        return list(range(len(items)))
    groups: dict[str, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        groups[key(it)].append(i)
    names = sorted(groups)
    take = {g: min(floor, len(groups[g])) for g in names}
    left = k - sum(take.values())
    if left < 0:  # more strata than k allows at the floor: one each, biggest first
        take = {g: 0 for g in names}
        for g in sorted(names, key=lambda g: (-len(groups[g]), g))[:k]:
            take[g] = 1
        left = 0
    spare = {g: len(groups[g]) - take[g] for g in names}
    total = sum(spare.values())
    if left and total:
        quota = {g: left * spare[g] / total for g in names}
        for g in names:
            take[g] += int(quota[g])
        rest = left - sum(int(quota[g]) for g in names)
        for g in sorted(names, key=lambda g: (-(quota[g] - int(quota[g])), g)):
            if rest <= 0:
                break
            if take[g] < len(groups[g]):
                take[g] += 1
                rest -= 1
    rng = random.Random(seed)
    out: list[int] = []
    for g in names:
        out.extend(rng.sample(groups[g], take[g]))
    return sorted(out)


def label_key(sha1: str, page: int, text: str) -> tuple[str, int, str]:
    """How a label and a detected heading are matched: document sha1, 0-based page, normalised text."""
    return (sha1, int(page), normalize_title(text))


def match_labels(detected: Iterable[tuple[int, str]], labels: Sequence[Mapping[str, Any]], sha1: str) -> dict[str, Any]:
    """Match one document's detected ``(page, text)`` headings with its labels (a multiset match on :func:`label_key`).

    Returns ``kept`` (labels still detected), ``lost`` (labels no longer detected) and
    ``unlabelled`` (detected headings no label matches).
    """
    want: dict[tuple, list[Mapping[str, Any]]] = defaultdict(list)
    for lab in labels:
        want[label_key(sha1, lab["page"], lab["text"])].append(lab)
    kept: list[Mapping[str, Any]] = []
    unlabelled = 0
    for page, text in detected:
        bucket = want.get(label_key(sha1, page, text))
        if bucket:
            kept.append(bucket.pop(0))
        else:
            unlabelled += 1
    lost = [lab for bucket in want.values() for lab in bucket]
    return {"kept": kept, "lost": lost, "unlabelled": unlabelled}


def precision(labels: Iterable[Mapping[str, Any]]) -> float:
    """Share of ``labels`` judged true headings; NaN when there are none (nothing to measure)."""
    ls = [bool(lab["label"]) for lab in labels]
    return sum(ls) / len(ls) if ls else float("nan")


def weighted_precision(labels: Iterable[Mapping[str, Any]], detected: Mapping[str, int]) -> float:
    """Precision with each stratum weighted by its share of the detected headings (``detected``: stratum -> count).

    The sample gives small strata a floor, so its plain share of true labels over-weights them; this
    re-weights the per-stratum precisions to the detector's own mix.  Strata without labels are left
    out and the other weights renormalised; NaN when no stratum has both labels and detections.
    """
    by: dict[str, list] = defaultdict(list)
    for lab in labels:
        by[lab["source"]].append(lab)
    w = {k: detected.get(k, 0) for k in by if detected.get(k, 0) > 0}
    total = sum(w.values())
    if not total:
        return float("nan")
    return sum(w[k] / total * precision(by[k]) for k in w)


def macro(values: Iterable[float]) -> float:
    """Mean of the values that are not NaN (NaN when none is)."""
    vs = [v for v in values if not math.isnan(v)]
    return sum(vs) / len(vs) if vs else float("nan")


def body_size(sizes: Iterable[tuple[float, int]]) -> float:
    """The body font size: the mode of ``(size, characters)`` pairs, sizes rounded to 0.5 pt; ties to the smaller size; 0 when empty."""
    c: Counter = Counter()
    for s, n in sizes:
        c[round(s * 2) / 2] += n
    if not c:
        return 0.0
    best = max(c.values())
    return min(s for s, n in c.items() if n == best)


def font_size_rank(pages: Sequence[Sequence[tuple[str, float, int]]]) -> set[tuple[int, str]]:
    """The baseline: ``(page, normalised line)`` of every line larger than the body size.

    ``pages[p]`` holds ``(line text, largest span size, characters)`` for the lines of page ``p``.
    """
    body = body_size((s, n) for lines in pages for _, s, n in lines)
    return {(p, normalize_title(t)) for p, lines in enumerate(pages) for t, s, _ in lines
            if round(s * 2) / 2 > body and normalize_title(t)}


def baseline_selects(lab: Mapping[str, Any], lines: Sequence[tuple[str, float, int]], chosen: set[tuple[int, str]]) -> bool:
    """Whether the baseline selects a labelled heading: one of its page's lines that is part of its text is chosen."""
    t = normalize_title(lab["text"])
    p = int(lab["page"])
    for line, _, _ in lines:
        n = normalize_title(line)
        if n and n in t and (p, n) in chosen and (len(n) >= 3 or n == t):
            return True
    return False


def printed_entries(entries: Sequence[tuple[str, int, int | None]], page_texts: Sequence[str]) -> list[tuple[str, int, int]]:
    """Outline entries ``(title, level, 0-based page)`` whose normalised title is printed on the page, or the one before or after."""
    out = []
    for title, level, page in entries:
        t = normalize_title(title)
        if page is None or not t:
            continue
        if any(0 <= q < len(page_texts) and t in page_texts[q] for q in (page - 1, page, page + 1)):
            out.append((title, level, page))
    return out


# --------------------------------------------------------------------------- reading documents


def find_pdf(data: Path, name: str) -> Path | None:
    """The labelled document ``name`` below the shared data folder, or in ``data`` itself.

    The second case lets ``--data`` name a flat folder of PDFs, such as the many-publisher corpus build
    (``<doc_id>.pdf`` beside ``<doc_id>.toc.json``, labelled in ``eval/data/heading_precision_corpus_round1.jsonl``).
    """
    for sub in SEARCH:
        p = data / sub / name
        if p.is_file():
            return p
    p = data / name
    return p if p.is_file() else None


def sha1_of(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


def detect(path: Path, layout_model: bool = False, heading_filter: bool = False):
    """(document, detected headings) with the outline ignored, as every figure here is measured
    (``layout_model``: with PyMuPDF's layout model's second opinion, :mod:`structrag.headings.layout_model`;
    ``heading_filter``: with the learned filter's, :mod:`structrag.headings.learned_filter`)."""
    from structrag.extraction import extract
    from structrag.pipeline import detect_headings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = extract(path)
        return doc, detect_headings(doc, outline="ignore", layout_model=layout_model, heading_filter=heading_filter)


def page_lines(path: Path) -> list[list[tuple[str, float, int]]]:
    """Per page, ``(line text, largest span size, characters)`` of every text line (PyMuPDF ``dict``)."""
    import pymupdf

    out = []
    with pymupdf.open(path) as pdf:
        for page in pdf:
            lines = []
            for b in page.get_text("dict")["blocks"]:
                for ln in b.get("lines", ()):
                    spans = [s for s in ln["spans"] if s["text"].strip()]
                    if spans:
                        text = "".join(s["text"] for s in ln["spans"]).strip()
                        lines.append((text, max(s["size"] for s in spans), sum(len(s["text"].strip()) for s in spans)))
            out.append(lines)
    return out


def outline_of(path: Path) -> list[tuple[str, int, int | None]]:
    """``(title, level, 0-based page)``: the shared ``<stem>.toc.json`` beside the PDF, else its own bookmarks."""
    from eval.trees import load_outline

    toc = path.with_name(path.stem + ".toc.json")
    o = load_outline(toc if toc.is_file() else path)
    return list(zip(o.texts, o.levels, o.pages))


def load_labels(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --------------------------------------------------------------------------- the benchmark


def score_document(path: Path, labels: Sequence[Mapping[str, Any]], layout_model: bool = False,
                   heading_filter: bool = False) -> dict[str, Any]:
    """Every figure of one labelled document."""
    from eval.trees import heading_prf

    sha1 = sha1_of(path)
    doc, heads = detect(path, layout_model, heading_filter)
    m = match_labels([(h.page, h.text) for h in heads], labels, sha1)
    strata = Counter(stratum(h.source, h.reasons) for h in heads)
    lines = page_lines(path)
    chosen = font_size_rank(lines)
    base = [lab for lab in labels if baseline_selects(lab, lines[int(lab["page"])], chosen)]
    texts = [normalize_title(" ".join(t for t, _, _ in ls)) for ls in lines]
    outline = outline_of(path)
    ref = printed_entries(outline, texts)
    rec = heading_prf([(h.text, 1, h.page) for h in heads], ref, page_window=1).recall if ref else float("nan")
    n_pages = len(lines)
    return {
        "doc": path.name, "sha1": sha1, "sha1_ok": all(lab["sha1"] == sha1 for lab in labels), "pages": n_pages,
        "labelled": len(labels), "labelled_true": sum(1 for lab in labels if lab["label"]),
        "precision_all_labels": precision(labels),
        "kept": len(m["kept"]), "precision": precision(m["kept"]),
        "weighted_precision": weighted_precision(m["kept"], strata), "strata": dict(strata),
        "lost_true": sum(1 for lab in m["lost"] if lab["label"]),
        "removed_false": sum(1 for lab in m["lost"] if not lab["label"]),
        "detected": len(heads), "unlabelled": m["unlabelled"],
        "baseline_selected": len(base), "baseline_precision": precision(base),
        "baseline_true_selected": sum(1 for lab in base if lab["label"]),
        "outline_entries": len(outline), "outline_printed": len(ref), "outline_recall": rec,
        "detected_per_page": len(heads) / n_pages if n_pages else 0.0,
        "outline_per_page": len(ref) / n_pages if n_pages and outline else float("nan"),
    }


def run(data: Path, labels: Sequence[Mapping[str, Any]], layout_model: bool = False,
        heading_filter: bool = False) -> dict[str, Any]:
    by_doc: dict[str, list] = defaultdict(list)
    for lab in labels:
        by_doc[lab["doc"]].append(lab)
    rows, missing = [], []
    for name in sorted(by_doc):
        path = find_pdf(data, name)
        if path is None:
            missing.append(name)
            continue
        rows.append(score_document(path, by_doc[name], layout_model, heading_filter))
        r = rows[-1]
        print(f"{name:48s} precision {r['precision']:.3f} ({r['kept']}/{r['labelled']} kept)", file=sys.stderr)
    cats = Counter(lab.get("category") or "other" for lab in labels if not lab["label"])
    by_source: dict[str, list] = defaultdict(list)
    for lab in labels:
        by_source[lab["source"]].append(lab)
    out: dict[str, Any] = {"rows": rows, "missing": missing, "false_categories": dict(cats.most_common()),
                           "by_source": {k: {"labelled": len(v), "true": sum(1 for lab in v if lab["label"]),
                                             "precision": precision(v)} for k, v in sorted(by_source.items())}}
    for name, col in (("precision", "precision"), ("weighted", "weighted_precision"), ("baseline", "baseline_precision"),
                      ("precision_all_labels", "precision_all_labels"), ("outline_recall", "outline_recall")):
        vals = [r[col] for r in rows if not math.isnan(r[col])]
        out[name] = {"macro": macro(vals), "ci95": bootstrap_ci(vals), "docs": len(vals)}
    kept = [1.0 if lab["label"] else 0.0 for r in rows for lab in by_doc[r["doc"]]]
    out["micro_precision_all_labels"] = sum(kept) / len(kept) if kept else float("nan")
    for k in ("labelled", "labelled_true", "kept", "lost_true", "removed_false", "detected", "unlabelled",
              "baseline_selected", "baseline_true_selected", "pages"):
        out.setdefault("totals", {})[k] = sum(r[k] for r in rows)
    return out


def to_markdown(res: Mapping[str, Any], info: Mapping[str, str]) -> str:
    L = ["# Heading precision on the labelled set", "",
         f"Command: `{info['command']}` — commit `{info['commit']}`, {info['date']}, {info['machine']}.", "",
         "Outline ignored. *precision*: share of true headings among the labelled headings still detected; "
         "*weighted*: the same with each source stratum weighted by its share of the detected headings; "
         "*lost true* / *removed false*: labelled headings no longer detected; *unlabelled*: detected headings "
         "with no label; *font-size*: the font-size rank baseline's precision on the same labels (selected / "
         "labelled in brackets); *outline recall*: outline entries printed on their page that a detected "
         "heading matches.", "",
         "| document | pages | labels (true) | kept | precision | weighted | font-size | lost true | removed false | "
         "detected | unlabelled | outline recall | detected/page | outline/page |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in res["rows"]:
        L.append(f"| {r['doc'].removesuffix('.pdf')}{'' if r['sha1_ok'] else ' (sha1 differs!)'} | {r['pages']} | "
                 f"{r['labelled']} ({r['labelled_true']}) | {r['kept']} | {fmt(r['precision'])} | {fmt(r['weighted_precision'])} | "
                 f"{fmt(r['baseline_precision'])} ({r['baseline_selected']}) | {r['lost_true']} | {r['removed_false']} | "
                 f"{r['detected']} | {r['unlabelled']} | {fmt(r['outline_recall'])} | {r['detected_per_page']:.2f} | "
                 f"{fmt(r['outline_per_page'], 2)} |")
    t = res["totals"]
    p, b, o, wp = res["precision"], res["baseline"], res["outline_recall"], res["weighted"]
    L += ["",
          f"- **macro precision {fmt(p['macro'])}** (95% CI {p['ci95'][0]}–{p['ci95'][1]}, {p['docs']} documents); "
          f"font-size rank baseline {fmt(b['macro'])} (95% CI {b['ci95'][0]}–{b['ci95'][1]}, {b['docs']} documents "
          f"where it selects a labelled heading); stratum-weighted macro precision {fmt(wp['macro'])} "
          f"(95% CI {wp['ci95'][0]}–{wp['ci95'][1]})",
          f"- labels: {t['labelled']} ({t['labelled_true']} true), {t['kept']} still detected; lost true "
          f"{t['lost_true']}, removed false {t['removed_false']}; {t['unlabelled']} of {t['detected']} detected "
          f"headings unlabelled",
          f"- micro precision over all labels {fmt(res['micro_precision_all_labels'])}; the font-size baseline selects "
          f"{t['baseline_true_selected']} of the {t['labelled_true']} true headings and "
          f"{t['baseline_selected'] - t['baseline_true_selected']} of the {t['labelled'] - t['labelled_true']} false ones",
          f"- outline recall (printed entries), macro {fmt(o['macro'])} over {o['docs']} documents with an outline",
          "- by source: " + "; ".join(f"{k} {fmt(v['precision'])} ({v['true']}/{v['labelled']})"
                                       for k, v in res["by_source"].items()),
          "- false headings by category: " + ", ".join(f"{k} {v}" for k, v in res["false_categories"].items())]
    if res["missing"]:
        L.append(f"- documents not found (left out): {', '.join(res['missing'])}")
    return "\n".join(L) + "\n"


def sample(pdfs: Sequence[Path], per_doc: int, seed: int, *, floor: int = 2,
           exclude: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """Draw the detected headings to label: ``per_doc`` per document, stratified by :func:`stratum`.

    ``floor`` headings of each stratum are drawn first (0: strictly in proportion, so plain
    precision on the draw estimates the detector's own); headings matching a label of
    ``exclude`` (:func:`label_key`) are not drawn again.
    """
    seen = {label_key(lab["sha1"], int(lab["page"]), lab["text"]) for lab in exclude}
    out = []
    for k, path in enumerate(pdfs):
        _, heads = detect(path)
        sha1 = sha1_of(path)
        heads = [h for h in heads if label_key(sha1, h.page, h.text) not in seen]
        keys = [stratum(h.source, h.reasons) for h in heads]
        for i in stratified_sample(range(len(heads)), per_doc, key=lambda i: keys[i], seed=seed + k, floor=floor):
            h = heads[i]
            out.append({"doc": path.name, "sha1": sha1, "page": h.page, "text": h.text, "source": keys[i],
                        "label": None, "category": None, "note": ""})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.precision", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None,
                    help="the shared data folder (holds headings/ and retrieval/pdfs/), or a folder holding the PDFs themselves")
    ap.add_argument("--labels", type=Path, action="append", default=None,
                    help="the labelled headings (JSON lines; repeat to pool several sets)")
    ap.add_argument("--out", type=Path, default=None, help="write the JSON figures here")
    ap.add_argument("--md", type=Path, default=None, help="write the Markdown report here")
    ap.add_argument("--sample", type=Path, default=None, help="instead: write an unlabelled sample of the PDFs' detected headings here")
    ap.add_argument("--per-doc", type=int, default=17, help="headings sampled per document (--sample)")
    ap.add_argument("--seed", type=int, default=23, help="sampling seed (--sample; document k uses seed + k)")
    ap.add_argument("--floor", type=int, default=2, help="headings drawn first from each stratum (--sample; 0: proportional)")
    ap.add_argument("--exclude", type=Path, action="append", default=[],
                    help="labels whose headings are not drawn again (--sample; repeatable)")
    ap.add_argument("--layout-model", action="store_true",
                    help="detect with PyMuPDF's layout model's second opinion (structrag toc --layout-model)")
    ap.add_argument("--heading-filter", action="store_true",
                    help="detect with the learned heading filter (structrag toc --heading-filter)")
    ap.add_argument("pdfs", nargs="*", type=Path, help="PDFs to sample (--sample)")
    args = ap.parse_args(argv)
    data = args.data if args.data is not None else data_dir()
    if args.sample is not None:
        rows = sample(args.pdfs, args.per_doc, args.seed, floor=args.floor,
                      exclude=[lab for f in args.exclude for lab in load_labels(f)])
        args.sample.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        print(f"{len(rows)} headings sampled from {len(args.pdfs)} PDFs -> {args.sample}", file=sys.stderr)
        return 0
    label_files = args.labels or [LABELS]
    for f in label_files:
        if not f.is_file():
            print(f"no labels at {f}", file=sys.stderr)
            return 2
    if not data.is_dir():
        print(f"no shared data folder at {data} (pass --data)", file=sys.stderr)
        return 2
    res = run(data, [lab for f in label_files for lab in load_labels(f)], args.layout_model, args.heading_filter)
    md = to_markdown(res, run_info("eval.bench.precision", argv))
    if args.md:
        args.md.parent.mkdir(parents=True, exist_ok=True)
        args.md.write_text(md)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(res, indent=2, default=str))
    sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
