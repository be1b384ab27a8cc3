"""How much context the VLM level predictor sends: level-wise memory vs the alternatives.

For the longest shared documents (../shared/data/headings), the reference
headings (the PDF outline located on its pages with
:func:`structrag.headings.outline.locate_outline`) are given to the level driver with
their levels hidden, and every request goes to the recording OpenAI-compatible
server of :mod:`eval.bench.vlm_server`, which answers with the reference levels.
So the trees come out right and what is measured is only what each method
*sends*: calls per document, images per call (max, mean), prompt text, bytes,
and prompt tokens (text at ~4 characters a token plus one token per 28x28
pixel patch of each page image at its original size, as Qwen2-VL-class
servers count them).

Variants:

``recent``         the paper's method: memory = pages of the most recent heading of each level
                   (at most the current depth), one heading per step;
``recent-page``    the same memory, all headings of one page per step (granularity "page");
``all-previous``   memory = every page holding a heading processed so far (all processed
                   headings on their pages: "all previous pages" without the pages that hold no heading);
``all-pages``      memory = every page from the first to the page of the last processed heading
                   (literally all previous pages);
``whole-document`` the one-prompt baseline: every heading, as text, in one request (MinerU's way).

Images are rendered at ``--zoom`` (default 0.1) to keep the run within minutes on
two cores; counts do not depend on the zoom, and tokens are normalised to zoom 1
(72 dpi, the paper's setting) from the page sizes.  ``--zoom-1-doc`` reruns
``recent`` at zoom 1 on one document to give real request bytes.

    nice -n 10 /work/venv/bin/python -m eval.bench.vlm_context \\
        --docs TikZ_PGF_manual gnuplot_manual JPMorgan_Chase_2023_Q2_10_Q \\
        --zoom-1-doc JPMorgan_Chase_2023_Q2_10_Q --json structrag-out/vlm_context/vlm_context.json --figure structrag-out/vlm_context/vlm_context.png
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

from eval.bench.common import CACHE, data_dir
from eval.bench.vlm_server import OpenAIServer, levels_in_order
from structrag import Document, OutlineEntry, extract, locate_outline
from structrag.levels.backends import VLMPredictor, WholeDocumentPredictor
from structrag.levels import assign_levels, project_levels
from structrag.levels.memory import MemoryStrategy
from structrag.model import SCHEMA_VERSION

VARIANTS = ("recent", "recent-page", "all-previous", "all-pages", "whole-document")
DEFAULT_DOCS = ("TikZ_PGF_manual", "gnuplot_manual", "JPMorgan_Chase_2023_Q2_10_Q")
PATCH = 28


class AllPreviousMemory(MemoryStrategy):
    """Every processed heading is an anchor: the memory holds all pages with a heading so far."""

    name = "all-previous"

    def select(self, state, step):
        return range(len(state.levels))


class AllPagesMemory(MemoryStrategy):
    """Every processed heading is known and every page up to the last one's is sent."""

    name = "all-pages"

    def select(self, state, step):
        return range(len(state.levels))

    def build(self, state, step):
        from structrag.levels.base import Memory

        known = tuple(state.known(i) for i in range(len(state.levels)))
        last = known[-1].heading.page if known else -1
        return Memory(strategy=self.name, depth=state.depth, anchors=known, pages=tuple(range(last + 1)),
                      known=known, previous=known[-1] if known else None)


def cached_document(pdf: Path, cache: Path) -> Document:
    from structrag.files import file_sha1

    key = cache / f"{file_sha1(pdf)}_{SCHEMA_VERSION}.json"
    if key.exists():
        return Document.from_dict(json.loads(key.read_text()))
    doc = extract(pdf, progress=False)
    cache.mkdir(parents=True, exist_ok=True)
    key.write_text(json.dumps(doc.to_dict()))
    return doc


