"""Timing of the tree metrics on the largest shared outline and on synthetic extremes.

    python -m eval.bench.trees [--data ../shared/data] [--apted] [--out structrag-out/trees/bench_trees.json]

Measures TED (and the full ``score_document``) on the TikZ/PGF manual's
outline (1,182 entries) against a perturbed copy (levels shifted at random,
10 % of headings dropped and texts changed for end-to-end), on an
1,800-heading flat tree and on a 10-deep tree, with the compiled
Zhang–Shasha engine and, with ``--apted``, with the apted package.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from eval import trees as T
from eval.bench.common import out_path
from eval.provenance import provenance


def _perturb(o: T.Outline, seed: int = 0, drop: float = 0.0, noise: bool = False) -> T.Outline:
    rng = random.Random(seed)
    items = []
    for t, lv, p in o.items():
        if rng.random() < drop:
            continue
        lv = max(1, lv + rng.choice([-1, 0, 0, 0, 1]))
        items.append(((f"{rng.randint(1, 9)}.{rng.randint(1, 9)} " + t.upper()) if noise else t, lv, p))
    return T.Outline.from_items(items)


def _time(fn, repeat: int = 1) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.trees")
    ap.add_argument("--data", default=None, help="the shared data folder")
    ap.add_argument("--apted", action="store_true", help="also time the apted package (~1.5 min on TikZ)")
    ap.add_argument("--out", default=out_path("trees", "bench_trees.json"))
    args = ap.parse_args(argv)
    from eval.bench.common import data_dir

    data = data_dir(explicit=args.data)
    ref = T.load_outline(data / "headings" / "TikZ_PGF_manual.toc.json")
    lvl = _perturb(ref, 1)
    e2e = _perturb(ref, 2, drop=0.1, noise=True)
    flat = T.Outline.from_items([(f"Section {i}", 1, i // 10) for i in range(1800)])
    flat_half = T.Outline.from_items([(f"Section {i}", 1, i // 10) for i in range(0, 1800, 2)])
    deep = T.Outline.from_items([(f"Part {i}", i % 10 + 1, i // 10) for i in range(1800)])
    T.ted(flat_half, flat_half)  # compile / load the numba cache outside the timings
    rows = []
    engines = ["zhang-shasha"] + (["apted"] if args.apted else [])
    cases = [("TikZ outline vs level-perturbed copy (1,182 x 1,182)", lvl, ref),
             ("1,800 flat vs 900 flat", flat, flat_half),
             ("1,800 in 10-deep chains vs 1,800 flat", deep, flat)]
    for name, a, b in cases:
        for eng in engines:
            secs, d = _time(lambda: T.ted(a, b, engine=eng), repeat=1 if eng == "apted" else 3)
            rows.append({"case": name, "engine": eng, "seconds": round(secs, 3), "ted": round(float(d), 3)})
    secs, s = _time(lambda: T.score_document(lvl, ref), repeat=3)
    rows.append({"case": "TikZ score_document, level-only", "engine": "zhang-shasha", "seconds": round(secs, 3),
                 "teds": round(s.teds, 4)})
    secs, s = _time(lambda: T.score_document(e2e, ref), repeat=3)
    rows.append({"case": "TikZ score_document, end-to-end (align + 3 TEDs)", "engine": "zhang-shasha",
                 "seconds": round(secs, 3), "teds": round(s.teds, 4), "recall": round(s.recall, 4)})
    out = {"provenance": provenance(), "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    print("| case | engine | seconds | value |\n|---|---|---:|---:|")
    for r in rows:
        v = r.get("ted", r.get("teds"))
        print(f"| {r['case']} | {r['engine']} | {r['seconds']:.3f} | {v} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
