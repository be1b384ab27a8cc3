"""Committing documents into an index: PDFs through the ingest stage, Ray shards, chunks made elsewhere.

The functions here are the write half of :class:`retrievers.index.Index`
(``Index.add``, ``Index.merge_shards``, ``Index.add_chunks`` call them) and use
only its public surface: its store and writer lock, its settings, its encoder
and :meth:`~retrievers.index.Index.publish`.  A document is committed in two
steps: its vectors are written first (content-addressed files), then its rows in
one SQLite transaction, so a crash leaves either the old generation or the new
one (:mod:`retrievers.store.database`).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from structrag._progress import progress_bar
from structrag.errors import ConfigError, EncryptedPDFError, IndexFormatError, StructragError
from structrag.files import content_key, file_sha1
from structrag.model import Chunk, DocumentIdentity
from structrag.text import path_text

from structrag.options import ChunkOptions, ParseOptions

from ..ingest.documents import embed_documents, expand_paths, failure_message, process_pdfs
from ..ingest.sections import doc_nodes
from ..embed.encoder import AUTO_MODEL
from ..embed.spaces import Space
from .arrays import document_spaces, vectors_ok
from .database import DocRow
from .durable import atomic_save_npy
from .identities import identity_of, save_identity, user_values
from .names import display_names, match_file

__all__ = ["AddReport", "Writes", "Event", "ignore_event", "indexed_as", "commit_document", "add_files", "merge_shard",
           "add_chunks", "repair_vectors"]

log = logging.getLogger("structrag.index")

#: ``on_event(kind, name, detail)``: ``added``, ``replaced``, ``unchanged`` or ``failed``, as each file is done;
#: ``warning`` for a document indexed with a warning, ``repaired`` for re-embedded vectors.
Event = Callable[[str, str, str], None]


class AddReport(NamedTuple):
    added: list[str]
    replaced: list[str]
    unchanged: list[str]
    failed: list[tuple[str, str]]  # (path, message)


def _page_count(path: Path, max_pages: int | None) -> int:
    """Pages of a PDF as the progress bar counts them (0 when it cannot be opened: its worker says why)."""
    try:
        import pymupdf

        with pymupdf.open(path) as doc:
            n = doc.page_count
    except Exception:  # noqa: BLE001 - reported by the worker that parses it
        return 0
    return min(n, max_pages) if max_pages else n


def _sizes(pages: int, chunks: int) -> str:
    """A document's size as an event says it: "1 page, 3 chunks"."""
    return f"{pages} page{'' if pages == 1 else 's'}, {chunks} chunk{'' if chunks == 1 else 's'}"


def ignore_event(kind: str, name: str, detail: str) -> None:
    """The ``on_event`` of a caller that does not listen."""


def indexed_as(rows: Sequence[DocRow], path: str, sha1: str) -> DocRow | None:
    """Which of the stored documents ``rows`` the file at ``path`` (content ``sha1``) is, or None for a
    new one (:func:`retrievers.store.names.match_file`)."""
    match = match_file(path, sha1, [(d.name, d.path, d.sha1) for d in rows])
    return next((d for d in rows if d.name == match.name), None) if match.name is not None else None


def _name_file(store, c, path: str) -> str:
    """The name of the file at ``path`` (inside transaction ``c``): its base name while unique, else the
    shortest distinguishing tail of its path; stored files of that base name are renamed to match."""
    base = Path(path).name
    rows = store.documents()
    # documents named after their file (not the names add_chunks' callers chose) take part
    mine = [d for d in rows if d.path and Path(d.path).name == base and (d.name == base or d.name.endswith("/" + base))]
    names = display_names([d.path for d in mine] + [path])
    if names[-1] in {d.name for d in rows} - {d.name for d in mine}:
        names[-1] = os.path.abspath(path)  # a caller chose that name for other chunks: the full path is free
    for d, new in zip(mine, names):
        if d.name != new:
            store.rename_document(c, d.name, new)
    return names[-1]


