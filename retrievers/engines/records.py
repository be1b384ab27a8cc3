"""What an index exports to a search engine, and the BM25 weights both engines agree on.

Each chunk becomes one engine record (:class:`EngineChunk`): its text, section
path, heading levels, pages, place among its siblings, character offsets,
boxes and block ids (the provenance), the document's name, content hash and
page count, the chunk's BM25 tokens, its embedding, and its BM25 weights as a
sparse vector.

The sparse vector is the chunk's row of the index's own BM25 matrix
(:class:`retrievers.lexical.bm25.SparseBM25` stores ``idf * tf-part`` per chunk and
term), keyed by a stable 32-bit hash of the term (:func:`term_index`), so a
dot product with :func:`query_sparse` (each query term's count) *is* the
index's BM25 score: an engine that scores sparse vectors (Qdrant) ranks
exactly as the index does.  Two terms whose hashes collide (about one pair per
million distinct terms) share a weight.  The weights hold the collection's
idf, so they change when documents are added or removed:
:meth:`~retrievers.engines.QdrantEngine.sync` rewrites them.
"""

from __future__ import annotations

import zlib
from collections import Counter
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

import numpy as np

from structrag.errors import ConfigError

from ..rank.search import page_fields

__all__ = ["EngineChunk", "EngineHit", "SyncReport", "Exporter", "iter_engine_chunks", "term_index", "query_sparse",
           "RECORD_SCHEMA", "doc_identity",
           "identity_payload", "IDENTITY_KEYWORDS", "IDENTITY_INTEGERS"]

#: Version of the exported record's fields (stored in every record).
RECORD_SCHEMA = "structrag-engine/1"


def term_index(term: str) -> int:
    """A stable unsigned 32-bit id of a BM25 term (CRC-32 of its UTF-8 bytes)."""
    return zlib.crc32(term.encode("utf-8")) & 0xFFFFFFFF


def query_sparse(tokens: Sequence[str]) -> tuple[list[int], list[float]]:
    """The query side of the BM25 dot product: each distinct term's count (repeats count, as in the index)."""
    counts: Counter[int] = Counter(term_index(t) for t in tokens)
    idx = sorted(counts)
    return idx, [float(counts[i]) for i in idx]


class EngineChunk(NamedTuple):
    doc: str
    doc_sha1: str
    chunk_id: str
    ordinal: int
    text: str
    tokens: list[str]
    section_path: tuple[str, ...]
    heading_levels: tuple[int, ...]
    pages: tuple[int, ...]  # 0-based
    page_count: int
    sibling_index: int
    sibling_count: int
    section_id: str
    start: int
    end: int
    bboxes: list
    block_ids: list[int]
    vector: np.ndarray | None
    sparse: tuple[list[int], list[float]]
    identity: Any = None  # the document's DocumentIdentity (retrievers.store.identities), None when it has none

    def payload(self) -> dict[str, Any]:
        """The stored fields (no vectors): what a hit carries back."""
        return {
            "schema": RECORD_SCHEMA,
            "doc": self.doc,
            "doc_id": self.doc,  # LlamaIndex's ref_doc_id key (its vector stores delete by it)
            "doc_sha1": self.doc_sha1,
            "chunk_id": self.chunk_id,
            "ordinal": self.ordinal,
            "text": self.text,
            "section_path": list(self.section_path),
            "heading_levels": list(self.heading_levels),
            **page_fields(self.pages),
            "page_count": self.page_count,
            "sibling_index": self.sibling_index,
            "sibling_count": self.sibling_count,
            "section_id": self.section_id,
            "start": self.start,
            "end": self.end,
            "bboxes": self.bboxes,
            "block_ids": self.block_ids,
            **identity_payload(self.identity),
        }


#: The document identity's fields in a record (flat, so an engine filters on them): ``issuer``, ``doc_type``,
#: ``year``, ``quarter``, ``language``, and the title as ``doc_title``.  Keyword fields, and integer ones:
IDENTITY_KEYWORDS = ("issuer", "doc_type", "language", "doc_title")
IDENTITY_INTEGERS = ("year", "quarter")


def identity_payload(identity: Any) -> dict[str, Any]:
    """A document identity as the record's flat fields (None where unknown)."""
    get = (lambda f: getattr(identity, f)) if identity is not None else (lambda f: None)
    return {"issuer": get("issuer"), "doc_type": get("doc_type"), "year": get("year"), "quarter": get("quarter"),
            "language": get("language"), "doc_title": get("title")}


class EngineHit(NamedTuple):
    """One first-stage result: the chunk's document and id, the engine's score, its stored fields."""

    doc: str
    chunk_id: str
    score: float
    payload: dict[str, Any]


class SyncReport(NamedTuple):
    added: list[str]
    removed: list[str]
    unchanged: list[str]
    chunks_written: int
    bm25_refreshed: int  # chunks of unchanged documents whose BM25 weights were rewritten


