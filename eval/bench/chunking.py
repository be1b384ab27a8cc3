"""Chunking benchmark: chunk statistics, throughput, and page-level retrieval through LlamaIndex.

    nice -n 10 python -m eval.bench.chunking [--data ../shared/data] [--docs A.pdf B.pdf]
        [--chunk-size 256] [--predictor learned] [--skip-retrieval] [--out structrag-out/chunking/chunking.json]

Part 1 (stats): every PDF of ``retrieval/pdfs`` is parsed once with
:func:`structrag.pipeline.parse_pdf` (cached under ``.cache/chunking``), then
chunked with :func:`structrag.chunking.chunk_document` (regex and tiktoken
tokenizers) and turned into LlamaIndex nodes by ``StructragNodeParser``.
Reported: sections, chunks, chunk sizes (cl100k tokens), and chunking
throughput in pages/s (chunking only, the parse excluded; best of 3 runs).

Part 2 (retrieval): each query of ``retrieval/queries.jsonl`` searches its own
document through a LlamaIndex ``VectorStoreIndex`` (all-MiniLM-L6-v2, offline,
embeddings cached in SQLite under ``.cache/chunking``), with nodes from

* ``structrag``: StructragNodeParser leaves (section-aware chunks);
* ``structrag+automerge``: the same through ``AutoMergingRetriever``;
* ``structrag/no-header``: StructragNodeParser leaves with only ``file_name``
  in the embedded metadata (is the heading path in the embedding worth it?);
* ``sentence/pages``: SentenceSplitter over per-page PyMuPDF text (what a
  per-page PDF reader gives LlamaIndex);
* ``sentence/structrag-text``: SentenceSplitter over StructPDFReader's
  reading-order text (same text as ours, no structure);
* ``markdown``: MarkdownNodeParser over pymupdf4llm Markdown
  (``page_chunks=True`` to know pages; the classic pymupdf4llm path,
  ``use_layout(False)``: its layout-model path runs at ~0.5 pages/s here);
* ``markdown+sentence``: the same, re-split by SentenceSplitter to the chunk
  size (MarkdownNodeParser alone has no size bound);
* ``markdown-layout``, ``markdown-layout+sentence``: the same over pymupdf4llm's
  default path when pymupdf-layout is installed (a layout model that finds
  more headings), not run by default because it is slow.

Every method uses the same chunk size (tokens, cl100k, metadata included
where the parser counts it) and no overlap.  Retrieved nodes are mapped to
the pages they span, reduced to distinct pages in first-hit order
(``eval.retrieval_metrics.pages_from_hits``) and scored against
``relevant_pages`` with ``eval.retrieval_metrics.evaluate``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, List, Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from eval.bench.common import CACHE, data_dir, out_path  # noqa: E402
from eval.retrieval_metrics import evaluate, pages_from_hits  # noqa: E402
from eval.runners import load_queries  # noqa: E402
from structrag.chunking import chunk_document, sections  # noqa: E402
from structrag.files import file_sha1  # noqa: E402
from structrag.model import SCHEMA_VERSION, Document  # noqa: E402
from structrag.tokenizers import get_tokenizer  # noqa: E402
from structrag.tree import HeadingTree  # noqa: E402

METRICS = ("recall_any@5", "recall_all@5", "recall@5", "recall_any@1", "recall_any@10", "mrr", "map", "ndcg@10")
METHODS = ("structrag", "structrag+automerge", "structrag/no-header", "sentence/pages", "sentence/structrag-text",
           "markdown", "markdown+sentence", "markdown-layout", "markdown-layout+sentence")
DEFAULT_METHODS = tuple(m for m in METHODS if not m.startswith("markdown-layout"))
TOP_K = 20


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# cached inputs


def _parse_code_hash() -> str:
    """Hash of the code a parse depends on (every module of structrag but the chunker and the adapters, and
    the shipped level model), so a cached parse never outlives a code change."""
    import structrag

    root = Path(structrag.__file__).parent
    skip = ("chunking", "tokenizers.py", "llama_index", "cli", "view")
    h = hashlib.sha1()
    for f in sorted([*root.rglob("*.py"), *root.glob("levels/models/*")]):
        rel = f.relative_to(root)
        if rel.parts[0] not in skip:
            h.update(rel.as_posix().encode() + f.read_bytes())
    return h.hexdigest()


def parse_cached(path: Path, cache: Path, options: dict[str, Any]) -> tuple[Document, HeadingTree, dict]:
    from structrag.pipeline import parse_pdf

    key = hashlib.sha1((json.dumps(options, sort_keys=True) + _parse_code_hash()).encode()).hexdigest()[:10]
    f = cache / "parse" / f"{file_sha1(path)}-{SCHEMA_VERSION}-{key}.json"
    if f.exists():
        d = json.loads(f.read_text(encoding="utf-8"))
        return Document.from_dict(d["document"]), HeadingTree.from_dict(d["tree"]), d["stats"]
    t0 = time.perf_counter()
    parsed = parse_pdf(path, **options)
    stats = {k: v for k, v in parsed.stats.items() if isinstance(v, (int, float, str)) or v is None}
    stats["parse_s"] = time.perf_counter() - t0
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps({"document": parsed.document.to_dict(), "tree": parsed.tree.to_dict(), "stats": stats}),
                 encoding="utf-8")
    return parsed.document, parsed.tree, stats


def markdown_pages_cached(path: Path, cache: Path, mode: str = "classic") -> tuple[list[str], float]:
    """pymupdf4llm Markdown, one string per page, and the seconds it took.

    ``mode="classic"``: pymupdf4llm's rule-based path (``use_layout(False)``);
    ``"layout"``: its default when pymupdf-layout is installed (a layout model).
    """
    import pymupdf4llm

    ver = getattr(pymupdf4llm, "__version__", getattr(pymupdf4llm, "version", "?"))
    f = cache / "markdown" / f"{file_sha1(path)}-pymupdf4llm-{ver}-{mode}.json"
    if f.exists():
        d = json.loads(f.read_text(encoding="utf-8"))
        return d["pages"], d["seconds"]
    pymupdf4llm.use_layout(mode == "layout")
    t0 = time.perf_counter()
    chunks = pymupdf4llm.to_markdown(str(path), page_chunks=True, show_progress=False)
    secs = time.perf_counter() - t0
    pages = [""] * len(chunks)
    for i, c in enumerate(chunks):
        meta = c.get("metadata", {})
        p = meta.get("page") or meta.get("page_number") or i + 1
        pages[int(p) - 1 if p else i] = c["text"]
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps({"pages": pages, "seconds": secs}), encoding="utf-8")
    return pages, secs


def page_texts(path: Path) -> list[str]:
    import pymupdf

    with pymupdf.open(path) as doc:
        return [page.get_text() for page in doc]


# ---------------------------------------------------------------------------
# embedding through LlamaIndex, cached


def make_embedding(cache: Path, max_seq_length: int):
    from llama_index.core.bridge.pydantic import PrivateAttr
    from llama_index.core.embeddings import BaseEmbedding

    from retrievers.embed.encoder import DenseEncoder

    class CachedMiniLM(BaseEmbedding):
        _enc: Any = PrivateAttr()

        def __init__(self) -> None:
            super().__init__(model_name="all-MiniLM-L6-v2", embed_batch_size=64)
            self._enc = DenseEncoder(None, batch_size=64, max_seq_length=max_seq_length,
                                     cache=cache / "embeddings.sqlite")

        @classmethod
        def class_name(cls) -> str:
            return "CachedMiniLM"

        def _get_query_embedding(self, query: str) -> List[float]:
            return self._enc.encode([query])[0].tolist()

        async def _aget_query_embedding(self, query: str) -> List[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> List[float]:
            return self._enc.encode([text])[0].tolist()

        def _get_text_embeddings(self, texts: List[str]) -> List[List[float]]:
            return self._enc.encode(texts).tolist()

    return CachedMiniLM()


# ---------------------------------------------------------------------------
# node -> pages


def _pages_of_span(offsets: Sequence[int], s: int, e: int) -> list[int]:
    import bisect

    n = len(offsets) - 1
    first = max(0, bisect.bisect_right(offsets, s) - 1)
    out = []
    for p in range(first, n):
        if offsets[p] >= e and p > first:
            break
        if offsets[p + 1] > s or offsets[p] == offsets[p + 1] == s:
            out.append(p)
    return out or [min(first, n - 1)]


class SpanLocator:
    """Finds node texts in a source text (nodes in reading order), to map them to pages."""

    def __init__(self, text: str, offsets: Sequence[int]) -> None:
        self.text, self.offsets, self.cursor, self.missed = text, offsets, 0, 0

    def pages(self, node_text: str) -> list[int]:
        probe = node_text.strip()
        if not probe:
            return []
        i = self.text.find(probe, self.cursor)
        if i < 0:
            i = self.text.find(probe)
        if i < 0:  # a parser that rewrote the text: anchor on its first line
            head = probe[:80]
            i = self.text.find(head, self.cursor)
            if i < 0:
                i = self.text.find(head)
        if i < 0:
            self.missed += 1
            return []
        self.cursor = i + 1
        return _pages_of_span(self.offsets, i, i + len(probe))


def structrag_pages(node) -> list[int]:
    md = node.metadata
    if md.get("structrag_node") == "chunk":
        seen: list[int] = []
        for p, *_ in md["bboxes"]:
            if p not in seen:
                seen.append(p)
        return seen
    return list(range(md["page_start"], md["page_end"] + 1))


# ---------------------------------------------------------------------------
# the methods: nodes to index (with their pages) per document


def build_method_nodes(method: str, pdf: Path, document: Document, tree: HeadingTree, args, md_pages=None):
    """(nodes to embed, all nodes for the docstore, node_id -> pages)."""
    from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter, get_leaf_nodes
    from llama_index.core.schema import Document as LIDocument
    from llama_index.core.schema import MetadataMode

    from structrag.llama_index import StructragNodeParser, to_llama_document

    size = args.chunk_size
    if method.startswith("structrag"):
        li_doc = to_llama_document(document, tree)
        extra = {"embed_metadata_keys": ["file_name"]} if method == "structrag/no-header" else {}
        nodes = StructragNodeParser(chunk_size=size, **extra).get_nodes_from_documents([li_doc])
        leaves = get_leaf_nodes(nodes)
        return leaves, nodes, {n.node_id: structrag_pages(n) for n in nodes}
    if method == "sentence/pages":
        docs = [LIDocument(text=t, metadata={"file_name": pdf.name, "page_label": str(i + 1)},
                           id_=f"{document.sha1}-p{i}") for i, t in enumerate(page_texts(pdf)) if t.strip()]
        nodes = SentenceSplitter(chunk_size=size, chunk_overlap=0).get_nodes_from_documents(docs)
        return nodes, nodes, {n.node_id: [int(n.metadata["page_label"]) - 1] for n in nodes}
    if method == "sentence/structrag-text":
        li_doc = to_llama_document(document, tree)
        nodes = SentenceSplitter(chunk_size=size, chunk_overlap=0).get_nodes_from_documents([li_doc])
        loc = SpanLocator(document.text, document.page_offsets)
        pages = {n.node_id: loc.pages(n.get_content(MetadataMode.NONE)) for n in nodes}
        for n in nodes:  # the reader's bulky keys are hidden already; keep node metadata small
            n.metadata = {"file_name": pdf.name}
        return nodes, nodes, pages
    if method.startswith("markdown"):
        md_text, offsets = "", []
        for t in md_pages:
            if md_text:
                md_text += "\n\n"
            offsets.append(len(md_text))
            md_text += t
        offsets.append(len(md_text))
        doc = LIDocument(text=md_text, metadata={"file_name": pdf.name}, id_=f"{document.sha1}-md")
        nodes = MarkdownNodeParser().get_nodes_from_documents([doc])
        if method.endswith("+sentence"):
            nodes = SentenceSplitter(chunk_size=size, chunk_overlap=0).get_nodes_from_documents(nodes)
        loc = SpanLocator(md_text, offsets)
        pages = {n.node_id: loc.pages(n.get_content(MetadataMode.NONE)) for n in nodes}
        return nodes, nodes, pages
    raise ValueError(method)


def run_retrieval(method, leaves, all_nodes, pages_of, queries, embed) -> dict[str, list[int]]:
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.core.retrievers import AutoMergingRetriever

    storage = StorageContext.from_defaults()
    storage.docstore.add_documents(all_nodes)
    index = VectorStoreIndex(leaves, storage_context=storage, embed_model=embed)
    retriever = index.as_retriever(similarity_top_k=TOP_K)
    if method == "structrag+automerge":
        retriever = AutoMergingRetriever(retriever, storage)
    run = {}
    for q in queries:
        hits = retriever.retrieve(q["query"])
        run[q["qid"]] = pages_from_hits([pages_of.get(h.node.node_id, []) for h in hits])
    return run


# ---------------------------------------------------------------------------


def size_stats(values: Sequence[int]) -> dict[str, float]:
    v = sorted(values)
    if not v:
        return {}
    q = lambda f: v[min(len(v) - 1, int(f * (len(v) - 1) + 0.5))]  # noqa: E731
    return {"n": len(v), "mean": round(statistics.fmean(v), 1), "p5": q(0.05), "p25": q(0.25), "median": q(0.5),
            "p75": q(0.75), "p95": q(0.95), "max": v[-1]}


def best_of(fn: Callable[[], Any], n: int = 3) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.chunking", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=data_dir())
    ap.add_argument("--docs", nargs="*", help="PDF file names (default: all of retrieval/pdfs)")
    ap.add_argument("--chunk-size", type=int, default=256)
    ap.add_argument("--predictor", default="learned", help="level predictor for PDFs without an outline")
    ap.add_argument("--outline", default="auto", choices=["auto", "ignore"])
    ap.add_argument("--methods", nargs="*", default=list(DEFAULT_METHODS), choices=list(METHODS))
    ap.add_argument("--retrieval-docs", nargs="*",
                    help="PDF file names whose queries part 2 runs (default: all of --docs); embedding "
                    "every node of every method is the slow part")
    ap.add_argument("--skip-retrieval", action="store_true")
    ap.add_argument("--max-seq-length", type=int, default=256, help="MiniLM input cut-off in word pieces")
    ap.add_argument("--cache", type=Path, default=CACHE / "chunking")
    ap.add_argument("--out", type=Path, default=Path(out_path("chunking", "chunking.json")))
    args = ap.parse_args(argv)

    folder = args.data / "retrieval"
    if not (folder / "docs.jsonl").exists():
        log(f"{folder}: no retrieval data (docs.jsonl); pass --data")
        return 2
    rows = [json.loads(x) for x in (folder / "docs.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    queries = load_queries(folder / "queries.jsonl")
    if args.docs:
        rows = [r for r in rows if r["file"] in set(args.docs)]
    options = {"outline": args.outline, "predictor": args.predictor}
    cl100k = get_tokenizer("tiktoken")

    # --- part 1: statistics and throughput ---------------------------------
    per_doc: list[dict[str, Any]] = []
    parsed: dict[str, tuple[Document, HeadingTree]] = {}
    for r in rows:
        pdf = folder / "pdfs" / r["file"]
        document, tree, pstats = parse_cached(pdf, args.cache, options)
        parsed[r["file"]] = (document, tree)
        t_regex, chunks = best_of(lambda: chunk_document(document, tree, max_tokens=args.chunk_size))
        t_tik, chunks_tik = best_of(lambda: chunk_document(document, tree, max_tokens=args.chunk_size,
                                                           tokenizer="tiktoken"))
        from structrag.llama_index import StructragNodeParser, to_llama_document

        li_doc = to_llama_document(document, tree)
        t_nodes, nodes = best_of(lambda: StructragNodeParser(chunk_size=args.chunk_size).get_nodes_from_documents(
            [li_doc]), 1)
        per_doc.append({
            "file": r["file"], "pages": document.page_count, "blocks": len(document.blocks),
            "headings": len(tree), "depth": tree.depth, "sections": len(sections(document, tree)),
            "heading_source": pstats.get("heading_source"), "parse_s": pstats.get("parse_s"),
            "chunks_regex": len(chunks), "chunks_tiktoken": len(chunks_tik), "nodes": len(nodes),
            "chunk_s_regex": t_regex, "chunk_s_tiktoken": t_tik, "node_parser_s": t_nodes,
            "sizes_cl100k": [cl100k.count(c.text) for c in chunks_tik],
        })
        log(f"{r['file']}: {document.page_count} p, {len(tree)} headings, {len(chunks)} chunks, "
            f"{document.page_count / t_regex:.0f} p/s regex, {document.page_count / t_tik:.0f} p/s tiktoken")
    pages = sum(d["pages"] for d in per_doc)
    stats = {
        "documents": len(per_doc),
        "pages": pages,
        "chunks_tiktoken": sum(d["chunks_tiktoken"] for d in per_doc),
        "chunks_regex": sum(d["chunks_regex"] for d in per_doc),
        "sizes_cl100k": size_stats([s for d in per_doc for s in d["sizes_cl100k"]]),
        "pages_per_s_regex": pages / sum(d["chunk_s_regex"] for d in per_doc),
        "pages_per_s_tiktoken": pages / sum(d["chunk_s_tiktoken"] for d in per_doc),
        "pages_per_s_node_parser": pages / sum(d["node_parser_s"] for d in per_doc),
        "heading_sources": sorted({str(d["heading_source"]) for d in per_doc}),
    }
    result: dict[str, Any] = {
        "command": "python -m eval.bench.chunking " + " ".join(sys.argv[1:] if argv is None else argv),
        "chunk_size": args.chunk_size, "parse_options": options, "stats": stats,
        "per_doc": [{k: v for k, v in d.items() if k != "sizes_cl100k"} for d in per_doc],
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_avg": os.getloadavg() if hasattr(os, "getloadavg") else None},
    }

    # --- part 2: retrieval --------------------------------------------------
    if not args.skip_retrieval:
        embed = make_embedding(args.cache, args.max_seq_length)
        wanted = set(args.retrieval_docs) if args.retrieval_docs else set(parsed)
        missing = wanted - set(parsed)
        if missing:
            log(f"--retrieval-docs not among --docs: {sorted(missing)}")
            return 2
        qrels = {q["qid"]: q["relevant_pages"] for q in queries if q["doc"] in wanted}
        runs: dict[str, dict[str, list[int]]] = {m: {} for m in args.methods}
        node_stats: dict[str, list[int]] = {m: [] for m in args.methods}
        missed: dict[str, int] = {m: 0 for m in args.methods}
        md_seconds = {"classic": 0.0, "layout": 0.0}
        for r in rows:
            qs = [q for q in queries if q["doc"] == r["file"]]
            if not qs or r["file"] not in wanted:
                continue
            pdf = folder / "pdfs" / r["file"]
            document, tree = parsed[r["file"]]
            md = {}
            for mode in ("classic", "layout"):
                prefix = "markdown-layout" if mode == "layout" else "markdown"
                if any(m == prefix or m == prefix + "+sentence" for m in args.methods):
                    md[mode], secs = markdown_pages_cached(pdf, args.cache, mode)
                    md_seconds[mode] += secs
            shared = None
            for m in args.methods:
                t0 = time.perf_counter()
                if m == "structrag+automerge" and shared is not None:
                    leaves, all_nodes, pages_of = shared
                else:
                    md_pages = md.get("layout" if m.startswith("markdown-layout") else "classic")
                    leaves, all_nodes, pages_of = build_method_nodes(m, pdf, document, tree, args, md_pages)
                    if m == "structrag":
                        shared = (leaves, all_nodes, pages_of)
                node_stats[m].extend(cl100k.count(n.get_content()) for n in leaves)
                missed[m] += sum(1 for n in leaves if not pages_of.get(n.node_id))
                runs[m].update(run_retrieval(m, leaves, all_nodes, pages_of, qs, embed))
                log(f"  {r['file']} {m}: {len(leaves)} nodes, {time.perf_counter() - t0:.1f}s")
        scores = {m: evaluate(runs[m], qrels, METRICS) for m in args.methods}
        by_source: dict[str, dict[str, dict[str, float]]] = {}
        for src in sorted({q["source"] for q in queries}):
            sub = {q["qid"]: q["relevant_pages"] for q in queries if q["source"] == src and q["qid"] in qrels}
            if not sub:
                continue
            by_source[src] = {m: evaluate({k: runs[m].get(k, []) for k in sub}, sub, METRICS).mean
                              for m in args.methods}
        result["retrieval"] = {
            "queries": len(qrels), "documents": sorted(wanted), "top_k_nodes": TOP_K, "embedding": "all-MiniLM-L6-v2",
            "max_seq_length": args.max_seq_length,
            "mean": {m: scores[m].mean for m in args.methods},
            "by_source": by_source,
            "node_sizes_cl100k": {m: size_stats(v) for m, v in node_stats.items()},
            "nodes_without_pages": missed,
            "pymupdf4llm_s": md_seconds,
            "per_query": {m: scores[m].per_query for m in args.methods},
        }

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    print(report_tables(result))
    log(f"wrote {args.out}")
    return 0


def report_tables(result: dict[str, Any]) -> str:
    s = result["stats"]
    z = s["sizes_cl100k"]
    lines = [
        f"Documents {s['documents']}, pages {s['pages']}, chunk size {result['chunk_size']}.",
        "",
        "| tokenizer | chunks | chunking pages/s |",
        "|---|---:|---:|",
        f"| regex (default) | {s['chunks_regex']} | {s['pages_per_s_regex']:.0f} |",
        f"| tiktoken cl100k | {s['chunks_tiktoken']} | {s['pages_per_s_tiktoken']:.0f} |",
        f"| StructragNodeParser (tiktoken, sections + chunks) | – | {s['pages_per_s_node_parser']:.0f} |",
        "",
        "Chunk sizes (cl100k tokens, tiktoken chunking): "
        + ", ".join(f"{k} {v}" for k, v in z.items()),
    ]
    if "retrieval" in result:
        r = result["retrieval"]
        lines += ["", f"Page-level retrieval, {r['queries']} queries, each within its own document:", "",
                  "| method | nodes | median tokens | recall_any@5 | recall_all@5 | recall@5 | MRR | mAP | nDCG@10 |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for m, mean in r["mean"].items():
            ns = r["node_sizes_cl100k"][m]
            lines.append(f"| {m} | {ns.get('n', 0)} | {ns.get('median', 0)} | {mean['recall_any@5']:.3f} | "
                         f"{mean['recall_all@5']:.3f} | {mean['recall@5']:.3f} | {mean['mrr']:.3f} | "
                         f"{mean['map']:.3f} | {mean['ndcg@10']:.3f} |")
        for src, ms in r["by_source"].items():
            lines += ["", f"recall_any@5 on {src} queries: "
                      + ", ".join(f"{m} {v['recall_any@5']:.3f}" for m, v in ms.items())]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