def commit_document(index, *, name: str | None, path: str, sha1: str, options_key: str, page_count: int,
                    chunks: Sequence[Mapping[str, Any]], tokens: Sequence[Sequence[str]], tree: Any, document: Any,
                    stats: Mapping[str, Any], vectors: tuple[np.ndarray, np.ndarray] | None = None,
                    space: Space | None = None, replacing: str | None = None, warnings: Sequence[str] = (),
                    progress: bool = False) -> str:
    """Store one document: its vectors first (embedded here unless given), then its rows in one transaction;
    returns its name.  ``name=None``: a file, named after its path (:func:`retrievers.store.names.display_names`);
    ``replacing``: the stored document it replaces.  The vectors are embedded in the document's own space
    (:meth:`retrievers.index.Index.space_for`): nothing stored before is embedded again; given ``vectors``
    are of ``space`` (default: the index's first space).  ``progress``: a bar while the chunks are embedded.

    The caller holds the writer lock; the search arrays are not rebuilt (``index.publish()``).
    """
    store = index.store
    stem = None
    # the document's identity (issuer, type, period) is the root of its tree: read once, here, for every way in
    ident = identity_of(document, tree)
    if vectors is not None and not index.has_dense:
        raise ConfigError("vectors were given for an index built without dense retrieval", path=index.path,
                          hint="leave out the vectors, or add to a dense index")
    if index.has_dense:
        texts = [c["text"] for c in chunks]
        if index.dense_model == AUTO_MODEL:
            index.resolve_auto_model(texts)
        # vectors made elsewhere come with their space (a Ray shard's), else the index's first one
        space = space if space is not None else index.space_for(texts) if vectors is None \
            else Space(index.dense_model, index.dense_max_seq_length)
        index.add_space(space)
        stem = f"{sha1[:20]}-{options_key[:8]}-{space.key}"
        paths = [c["section_path"] for c in chunks]
        if vectors is None:
            [(cv, nv)] = embed_documents(index.encoder_for(space), [(texts, paths)], progress=progress)
        else:
            cv, nv = (np.ascontiguousarray(v, dtype=np.float32) for v in vectors)
            n_nodes = len(doc_nodes(paths).paths)
            if cv.ndim != 2 or cv.shape[0] != len(chunks) or nv.ndim != 2 or nv.shape != (n_nodes, cv.shape[1]):
                raise ConfigError(f"vectors must be ({len(chunks)}, d) and ({n_nodes}, d), "
                                  f"got {cv.shape} and {nv.shape}")
        store.vectors_dir.mkdir(exist_ok=True)
        atomic_save_npy(store.vectors_dir / f"{stem}.chunks.npy", cv)
        atomic_save_npy(store.vectors_dir / f"{stem}.nodes.npy", nv)
    with store.transaction() as c:
        if replacing is not None:
            kept = user_values(c, replacing)  # what the user said of the old version still holds
            if kept:
                ident = (ident or DocumentIdentity()).with_fields("user", **kept)
            store.delete_document(c, replacing)
        if name is None:
            name = _name_file(store, c, path)
        store.insert_document(
            c, name=name, path=path, sha1=sha1, options_key=options_key, page_count=page_count,
            chunks=chunks, tokens=tokens, vectors=stem, tree=tree, document=document, stats=stats,
        )
        save_identity(c, name, ident)
    return name


def add_files(index, paths: Iterable[str | os.PathLike], *, workers: int, progress: bool | None,
              parse: ParseOptions, chunk: ChunkOptions, emit: Event,
              password: str | Mapping[str, str] | None = None) -> tuple[AddReport, int]:
    """What :meth:`Index.add` does (see there), and how many files were processed (committed or failed
    while processing); the caller holds the writer lock and publishes."""
    okey = index.options_key(parse, chunk)
    report = AddReport([], [], [], [])
    replaces: dict[Path, str | None] = {}
    todo: list[tuple[Path, str]] = []
    stored = index.store.documents()  # read once: nothing is committed before every file is matched
    for f in expand_paths(paths):
        try:
            sha1 = file_sha1(f)  # checks for a regular file first: a FIFO or /dev/zero would never end
        except (StructragError, OSError) as e:
            report.failed.append((str(f), failure_message(e)))
            emit("failed", f.name, failure_message(e))
            continue
        # a document is a file: another file of the same base name is a new document, never a replacement
        old = indexed_as(stored, path_text(os.path.abspath(f)), sha1)
        if old is not None and old.sha1 == sha1 and old.options_key == okey:
            report.unchanged.append(old.name)
            emit("unchanged", old.name, "")
            continue
        replaces[f] = old.name if old is not None else None
        todo.append((f, sha1))
    if not todo:
        return report, 0

    def pw(f: Path) -> str | None:
        if password is None or isinstance(password, str):
            return password
        return password.get(str(f), password.get(f.name))

    total = sum(_page_count(f, parse.max_pages) for f, _ in todo) * (2 if parse.layout_model else 1)
    with progress_bar(total, desc="indexing", unit="page", enabled=progress) as bar:
        shown = progress if progress is not None else sys.stderr.isatty()  # the embedding's own bar too
        for f, sha1, result, error in process_pdfs(todo, parse, chunk, index.tokenizer.to_dict(), workers=workers,
                                                   password=pw, pages=bar.update):
            if error is not None:
                msg = failure_message(error)
                if isinstance(error, EncryptedPDFError):
                    msg += " -- structrag index takes --password PASSWORD (or --password-file FILE.json)"
                report.failed.append((str(f), msg))
                emit("failed", f.name, msg)
                continue
            name = commit_document(index, name=None, path=path_text(os.path.abspath(f)), sha1=sha1, options_key=okey,
                                   replacing=replaces[f], progress=bool(shown), **result._asdict())
            kind = "replaced" if replaces[f] is not None else "added"
            (report.replaced if kind == "replaced" else report.added).append(name)
            emit(kind, name, _sizes(result.page_count, len(result.chunks)))
            for w in result.warnings:
                emit("warning", name, w)
    return report, len(todo)


