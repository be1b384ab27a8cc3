"""The persisted, searchable index: ``Index.build`` / ``Index.open`` / ``search``.

>>> index = Index.build(["reports/"], "my-index", workers=2)      # doctest: +SKIP
>>> for hit in Index.open("my-index").search("capital expenditure 2018", k=5):  # doctest: +SKIP
...     print(hit.doc, hit.pages, " > ".join(hit.section_path))

Documents are parsed with :func:`structrag.pipeline.parse_pdf`, chunked with
:func:`structrag.chunking.chunk_document`, tokenised, embedded (when the index
is dense) and stored (see :mod:`retrievers.store` for the layout and why a
crash never leaves an unreadable index).  Adding a document parses, chunks and
embeds only that document; the collection-wide BM25 statistics are then
recomputed from the stored tokens (seconds), since every idf changes.  A file
whose content hash and options are already indexed is skipped.

Search modes:

``bm25``    BM25 over chunks (bm25s sparse index).
``dense``   embedding similarity (faiss over the collection; exact within a document).
``hybrid``  reciprocal-rank fusion of the two (no training).
``ranker``  (default) LightGBM LambdaRank over hierarchy features of the union of
            the BM25 and dense candidates (:mod:`retrievers.features`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import threading
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, Mapping, NamedTuple, Sequence

import numpy as np

from structrag.errors import ConfigError, EncryptedPDFError, IndexFormatError, ModelError, StructragError
from structrag.files import file_sha1
from structrag.model import Chunk

from .bm25 import BM25Params, TopK, top_k
from .corpus import LAYOUT, ChunkRecord, Corpus, DocRecord, doc_nodes, path_text
from .features import QueryScores, available_features, compute_features, query_scores
from .identity import display_names, match_file, resolve_name
from .ranker import LambdaRanker, default_model_path, rrf
from .store import Store, atomic_save_npy
from .tokenization import Tokenizer

__all__ = ["Index", "Hit", "AddReport", "DocInfo", "Mode", "MODES", "embed_documents"]

log = logging.getLogger("structrag.index")

Mode = Literal["bm25", "dense", "hybrid", "ranker"]
MODES: tuple[str, ...] = ("bm25", "dense", "hybrid", "ranker")
_RANKER_FILE = "ranker.txt"


class Hit(NamedTuple):
    """One retrieved chunk.  ``pages`` are 0-based here, 1-based in :meth:`to_dict`."""

    doc: str
    chunk_id: str
    pages: tuple[int, ...]
    section_path: tuple[str, ...]
    score: float
    text: str

    def to_dict(self) -> dict[str, Any]:
        """The CLI's JSON shape (1-based pages)."""
        return {
            "doc": self.doc,
            "chunk_id": self.chunk_id,
            "pages": [p + 1 for p in self.pages],
            "section_path": list(self.section_path),
            "score": float(self.score),
            "text": self.text,
        }


class AddReport(NamedTuple):
    added: list[str]
    replaced: list[str]
    unchanged: list[str]
    failed: list[tuple[str, str]]  # (path, message)


class DocInfo(NamedTuple):
    name: str
    path: str
    sha1: str
    page_count: int
    n_chunks: int


def _key(*parts: Any) -> str:
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def expand_paths(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """PDF files named or found (recursively) in folders, in a stable order, without repeats."""
    out: list[Path] = []
    seen: set[Path] = set()
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(q for q in p.rglob("*") if q.is_file() and q.suffix.lower() == ".pdf")
        else:
            found = [p]  # a missing or non-PDF file fails later with a clear message
        for q in found:
            r = q.resolve()
            if r not in seen:
                seen.add(r)
                out.append(q)
    return out


def _jsonable(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str))


def _process_pdf(path: str, parse_options: Mapping[str, Any], chunk_options: Mapping[str, Any],
                 tokenizer: Mapping[str, Any], password: str | None = None) -> dict[str, Any]:
    """Parse, chunk and tokenise one PDF (runs in a worker process)."""
    import warnings

    from structrag.chunking import chunk_document
    from structrag.pipeline import parse_pdf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kept on the document as warnings
        parsed = parse_pdf(path, progress=False, password=password, **dict(parse_options))
    chunks = chunk_document(parsed.document, parsed.tree, **dict(chunk_options))
    tok = Tokenizer.from_dict(tokenizer)
    return {
        "document": parsed.document.to_dict(),
        "tree": parsed.tree.to_dict(),
        "chunks": [c.to_dict() for c in chunks],
        "tokens": [tok.tokenize(c.text) for c in chunks],
        "page_count": parsed.document.page_count,
        "stats": _jsonable(parsed.stats),
        "warnings": list(parsed.document.warnings),
    }


