"""The search arrays of an index: a :class:`~retrievers.store.corpus.Corpus` for the store's committed generation.

The database (:mod:`retrievers.store.database`) is the truth; the arrays (BM25
matrices, section nodes, vectors, a faiss index for large collections) are a
cache of it, written per generation by the index's writer
(:func:`publish`) and read by everyone (:func:`load_corpus`).  Arrays that are
missing, damaged or of an older layout are rebuilt in memory from the
database.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from structrag.errors import ConfigError, IndexFormatError

from ..embed.encoder import AUTO_MODEL
from ..embed.spaces import Space, stack
from ..ingest.sections import doc_nodes
from ..lexical.bm25 import BM25Params, TopK
from ..lexical.tokenizer import Tokenizer
from .corpus import LAYOUT, ChunkRecord, Corpus, DocRecord
from .database import DocRow, Store

__all__ = ["FAISS_FILE", "VectorsUnreadable", "exact_below", "vectors_ok", "load_vector_index", "VectorSearch",
           "VectorLayout", "index_spaces", "document_spaces", "load_vectors", "page_texts", "build_corpus", "load_corpus", "open_corpus", "publish"]

log = logging.getLogger("structrag.index")

#: The approximate vector index of a large collection, in the generation's folder.
FAISS_FILE = "dense.faiss"


class VectorsUnreadable(IndexFormatError):
    """A document's vector files are missing or damaged (the rest of the index is fine)."""


def exact_below() -> int:
    """Collections smaller than this are searched exactly (env override for tests and benchmarks)."""
    raw = os.environ.get("STRUCTRAG_EXACT_BELOW", "20000")
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(f"STRUCTRAG_EXACT_BELOW must be a whole number of chunks >= 0, not {raw!r}",
                          hint="unset it to use the default (20000)")
    return value


def vectors_ok(store: Store, d: DocRow) -> bool:
    """Whether document ``d``'s vector files load and fit its chunks."""
    try:
        cv = np.load(store.vectors_dir / f"{d.vectors}.chunks.npy", allow_pickle=False)
        nv = np.load(store.vectors_dir / f"{d.vectors}.nodes.npy", allow_pickle=False)
    except (OSError, ValueError):
        return False
    return cv.ndim == 2 and nv.ndim == 2 and cv.shape[0] == d.n_chunks and cv.shape[1] == nv.shape[1]


def load_vector_index(store: Store, chunk_vectors: np.ndarray):
    """The approximate vector index of the committed generation: its file, or fitted now (then not stored)."""
    from .vectors import VectorIndex

    f = store.derived_dir(store.generation()) / FAISS_FILE
    return VectorIndex.load(f) if f.exists() else VectorIndex(exact_below=exact_below()).fit(chunk_vectors)


class VectorSearch:
    """The nearest chunks of a query vector in ``corpus`` (the committed generation of ``store``): exact
    within a scope and in a collection below :func:`exact_below` chunks, else by the generation's
    approximate index, loaded on the first such search (once, whichever thread asks)."""

    def __init__(self, store: Store, corpus: Corpus) -> None:
        self.path = store.root
        self._store = store
        self._corpus = corpus
        self._lock = threading.Lock()
        #: the approximate index, once a search has loaded it
        self.approximate = None

    def top(self, query_vector: np.ndarray, rows: np.ndarray | None, n: int) -> TopK:
        """The ``n`` chunks nearest ``query_vector`` (among ``rows`` if given), best first."""
        vecs = self._corpus.chunk_vectors
        if rows is not None or self._corpus.n_chunks < exact_below():
            from .vectors import exact_top_k

            return exact_top_k(vecs, query_vector, n, rows)
        with self._lock:
            if self.approximate is None:
                self.approximate = load_vector_index(self._store, vecs)
            vi = self.approximate
        return vi.search(query_vector, n)


class VectorLayout(NamedTuple):
    """The vector spaces of a collection's documents (:mod:`retrievers.embed.spaces`), in the order their
    blocks are laid side by side, with each space's dimension."""

    spaces: tuple[Space, ...]
    dims: tuple[int, ...]