def repair_vectors(index, emit: Event = ignore_event) -> list[str]:
    """Re-embed the documents whose vector files are missing or unreadable; returns their names.

    The caller holds the writer lock and publishes (the search arrays are rewritten from the database).
    """
    fixed: list[str] = []
    store = index.store
    docs = store.documents() if index.has_dense else []
    spaces, of_doc = document_spaces(store, [d for d in docs if d.vectors is not None])
    for d, s in zip([d for d in docs if d.vectors is not None], of_doc):
        if vectors_ok(store, d):
            continue
        chunks = index.chunks(d.name)
        [(cv, nv)] = embed_documents(index.encoder_for(spaces[s]),
                                     [([c.text for c in chunks], [c.section_path for c in chunks])])
        store.vectors_dir.mkdir(exist_ok=True)
        atomic_save_npy(store.vectors_dir / f"{d.vectors}.chunks.npy", cv)
        atomic_save_npy(store.vectors_dir / f"{d.vectors}.nodes.npy", nv)
        fixed.append(d.name)
        emit("repaired", d.name, f"{len(chunks)} chunks re-embedded")
    return fixed


def merge_shard(index, path: str | os.PathLike, report: AddReport, emit: Event = ignore_event, *,
                names: set[str] | None = None, remove: bool = False) -> None:
    """Commit one shard's documents (only ``names`` if given) into ``report``, without publishing.

    The caller holds the writer lock (``index.store.lock()``) and calls
    ``index.publish()`` when done; :meth:`Index.merge_shards` does all of that.
    """
    from .shards import read_shard, shard_settings

    try:
        settings, docs = read_shard(path, names=names)
    except IndexFormatError as e:
        report.failed.append((str(path), str(e)))
        emit("failed", Path(path).name, str(e))
        return
    mine = shard_settings(index.tokenizer.to_dict(), index.dense_model, index.dense_max_seq_length)
    if settings != mine:
        raise ConfigError(f"this shard was made for other index settings ({settings}, the index has {mine})",
                          path=path, hint="merge it into an index created with the same settings")
    for d in docs:
        # a file's shard document follows the rules of Index.add; one without a path keeps its own name
        # read per document: committing one may rename others of its base name
        old = indexed_as(index.store.documents(), d.path, d.sha1) if d.path else index.store.document(d.name)
        if old is not None and old.sha1 == d.sha1 and old.options_key == d.options_key:
            report.unchanged.append(old.name)
            emit("unchanged", old.name, "")
            continue
        name = commit_document(
            index, name=None if d.path else d.name, path=d.path, sha1=d.sha1, options_key=d.options_key,
            page_count=d.page_count, chunks=d.chunks, tokens=d.tokens, tree=d.tree, document=d.document,
            stats=d.stats, vectors=d.vectors if index.has_dense else None,
            space=d.space if index.has_dense and d.vectors is not None else None,
            replacing=old.name if old is not None else None,
        )
        (report.replaced if old is not None else report.added).append(name)
        emit("replaced" if old is not None else "added", name, _sizes(d.page_count, len(d.chunks)))
    if remove:
        Path(path).unlink(missing_ok=True)