def embed_documents(encoder, docs: Sequence[tuple[Sequence[str], Sequence[Sequence[str]]]], *,
                    progress: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(chunk_vectors, section_path_vectors)`` of each ``(chunk_texts, section_paths)`` document.

    Every text of every document goes to the encoder in one call, so a worker
    holding several small documents fills its batches; section-path rows follow
    :func:`retrievers.corpus.doc_nodes`.
    """
    texts: list[str] = []
    spans = []
    for chunk_texts, section_paths in docs:
        a = len(texts)
        texts.extend(chunk_texts)
        b = len(texts)
        texts.extend(path_text(p) for p in doc_nodes(section_paths).paths)
        spans.append((a, b, len(texts)))
    v = encoder.encode(texts, progress=progress)
    return [(v[a:b], v[b:c]) for a, b, c in spans]


def _progress_enabled(progress: bool | None) -> bool:
    return sys.stderr.isatty() if progress is None else bool(progress)


class Index:
    """A searchable collection of chunked documents in a directory.

    Use :meth:`create`, :meth:`open` or :meth:`build`; never the constructor.
    """

    def __init__(self, store: Store, corpus: Corpus) -> None:
        self._store = store
        self._corpus = corpus
        meta = store.meta()
        self.path = store.root
        self.tokenizer = Tokenizer.from_dict(json.loads(meta["tokenizer"]))
        self.bm25_params = BM25Params(**json.loads(meta["bm25"]))
        self.dense_model: str | None = json.loads(meta.get("dense_model", "null"))
        # what the index was created with ("auto" stays "auto" in the documents' option keys,
        # so resolving it at the first document does not make every document look changed)
        self._dense_setting: str | None = json.loads(meta.get("dense_model_setting", "null")) or self.dense_model
        self.dense_max_seq_length: int | None = json.loads(meta.get("dense_max_seq_length", "null"))
        self.parse_options: dict[str, Any] = json.loads(meta.get("parse_options", "{}"))
        self.chunk_options: dict[str, Any] = json.loads(meta.get("chunk_options", "{}"))
        self._encoder_obj = None
        self._vindex = None
        self._ranker: LambdaRanker | None = None
        self._lock = threading.RLock()
        self._doc_paths: dict[str, str] | None = None  # name -> path, for resolving --doc
        self._vectors_error: IndexFormatError | None = None  # set when opened without unreadable vectors
        self.last_report: AddReport | None = None  # what Index.build did

    # --- construction ---------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str | os.PathLike,
        *,
        dense: bool | Literal["auto"] = "auto",
        model: str | None = None,
        max_seq_length: int | None = None,
        tokenizer: Tokenizer | None = None,
        bm25: BM25Params = BM25Params(),
        parse_options: Mapping[str, Any] | None = None,
        chunk_options: Mapping[str, Any] | None = None,
    ) -> "Index":
        """A new, empty index in ``path``.

        ``dense``: embed chunks (``"auto"``: when sentence-transformers and faiss
        are installed); ``model``: the dense model (default ``"auto"``: chosen
        from the language of the first document indexed, all-MiniLM-L6-v2 for
        English, multilingual-e5-small otherwise; see :func:`retrievers.dense.choose_model`),
        or a sentence-transformers model name or folder; ``max_seq_length``: word
        pieces embedded per chunk (default 128 for MiniLM).  ``parse_options`` go to ``parse_pdf``,
        ``chunk_options`` to ``chunk_document``.
        """
        from .dense import AUTO_MODEL, DEFAULT_MAX_SEQ_LENGTH, dense_available, is_default_model, require_dense

        if dense == "auto":
            dense = dense_available()
        elif dense:
            require_dense("a dense index")
        elif model is not None:
            raise ConfigError("a dense model was given for an index built without dense retrieval (dense=False)")
        tokenizer = tokenizer or Tokenizer()
        bad = {"progress", "checkpoint"} & set(parse_options or {})
        if bad:
            raise ConfigError(f"parse options {sorted(bad)} cannot be stored in an index")
        for key in ("outline", "contents"):  # fail here, not once per document
            value = (parse_options or {}).get(key, "auto")
            if value not in ("auto", "ignore"):
                raise ConfigError(f"parse option {key} must be 'auto' or 'ignore', not {value!r}")
        settings = {
            "tokenizer": tokenizer.to_dict(),
            "bm25": BM25Params(*bm25)._asdict(),
            "dense_model": (model or AUTO_MODEL) if dense else None,
            "dense_model_setting": (model or AUTO_MODEL) if dense else None,
            "dense_max_seq_length": (max_seq_length or (DEFAULT_MAX_SEQ_LENGTH if model is not None and
                                                        is_default_model(model) else None))
            if dense else None,
            "parse_options": dict(parse_options or {}),
            "chunk_options": dict(chunk_options or {}),
        }
        store = Store.create(path, settings)
        corpus = Corpus.build([], tokenizer, bm25=BM25Params(*bm25))
        return cls(store, corpus)

    @classmethod
    def open(cls, path: str | os.PathLike) -> "Index":
        """Open an existing index (checks its format and schema version).

        Vector files that are missing or unreadable do not keep the index from opening: lexical
        search works, the dense modes raise the error with its fix (``structrag index ... --repair``).
        """
        store = Store.open(path)
        try:
            try:
                index = cls(store, cls._load_corpus(store))
            except _VectorsUnreadable as e:
                log.warning("index %s: %s; searching without dense vectors", store.root, e)
                index = cls(store, cls._load_corpus(store, vectors=False))
                index._vectors_error = e
            return index
        except BaseException:
            store.close()
            raise

    @classmethod
    def build(
        cls,
        paths: Iterable[str | os.PathLike],
        out: str | os.PathLike,
        *,
        workers: int = 1,
        progress: bool | None = None,
        **create_options: Any,
    ) -> "Index":
        """Index ``paths`` (PDFs or folders) into ``out``, creating it if needed.

        On an existing index ``create_options`` must agree with its settings.
        """
        from .store import DB_NAME

        if (Path(out) / DB_NAME).exists():
            index = cls.open(out)
            index._check_settings(create_options)
        else:
            index = cls.create(out, **create_options)
        report = index.add(paths, workers=workers, progress=progress)
        index.last_report = report
        return index

    def _check_settings(self, options: Mapping[str, Any]) -> None:
        from .dense import AUTO_MODEL, DEFAULT_MODEL, MULTILINGUAL_MODEL, is_multilingual_model

        unknown = set(options) - {"dense", "model", "max_seq_length", "tokenizer", "bm25", "parse_options", "chunk_options"}
        if unknown:
            raise ConfigError(f"unknown index options {sorted(unknown)}")
        dense = options.get("dense", "auto")
        if dense is True and self.dense_model is None:
            raise ConfigError("this index was built without dense retrieval; create a new one with dense=True",
                              path=self.path)
        model = options.get("model")
        if model is not None and model != AUTO_MODEL and self.dense_model not in (model, AUTO_MODEL) and not (
            self.dense_model == DEFAULT_MODEL and model in (DEFAULT_MODEL, "minilm")
        ) and not (self.dense_model == MULTILINGUAL_MODEL and is_multilingual_model(model)):
            raise ConfigError(f"this index embeds with {self.dense_model!r}, not {model!r}; use a new index directory",
                              path=self.path)
        tok = options.get("tokenizer")
        if tok is not None and tok != self.tokenizer:
            raise ConfigError("this index was built with another tokenizer; use a new index directory", path=self.path)

    # --- loading the search arrays ------------------------------------------------------
    @staticmethod
    def _load_vectors(store: Store, docs) -> tuple[np.ndarray | None, np.ndarray | None]:
        if not docs or any(d.vectors is None for d in docs):
            return None, None
        cv, nv = [], []
        for d in docs:
            try:
                cv.append(np.load(store.vectors_dir / f"{d.vectors}.chunks.npy", allow_pickle=False))
                nv.append(np.load(store.vectors_dir / f"{d.vectors}.nodes.npy", allow_pickle=False))
            except (OSError, ValueError) as e:
                raise _VectorsUnreadable(f"vectors of {d.name!r} cannot be read: {e}", path=store.root,
                                         hint="re-embed them: structrag index PDF... --out DIR --repair") from e
        return np.concatenate(cv).astype(np.float32, copy=False), np.concatenate(nv).astype(np.float32, copy=False)

    @classmethod
    def _load_corpus(cls, store: Store, *, vectors: bool = True) -> Corpus:
        meta = store.meta()
        tokenizer = Tokenizer.from_dict(json.loads(meta["tokenizer"]))
        bm25 = BM25Params(**json.loads(meta["bm25"]))
        dense = vectors and json.loads(meta.get("dense_model", "null")) is not None
        for _attempt in range(3):
            gen = store.generation()
            docs = store.documents()
            d = store.derived_dir(gen)
            if store.derived_ok(gen, LAYOUT):
                cv, nv = cls._load_vectors(store, docs) if dense else (None, None)
                try:
                    corpus = Corpus.load(d, chunk_vectors=cv, node_vectors=nv)
                except (FileNotFoundError, IndexFormatError) as e:
                    if store.generation() != gen:
                        continue  # a writer moved on while we read: read the new generation
                    # derived files are a cache of the database: damaged or of an older layout,
                    # they are rebuilt (the next writer stores them again)
                    log.warning("index %s: search arrays unusable (%s); rebuilding them from the database",
                                store.root, e)
                    return cls._build_corpus(store, tokenizer, bm25, dense)
                if corpus.n_chunks == sum(x.n_chunks for x in docs):
                    return corpus
                log.warning("index %s: search arrays do not match the database; rebuilding them", store.root)
                return cls._build_corpus(store, tokenizer, bm25, dense)
            # committed documents without search arrays (the writer stopped before writing
            # them): rebuild in memory from the database
            log.info("index %s: rebuilding search arrays of generation %d from the database", store.root, gen)
            return cls._build_corpus(store, tokenizer, bm25, dense)
        raise IndexFormatError("the index kept changing while it was being opened; try again", path=store.root)

    @classmethod
    def _build_corpus(cls, store: Store, tokenizer: Tokenizer, bm25: BM25Params, dense: bool) -> Corpus:
        records = []
        docs = []
        for d, rows in store.iter_doc_chunks():
            docs.append(d)
            chunks = [
                ChunkRecord(r[0], tuple(json.loads(r[1])), r[2], r[3], tuple(json.loads(r[4])), r[5].split())
                for r in rows
            ]
            records.append(DocRecord(d.name, d.page_count, chunks))
        if dense and records:
            cv, nv = cls._load_vectors(store, docs)
            # split the concatenated vectors back per document
            oc = on = 0
            for i, r in enumerate(records):
                nn = len(doc_nodes([c.section_path for c in r.chunks]).paths)
                records[i] = r._replace(chunk_vectors=cv[oc : oc + len(r.chunks)], node_vectors=nv[on : on + nn])
                oc += len(r.chunks)
                on += nn
        return Corpus.build(records, tokenizer, bm25=bm25)

    # --- information ------------------------------------------------------------------------
    @property
    def corpus(self) -> Corpus:
        return self._corpus

    @property
    def has_dense(self) -> bool:
        return self.dense_model is not None

    def documents(self) -> list[DocInfo]:
        return [DocInfo(d.name, d.path, d.sha1, d.page_count, d.n_chunks) for d in self._store.documents()]

    def __len__(self) -> int:
        return self._corpus.n_chunks

    def tree(self, doc: str):
        """The stored :class:`~structrag.tree.HeadingTree` of a document (None if it has none)."""
        from structrag.tree import HeadingTree

        d = self._store.load_tree(doc)
        return HeadingTree.from_dict(d) if d else None

    def document(self, doc: str):
        """The stored :class:`~structrag.model.Document` (None for documents added as chunks)."""
        from structrag.model import Document

        d = self._store.load_document(doc)
        return Document.from_dict(d) if d else None

    def chunks(self, doc: str) -> list[Chunk]:
        """All chunks of a document in reading order."""
        i = self._corpus.doc_id(doc)
        if i is None:
            raise ConfigError(f"no document named {doc!r} in the index", path=self.path)
        rows = self._corpus.chunk_rowid[self._corpus.doc_rows(i)]
        got = self._store.chunks_by_rowid(rows.tolist())
        return [Chunk.from_dict({**got[int(r)].data, "text": got[int(r)].text}) for r in rows]

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"Index({str(self.path)!r}, documents={len(self._corpus.doc_names)}, chunks={self._corpus.n_chunks}, "
                f"dense={self.dense_model!r})")

    # --- writing -----------------------------------------------------------------------------
    def _encoder(self):
        if self._encoder_obj is None:
            from .dense import DenseEncoder

            self._encoder_obj = DenseEncoder(self.dense_model, max_seq_length=self.dense_max_seq_length)
        return self._encoder_obj

    def _resolve_auto_model(self, texts: Sequence[str]) -> None:
        """Fix an ``auto`` index's dense model from the language of its first document (stored)."""
        from .dense import DEFAULT_MAX_SEQ_LENGTH, choose_model, is_default_model

        model = choose_model(texts)
        msl = self.dense_max_seq_length or (DEFAULT_MAX_SEQ_LENGTH if is_default_model(model) else None)
        self._store.set_settings({"dense_model": model, "dense_max_seq_length": msl})
        self.dense_model, self.dense_max_seq_length = model, msl
        self._encoder_obj = None
        log.info("index %s: dense model %s, chosen from the language of its first document", self.path, model)

    def _vector_stem(self, sha1: str, options_key: str) -> str:
        return f"{sha1[:20]}-{options_key[:8]}-{_key(self.dense_model, self.dense_max_seq_length)[:8]}"

    def _write_vectors(self, stem: str, chunk_texts: Sequence[str], section_paths: Sequence[Sequence[str]],
                       progress: bool) -> None:
        [(cv, nv)] = embed_documents(self._encoder(), [(list(chunk_texts), section_paths)], progress=progress)
        self._store.vectors_dir.mkdir(exist_ok=True)
        atomic_save_npy(self._store.vectors_dir / f"{stem}.chunks.npy", cv)
        atomic_save_npy(self._store.vectors_dir / f"{stem}.nodes.npy", nv)

    def _commit_document(self, *, name: str | None, path: str, sha1: str, options_key: str, page_count: int,
                         chunks: Sequence[Mapping[str, Any]], tokens: Sequence[Sequence[str]],
                         tree: Any, document: Any, stats: Mapping[str, Any], progress: bool = False,
                         vectors: tuple[np.ndarray, np.ndarray] | None = None,
                         replacing: str | None = None) -> str:
        """Store one document; ``name=None``: a file, named by :meth:`_name_new_file`.  Returns its name."""
        stem = None
        if vectors is not None and not self.has_dense:
            raise ConfigError("vectors were given for an index built without dense retrieval", path=self.path)
        if self.has_dense:
            if self.dense_model == "auto":
                self._resolve_auto_model([c["text"] for c in chunks])
            stem = self._vector_stem(sha1, options_key)
            paths = [c["section_path"] for c in chunks]
            if vectors is None:
                self._write_vectors(stem, [c["text"] for c in chunks], paths, progress)
            else:
                cv, nv = (np.ascontiguousarray(v, dtype=np.float32) for v in vectors)
                n_nodes = len(doc_nodes(paths).paths)
                if cv.ndim != 2 or cv.shape[0] != len(chunks) or nv.ndim != 2 or nv.shape != (n_nodes, cv.shape[1]):
                    raise ConfigError(f"vectors must be ({len(chunks)}, d) and ({n_nodes}, d), "
                                      f"got {cv.shape} and {nv.shape}")
                self._store.vectors_dir.mkdir(exist_ok=True)
                atomic_save_npy(self._store.vectors_dir / f"{stem}.chunks.npy", cv)
                atomic_save_npy(self._store.vectors_dir / f"{stem}.nodes.npy", nv)
        with self._store.transaction() as c:
            if name is None:  # a file: named by its path among the files of the same base name
                name = self._name_new_file(c, path, replacing=replacing)
            elif replacing is not None and replacing != name:
                self._store.delete_document(c, replacing)
            self._store.insert_document(
                c, name=name, path=path, sha1=sha1, options_key=options_key, page_count=page_count,
                chunks=chunks, tokens=tokens, vectors=stem, tree=tree, document=document, stats=stats,
            )
        self._doc_paths = None
        return name

    def _name_new_file(self, c, path: str, *, replacing: str | None) -> str:
        """The name of the file at ``path`` (inside transaction ``c``): its base name while unique, else the
        shortest distinguishing tail of its path; indexed files of that base name are renamed to match."""
        if replacing is not None:
            self._store.delete_document(c, replacing)
        base = Path(path).name
        # documents named after their file (not add_chunks' own names) take part in the naming
        docs = [d for d in self._store.documents() if d.path and Path(d.path).name == base
                and (d.name == base or d.name.endswith("/" + base))]
        names = display_names([d.path for d in docs] + [path])
        taken = {d.name for d in self._store.documents()} - {d.name for d in docs}
        if names[-1] in taken:  # a name add_chunks chose: the full path is still unique
            names[-1] = os.path.abspath(path)
        for d, new in zip(docs, names):
            if d.name != new:
                self._store.rename_document(c, d.name, new)
        return names[-1]

    def _publish(self) -> None:
        """Search arrays for the committed generation, written atomically; then old files removed."""
        gen = self._store.generation()
        corpus = self._build_corpus(self._store, self.tokenizer, self.bm25_params, self.has_dense)

        def write(tmp: Path) -> None:
            corpus.save(tmp)
            if corpus.has_dense and corpus.n_chunks >= _exact_below():
                from .dense import VectorIndex

                VectorIndex(exact_below=_exact_below()).fit(corpus.chunk_vectors).save(tmp / "dense.faiss")

        self._store.publish_derived(gen, write, LAYOUT)
        self._store.garbage_collect()
        with self._lock:
            self._corpus = corpus
            self._vindex = None

    def add(
        self,
        paths: Iterable[str | os.PathLike],
        *,
        workers: int = 1,
        progress: bool | None = None,
        parse_options: Mapping[str, Any] | None = None,
        chunk_options: Mapping[str, Any] | None = None,
        on_event: Callable[[str, str, str], None] | None = None,
        password: str | Mapping[str, str] | None = None,
    ) -> AddReport:
        """Parse, chunk, embed and store PDFs (files or folders); returns what happened to each.

        A document is a file (:mod:`retrievers.identity`): a file already indexed
        with the same content and options is left as it is; the file at an indexed
        path with new content replaces the old one; a different file with the
        same base name is added beside it (both are then named by their path's
        tail, e.g. ``acme/report.pdf``).  A file that fails (not a PDF, encrypted,
        damaged) is reported in ``failed`` and the others go on.  ``password``:
        for encrypted PDFs, one for all or a mapping from file name (or path) to
        password; never stored.  ``on_event(kind, name, detail)`` is called as
        each file is done (``added``, ``replaced``, ``unchanged``, ``failed``,
        and ``warning`` for a document that was indexed with a warning).
        """
        if workers < 1:
            raise ConfigError(f"workers must be at least 1, got {workers}")
        popts = dict(self.parse_options if parse_options is None else parse_options)
        copts = dict(self.chunk_options if chunk_options is None else chunk_options)
        bad = {"progress", "checkpoint"} & set(popts)
        if bad:
            raise ConfigError(f"parse options {sorted(bad)} cannot be used when indexing")
        okey = self.options_key(popts, copts)
        report = AddReport([], [], [], [])
        emit = on_event or (lambda kind, name, detail: None)
        files = expand_paths(paths)
        self._store.lock()
        try:
            existing = {d.name: d for d in self._store.documents()}
            indexed = [(d.name, d.path, d.sha1) for d in existing.values()]
            todo: list[tuple[Path, str, str | None]] = []  # (file, sha1, the document it replaces)
            for f in files:
                try:
                    sha1 = file_sha1(f)  # checks it is a regular file first: a FIFO or /dev/zero never ends
                except StructragError as e:
                    report.failed.append((str(f), str(e)))
                    emit("failed", f.name, str(e))
                    continue
                # a document is a file: another file of the same base name is a new document, never a replacement
                match = match_file(str(f), sha1, indexed)
                old = existing.get(match.name) if match.name is not None else None
                if old is not None and old.sha1 == sha1 and old.options_key == okey:
                    report.unchanged.append(old.name)
                    emit("unchanged", old.name, "")
                    continue
                todo.append((f, sha1, old.name if old is not None else None))
            show = _progress_enabled(progress)
            if todo:
                self._run(todo, popts, copts, okey, workers, show, report, emit, password)
            if todo or not self._store.derived_ok(self._store.generation(), LAYOUT):
                self._publish()
        finally:
            self._store.unlock()
        return report

    def options_key(self, parse_options: Mapping[str, Any], chunk_options: Mapping[str, Any]) -> str:
        """What, besides its content, a document's stored form depends on (a changed key re-parses it)."""
        # the setting the index was created with: an "auto" model resolved at the first document must not
        # change the key of the documents indexed before (or after) it
        return _key(dict(parse_options), dict(chunk_options), self.tokenizer.to_dict(), self._dense_setting)

    def merge_shards(
        self,
        paths: Iterable[str | os.PathLike],
        *,
        remove: bool = False,
        on_event: Callable[[str, str, str], None] | None = None,
    ) -> AddReport:
        """Commit the documents of index shards (:mod:`retrievers.shards`) without parsing or embedding.

        A document already indexed with the same content and options is left
        as it is; one whose name is indexed with other content replaces it.  A
        shard made for other index settings (tokenizer, dense model) is refused
        with :class:`~structrag.errors.ConfigError`; an unreadable file is
        reported in ``failed``.  ``remove``: delete each shard once its
        documents are committed.  The search arrays are rebuilt once, at the end.
        """
        report = AddReport([], [], [], [])
        emit = on_event or (lambda kind, name, detail: None)
        self._store.lock()
        try:
            for p in paths:
                self._merge_shard(p, report, emit, remove=remove)
            if report.added or report.replaced or not self._store.derived_ok(self._store.generation(), LAYOUT):
                self._publish()
        finally:
            self._store.unlock()
        return report

    def _merge_shard(self, path, report: AddReport, emit, *, names: set[str] | None = None, remove: bool = False) -> None:
        """Commit one shard's documents (the caller holds the writer lock)."""
        from .shards import read_shard, shard_settings

        try:
            settings, docs = read_shard(path, names=names)
        except IndexFormatError as e:
            report.failed.append((str(path), str(e)))
            emit("failed", Path(path).name, str(e))
            return
        mine = shard_settings(self.tokenizer.to_dict(), self.dense_model, self.dense_max_seq_length)
        if settings != mine:
            raise ConfigError(f"this shard was made for other index settings ({settings}, the index has {mine})",
                              path=path, hint="merge it into an index created with the same settings")
        for d in docs:
            rows = self._store.documents()
            if d.path:  # a file: the same identity rules as Index.add
                match = match_file(d.path, d.sha1, [(r.name, r.path, r.sha1) for r in rows])
                old = next((r for r in rows if r.name == match.name), None)
            else:
                old = next((r for r in rows if r.name == d.name), None)
            if old is not None and old.sha1 == d.sha1 and old.options_key == d.options_key:
                report.unchanged.append(old.name)
                emit("unchanged", old.name, "")
                continue
            name = self._commit_document(
                name=None if d.path else d.name, path=d.path, sha1=d.sha1, options_key=d.options_key,
                page_count=d.page_count, chunks=d.chunks, tokens=d.tokens, tree=d.tree, document=d.document,
                stats=d.stats, vectors=d.vectors if self.has_dense else None,
                replacing=old.name if old is not None else None,
            )
            (report.replaced if old is not None else report.added).append(name)
            emit("replaced" if old is not None else "added", name, f"{d.page_count} pages, {len(d.chunks)} chunks")
        if remove:
            Path(path).unlink(missing_ok=True)

    def _run(self, todo, popts, copts, okey, workers, show, report, emit, password) -> None:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="indexing", unit="pdf", disable=not show, file=sys.stderr)
        tok = self.tokenizer.to_dict()

        def done(f: Path, sha1: str, replacing: str | None, result: dict | None, error: BaseException | None) -> None:
            if error is not None:
                msg = str(error) if isinstance(error, StructragError) else f"{type(error).__name__}: {error}"
                if isinstance(error, EncryptedPDFError):
                    msg += " -- structrag index takes --password PASSWORD (or --password-file FILE.json)"
                report.failed.append((str(f), msg))
                emit("failed", f.name, msg)
                bar.update(1)
                return
            name = self._commit_document(
                name=None, path=os.path.abspath(f), sha1=sha1, options_key=okey, page_count=result["page_count"],
                chunks=result["chunks"], tokens=result["tokens"], tree=result["tree"], document=result["document"],
                stats=result["stats"], replacing=replacing,
            )
            kind = "replaced" if replacing is not None else "added"
            (report.replaced if kind == "replaced" else report.added).append(name)
            emit(kind, name, f"{result['page_count']} pages, {len(result['chunks'])} chunks")
            for w in result.get("warnings", ()):
                emit("warning", name, w)
            bar.update(1)

        def pw(f: Path) -> str | None:
            if password is None or isinstance(password, str):
                return password
            return password.get(str(f), password.get(f.name))

        try:
            if workers == 1 or len(todo) == 1:
                for f, sha1, replacing in todo:
                    try:
                        result = _process_pdf(str(f), popts, copts, tok, pw(f))
                    except (StructragError, OSError, ValueError, RuntimeError) as e:
                        done(f, sha1, replacing, None, e)
                    else:
                        done(f, sha1, replacing, result, None)
            else:
                # spawn: a forked child would inherit torch's thread pools (and hang)
                with ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=get_context("spawn")) as ex:
                    futs = {ex.submit(_process_pdf, str(f), popts, copts, tok, pw(f)): (f, sha1, replacing)
                            for f, sha1, replacing in todo}
                    for fut in as_completed(futs):
                        f, sha1, replacing = futs[fut]
                        try:
                            result = fut.result()
                        except Exception as e:  # the worker's exception, re-raised here
                            done(f, sha1, replacing, None, e)
                        else:
                            done(f, sha1, replacing, result, None)
        finally:
            bar.close()

    def add_chunks(
        self,
        name: str,
        chunks: Sequence[Chunk],
        *,
        page_count: int,
        sha1: str | None = None,
        path: str = "",
        tree: Any = None,
        document: Any = None,
        vectors: tuple[np.ndarray, np.ndarray] | None = None,
        publish: bool = True,
    ) -> bool:
        """Store chunks made elsewhere (another chunker, synthetic data) as document ``name``.

        ``sha1`` identifies the content (default: a hash of the chunks); the same
        name and sha1 again is a no-op (returns False).  ``vectors``: your own
        ``(chunk_vectors, section_path_vectors)`` for a dense index, unit length,
        one row per chunk and one per section node (:func:`retrievers.corpus.doc_nodes`)
        -- instead of embedding with the index's model.  ``publish=False``
        defers rebuilding the search arrays (call :meth:`flush` after a batch).
        """
        chunks = list(chunks)
        dicts = [c.to_dict() if isinstance(c, Chunk) else dict(c) for c in chunks]
        sha1 = sha1 or _key([(c["id"], c["text"]) for c in dicts])
        okey = _key("chunks", self.tokenizer.to_dict(), self._dense_setting)
        self._store.lock()
        try:
            old = self._store.document(name)
            if old is not None and old.sha1 == sha1 and old.options_key == okey:
                return False
            self._commit_document(
                name=name, path=path, sha1=sha1, options_key=okey, page_count=int(page_count), chunks=dicts,
                tokens=[self.tokenizer.tokenize(c["text"]) for c in dicts],
                tree=tree.to_dict() if hasattr(tree, "to_dict") else tree,
                document=document.to_dict() if hasattr(document, "to_dict") else document,
                stats={"source": "chunks"}, vectors=vectors,
            )
            if publish:
                self._publish()
        finally:
            self._store.unlock()
        return True

    def flush(self) -> None:
        """Write the search arrays for what is committed (after ``add_chunks(..., publish=False)``,
        or to store arrays an older version wrote in another layout)."""
        self._store.lock()
        try:
            self._publish()
        finally:
            self._store.unlock()

    def repair(self, *, on_event: Callable[[str, str, str], None] | None = None) -> list[str]:
        """Re-embed the documents whose vector files are missing or unreadable, and rewrite the search
        arrays from the database; returns the names of the documents re-embedded."""
        emit = on_event or (lambda kind, name, detail: None)
        fixed: list[str] = []
        self._store.lock()
        try:
            for d in self._store.documents() if self.has_dense else ():
                if d.vectors is None or _vectors_ok(self._store, d):
                    continue
                chunks = self.chunks(d.name)
                self._write_vectors(d.vectors, [c.text for c in chunks], [c.section_path for c in chunks],
                                    progress=False)
                fixed.append(d.name)
                emit("repaired", d.name, f"{len(chunks)} chunks re-embedded")
            self._vectors_error = None
            self._publish()
        finally:
            self._store.unlock()
        return fixed

    def remove(self, name: str) -> bool:
        """Remove a document; True if it was there."""
        self._store.lock()
        try:
            with self._store.transaction() as c:
                gone = self._store.delete_document(c, name)
            self._publish()
        finally:
            self._store.unlock()
        return gone

    # --- the ranker ------------------------------------------------------------------------------
    @property
    def ranker(self) -> LambdaRanker:
        """The index's own ranker (``ranker.txt`` in its folder) or the one shipped for its features."""
        if self._ranker is None:
            own = self.path / _RANKER_FILE
            p = own if own.exists() else default_model_path(self.has_dense)
            if not p.exists():
                raise ModelError("no ranker model found", path=p,
                                 hint="train one: structrag train-ranker QUERIES.jsonl --index DIR")
            model = LambdaRanker.load(p)
            missing = set(model.features) - set(available_features(self._corpus))
            if missing:
                raise ModelError(f"the ranker needs features this index lacks: {sorted(missing)}", path=p,
                                 hint="train a ranker on this index: structrag train-ranker QUERIES.jsonl --index DIR")
            self._ranker = model
        return self._ranker

    def set_ranker(self, model: LambdaRanker | None, *, save: bool = True) -> None:
        """Use ``model`` for ``mode="ranker"`` (and store it in the index folder if ``save``)."""
        if model is not None:
            missing = set(model.features) - set(available_features(self._corpus))
            if missing:
                raise ModelError(f"the ranker needs features this index lacks: {sorted(missing)}")
            if save:
                model.save(self.path / _RANKER_FILE)
        self._ranker = model

    # --- search --------------------------------------------------------------------------------
    def resolve_doc(self, doc: str) -> str:
        """The indexed document ``doc`` means: its name, a trailing part of its path, or its path
        (:func:`retrievers.identity.resolve_name`; ConfigError when none or several match)."""
        if self._doc_paths is None:
            self._doc_paths = {d.name: d.path for d in self._store.documents()}
        try:
            return resolve_name(doc, self._doc_paths)
        except ConfigError as e:
            raise e.with_context(path=self.path) from None

    def _scope(self, doc: str | None) -> np.ndarray | None:
        if doc is None:
            return None
        i = self._corpus.doc_id(doc)
        if i is None and self._corpus.doc_names:
            i = self._corpus.doc_id(self.resolve_doc(doc))
        if i is None:
            names = self._corpus.doc_names
            hint = f"indexed: {', '.join(names[:5])}{' ...' if len(names) > 5 else ''}" if names else "the index is empty"
            raise ConfigError(f"no document named {doc!r} in the index", path=self.path, hint=hint)
        return self._corpus.doc_rows(i)

    def query_vector(self, query: str) -> np.ndarray | None:
        return self._encoder().encode_query(query) if self.has_dense and self._corpus.has_dense else None

    def query_scores(self, query: str, *, dense: bool = True) -> QueryScores:
        from .features import asks_for_amount

        qv = self.query_vector(query) if dense else None
        return query_scores(self._corpus, self.tokenizer.tokenize(query), qv, amount=asks_for_amount(query),
                            text=query)

    def _bm25_top(self, qs: QueryScores, rows: np.ndarray | None, n: int) -> TopK:
        t = top_k(qs.chunk_bm25, n, rows)
        keep = t.scores > 0
        return TopK(t.indices[keep], t.scores[keep])

    def _dense_top(self, qs: QueryScores, rows: np.ndarray | None, n: int) -> TopK:
        if qs.query_vector is None:
            raise ConfigError("this index has no embeddings (built without dense retrieval)", path=self.path,
                              hint="use --mode bm25, or build a dense index: pip install structrag[dense]")
        vecs = self._corpus.chunk_vectors
        if rows is not None or self._corpus.n_chunks < _exact_below():
            from .dense import exact_top_k

            return exact_top_k(vecs, qs.query_vector, n, rows)
        with self._lock:
            if self._vindex is None:
                from .dense import VectorIndex

                f = self._store.derived_dir(self._store.generation()) / "dense.faiss"
                self._vindex = VectorIndex.load(f) if f.exists() else VectorIndex(exact_below=_exact_below()).fit(vecs)
            vi = self._vindex
        return vi.search(qs.query_vector, n)

    def candidates(self, qs: QueryScores, *, doc: str | None = None, n: int = 100) -> np.ndarray:
        """First-stage rows for the ranker: BM25 top ``n`` then dense top ``n`` not already in."""
        rows = self._scope(doc)
        b = self._bm25_top(qs, rows, n).indices
        if qs.query_vector is None:
            return b
        d = self._dense_top(qs, rows, n).indices
        return np.concatenate([b, d[~np.isin(d, b)]])

    def rank(
        self,
        query: str | QueryScores,
        *,
        k: int = 10,
        doc: str | None = None,
        mode: Mode = "ranker",
        candidates: int = 100,
        ranker: LambdaRanker | None = None,
    ) -> TopK:
        """Corpus rows and scores of the best ``k`` chunks (no text fetched); see :meth:`search`."""
        if mode not in MODES:
            raise ConfigError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
        if k < 1:
            raise ConfigError(f"k must be at least 1, got {k}")
        if mode != "bm25" and self._vectors_error is not None:
            raise self._vectors_error
        if mode == "dense" and not self.has_dense:
            raise ConfigError("this index has no embeddings (built without dense retrieval)", path=self.path,
                              hint="use --mode bm25, or build a dense index: pip install structrag[dense]")
        use_dense = self.has_dense and mode in ("dense", "hybrid", "ranker")
        if not isinstance(query, QueryScores) and not self.tokenizer.tokenize(query):
            # one rule for every mode: a dense model would rank anything for "?!", and BM25 nothing
            raise ConfigError(f"the query {query!r} has no searchable term (a word or a number that is not a "
                              "stop word)", hint="ask with the words you expect in the document")
        qs = query if isinstance(query, QueryScores) else self.query_scores(query, dense=use_dense)
        rows = self._scope(doc)
        if self._corpus.n_chunks == 0:
            return TopK(np.zeros(0, np.int64), np.zeros(0, np.float32))
        if mode == "bm25":
            return self._bm25_top(qs, rows, k)
        if mode == "dense":
            return self._dense_top(qs, rows, k)
        n = max(candidates, k)
        if mode == "hybrid":
            if qs.query_vector is None:  # a lexical index: hybrid is BM25
                return self._bm25_top(qs, rows, k)
            ids, s = rrf([self._bm25_top(qs, rows, n).indices, self._dense_top(qs, rows, n).indices])
            return TopK(ids[:k], s[:k])
        model = ranker or self.ranker
        cand = self.candidates(qs, doc=doc, n=n)
        if cand.size == 0:
            return TopK(cand, np.zeros(0, np.float32))
        X = compute_features(self._corpus, qs, cand, model.features)
        s = model.predict(X)
        order = np.argsort(-s, kind="stable")[:k]
        return TopK(cand[order], s[order])

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        doc: str | None = None,
        mode: Mode = "ranker",
        candidates: int = 100,
    ) -> list[Hit]:
        """The ``k`` best chunks for ``query`` (within document ``doc`` if given), best first.

        ``mode``: ``ranker`` (default), ``bm25``, ``dense`` or ``hybrid`` (see the
        module docstring); ``candidates``: first-stage depth per retriever for
        ``ranker`` and ``hybrid``.
        """
        t = self.rank(query, k=k, doc=doc, mode=mode, candidates=candidates)
        rowids = self._corpus.chunk_rowid[t.indices].tolist()
        got = self._store.chunks_by_rowid(rowids)
        return [
            Hit(got[r].doc, got[r].chunk_id, got[r].pages, got[r].section_path, float(s), got[r].text)
            for r, s in zip(rowids, t.scores.tolist())
        ]

    def page_ranking(self, rows: Sequence[int]) -> list[tuple[str, int]]:
        """``(doc, page)`` pairs of ranked chunk rows, each pair once, in first-hit order (0-based pages)."""
        seen: set[tuple[str, int]] = set()
        out = []
        c = self._corpus
        for r in rows:
            name = c.doc_names[int(c.chunk_doc[r])]
            for p in c.pages_of(int(r)).tolist():
                if (name, p) not in seen:
                    seen.add((name, p))
                    out.append((name, p))
        return out


class _VectorsUnreadable(IndexFormatError):
    """A document's vector files are missing or damaged (the rest of the index is fine)."""


def _vectors_ok(store: Store, d) -> bool:
    try:
        cv = np.load(store.vectors_dir / f"{d.vectors}.chunks.npy", allow_pickle=False)
        nv = np.load(store.vectors_dir / f"{d.vectors}.nodes.npy", allow_pickle=False)
    except (OSError, ValueError):
        return False
    return cv.ndim == 2 and nv.ndim == 2 and cv.shape[0] == d.n_chunks and cv.shape[1] == nv.shape[1]


def _exact_below() -> int:
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
