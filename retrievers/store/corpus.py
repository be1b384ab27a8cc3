"""The searchable, in-memory form of a chunk collection.

:class:`Corpus` holds flat numpy arrays over every chunk of every document
(documents are contiguous row ranges), the section *nodes* each chunk sits
under, and three BM25 engines:

* ``chunks``: one row per chunk (the passage's own text);
* ``heads``: one row per section node, its heading text (for BM25AncMax);
* ``sections``: one row per section node, the text of all chunks directly in
  that section (BM25 of the whole section);
* ``pages``: one row per page (by ``chunk_page_key``), the page's whole text as
  the PDF reader printed it, running headers and footers included
  (:func:`retrievers.store.arrays.page_texts`): BM25 of the whole page, the baseline a
  ranker must match where a page's wording decides.  A document added as
  chunks has no stored text: its pages hold the tokens of the chunks on them.

Each chunk sits under the section *nodes* of its path (:func:`retrievers.ingest.sections.doc_nodes`).

It is derived data: an index keeps the chunks in SQLite and rebuilds or loads a
:class:`Corpus` from ``.npy``/JSON files (never pickle).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Sequence

import numpy as np

from structrag.errors import IndexFormatError

from ..ingest.sections import doc_nodes
from ..lexical.bm25 import BM25Params, SparseBM25
from ..lexical.tokenizer import Tokenizer

__all__ = ["LAYOUT", "ChunkRecord", "DocRecord", "Corpus"]

#: Version of the derived-array layout (bump when arrays are added or change meaning;
#: an index with another layout rebuilds them from its database, no re-parse needed).
LAYOUT = "corpus/4"  # 4: bm25_pages


class ChunkRecord(NamedTuple):
    """What the searchable arrays need of one chunk."""

    rowid: int
    pages: tuple[int, ...]
    sibling_index: int
    sibling_count: int
    section_path: tuple[str, ...]
    tokens: tuple[str, ...] | list[str]


class DocRecord(NamedTuple):
    name: str
    page_count: int
    chunks: Sequence[ChunkRecord]
    chunk_vectors: np.ndarray | None = None
    node_vectors: np.ndarray | None = None
    #: BM25 tokens of each page's whole text (``page_count`` lists); None: from the chunks on each page
    page_tokens: Sequence[Sequence[str]] | None = None


_ARRAYS = (
    "doc_page_count", "doc_chunk_start", "doc_node_start",
    "chunk_doc", "chunk_rowid", "chunk_first_page", "chunk_pages_ptr", "chunk_pages",
    "chunk_sib_index", "chunk_sib_count", "chunk_depth", "chunk_node", "chunk_anc",
    "node_doc", "node_depth", "node_sib_index", "node_sib_count",
    "chunk_len", "chunk_num_ratio", "chunk_page_key",
)  # fmt: skip

_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")


def _page_tokens(d: DocRecord) -> list[list[str]]:
    """One token list per page key of ``d`` (``max(page_count, 1)``): its stored page texts' tokens, or
    the tokens of every chunk on each page (a chunk over two pages counts on both)."""
    n = max(int(d.page_count), 1)
    if d.page_tokens is not None:
        got = [list(t) for t in d.page_tokens[:n]]
        return got + [[] for _ in range(n - len(got))]
    out: list[list[str]] = [[] for _ in range(n)]
    for c in d.chunks:
        for p in sorted(set(int(p) for p in c.pages)):
            out[min(max(p, 0), n - 1)].extend(c.tokens)
    return out


@dataclass
class Corpus:
    """Flat arrays over a chunk collection (see the module docstring)."""

    doc_names: list[str]
    doc_page_count: np.ndarray
    doc_chunk_start: np.ndarray  # (n_docs + 1,) row ranges
    doc_node_start: np.ndarray
    chunk_doc: np.ndarray
    chunk_rowid: np.ndarray
    chunk_first_page: np.ndarray
    chunk_pages_ptr: np.ndarray
    chunk_pages: np.ndarray
    chunk_sib_index: np.ndarray
    chunk_sib_count: np.ndarray
    chunk_depth: np.ndarray
    chunk_node: np.ndarray
    chunk_anc: np.ndarray  # (n_chunks, max_depth), -1 padded
    node_doc: np.ndarray
    node_depth: np.ndarray
    node_sib_index: np.ndarray
    node_sib_count: np.ndarray
    chunk_len: np.ndarray  # tokens
    chunk_num_ratio: np.ndarray  # share of tokens that are numbers (tables, statements)
    chunk_page_key: np.ndarray  # collection-wide id of the chunk's first page
    bm25_chunks: SparseBM25
    bm25_heads: SparseBM25
    bm25_sections: SparseBM25
    bm25_pages: SparseBM25  # one row per page key (module docstring)
    chunk_vectors: np.ndarray | None = None
    node_vectors: np.ndarray | None = None
    #: the vector spaces side by side in the vectors (:class:`retrievers.store.arrays.VectorLayout`; None
    #: without vectors); set by whoever loads the vectors, never stored with the arrays
    vector_layout: Any = field(default=None, repr=False)
    #: each node's own heading text (the last element of its path), for section-name
    #: mentions in queries (:mod:`retrievers.rank.question`)
    node_titles: list[str] = field(default_factory=list, repr=False)
    _doc_index: dict[str, int] = field(default_factory=dict, repr=False)
    #: mean ``chunk_num_ratio`` of the chunks starting on each page (by ``chunk_page_key``);
    #: derived on load, not stored
    page_num_ratio: np.ndarray = field(init=False, repr=False)
    #: ``(n_docs + 1,)`` page-key ranges of the documents (each has ``max(page_count, 1)``); derived
    doc_page_start: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._doc_index = {n: i for i, n in enumerate(self.doc_names)}
        self._mention_keys: dict[int, tuple] = {}  # node -> its parsed heading (filled as queries need it)
        n_pages = int(self.chunk_page_key.max()) + 1 if self.chunk_page_key.size else 0
        count = np.bincount(self.chunk_page_key, minlength=n_pages)
        total = np.bincount(self.chunk_page_key, weights=self.chunk_num_ratio, minlength=n_pages)
        self.page_num_ratio = (total / np.maximum(count, 1)).astype(np.float32)
        self.doc_page_start = np.r_[0, np.cumsum(np.maximum(self.doc_page_count, 1))].astype(np.int64)

    # --- sizes and lookups ----------------------------------------------------
    @property
    def n_chunks(self) -> int:
        return int(self.chunk_doc.shape[0])

    @property
    def n_nodes(self) -> int:
        return int(self.node_doc.shape[0])

    @property
    def has_dense(self) -> bool:
        return self.chunk_vectors is not None

    def doc_id(self, name: str) -> int | None:
        return self._doc_index.get(name)

    def doc_rows(self, doc: int) -> np.ndarray:
        return np.arange(self.doc_chunk_start[doc], self.doc_chunk_start[doc + 1])

    def pages_of(self, row: int) -> np.ndarray:
        return self.chunk_pages[self.chunk_pages_ptr[row] : self.chunk_pages_ptr[row + 1]]

    def page_ranking(self, rows: Sequence[int]) -> list[tuple[str, int]]:
        """``(doc, page)`` pairs of ranked chunk rows, each pair once, in first-hit order (0-based pages)."""
        seen: set[tuple[str, int]] = set()
        out = []
        for r in rows:
            name = self.doc_names[int(self.chunk_doc[r])]
            for p in self.pages_of(int(r)).tolist():
                if (name, p) not in seen:
                    seen.add((name, p))
                    out.append((name, p))
        return out

    # --- building -----------------------------------------------------------
    @classmethod
    def build(
        cls,
        docs: Sequence[DocRecord],
        tokenizer: Tokenizer,
        *,
        bm25: BM25Params = BM25Params(),
        heads_bm25: BM25Params = BM25Params(b=0.3),
    ) -> "Corpus":
        """Arrays and BM25 engines for ``docs`` (in the given order)."""
        names, page_count, c_start, n_start = [], [], [0], [0]
        c_doc, c_rowid, c_first, c_ptr, c_pages = [], [], [], [0], []
        c_sib_i, c_sib_n, c_depth, c_node, c_anc = [], [], [], [], []
        n_doc, n_depth, n_sib_i, n_sib_n, n_title = [], [], [], [], []
        c_len, c_num, c_pkey = [], [], []
        page_base = 0
        chunk_tokens: list = []
        head_tokens: list[list[str]] = []
        section_tokens: list[list[str]] = []
        page_tokens: list = []
        cvecs, nvecs = [], []
        dense = bool(docs) and all(d.chunk_vectors is not None for d in docs)
        for di, d in enumerate(docs):
            names.append(d.name)
            page_count.append(int(d.page_count))
            nodes = doc_nodes([c.section_path for c in d.chunks])
            base = n_start[-1]
            sec_toks: list[list[str]] = [[] for _ in nodes.paths]
            for ci, c in enumerate(d.chunks):
                c_doc.append(di)
                c_rowid.append(int(c.rowid))
                pages = sorted(set(int(p) for p in c.pages))
                c_first.append(pages[0] if pages else 0)
                c_pages.extend(pages)
                c_ptr.append(len(c_pages))
                c_sib_i.append(int(c.sibling_index))
                c_sib_n.append(max(int(c.sibling_count), 1))
                c_depth.append(len(c.section_path))
                leaf = nodes.chunk_leaf[ci]
                c_node.append(base + leaf if leaf >= 0 else -1)
                c_anc.append([base + j for j in nodes.chunk_anc[ci]])
                chunk_tokens.append(c.tokens)
                c_len.append(len(c.tokens))
                c_num.append(sum(1 for t in c.tokens if _NUMBER.match(t)) / max(len(c.tokens), 1))
                c_pkey.append(page_base + min(c_first[-1], max(int(d.page_count) - 1, 0)))
                if leaf >= 0:
                    sec_toks[leaf].extend(c.tokens)
            for j, p in enumerate(nodes.paths):
                n_doc.append(di)
                n_depth.append(len(p))
                n_sib_i.append(nodes.node_sib_index[j])
                n_sib_n.append(nodes.node_sib_count[j])
                n_title.append(p[-1])
                head_tokens.append(tokenizer.tokenize(p[-1]))
                section_tokens.append(sec_toks[j])
            c_start.append(len(c_doc))
            n_start.append(len(n_doc))
            page_tokens.extend(_page_tokens(d))
            page_base += max(int(d.page_count), 1)
            if dense:
                cv = np.asarray(d.chunk_vectors, dtype=np.float32)
                nv = np.asarray(d.node_vectors, dtype=np.float32)
                if cv.shape[0] != len(d.chunks) or nv.shape[0] != len(nodes.paths):
                    raise IndexFormatError(
                        f"document {d.name!r}: {cv.shape[0]} chunk vectors for {len(d.chunks)} chunks, "
                        f"{nv.shape[0]} node vectors for {len(nodes.paths)} sections"
                    )
                cvecs.append(cv)
                nvecs.append(nv)
        depth = max((len(a) for a in c_anc), default=0)
        anc = np.full((len(c_anc), max(depth, 1)), -1, dtype=np.int32)
        for i, a in enumerate(c_anc):
            anc[i, : len(a)] = a
        i32 = lambda x: np.asarray(x, dtype=np.int32)  # noqa: E731
        dim = cvecs[0].shape[1] if cvecs else 0
        return cls(
            doc_names=names,
            doc_page_count=i32(page_count),
            doc_chunk_start=np.asarray(c_start, dtype=np.int64),
            doc_node_start=np.asarray(n_start, dtype=np.int64),
            chunk_doc=i32(c_doc),
            chunk_rowid=np.asarray(c_rowid, dtype=np.int64),
            chunk_first_page=i32(c_first),
            chunk_pages_ptr=np.asarray(c_ptr, dtype=np.int64),
            chunk_pages=i32(c_pages),
            chunk_sib_index=i32(c_sib_i),
            chunk_sib_count=i32(c_sib_n),
            chunk_depth=i32(c_depth),
            chunk_node=i32(c_node),
            chunk_anc=anc,
            node_doc=i32(n_doc),
            node_depth=i32(n_depth),
            node_sib_index=i32(n_sib_i),
            node_sib_count=i32(n_sib_n),
            chunk_len=i32(c_len),
            chunk_num_ratio=np.asarray(c_num, dtype=np.float32),
            chunk_page_key=np.asarray(c_pkey, dtype=np.int64),
            bm25_chunks=SparseBM25(*bm25).fit(chunk_tokens),
            bm25_heads=SparseBM25(*heads_bm25).fit(head_tokens),
            bm25_sections=SparseBM25(*bm25).fit(section_tokens),
            bm25_pages=SparseBM25(*bm25).fit(page_tokens),
            chunk_vectors=np.concatenate(cvecs) if dense else None,
            node_vectors=(np.concatenate(nvecs) if nvecs else np.zeros((0, dim), np.float32)) if dense else None,
            node_titles=n_title,
        )

    # --- persistence ----------------------------------------------------------
    def save(self, path: str | os.PathLike, *, vectors: bool = False) -> None:
        """Write into directory ``path`` (arrays.npz, docs.json, four BM25 folders).

        Vectors are written only with ``vectors=True`` (an index keeps them per
        document instead and passes them to :meth:`load`).
        """
        p = Path(path)
        p.mkdir(parents=True, exist_ok=True)
        np.savez(p / "arrays.npz", **{k: getattr(self, k) for k in _ARRAYS})
        (p / "docs.json").write_text(json.dumps({"names": self.doc_names, "node_titles": self.node_titles},
                                                ensure_ascii=False), encoding="utf-8")
        self.bm25_chunks.save(p / "bm25_chunks")
        self.bm25_heads.save(p / "bm25_heads")
        self.bm25_sections.save(p / "bm25_sections")
        self.bm25_pages.save(p / "bm25_pages")
        if vectors and self.chunk_vectors is not None:
            np.save(p / "chunk_vectors.npy", self.chunk_vectors, allow_pickle=False)
            np.save(p / "node_vectors.npy", self.node_vectors, allow_pickle=False)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike,
        *,
        chunk_vectors: np.ndarray | None = None,
        node_vectors: np.ndarray | None = None,
    ) -> "Corpus":
        p = Path(path)
        try:
            with np.load(p / "arrays.npz", allow_pickle=False) as z:
                arrays = {k: z[k] for k in _ARRAYS}
            names_json = json.loads((p / "docs.json").read_text(encoding="utf-8"))
            names, titles = list(names_json["names"]), list(names_json["node_titles"])
            if chunk_vectors is None and (p / "chunk_vectors.npy").exists():
                chunk_vectors = np.load(p / "chunk_vectors.npy", allow_pickle=False)
                node_vectors = np.load(p / "node_vectors.npy", allow_pickle=False)
        except Exception as e:  # noqa: BLE001 - BadZipFile, truncated arrays, bad JSON ...: the caller rebuilds
            raise IndexFormatError(f"cannot read search arrays: {type(e).__name__}: {e}", path=p) from e
        return cls(
            doc_names=list(names),
            bm25_chunks=SparseBM25.load(p / "bm25_chunks"),
            bm25_heads=SparseBM25.load(p / "bm25_heads"),
            bm25_sections=SparseBM25.load(p / "bm25_sections"),
            bm25_pages=SparseBM25.load(p / "bm25_pages"),
            chunk_vectors=chunk_vectors,
            node_vectors=node_vectors,
            node_titles=list(titles),
            **arrays,
        )