def index_spaces(store: Store) -> tuple[Space | None, dict[str, Space]]:
    """The index's first space (its ``dense_model`` setting; None before an ``auto`` index has chosen) and
    every space a document of it was embedded in, by key."""
    meta = store.meta()
    model = json.loads(meta.get("dense_model", "null"))
    first = Space(model, json.loads(meta.get("dense_max_seq_length", "null"))) \
        if model not in (None, AUTO_MODEL) else None
    known = {k: Space(m, msl) for k, (m, msl) in json.loads(meta.get("dense_spaces", "{}")).items()}
    if first is not None:
        known[first.key] = first
    return first, known


def document_spaces(store: Store, docs: Sequence[DocRow]) -> tuple[tuple[Space, ...], list[int]]:
    """The spaces of ``docs`` in layout order (the index's first space first, then by key) and the index
    of each document's space (its vector files' names end with the space's key)."""
    first, known = index_spaces(store)
    keys = [d.vectors.rsplit("-", 1)[-1] for d in docs if d.vectors is not None]
    unknown = sorted(set(keys) - set(known))
    if unknown:
        raise IndexFormatError(f"vectors made by a model the index does not list ({', '.join(unknown)})",
                               path=store.root, hint="re-embed them: structrag index PDF... --out DIR --repair")
    order = sorted(set(keys), key=lambda k: (first is None or k != first.key, k))
    at = {k: i for i, k in enumerate(order)}
    return tuple(known[k] for k in order), [at[k] for k in keys]


def load_vectors(store: Store, docs: Sequence[DocRow]
                 ) -> tuple[np.ndarray | None, np.ndarray | None, VectorLayout | None]:
    """The chunk and section-node vectors of ``docs``, concatenated (spaces side by side when they are
    several, :func:`retrievers.embed.spaces.stack`), and their layout (None, None, None when any has none)."""
    if not docs or any(d.vectors is None for d in docs):
        return None, None, None
    spaces, of_doc = document_spaces(store, docs)
    cv, nv = [], []
    for d, s in zip(docs, of_doc):
        try:
            cv.append((s, np.load(store.vectors_dir / f"{d.vectors}.chunks.npy", allow_pickle=False)))
            nv.append((s, np.load(store.vectors_dir / f"{d.vectors}.nodes.npy", allow_pickle=False)))
        except (OSError, ValueError) as e:
            raise VectorsUnreadable(f"vectors of {d.name!r} cannot be read: {e}", path=store.root,
                                    hint="re-embed them: structrag index PDF... --out DIR --repair") from e
    dims = [0] * len(spaces)
    for s, v in cv:
        dims[s] = v.shape[1]
    return stack(cv, dims), stack(nv, dims), VectorLayout(spaces, tuple(dims))


def page_texts(document: Mapping[str, Any]) -> list[str]:
    """Each page's whole text from a stored :class:`~structrag.model.Document` (as a dict): its body text
    and, after it, its running headers, footers and page numbers (``furniture``) -- what PyMuPDF's
    ``page.get_text()`` holds, the text the page-BM25 baseline ranks (the same BM25 to the digit on the
    benchmark sets)."""
    text, off = document["text"], document["page_offsets"]
    pages = [text[off[p]:off[p + 1]] for p in range(len(off) - 1)]
    for b in document.get("furniture", ()):
        p = int(b["page"])
        if 0 <= p < len(pages):
            pages[p] += "\n" + b["text"]
    return pages