def add_chunks(index, name: str, chunks: Sequence[Chunk | Mapping[str, Any]], *, page_count: int,
               sha1: str | None, path: str, tree: Any, document: Any,
               vectors: tuple[np.ndarray, np.ndarray] | None) -> bool:
    """What :meth:`Index.add_chunks` does (see there) but publishing; the caller holds the writer lock."""
    dicts = [c.to_dict() if isinstance(c, Chunk) else dict(c) for c in chunks]
    sha1 = sha1 or content_key([(c["id"], c["text"]) for c in dicts])
    okey = content_key("chunks", index.tokenizer.to_dict(), index.dense_setting)
    old = index.store.document(name)
    if old is not None and old.sha1 == sha1 and old.options_key == okey:
        return False
    commit_document(
        index, name=name, path=path, sha1=sha1, options_key=okey, page_count=int(page_count), chunks=dicts,
        tokens=[index.tokenizer.tokenize(c["text"]) for c in dicts],
        tree=tree.to_dict() if hasattr(tree, "to_dict") else tree,
        document=document.to_dict() if hasattr(document, "to_dict") else document,
        stats={"source": "chunks"}, vectors=vectors,
    )
    return True


class Writes:
    """The write methods of :class:`retrievers.index.Index` (a mixin: this module never imports the index).

    Each takes the writer lock for its whole run and publishes the search arrays once at the end.
    """

    def add(
        self,
        paths: Iterable[str | os.PathLike],
        *,
        workers: int = 1,
        progress: bool | None = None,
        parse_options: ParseOptions | Mapping[str, Any] | None = None,
        chunk_options: ChunkOptions | Mapping[str, Any] | None = None,
        on_event: Event | None = None,
        password: str | Mapping[str, str] | None = None,
        repair: bool = False,
    ) -> AddReport:
        """Parse, chunk, embed and store PDFs (files or folders); returns what happened to each.

        A document is a file (:mod:`retrievers.store.names`): a file already indexed
        with the same content and options is left as it is; the file at an indexed
        path with new content replaces the old one; a different file with the
        same base name is added beside it (both are then named by their path's
        tail, e.g. ``acme/report.pdf``).  A file that fails (not a PDF, encrypted,
        damaged) is reported in ``failed`` and the others go on.
        ``on_event(kind, name, detail)`` is called as each file is done
        (``added``, ``replaced``, ``unchanged``, ``failed``; ``warning`` for a
        document indexed with a warning; ``repaired``).  ``parse_options`` /
        ``chunk_options``: instead of the index's.  ``password``: for encrypted
        PDFs, one for all or a mapping from file name (or path) to password;
        never stored.  ``repair``: first re-embed documents whose vector files
        are missing or unreadable, and rewrite the search arrays.
        """
        if workers < 1:
            raise ConfigError(f"workers must be at least 1, got {workers}")
        popts = ParseOptions.of(self.parse_options if parse_options is None else parse_options)
        copts = ChunkOptions.of(self.chunk_options if chunk_options is None else chunk_options)
        with self._store.writing():
            repaired = repair_vectors(self, on_event or ignore_event) if repair else None
            report, processed = add_files(self, paths, workers=workers, progress=progress, parse=popts,
                                          chunk=copts, emit=on_event or ignore_event, password=password)
            self.publish_if(processed > 0 or repaired is not None)
        return report

    def merge_shards(
        self,
        paths: Iterable[str | os.PathLike],
        *,
        remove: bool = False,
        on_event: Event | None = None,
    ) -> AddReport:
        """Commit the documents of index shards (:mod:`retrievers.store.shards`) without parsing or embedding.

        A shard's documents follow the rules of :meth:`add` (a document is a
        file: same path or same content is the same document).  A
        shard made for other index settings (tokenizer, dense model) is refused
        with :class:`~structrag.errors.ConfigError`; an unreadable file is
        reported in ``failed``.  ``remove``: delete each shard once its
        documents are committed.  The search arrays are rebuilt once, at the end.
        """
        report = AddReport([], [], [], [])
        with self._store.writing():
            for p in paths:
                merge_shard(self, p, report, on_event or ignore_event, remove=remove)
            self.publish_if(bool(report.added or report.replaced))
        return report

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
        one row per chunk and one per section node (:func:`retrievers.ingest.sections.doc_nodes`)
        -- instead of embedding with the index's model.  ``publish=False``
        defers rebuilding the search arrays (call :meth:`flush` after a batch).
        """
        with self._store.writing():
            added = add_chunks(self, name, list(chunks), page_count=page_count, sha1=sha1, path=path, tree=tree,
                               document=document, vectors=vectors)
            if added and publish:
                self.publish()
        return added

    def flush(self) -> None:
        """Write the search arrays for what is committed (after ``add_chunks(..., publish=False)``,
        or to store arrays an older version wrote in another layout)."""
        with self._store.writing():
            self.publish()

    def remove(self, name: str) -> bool:
        """Remove a document; True if it was there."""
        with self._store.writing():
            with self._store.transaction() as c:
                gone = self._store.delete_document(c, name)
            self.publish()
        return gone
