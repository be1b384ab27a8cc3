"""Committing documents into an index: PDFs through the ingest stage, Ray shards, chunks made elsewhere.

The functions here are the write half of :class:`retrievers.index.Index`
(``Index.add``, ``Index.merge_shards``, ``Index.add_chunks`` call them) and use
only its public surface: its store and writer lock, its settings, its encoder
and :meth:`~retrievers.index.Index.publish`.  A document is committed in two
steps: its vectors are written first (content-addressed files), then its rows in
one SQLite transaction, so a crash leaves either the old generation or the new
one (:mod:`retrievers.store`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from structrag.errors import ConfigError, IndexFormatError, NotAPDFError
from structrag.files import file_sha1
from structrag.model import Chunk

from .corpus import doc_nodes
from .ingest import ChunkOptions, ParseOptions, embed_documents, expand_paths, failure_message, process_pdfs
from .progress import progress_bar
from .settings import content_key
from .store import atomic_save_npy

__all__ = ["AddReport", "Event", "ignore_event", "new_names", "commit_document", "add_files", "merge_shard",
           "add_chunks"]

#: ``on_event(kind, name, detail)``: ``added``, ``replaced``, ``unchanged`` or ``failed``, as each file is done.
Event = Callable[[str, str, str], None]


class AddReport(NamedTuple):
    added: list[str]
    replaced: list[str]
    unchanged: list[str]
    failed: list[tuple[str, str]]  # (path, message)


def ignore_event(kind: str, name: str, detail: str) -> None:
    """The ``on_event`` of a caller that does not listen."""


def new_names(files: Iterable[Path], report: AddReport, emit: Event = ignore_event) -> list[Path]:
    """``files`` whose name no earlier one of them has; the others are reported failed
    (documents are keyed by file name)."""
    kept: dict[str, Path] = {}
    for f in files:
        if f.name in kept:
            msg = f"another file named {f.name!r} is in this batch ({kept[f.name]}); documents are keyed by file name"
            report.failed.append((str(f), msg))
            emit("failed", f.name, msg)
        else:
            kept[f.name] = f
    return list(kept.values())


def commit_document(index, *, name: str, path: str, sha1: str, options_key: str, page_count: int,
                    chunks: Sequence[Mapping[str, Any]], tokens: Sequence[Sequence[str]], tree: Any, document: Any,
                    stats: Mapping[str, Any], vectors: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    """Store one document: its vectors first (embedded here unless given), then its rows in one transaction.

    The caller holds the writer lock; the search arrays are not rebuilt (``index.publish()``).
    """
    store = index.store
    stem = None
    if vectors is not None and not index.has_dense:
        raise ConfigError("vectors were given for an index built without dense retrieval", path=index.path,
                          hint="leave out the vectors, or add to a dense index")
    if index.has_dense:
        if index.dense_model == "auto":
            index.resolve_auto_model([c["text"] for c in chunks])
        stem = f"{sha1[:20]}-{options_key[:8]}-{content_key(index.dense_model, index.dense_max_seq_length)[:8]}"
        paths = [c["section_path"] for c in chunks]
        if vectors is None:
            [(cv, nv)] = embed_documents(index.encoder, [([c["text"] for c in chunks], paths)])
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
        store.insert_document(
            c, name=name, path=path, sha1=sha1, options_key=options_key, page_count=page_count,
            chunks=chunks, tokens=tokens, vectors=stem, tree=tree, document=document, stats=stats,
        )


def add_files(index, paths: Iterable[str | os.PathLike], *, workers: int, progress: bool | None,
              parse: ParseOptions, chunk: ChunkOptions, emit: Event) -> tuple[AddReport, int]:
    """What :meth:`Index.add` does (see there), and how many files were processed (committed or failed
    while processing); the caller holds the writer lock and publishes."""
    okey = index.options_key(parse, chunk)
    report = AddReport([], [], [], [])
    store = index.store
    existing = {d.name: d for d in store.documents()}
    todo: list[tuple[Path, str]] = []
    for f in new_names(expand_paths(paths), report, emit):
        try:
            sha1 = file_sha1(f)
        except (NotAPDFError, OSError) as e:
            report.failed.append((str(f), failure_message(e)))
            emit("failed", f.name, str(e))
            continue
        old = existing.get(f.name)
        if old is not None and old.sha1 == sha1 and old.options_key == okey:
            report.unchanged.append(f.name)
            emit("unchanged", f.name, "")
            continue
        todo.append((f, sha1))
    if not todo:
        return report, 0
    with progress_bar(progress, total=len(todo), desc="indexing", unit="pdf") as bar:
        for f, sha1, result, error in process_pdfs(todo, parse, chunk, index.tokenizer.to_dict(), workers=workers):
            bar.update(1)
            if error is not None:
                report.failed.append((str(f), failure_message(error)))
                emit("failed", f.name, failure_message(error))
                continue
            commit_document(index, name=f.name, path=str(f), sha1=sha1, options_key=okey, **result._asdict())
            kind = "replaced" if f.name in existing else "added"
            (report.replaced if kind == "replaced" else report.added).append(f.name)
            emit(kind, f.name, f"{result.page_count} pages, {len(result.chunks)} chunks")
    return report, len(todo)


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
        old = index.store.document(d.name)
        if old is not None and old.sha1 == d.sha1 and old.options_key == d.options_key:
            report.unchanged.append(d.name)
            emit("unchanged", d.name, "")
            continue
        commit_document(
            index, name=d.name, path=d.path, sha1=d.sha1, options_key=d.options_key, page_count=d.page_count,
            chunks=d.chunks, tokens=d.tokens, tree=d.tree, document=d.document, stats=d.stats,
            vectors=d.vectors if index.has_dense else None,
        )
        (report.replaced if old is not None else report.added).append(d.name)
        emit("replaced" if old is not None else "added", d.name, f"{d.page_count} pages, {len(d.chunks)} chunks")
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