def build_corpus(store: Store, tokenizer: Tokenizer, bm25: BM25Params, dense: bool, *,
                 store_pages: bool = False) -> Corpus:
    """The arrays of the committed documents, built from the database.

    Page texts are tokenised once per document: the tokens are read from the database, or made from the
    stored document and, with ``store_pages`` (the writer, :func:`publish`), stored for the next time.
    """
    records = []
    docs = []
    stored_pages = store.page_tokens()
    made: dict[int, list[list[str]]] = {}
    for d, rows in store.iter_doc_chunks():
        docs.append(d)
        chunks = [
            ChunkRecord(r[0], tuple(json.loads(r[1])), r[2], r[3], tuple(json.loads(r[4])), r[5].split())
            for r in rows
        ]
        pages = stored_pages.get(d.id)
        if pages is None:
            stored = store.load_document(d.name)  # None for a document added as chunks
            pages = [tokenizer.tokenize(t) for t in page_texts(stored)] if stored else None
            if pages is not None:
                made[d.id] = pages
        records.append(DocRecord(d.name, d.page_count, chunks, page_tokens=pages))
    layout = None
    if dense and records:
        cv, nv, layout = load_vectors(store, docs)
        # split the concatenated vectors back per document
        oc = on = 0
        for i, r in enumerate(records):
            nn = len(doc_nodes([c.section_path for c in r.chunks]).paths)
            records[i] = r._replace(chunk_vectors=cv[oc : oc + len(r.chunks)], node_vectors=nv[on : on + nn])
            oc += len(r.chunks)
            on += nn
    if store_pages and made and not store.read_only:
        store.save_page_tokens(made)
    corpus = Corpus.build(records, tokenizer, bm25=bm25)
    corpus.vector_layout = layout
    return corpus


def load_corpus(store: Store, *, vectors: bool = True) -> Corpus:
    """The arrays of the committed generation: read from its folder, or rebuilt from the database
    (``vectors=False``: without the dense vectors, as when they are unreadable)."""
    meta = store.meta()
    tokenizer = Tokenizer.from_dict(json.loads(meta["tokenizer"]))
    bm25 = BM25Params(**json.loads(meta["bm25"]))
    dense = vectors and json.loads(meta.get("dense_model", "null")) is not None
    for _attempt in range(3):
        gen = store.generation()
        docs = store.documents()
        d = store.derived_dir(gen)
        if store.derived_ok(gen, LAYOUT):
            cv, nv, layout = load_vectors(store, docs) if dense else (None, None, None)
            try:
                corpus = Corpus.load(d, chunk_vectors=cv, node_vectors=nv)
                corpus.vector_layout = layout
            except (FileNotFoundError, IndexFormatError) as e:
                if store.generation() != gen:
                    continue  # a writer moved on while we read: read the new generation
                # derived files are a cache of the database: damaged or of an older layout,
                # they are rebuilt (the next writer stores them again)
                log.warning("index %s: search arrays unusable (%s); rebuilding them from the database",
                            store.root, e)
                return build_corpus(store, tokenizer, bm25, dense)
            if corpus.n_chunks == sum(x.n_chunks for x in docs):
                return corpus
            log.warning("index %s: search arrays do not match the database; rebuilding them", store.root)
            return build_corpus(store, tokenizer, bm25, dense)
        # committed documents without search arrays (the writer stopped before writing
        # them): rebuild in memory from the database
        log.info("index %s: rebuilding search arrays of generation %d from the database", store.root, gen)
        return build_corpus(store, tokenizer, bm25, dense)
    raise IndexFormatError("the index kept changing while it was being opened; try again", path=store.root)


def open_corpus(store: Store) -> tuple[Corpus, VectorsUnreadable | None]:
    """:func:`load_corpus`, or without vectors when they are unreadable (with the error, for the dense modes):
    a missing vector file must not keep lexical search from working."""
    try:
        return load_corpus(store), None
    except VectorsUnreadable as e:
        log.warning("index %s: %s; searching without dense vectors", store.root, e)
        return load_corpus(store, vectors=False), e


def publish(store: Store, tokenizer: Tokenizer, bm25: BM25Params, dense: bool) -> Corpus:
    """Write the arrays of the committed generation atomically, remove old files; returns them.

    The caller holds the store's writer lock.
    """
    gen = store.generation()
    corpus = build_corpus(store, tokenizer, bm25, dense, store_pages=True)

    def write(tmp: Path) -> None:
        corpus.save(tmp)
        if corpus.has_dense and corpus.n_chunks >= exact_below():
            from .vectors import VectorIndex

            VectorIndex(exact_below=exact_below()).fit(corpus.chunk_vectors).save(tmp / FAISS_FILE)

    store.publish_derived(gen, write, LAYOUT)
    store.garbage_collect()
    return corpus
