"""Benchmark of the printed table of contents as a heading signal.

Outline ignored everywhere (it is the answer key).  For every document:

* the contents pages found, and the contents entries found / labelled with a
  page / mapped to a physical page / located on their page (``read_contents``);
* on ``headings/`` (17 documents with an author-made outline): heading recall
  and precision (lower bound: outlines are partial) of layout detection alone
  and of layout + contents (:func:`eval.trees.heading_prf`, as
  ``eval.bench.detection`` does), and the end-to-end tree scores with levels
  predicted (``rules``; ``learned`` = the shipped model, trained on these 17
  documents, so in-sample) - with contents, the contents levels are fixed and
  the other headings are predicted around them;
* on the Chinese prospectus that has an outline, the same against its outline;
* speed: CPU seconds of extraction + detection (with contents) + levels
  (learned), pages per second over the ``headings/`` documents.

Usage::

    python -m eval.bench.contents [--data DIR] [--groups headings,retrieval,longdoc,prospectus]
                                  [--out structrag-out/contents/contents.md] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from structrag.pipeline import read_contents
from structrag.pipeline import detect_headings
from structrag.extraction import extract
from structrag.levels import assign_levels, make_predictor
from structrag.pipeline import parse_document

from eval.bench.common import commit, data_dir, fmt
from eval.trees import heading_prf, load_outline, pool, score_document

GROUPS = ("headings", "retrieval", "longdoc", "prospectus")
PREDICTORS = ("rules", "learned")


def _items(heads) -> list[tuple[str, int, int]]:
    return [(h.text, int(h.level or 1), h.page) for h in heads]


def _contents_row(doc, t_detect: float | None = None) -> dict[str, Any]:
    found = read_contents(doc)
    st = found.stats
    return {
        "pages": doc.page_count,
        "contents_pages": [p + 1 for p in doc.toc_pages],
        "runs": st["runs"],
        "entries": st["entries"],
        "labelled": st["labelled"],
        "mapped": st["mapped"],
        "located": st["located"],
        "usable": found.usable,
    }


_PREDICTORS: dict[str, Any] = {}


def _predictor(name: str):
    if name not in _PREDICTORS:  # one instance per name: the learned model is loaded once
        _PREDICTORS[name] = make_predictor(name)
    return _PREDICTORS[name]


def _tree_scores(doc, ref, contents: str, **level_options: Any) -> dict[str, Any]:
    out = {}
    for name in PREDICTORS:
        parsed = parse_document(doc, outline="ignore", contents=contents, predictor=_predictor(name), progress=False,
                                **level_options)
        s = score_document(_items(parsed.headings), ref, protocol="end-to-end", name=doc.name)
        out[name] = s
    return out


MODES = ("layout", "contents", "contents-no-floor")


def run_headings(data: Path, only: list[str] | None = None, ablation: bool = False) -> dict[str, Any]:
    folder = data / "headings"
    manifest = [json.loads(x) for x in (folder / "manifest.jsonl").read_text().splitlines() if x.strip()]
    rows: list[dict[str, Any]] = []
    scores: dict[str, dict[str, list]] = {}
    groups = {}
    cpu = {"pages": 0, "extract": 0.0, "detect": 0.0, "levels": 0.0}
    learned = _predictor("learned")  # loaded once: the model load is start-up, not per-page work
    for m in manifest:
        if only and m["doc_id"] not in only:
            continue
        pdf = folder / f"{m['doc_id']}.pdf"
        ref = load_outline(folder / f"{m['doc_id']}.toc.json")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.process_time()
            doc = extract(pdf)
            t1 = time.process_time()
            with_c = detect_headings(doc, outline="ignore", contents="auto")
            t2 = time.process_time()
            assign_levels(doc, with_c, predictor=learned, progress=False)
            t3 = time.process_time()
            layout = detect_headings(doc, outline="ignore", contents="ignore")
        cpu["pages"] += doc.page_count
        cpu["extract"] += t1 - t0
        cpu["detect"] += t2 - t1
        cpu["levels"] += t3 - t2
        pl = heading_prf([(h.text, 1, h.page) for h in layout], ref, page_window=1)
        pc = heading_prf([(h.text, 1, h.page) for h in with_c], ref, page_window=1)
        row = {"doc_id": m["doc_id"], "group": m["group"], "outline_entries": len(ref),
               "layout": {"n": len(layout), "recall": pl.recall, "precision": pl.precision},
               "contents": {"n": len(with_c), "recall": pc.recall, "precision": pc.precision,
                            "from_contents": sum(1 for h in with_c if h.source == "contents")},
               **_contents_row(doc)}
        for mode in MODES if ablation else ("layout", "contents"):
            kw = {"floor_after_fixed": False} if mode == "contents-no-floor" else {}
            ts = _tree_scores(doc, ref, "ignore" if mode == "layout" else "auto", **kw)
            row.setdefault(mode, {})["trees"] = {
                p: {"aligned_teds": s.aligned_teds, "parent_accuracy": s.parent_accuracy} for p, s in ts.items()}
            for p, s in ts.items():
                scores.setdefault(mode, {}).setdefault(p, []).append((m["group"], s))
        rows.append(row)
        print(f"{m['doc_id'][:40]:40s} recall {pl.recall:.3f} -> {pc.recall:.3f}  precision {pl.precision:.3f} -> "
              f"{pc.precision:.3f}  contents {row['located']}/{row['entries']}", file=sys.stderr, flush=True)
    for g in ("business", "manual"):
        rs = [r for r in rows if r["group"] == g]
        if not rs:
            continue
        gi = {}
        for mode in scores:
            gi[mode] = {
                "macro_recall": sum(r[mode]["recall"] for r in rs) / len(rs) if "recall" in rs[0][mode] else None,
                "macro_precision": sum(r[mode]["precision"] for r in rs) / len(rs)
                if "precision" in rs[0][mode] else None,
            }
            for p in PREDICTORS:
                pooled = pool([s for gg, s in scores[mode][p] if gg == g])
                gi[mode][p] = {"aligned_micro_steds": pooled.aligned_micro_steds,
                               "parent_accuracy": pooled.parent_accuracy}
        groups[g] = gi
    speed = {"pages": cpu["pages"], "extract_s": cpu["extract"], "detect_s": cpu["detect"], "levels_s": cpu["levels"]}
    total = cpu["extract"] + cpu["detect"] + cpu["levels"]
    speed["pages_per_s"] = cpu["pages"] / total if total else None
    return {"rows": rows, "groups": groups, "speed": speed}


def run_folder(data: Path, group: str) -> list[dict[str, Any]]:
    if group == "prospectus":
        pdfs = sorted((data / "prospectus-zh").glob("*.pdf"))
    else:
        pdfs = sorted((data / group / "pdfs").glob("*.pdf"))
    rows = []
    for pdf in pdfs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            doc = extract(pdf)
            t0 = time.process_time()
            heads = detect_headings(doc, outline="ignore", contents="auto")
            dt = time.process_time() - t0
        row = {"doc": pdf.name, **_contents_row(doc), "headings": len(heads),
               "from_contents": sum(1 for h in heads if h.source == "contents"), "detect_s": dt,
               "outline_entries": len(doc.outline)}
        if len(doc.outline) >= 3:  # the document's own bookmarks as a reference (outside headings/)
            ref = [(e.title, e.level, e.page) for e in doc.outline]
            layout = detect_headings(doc, outline="ignore", contents="ignore")
            pl = heading_prf([(h.text, 1, h.page) for h in layout], ref, page_window=1)
            pc = heading_prf([(h.text, 1, h.page) for h in heads], ref, page_window=1)
            row["against_outline"] = {
                "layout": {"recall": pl.recall, "precision": pl.precision},
                "contents": {"recall": pc.recall, "precision": pc.precision},
            }
            for mode in ("layout", "contents"):
                ts = _tree_scores(doc, ref, "ignore" if mode == "layout" else "auto")
                row["against_outline"][mode]["trees"] = {
                    p: {"aligned_teds": s.aligned_teds, "parent_accuracy": s.parent_accuracy} for p, s in ts.items()}
        rows.append(row)
        print(f"{group:10s} {pdf.name[:45]:45s} contents {row['located']}/{row['entries']} usable={row['usable']}",
              file=sys.stderr, flush=True)
    return rows


def run(data: Path, groups: tuple[str, ...] = GROUPS, only: list[str] | None = None,
        ablation: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "headings" in groups:
        out["headings"] = run_headings(data, only, ablation)
    for g in ("retrieval", "longdoc", "prospectus"):
        if g in groups:
            out[g] = run_folder(data, g)
    return out


def _counts_table(rows: list[dict[str, Any]], name_key: str) -> list[str]:
    lines = ["| document | pages | contents pages | entries | labelled | mapped | located | used | headings (from contents) |",
             "|---|---:|---|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        cp = r["contents_pages"]
        cps = "—" if not cp else (f"{cp[0]}–{cp[-1]}" if len(cp) > 1 and cp[-1] - cp[0] == len(cp) - 1
                                  else ", ".join(map(str, cp)))
        used = "yes" if r["usable"] else "no"
        heads = f"{r['headings']} ({r['from_contents']})" if "headings" in r else \
            f"{r['contents']['n']} ({r['contents']['from_contents']})"
        lines.append(f"| {r[name_key][:48]} | {r['pages']} | {cps} | {r['entries']} | {r['labelled']} | {r['mapped']} | "
                     f"{r['located']} | {used} | {heads} |")
    tot = {k: sum(r[k] for r in rows) for k in ("entries", "labelled", "mapped", "located")}
    n_with = sum(1 for r in rows if r["contents_pages"])
    n_used = sum(1 for r in rows if r["usable"])
    lines.append(f"| **all {len(rows)}** ({n_with} with contents pages, {n_used} used) | {sum(r['pages'] for r in rows)} "
                 f"| | {tot['entries']} | {tot['labelled']} | {tot['mapped']} | {tot['located']} | | |")
    return lines


def to_markdown(res: dict[str, Any], command: str) -> str:
    L = ["# The printed table of contents as a heading signal", "",
         f"Command: `{command}` — commit `{commit()}`, {platform.machine()}, Python {platform.python_version()}, "
         "one process, CPU time.", "",
         "Outline ignored throughout. *entries*: contents rows read as entries; *labelled*: with a printed page "
         "label; *mapped*: given a physical page inside the file; *located*: found printed on (or next to) that "
         "page and kept as a heading; *used*: the contents was usable (a run located at least 3 entries and 40% "
         "of the mapped ones).", ""]
    h = res.get("headings")
    if h:
        L += ["## headings/: recall and precision against the outline", "",
              "Recall = share of outline entries matched by a heading (monotone text alignment, similarity ≥ 0.8, "
              "page ±1); precision is a lower bound (outlines are partial trees). Trees: end-to-end aligned "
              "Micro-STEDS (predicted headings matching no outline entry dropped, matched ones relabelled) and "
              "parent accuracy; `learned` is the shipped model, trained on these 17 documents (in-sample), "
              "`rules` uses no training.", "",
              "| group | layout recall | +contents recall | layout precision | +contents precision | "
              "rules STEDS layout → +contents | rules parent acc. | learned STEDS | learned parent acc. |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for g, gi in h["groups"].items():
            a, b = gi["layout"], gi["contents"]
            L.append(f"| {g} | {fmt(a['macro_recall'])} | **{fmt(b['macro_recall'])}** | {fmt(a['macro_precision'])} | "
                     f"{fmt(b['macro_precision'])} | {fmt(a['rules']['aligned_micro_steds'])} → "
                     f"{fmt(b['rules']['aligned_micro_steds'])} | {fmt(a['rules']['parent_accuracy'])} → "
                     f"{fmt(b['rules']['parent_accuracy'])} | {fmt(a['learned']['aligned_micro_steds'])} → "
                     f"{fmt(b['learned']['aligned_micro_steds'])} | {fmt(a['learned']['parent_accuracy'])} → "
                     f"{fmt(b['learned']['parent_accuracy'])} |")
        ab = [(g, gi) for g, gi in h["groups"].items() if "contents-no-floor" in gi]
        if ab:
            L += ["", "Ablation: predicted headings after a contents heading of level k are placed at k+1 or deeper "
                  "(the default) or left free (`floor_after_fixed=False`); aligned Micro-STEDS / parent accuracy:", "",
                  "| group | predictor | layout only | contents, free | contents, floor (default) |",
                  "|---|---|---|---|---|"]
            for g, gi in ab:
                for p in PREDICTORS:
                    cells = [f"{fmt(gi[m][p]['aligned_micro_steds'])} / {fmt(gi[m][p]['parent_accuracy'])}"
                             for m in ("layout", "contents-no-floor", "contents")]
                    L.append(f"| {g} | {p} | " + " | ".join(cells) + " |")
        L += ["", "Per document:", "",
              "| document | group | outline | layout R / P | +contents R / P | headings (from contents) | "
              "contents located / entries | rules STEDS | learned STEDS |",
              "|---|---|---:|---|---|---:|---:|---|---|"]
        for r in h["rows"]:
            a, b = r["layout"], r["contents"]
            L.append(f"| {r['doc_id']} | {r['group']} | {r['outline_entries']} | {fmt(a['recall'])} / {fmt(a['precision'])} "
                     f"| {fmt(b['recall'])} / {fmt(b['precision'])} | {b['n']} ({b['from_contents']}) | "
                     f"{r['located']} / {r['entries']} | {fmt(a['trees']['rules']['aligned_teds'])} → "
                     f"{fmt(b['trees']['rules']['aligned_teds'])} | {fmt(a['trees']['learned']['aligned_teds'])} → "
                     f"{fmt(b['trees']['learned']['aligned_teds'])} |")
        sp = h["speed"]
        L += ["", f"Speed over the {sp['pages']} pages: extraction {sp['extract_s']:.1f} s, detection with contents "
              f"{sp['detect_s']:.1f} s, levels (learned) {sp['levels_s']:.1f} s CPU — "
              f"**{sp['pages_per_s']:.0f} pages/s** for extraction + detection + levels.", "",
              "Contents found per document:", ""]
        L += _counts_table(h["rows"], "doc_id")
    for g, title in (("retrieval", "retrieval/pdfs (10-K, 10-Q, 8-K, earnings)"), ("longdoc", "longdoc/pdfs"),
                     ("prospectus", "prospectus-zh")):
        rows = res.get(g)
        if not rows:
            continue
        L += ["", f"## {title}", ""]
        L += _counts_table(rows, "doc")
    outl = [(g, r) for g in ("retrieval", "longdoc", "prospectus") for r in res.get(g) or [] if r.get("against_outline")]
    if outl:
        L += ["", "## Documents outside headings/ that carry an outline", "",
              "Each against its own outline (outline ignored for the prediction), as on headings/. Documents "
              "without a printed contents page score the same both ways.", "",
              "| document | folder | outline | layout R / P | +contents R / P | rules TEDS | learned TEDS |",
              "|---|---|---:|---|---|---|---|"]
        for g, r in outl:
            a, b = r["against_outline"]["layout"], r["against_outline"]["contents"]
            L.append(f"| {r['doc'][:48]} | {g} | {r['outline_entries']} | {fmt(a['recall'])} / {fmt(a['precision'])} | "
                     f"{fmt(b['recall'])} / {fmt(b['precision'])} | {fmt(a['trees']['rules']['aligned_teds'])} → "
                     f"{fmt(b['trees']['rules']['aligned_teds'])} | {fmt(a['trees']['learned']['aligned_teds'])} → "
                     f"{fmt(b['trees']['learned']['aligned_teds'])} |")
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.contents", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=data_dir(), help="the shared data folder (default ../shared/data)")
    ap.add_argument("--groups", default=",".join(GROUPS), help="comma-separated: " + ", ".join(GROUPS))
    ap.add_argument("--doc", action="append", default=None, help="only this headings/ document (repeatable)")
    ap.add_argument("--out", type=Path, default=None, help="write the Markdown report here")
    ap.add_argument("--json", type=Path, default=None, help="write the raw figures here")
    ap.add_argument("--ablation", action="store_true",
                    help="also score contents levels without the floor below fixed headings (headings/ only)")
    args = ap.parse_args(argv)
    groups = tuple(g.strip() for g in args.groups.split(",") if g.strip())
    bad = [g for g in groups if g not in GROUPS]
    if bad:
        ap.error(f"unknown groups {bad}; choose from {', '.join(GROUPS)}")
    if not (args.data / "headings" / "manifest.jsonl").exists():
        print(f"no shared data at {args.data} (set STRUCTRAG_SHARED_DATA or pass --data)", file=sys.stderr)
        return 2
    res = run(args.data, groups, args.doc, args.ablation)
    cmd = "python -m eval.bench.contents" + (f" --groups {args.groups}" if args.groups != ",".join(GROUPS) else "")
    cmd += " --ablation" if args.ablation else ""
    cmd += (f" --out {args.out}" if args.out else "") + (f" --json {args.json}" if args.json else "")
    md = to_markdown(res, cmd)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(md)
    if args.json:
        args.json.write_text(json.dumps(res, indent=1, default=str))
    sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