def reference(data: Path, doc_id: str, cache: Path):
    pdf = data / "headings" / f"{doc_id}.pdf"
    toc = json.loads((data / "headings" / f"{doc_id}.toc.json").read_text())
    document = cached_document(pdf, cache)
    entries = [OutlineEntry(level=int(lv), title=str(t), page=int(p) - 1) for lv, t, p in toc["toc"]]
    located = [x for x in locate_outline(document, entries) if x.heading is not None]
    heads = [x.heading for x in located]
    raw = [h.level for h in heads]
    # dropping unlocated entries can leave a level jump; the answers must be valid levels
    ref = list(project_levels(raw, 0))
    adjusted = sum(1 for a, b in zip(raw, ref) if a != b)
    heads = tuple(replace(h, level=None, level_source=None, confidence=None) for h in heads)
    return document, heads, ref, {"entries": len(entries), "located": len(heads), "adjusted": adjusted}


_IMAGE_LABEL = re.compile(r"^Image (\d+) \(page (\d+)\):$")


def _tokens_z1(req, page_sizes) -> int:
    """Prompt tokens had the images been sent at zoom 1: each image's page is named in the prompt."""
    n = math.ceil(sum(len(t) for t in req.texts) / 4)
    pages = [int(m.group(2)) - 1 for t in req.texts if (m := _IMAGE_LABEL.match(t))]
    assert len(pages) == len(req.image_sizes), "every image is labelled with its page"
    for p in pages:
        w, h = page_sizes[p]
        n += math.ceil(w / PATCH) * math.ceil(h / PATCH)
    return n


def run_variant(variant: str, document: Document, heads, ref, zoom: float) -> dict:
    t0 = time.perf_counter()
    with OpenAIServer(levels_in_order(ref), decode_images=False, keep_images=False, keep_bodies=False) as srv:
        common = dict(base_url=srv.base_url, model="recording-server", api_key="none", timeout=600.0)
        if variant == "whole-document":
            pred = WholeDocumentPredictor(**common)
            res = assign_levels(document, heads, predictor=pred)
        else:
            pred = VLMPredictor(zoom=zoom, max_cache_bytes=1 << 30, max_encoded=1 << 20, **common)
            memory = {"all-previous": AllPreviousMemory(), "all-pages": AllPagesMemory()}.get(variant, "recent")
            granularity = "page" if variant == "recent-page" else "heading"
            res = assign_levels(document, heads, predictor=pred, memory=memory, granularity=granularity)
        pred.close()
        reqs = list(srv.requests)
        errors = list(srv.errors)
    seconds = time.perf_counter() - t0
    levels = [h.level for h in res.headings]
    images = [len(r.image_sizes) for r in reqs]
    tokens = [_tokens_z1(r, document.page_sizes) for r in reqs]
    chars = [sum(len(t) for t in r.texts) for r in reqs]
    out = {
        "variant": variant,
        "calls": len(reqs),
        "images_total": sum(images),
        "images_per_call_max": max(images) if images else 0,
        "images_per_call_mean": round(statistics.fmean(images), 3) if images else 0.0,
        "prompt_chars_total": sum(chars),
        "prompt_chars_max": max(chars) if chars else 0,
        "prompt_tokens_z1_total": sum(tokens),
        "prompt_tokens_z1_max": max(tokens) if tokens else 0,
        "prompt_tokens_z1_mean": round(statistics.fmean(tokens)) if tokens else 0,
        "request_bytes_total": sum(r.request_bytes for r in reqs),
        "request_bytes_max": max((r.request_bytes for r in reqs), default=0),
        "levels_match_reference": levels == ref,
        "retries": res.stats["retries"],
        "fallback_steps": res.stats["fallback_steps"],
        "server_errors": errors[:5],
        "pages_rendered": pred.stats().get("pages_rendered", 0),
        "seconds": round(seconds, 1),
        # images per call along the document (for the figure): step index -> images
        "images_by_call": images,
        "tokens_by_call": tokens,
    }
    if variant.startswith("recent"):
        # the bound of the method: memory images <= depth so far, plus the target pages
        depth_at = []
        d = 0
        for lv in ref:
            depth_at.append(d)
            d = max(d, lv)
        viol = 0
        pos = 0
        for r in reqs:
            n_t = len(r.targets or [])
            t_pages = len({t["image_id"] for t in r.targets or []})
            if len(r.image_sizes) > depth_at[pos] + t_pages:
                viol += 1
            pos += n_t
        out["bound_violations"] = viol
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.vlm_context", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(data_dir()))
    ap.add_argument("--docs", nargs="+", default=list(DEFAULT_DOCS))
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    ap.add_argument("--zoom", type=float, default=0.1)
    ap.add_argument("--zoom-1-doc", default=None, help="also run `recent` at zoom 1 on this document")
    ap.add_argument("--cache", default=str(CACHE / "vlm"))
    ap.add_argument("--json", default=None, help="write all figures here")
    ap.add_argument("--figure", default=None, help="PNG: images per call along the document")
    args = ap.parse_args(argv)
    data = Path(args.data)
    if not (data / "headings" / "manifest.jsonl").exists():
        print(f"no shared data at {data}", file=sys.stderr)
        return 2
    manifest = {json.loads(l)["doc_id"]: json.loads(l) for l in (data / "headings" / "manifest.jsonl").open()}
    results = []
    for doc_id in args.docs:
        t0 = time.perf_counter()
        document, heads, ref, info = reference(data, doc_id, Path(args.cache))
        info.update(doc=doc_id, pages=document.page_count, depth=max(ref), group=manifest[doc_id]["group"],
                    heading_pages=len({h.page for h in heads}), prepare_s=round(time.perf_counter() - t0, 1))
        print(f"{doc_id}: {info}", file=sys.stderr)
        runs = []
        for v in args.variants:
            r = run_variant(v, document, heads, ref, args.zoom)
            print(f"  {v}: " + ", ".join(f"{k}={r[k]}" for k in r if k != "images_by_call"), file=sys.stderr)
            runs.append(r)
        if args.zoom_1_doc == doc_id:
            r = run_variant("recent", document, heads, ref, 1.0)
            r["variant"] = "recent@zoom1"
            print(f"  recent@zoom1: calls={r['calls']} bytes={r['request_bytes_total']}", file=sys.stderr)
            runs.append(r)
        results.append({"doc": info, "runs": runs})
    payload = {"zoom": args.zoom, "patch": PATCH, "results": results}
    if args.json:
        Path(args.json).write_text(json.dumps(payload, indent=1))
    if args.figure:
        _figure(results, Path(args.figure))
    _print_tables(results)
    return 0


