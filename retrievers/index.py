"""The persisted, searchable index: ``Index.build`` / ``Index.open`` / ``search``.

>>> index = Index.build(["reports/"], "my-index", workers=2)      # doctest: +SKIP
>>> for hit in Index.open("my-index").search("capital expenditure 2018", k=5):  # doctest: +SKIP
...     print(hit.doc, hit.pages, " > ".join(hit.section_path))

An :class:`Index` is a store (:mod:`retrievers.store.database`: documents, chunks,
vectors; why a crash never leaves an unreadable index) and its search arrays
(:mod:`retrievers.store.arrays`).  Documents come in through the ingest stage
(:mod:`retrievers.ingest.documents`: parse, chunk, tokenise, embed), from this process,
its worker processes or Ray shards (:meth:`Index.merge_shards`), and are committed by
:mod:`retrievers.store.commit`.  Adding a document processes only that document; the
collection-wide BM25 statistics are then recomputed from the stored tokens (seconds), since
every idf changes.  A file whose content hash and options are already indexed is skipped.

A search is checked and its query scored here (tokens, BM25 scores, vector, concepts, the
documents it names); its mode -- ``bm25``, ``dense``, ``hybrid`` or ``ranker`` (the default) --
runs in the rank stage (:func:`retrievers.rank.search.rank`), which returns the best rows.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, NamedTuple, Sequence

import numpy as np

from structrag.errors import ConfigError, IndexFormatError
from structrag.model import Chunk
from structrag.options import ChunkOptions, ParseOptions

from .embed.encoder import AUTO_MODEL, is_default_model
from .embed.spaces import Space, block_query, space_for_texts
from .lexical.bm25 import BM25Params, TopK
from .lexical.tokenizer import Tokenizer
from .rank import search as rank_stage
from .rank.named_documents import IssuerTable
from .rank.query import QueryScores, query_scores
from .rank.ranker import LambdaRanker
from .rank.search import MODES, RANKER_FILE, Hit, Mode, check_query, check_ranker, check_request, load_ranker
from .store.arrays import VectorSearch, exact_below, index_spaces, open_corpus
from .store.arrays import publish as publish_arrays
from .store.commit import AddReport, Event, Writes
from .store.corpus import LAYOUT, Corpus
from .store.database import DB_NAME, Store
from .store.identities import Identities, stored_identities
from .store.names import known_names_hint, resolve_name
from .store.settings import check_settings, create_settings
from .store.settings import options_key as document_options_key

__all__ = ["Index", "Hit", "AddReport", "DocInfo", "Mode", "MODES", "RANKER_FILE", "Event"]

log = logging.getLogger("structrag.index")


class DocInfo(NamedTuple):
    name: str
    path: str
    sha1: str
    page_count: int
    n_chunks: int
    identity: Any = None  # its DocumentIdentity (retrievers.store.identities), None when it has none


class Index(Writes, Identities):
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
        self._dense_setting: str | None = json.loads(meta.get("dense_model_setting", "null")) or self.dense_model
        self.dense_max_seq_length: int | None = json.loads(meta.get("dense_max_seq_length", "null"))
        self.parse_options = ParseOptions.of(json.loads(meta.get("parse_options", "{}")))
        self.chunk_options = ChunkOptions.of(json.loads(meta.get("chunk_options", "{}")))
        self._encoder_obj = None
        self._space_encoders: dict[Space, Any] = {}
        self._vectors = VectorSearch(store, corpus)
        self._ranker: LambdaRanker | None = None
        self._lock = threading.RLock()
        self._doc_paths: dict[str, str] | None = None  # name -> path, for resolving --doc
        self._vectors_error: IndexFormatError | None = None  # set when opened without unreadable vectors
        exact_below()  # a bad STRUCTRAG_EXACT_BELOW fails at open, whatever the mode
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
        parse_options: ParseOptions | Mapping[str, Any] | None = None,
        chunk_options: ChunkOptions | Mapping[str, Any] | None = None,
    ) -> "Index":
        """A new, empty index in ``path``.

        ``dense``: embed chunks (``"auto"``: when sentence-transformers and faiss
        are installed); ``model``: the dense model (default ``"auto"``: chosen
        from the language of the first document indexed, all-MiniLM-L6-v2 for
        English, multilingual-e5-small otherwise; see :func:`retrievers.embed.encoder.choose_model`),
        or a sentence-transformers model name or folder; ``max_seq_length``: word
        pieces embedded per chunk (default 128 for MiniLM).  ``parse_options`` go to ``parse_pdf``,
        ``chunk_options`` to ``chunk_document`` (:class:`~structrag.options.ParseOptions`,
        :class:`~structrag.options.ChunkOptions`, or mappings of their fields).
        """
        settings = create_settings(dense=dense, model=model, max_seq_length=max_seq_length, tokenizer=tokenizer,
                                   bm25=bm25, parse_options=parse_options, chunk_options=chunk_options)
        store = Store.create(path, settings)
        corpus = Corpus.build([], Tokenizer.from_dict(settings["tokenizer"]), bm25=BM25Params(*bm25))
        return cls(store, corpus)

    @classmethod
    def open(cls, path: str | os.PathLike) -> "Index":
        """Open an existing index (checks its format and schema version).

        Vector files that are missing or unreadable do not keep the index from opening: lexical
        search works, the dense modes raise the error with its fix (``structrag index ... --repair``).
        """
        store = Store.open(path)
        try:
            corpus, unreadable = open_corpus(store)
            index = cls(store, corpus)
            index._vectors_error = unreadable
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
        index = cls.open_or_create(out, **create_options)
        report = index.add(paths, workers=workers, progress=progress)
        index.last_report = report
        return index

    @classmethod
    def open_or_create(cls, path: str | os.PathLike, **create_options: Any) -> "Index":
        """:meth:`open` the index in ``path`` if there is one (ConfigError if its settings disagree with
        ``create_options``), else :meth:`create` it."""
        if (Path(path) / DB_NAME).exists():
            index = cls.open(path)
            try:
                check_settings(create_options, dense_model=index.dense_model, tokenizer=index.tokenizer,
                               path=index.path)
            except BaseException:
                index.close()
                raise
            return index
        return cls.create(path, **create_options)

    # --- information ------------------------------------------------------------------------
    @property
    def corpus(self) -> Corpus:
        return self._corpus

    @property
    def has_dense(self) -> bool:
        return self.dense_model is not None

    def documents(self) -> list[DocInfo]:
        # the stored identities only: reading an old index's pages for them waits for identities()
        ids = {**stored_identities(self._store), **{k: v for k, v in (self._identity_cache or {}).items() if v}}
        return [DocInfo(d.name, d.path, d.sha1, d.page_count, d.n_chunks, ids.get(d.name))
                for d in self._store.documents()]

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
            raise ConfigError(f"no document named {doc!r} in the index", path=self.path,
                              hint=known_names_hint(doc, self._corpus.doc_names))
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

    @property
    def store(self) -> Store:
        """The index's :class:`~retrievers.store.database.Store` (its writer lock, documents and chunk rows)."""
        return self._store

    @property
    def dense_setting(self) -> str | None:
        """The dense model the index was created with: ``auto`` stays ``auto`` in the documents' option keys,
        so resolving it at the first document does not make every document look changed."""
        return self._dense_setting

    @property
    def encoder(self):
        """The :class:`~retrievers.embed.encoder.DenseEncoder` of a dense index's first space (loaded on first
        use; :meth:`encoder_for` gives any space's)."""
        if self._encoder_obj is None:
            from .embed.encoder import DenseEncoder

            self._encoder_obj = DenseEncoder(self.dense_model, max_seq_length=self.dense_max_seq_length)
        return self._encoder_obj

    def encoder_for(self, space: Space):
        """The encoder of a vector space of this index (:mod:`retrievers.embed.spaces`), made once."""
        if space == Space(self.dense_model, self.dense_max_seq_length):
            return self.encoder
        with self._lock:
            enc = self._space_encoders.get(space)
            if enc is None:
                from .embed.encoder import DenseEncoder

                enc = self._space_encoders[space] = DenseEncoder(space.model, max_seq_length=space.max_seq_length)
        return enc

    # --- writing (retrievers.store.commit) ---------------------------------------------------------
    def resolve_auto_model(self, texts: Sequence[str]) -> None:
        """Fix an ``auto`` index's first dense model from the language of ``texts`` (its first document); stored."""
        space = space_for_texts(texts, self.dense_max_seq_length)
        self._store.set_settings({"dense_model": space.model, "dense_max_seq_length": space.max_seq_length})
        self.dense_model, self.dense_max_seq_length = space
        self._encoder_obj = None
        log.info("index %s: dense model %s, chosen from the language of its first document", self.path, space.model)

    def space_for(self, texts: Sequence[str]) -> Space:
        """The vector space a new document made of ``texts`` is embedded in: in an ``auto`` index, its
        script's model (an English report with MiniLM, a Chinese one with e5, whatever came first);
        otherwise the index's model.  A new space is recorded with the index (:meth:`add_space`)."""
        first = Space(self.dense_model, self.dense_max_seq_length)
        if self._dense_setting != AUTO_MODEL:
            return first
        space = space_for_texts(texts, first.max_seq_length if is_default_model(first.model) else None)
        return first if space.model == first.model else space

    def add_space(self, space: Space) -> None:
        """Record ``space`` with the index before vectors of it are committed (the caller holds the lock)."""
        _first, known = index_spaces(self._store)
        if space.key not in known:
            spaces = json.loads(self._store.meta().get("dense_spaces", "{}"))
            spaces[space.key] = list(space)
            self._store.set_settings({"dense_spaces": spaces})

    def publish(self) -> None:
        """Write the search arrays of the committed generation (atomically) and use them.

        The caller holds the writer lock (``index.store.lock()``); :meth:`flush` takes it itself.
        """
        corpus = publish_arrays(self._store, self.tokenizer, self.bm25_params, self.has_dense)
        with self._lock:
            self._corpus = corpus
            self._vectors = VectorSearch(self._store, corpus)
            self._doc_paths = None
            self._identity_cache = None
            self._vectors_error = None

    def publish_if(self, changed: bool) -> None:
        """:meth:`publish` if documents ``changed`` or the arrays of the committed generation are missing."""
        if changed or not self._store.derived_ok(self._store.generation(), LAYOUT):
            self.publish()

    def options_key(self, parse_options: ParseOptions | Mapping[str, Any],
                    chunk_options: ChunkOptions | Mapping[str, Any]) -> str:
        """What, besides its content, a document's stored form depends on (a changed key re-parses it)."""
        return document_options_key(ParseOptions.of(parse_options).storable(), ChunkOptions.of(chunk_options),
                                    self.tokenizer, self._dense_setting)

    # --- search (retrievers.rank.search) ------------------------------------------------------------
    @property
    def ranker(self) -> LambdaRanker:
        """The index's own ranker (``ranker.txt`` in its folder) or the one shipped for its features."""
        if self._ranker is None:
            self._ranker = load_ranker(self.path, self._corpus, has_dense=self.has_dense)
        return self._ranker

    def set_ranker(self, model: LambdaRanker | None, *, save: bool = True) -> None:
        """Use ``model`` for ``mode="ranker"`` (and store it in the index folder if ``save``)."""
        if model is not None:
            check_ranker(model, self._corpus)
            if save:
                model.save(self.path / RANKER_FILE)
        self._ranker = model

    def resolve_doc(self, doc: str) -> str:
        """The indexed document ``doc`` means: its name, a trailing part of its path, or its path
        (:func:`retrievers.store.names.resolve_name`; ConfigError when none or several match)."""
        if self._doc_paths is None:
            self._doc_paths = {d.name: d.path for d in self._store.documents()}
        try:
            return resolve_name(doc, self._doc_paths)
        except ConfigError as e:
            raise e.with_context(path=self.path) from None

    def _scope(self, doc: str | None, where: Mapping[str, Any] | None = None) -> np.ndarray | None:
        rows = self._doc_scope(doc)
        chosen = self.where_rows(where)
        if chosen is None:
            return rows
        return chosen if rows is None else np.intersect1d(rows, chosen)

    def _doc_scope(self, doc: str | None) -> np.ndarray | None:
        if doc is None:
            return None
        i = self._corpus.doc_id(doc)
        if i is None and self._corpus.doc_names:
            i = self._corpus.doc_id(self.resolve_doc(doc))
        if i is None:
            raise ConfigError(f"no document named {doc!r} in the index", path=self.path,
                              hint=known_names_hint(doc, self._corpus.doc_names))
        return self._corpus.doc_rows(i)

    def query_vector(self, query: str) -> np.ndarray | None:
        """The question's vector against the chunk vectors (None without them): embedded by each of the
        collection's models when it has several, side by side (:func:`retrievers.embed.spaces.block_query`)."""
        corpus = self._corpus
        if not (self.has_dense and corpus.has_dense):
            return None
        layout = corpus.vector_layout
        if layout is None or len(layout.spaces) == 1:
            return self.encoder_for(layout.spaces[0]).encode_query(query) if layout is not None \
                else self.encoder.encode_query(query)
        return block_query(layout.spaces, layout.dims, query, lambda sp, q: self.encoder_for(sp).encode_query(q))

    def query_scores(self, query: str, *, dense: bool = True) -> QueryScores:
        """What the first stage and the features share for ``query``: its tokens, BM25 scores, vector,
        and the concepts it names (:mod:`retrievers.rank.concepts`)."""
        from .rank.concepts import default_vocabulary
        from .rank.question import asks_for_amount

        qv = self.query_vector(query) if dense else None
        tokens = self.tokenizer.tokenize(query)
        corpus = self._corpus
        cues = roots = None
        if corpus.doc_names:
            table = self._issuer_table()
            cues, roots = table.cues(query), table.root_terms(tokens)
        return query_scores(corpus, tokens, qv, amount=asks_for_amount(query), text=query,
                            expansion=default_vocabulary().expand(query, self.tokenizer, tokens), doc_cues=cues,
                            root_terms=roots)

    def _issuer_table(self) -> IssuerTable:
        """The documents' identities prepared for matching questions, rebuilt when they change."""
        names = self._corpus.doc_names  # a new list at each publish; the identity cache is replaced on change
        got = getattr(self, "_issuers", None)
        if got is not None and got[0] is names and got[1] is self._identity_cache:
            return got[2]  # the query path: no pass over the documents
        ids = self.identities()
        got = self._issuers = (names, self._identity_cache, IssuerTable([ids.get(n) for n in names], self.tokenizer))
        return got[2]

    @property
    def vectors(self) -> VectorSearch:
        """The dense first stage: nearest chunks of a query vector in the committed generation."""
        return self._vectors

    def named_docs(self, qs: QueryScores, doc: str | None = None) -> list[int]:
        """Corpus indices of the documents the question names (:func:`retrievers.rank.search.named_docs`),
        when searching the collection (no ``doc``) and they are not all of it."""
        return rank_stage.named_docs(self._corpus, qs, doc)

    def candidates(self, qs: QueryScores, *, doc: str | None = None, n: int = 100,
                   where: Mapping[str, Any] | None = None) -> np.ndarray:
        """First-stage rows for the ranker within ``doc`` and ``where``
        (:func:`retrievers.rank.search.first_stage`)."""
        return rank_stage.first_stage(self._corpus, qs, self._scope(doc, where), n, self._vectors,
                                  self.named_docs(qs, doc))

    def rank(
        self,
        query: str | QueryScores,
        *,
        k: int = 10,
        doc: str | None = None,
        mode: Mode = "ranker",
        candidates: int = 100,
        ranker: LambdaRanker | None = None,
        where: Mapping[str, Any] | None = None,
        route: bool = True,
    ) -> TopK:
        """Corpus rows and scores of the best ``k`` chunks (no text fetched); see :meth:`search`.

        The request is checked and the query scored here; the mode runs in the rank stage
        (:func:`retrievers.rank.search.rank`)."""
        if not isinstance(query, QueryScores):
            check_query(query, self.tokenizer.tokenize(query))
        if mode != "bm25" and self._vectors_error is not None:
            raise self._vectors_error
        check_request(mode, k, has_dense=self.has_dense, path=self.path)
        use_dense = self.has_dense and mode in ("dense", "hybrid", "ranker")
        qs = query if isinstance(query, QueryScores) else self.query_scores(query, dense=use_dense)
        rows = self._scope(doc, where)
        with self._lock:
            corpus, vectors = self._corpus, self._vectors
        return rank_stage.rank(corpus, qs, mode=mode, k=k, vectors=vectors, model=lambda: ranker or self.ranker,
                           rows=rows, doc=doc, candidates=candidates, route=route)

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        doc: str | None = None,
        mode: Mode = "ranker",
        candidates: int = 100,
        where: Mapping[str, Any] | None = None,
        route: bool = True,
    ) -> list[Hit]:
        """The ``k`` best chunks for ``query`` (within document ``doc`` if given), best first.

        ``mode``: ``ranker`` (default), ``bm25``, ``dense`` or ``hybrid``
        (:mod:`retrievers.rank.search`); ``candidates``: first-stage depth per retriever for
        ``ranker`` and ``hybrid``.  ``route`` (ranker mode, no ``doc``): the chunks of the documents
        the question names by issuer and period (:meth:`named_docs`) come first, each part in the
        ranker's order; ``False`` ranks all candidates by the ranker alone.
        ``where``: only documents whose identity matches, e.g.
        ``{"company": "3M", "year": 2018, "type": "10-K"}`` (:class:`retrievers.store.identities.Where`;
        ConfigError listing the known values when no document matches).
        """
        t = self.rank(query, k=k, doc=doc, mode=mode, candidates=candidates, where=where, route=route)
        rowids = self._corpus.chunk_rowid[t.indices].tolist()
        got = self._store.chunks_by_rowid(rowids)
        return [
            Hit(got[r].doc, got[r].chunk_id, got[r].pages, got[r].section_path, float(s), got[r].text)
            for r, s in zip(rowids, t.scores.tolist())
        ]

    def page_ranking(self, rows: Sequence[int]) -> list[tuple[str, int]]:
        """``(doc, page)`` pairs of ranked chunk rows in first-hit order: :meth:`Corpus.page_ranking`."""
        return self._corpus.page_ranking(rows)