def doc_identity(sha1: str, options_key: str, identity: Any = None) -> str:
    """What must match for an engine's copy of a document to be current: its content and options, and
    its identity fields (a user's ``set_identity`` re-sends it; so does the first sync after identities)."""
    if identity is None:
        return f"{sha1}:{options_key}"
    crc = zlib.crc32(repr(sorted(identity_payload(identity).items())).encode("utf-8"))
    return f"{sha1}:{options_key}:{crc:08x}"


def _bm25_rows(corpus):
    """The chunk x term BM25 weights as CSR (rows = corpus rows), and each column's term id."""
    from scipy import sparse

    bm = corpus.bm25_chunks
    if getattr(bm, "_bm", None) is None:
        return None, np.zeros(0, np.uint32)
    sc = bm._bm.scores
    vocab = bm.vocab_
    n_terms = len(sc["indptr"]) - 1  # bm25s' vocabulary may hold a term with no column (its empty token)
    cols = np.zeros(n_terms, dtype=np.uint32)
    for t, j in vocab.items():
        if j < n_terms:
            cols[j] = term_index(t)
    m = sparse.csc_matrix((sc["data"], sc["indices"], sc["indptr"]), shape=(corpus.n_chunks, n_terms)).tocsr()
    return m, cols


def _sparse_row(m, cols: np.ndarray, row: int) -> tuple[list[int], list[float]]:
    a, b = m.indptr[row], m.indptr[row + 1]
    idx = cols[m.indices[a:b]]
    val = m.data[a:b].astype(np.float64)
    if idx.size and np.unique(idx).size != idx.size:  # a hash collision inside one chunk: add the weights
        u, inv = np.unique(idx, return_inverse=True)
        val = np.bincount(inv, weights=val)
        idx = u
    order = np.argsort(idx)
    return [int(i) for i in idx[order]], [float(v) for v in val[order]]


class Exporter:
    """Reads chunks, tokens, vectors and BM25 rows of an open index, one document at a time."""

    def __init__(self, index) -> None:
        self.index = index
        self.corpus = index.corpus
        self.m, self.cols = _bm25_rows(self.corpus)

    def documents(self) -> dict[str, tuple[str, str, int]]:
        """name -> (identity, sha1, page_count) of every indexed document."""
        ids = self.index.identities()
        return {d.name: (doc_identity(d.sha1, d.options_key, ids.get(d.name)), d.sha1, d.page_count)
                for d in self.index.store.documents()}

    def plan(self, want: dict[str, tuple[str, str, int]], have: dict[str, str]
             ) -> tuple[list[str], list[str], list[str]]:
        """(added, removed, unchanged) document names, from the index's documents (``want``, as
        :meth:`documents` gives them) and the identity of each one an engine holds (``have``): a
        document whose identity changed is removed and added again."""
        removed = sorted(n for n in have if n not in want or have[n] != want[n][0])
        added = [n for n in self.corpus.doc_names if have.get(n) != want[n][0]]
        unchanged = [n for n in self.corpus.doc_names if n not in added]
        return added, removed, unchanged

    def sparse(self, name: str) -> list[tuple[list[int], list[float]]]:
        i = self.corpus.doc_id(name)
        if i is None:
            raise ConfigError(f"no document named {name!r} in the index", path=self.index.path)
        if self.m is None:
            return [([], []) for _ in self.corpus.doc_rows(i)]
        return [_sparse_row(self.m, self.cols, int(r)) for r in self.corpus.doc_rows(i)]

    def chunks(self, name: str) -> list[EngineChunk]:
        index, corpus = self.index, self.corpus
        i = corpus.doc_id(name)
        if i is None:
            raise ConfigError(f"no document named {name!r} in the index", path=index.path)
        rows = corpus.doc_rows(i)
        chunks = index.chunks(name)
        tokens = index.store.doc_tokens(name)
        sparse = self.sparse(name)
        vecs = corpus.chunk_vectors[rows] if corpus.has_dense else None
        page_count = int(corpus.doc_page_count[i])
        ident = index.identities().get(name)
        out = []
        for j, c in enumerate(chunks):
            out.append(EngineChunk(
                doc=name, doc_sha1=c.doc_sha1, chunk_id=c.id, ordinal=j, text=c.text, tokens=tokens[j],
                section_path=tuple(c.section_path), heading_levels=tuple(c.heading_levels),
                pages=tuple(sorted(set(int(p) for p in c.pages))), page_count=page_count,
                sibling_index=int(c.sibling_index), sibling_count=int(c.sibling_count), section_id=c.section_id,
                start=int(c.start), end=int(c.end), bboxes=[[int(p), [float(x) for x in b]] for p, b in c.bboxes],
                block_ids=[int(b) for b in c.block_ids], vector=None if vecs is None else vecs[j], sparse=sparse[j], identity=ident,
            ))  # fmt: skip
        return out


def iter_engine_chunks(index, names: Iterable[str] | None = None) -> Iterator[tuple[str, list[EngineChunk]]]:
    """``(document, its engine records)`` for each document of an open index (or those in ``names``)."""
    ex = Exporter(index)
    for name in (names if names is not None else index.corpus.doc_names):
        yield name, ex.chunks(name)