def _figure(results, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(results)
    fig, axes = plt.subplots(2, n, figsize=(4.2 * n, 6.4), squeeze=False)
    for col, res in enumerate(results):
        d = res["doc"]
        for row, key, label in ((0, "images_by_call", "images per call"),
                                (1, "tokens_by_call", "prompt tokens per call (72 dpi)")):
            ax = axes[row][col]
            for r in res["runs"]:
                if r["variant"] == "recent@zoom1":
                    continue
                ys = r[key]
                if r["variant"] == "whole-document":
                    if row == 1:
                        ax.plot([1.0], ys, "k*", ms=9, label="whole-document (1 call)")
                    continue
                xs = [i / max(1, len(ys) - 1) for i in range(len(ys))]
                ax.plot(xs, ys, label=r["variant"], lw=1)
            ax.set_yscale("log")
            ax.set_ylabel(label, fontsize=8)
            if row == 0:
                ax.set_title(f"{d['doc']} ({d['pages']} p., {d['located']} headings, depth {d['depth']})",
                             fontsize=8)
            else:
                ax.set_xlabel("position in the document (share of calls)", fontsize=8)
            ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def _print_tables(results) -> None:
    print("| document | pages | headings | depth | variant | calls | images max | images mean | images total "
          "| prompt tokens @72dpi total | mean per call | max per call | request MB total (at the run's zoom) |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for res in results:
        d = res["doc"]
        for r in res["runs"]:
            print(f"| {d['doc']} | {d['pages']} | {d['located']} | {d['depth']} | {r['variant']} | {r['calls']} "
                  f"| {r['images_per_call_max']} | {r['images_per_call_mean']:.2f} | {r['images_total']} "
                  f"| {r['prompt_tokens_z1_total']:,} | {r['prompt_tokens_z1_mean']:,} | {r['prompt_tokens_z1_max']:,} "
                  f"| {r['request_bytes_total'] / 1e6:.1f} |")


if __name__ == "__main__":
    sys.exit(main())
