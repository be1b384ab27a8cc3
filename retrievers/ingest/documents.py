"""From PDF files to processed documents, shared by :meth:`Index.add` and Ray.

>>> opts = ParseOptions.of({"outline": "ignore"})                      # doctest: +SKIP
>>> doc = process_pdf("report.pdf", opts, ChunkOptions(), Tokenizer().to_dict())
>>> texts, paths = [c["text"] for c in doc.chunks], [c["section_path"] for c in doc.chunks]
>>> [(chunk_vectors, path_vectors)] = embed_documents(encoder, [(texts, paths)])

Each PDF is parsed (:func:`structrag.pipeline.parse_pdf`), chunked
(:func:`structrag.chunking.chunk_document`) and tokenised for BM25 by
:func:`process_pdf`, in a worker process when there are several
(:func:`process_pdfs`) or in a Ray actor (:mod:`retrievers.ray_ingest`); a
dense index then embeds the chunks and section paths (:func:`embed_documents`).
The index commits what comes out (:mod:`retrievers.store.commit`).
"""

from __future__ import annotations

import json
import os
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, NamedTuple, Sequence

import numpy as np

from structrag.errors import StructragError
from structrag.options import ChunkOptions, ParseOptions

from ..lexical.tokenizer import Tokenizer
from .sections import doc_nodes, section_path_text

__all__ = ["ProcessedPDF", "expand_paths", "process_pdf", "process_pdfs", "embed_documents", "failure_message"]


class ProcessedPDF(NamedTuple):
    """One parsed, chunked and tokenised PDF, as plain JSON-able values (it crosses process boundaries)."""

    document: dict[str, Any]
    tree: dict[str, Any]
    chunks: list[dict[str, Any]]
    tokens: list[list[str]]
    page_count: int
    stats: dict[str, Any]
    warnings: tuple[str, ...] = ()  # the document's warnings (pages without text, a repaired file ...)


def expand_paths(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """PDF files named or found (recursively) in folders, in a stable order, without repeats.

    A ``*.pdf`` link in a folder that leads nowhere (broken, or a loop) is kept: it fails later with its
    reason, as a named file that is missing does, instead of vanishing from the report.
    """
    out: list[Path] = []
    seen: set[str] = set()
    for p in paths:
        p = Path(p)
        if os.path.isdir(p):  # not Path.is_dir: it raises for a name too long
            found = sorted(q for q in p.rglob("*")
                           if q.suffix.lower() == ".pdf" and (q.is_file() or (q.is_symlink() and not q.is_dir())))
        else:
            found = [p]  # a missing or non-PDF file fails later with a clear message
        for q in found:
            r = os.path.realpath(q)  # never raises: a symlink loop resolves as far as it goes
            if r not in seen:
                seen.add(r)
                out.append(q)
    return out


def _jsonable(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str))


def process_pdf(path: str, parse: ParseOptions, chunk: ChunkOptions, tokenizer: Mapping[str, Any],
                password: str | None = None, pages: Callable[[int], None] | None = None) -> ProcessedPDF:
    """Parse, chunk and tokenise one PDF (runs in a worker process or a Ray actor); ``password``
    opens an encrypted one (it is never stored); ``pages`` is told of each page read (default: the
    counter a worker process shares with its parent, if any)."""
    from structrag.chunking import chunk_document
    from structrag.pipeline import parse_pdf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kept on the document as warnings
        parsed = parse_pdf(path, progress=pages or _shared_pages or False, password=password, **parse.to_dict())
    chunks = chunk_document(parsed.document, parsed.tree, **chunk.to_dict())
    tok = Tokenizer.from_dict(tokenizer)
    return ProcessedPDF(
        document=parsed.document.to_dict(),
        tree=parsed.tree.to_dict(),
        chunks=[c.to_dict() for c in chunks],
        tokens=[tok.tokenize(c.text) for c in chunks],
        page_count=parsed.document.page_count,
        stats=_jsonable(parsed.stats),
        warnings=tuple(parsed.document.warnings),
    )


def failure_message(error: BaseException) -> str:
    """What a report says of a document that failed: our errors as they read, others with their type."""
    return str(error) if isinstance(error, StructragError) else f"{type(error).__name__}: {error}"


def process_pdfs(todo: Sequence[tuple[Path, str]], parse: ParseOptions, chunk: ChunkOptions,
                 tokenizer: Mapping[str, Any], *, workers: int = 1,
                 password: Callable[[Path], str | None] = lambda f: None,
                 pages: Callable[[int], None] | None = None,
                 ) -> Iterator[tuple[Path, str, ProcessedPDF | None, BaseException | None]]:
    """:func:`process_pdf` of each ``(path, sha1)``: ``(path, sha1, result, None)`` or ``(path, sha1, None, error)``.

    One worker: in this process, in order.  More: in that many spawned processes,
    as they finish.  ``password(path)``: the password of an encrypted file; ``pages`` is told of
    the pages read, as they are read (by every worker).
    """
    if workers == 1 or len(todo) == 1:
        for f, sha1 in todo:
            try:
                result = process_pdf(str(f), parse, chunk, tokenizer, password(f), pages)
            except (StructragError, OSError, ValueError, RuntimeError) as e:
                yield f, sha1, None, e
            else:
                yield f, sha1, result, None
        return
    # spawn: a forked child would inherit torch's thread pools (and hang)
    ctx = get_context("spawn")
    counter = ctx.Value("q", 0)  # pages read by every worker, polled here for the caller's bar
    shown = 0
    with ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=ctx, initializer=_share_pages,
                             initargs=(counter,)) as ex:
        futs = {ex.submit(process_pdf, str(f), parse, chunk, tokenizer, password(f)): (f, sha1) for f, sha1 in todo}
        pending = set(futs)
        while pending:
            done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
            if pages is not None and counter.value > shown:
                pages(counter.value - shown)
                shown = counter.value
            for fut in sorted(done, key=lambda x: list(futs).index(x)):
                f, sha1 = futs[fut]
                try:
                    result = fut.result()
                except Exception as e:  # the worker's exception, re-raised here
                    yield f, sha1, None, e
                else:
                    yield f, sha1, result, None


#: in a worker process of :func:`process_pdfs`: counts the pages read into the parent's shared counter
_shared_pages: Callable[[int], None] | None = None


def _share_pages(counter) -> None:
    global _shared_pages

    def count(n: int) -> None:
        with counter.get_lock():
            counter.value += n

    _shared_pages = count


def embed_documents(encoder, docs: Sequence[tuple[Sequence[str], Sequence[Sequence[str]]]], *,
                    progress: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(chunk_vectors, section_path_vectors)`` of each ``(chunk_texts, section_paths)`` document.

    Every text of every document goes to the encoder in one call, so a worker
    holding several small documents fills its batches; section-path rows follow
    :func:`retrievers.ingest.sections.doc_nodes`.
    """
    texts: list[str] = []
    spans = []
    for chunk_texts, section_paths in docs:
        a = len(texts)
        texts.extend(chunk_texts)
        b = len(texts)
        texts.extend(section_path_text(p) for p in doc_nodes(section_paths).paths)
        spans.append((a, b, len(texts)))
    v = encoder.encode(texts, progress=progress)
    return [(v[a:b], v[b:c]) for a, b, c in spans]
