"""The ingest stage: from PDF files to processed documents, shared by :meth:`Index.add` and Ray.

>>> opts = ParseOptions.of({"outline": "ignore"})                      # doctest: +SKIP
>>> doc = process_pdf("report.pdf", opts, ChunkOptions(), Tokenizer().to_dict())
>>> texts, paths = [c["text"] for c in doc.chunks], [c["section_path"] for c in doc.chunks]
>>> [(chunk_vectors, path_vectors)] = embed_documents(encoder, [(texts, paths)])

Each PDF is parsed (:func:`structrag.pipeline.parse_pdf`), chunked
(:func:`structrag.chunking.chunk_document`) and tokenised for BM25 by
:func:`process_pdf`, in a worker process when there are several
(:func:`process_pdfs`) or in a Ray actor (:mod:`retrievers.ray_ingest`); a
dense index then embeds the chunks and section paths (:func:`embed_documents`).
The index commits what comes out (:mod:`retrievers.index`).

:class:`ParseOptions` and :class:`ChunkOptions` are the options stored with an
index and with each of its documents.  Only the fields that were given are
stored (``to_dict``), so an index written before these classes existed reads
back the same options, and its documents keep their option keys.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Literal, Mapping, NamedTuple, Sequence, TypeVar

import numpy as np

from structrag.errors import ConfigError, StructragError

from .corpus import doc_nodes, path_text
from .tokenization import Tokenizer

__all__ = ["ParseOptions", "ChunkOptions", "ProcessedPDF", "expand_paths", "process_pdf", "process_pdfs",
           "embed_documents", "failure_message"]

_T = TypeVar("_T", bound="_Options")


class _Options:
    """Shared by the two option classes: built from a mapping (each value checked), stored as a mapping."""

    @classmethod
    def _what(cls) -> str:
        return re.sub(r"(?<!^)(?=[A-Z])", " ", cls.__name__).lower()  # ParseOptions -> "parse options"

    @classmethod
    def of(cls: type[_T], options: "_T | Mapping[str, Any] | None") -> _T:
        """``options`` as this class: an instance as it is, a mapping checked field by field, None: the defaults."""
        if isinstance(options, cls):
            return options
        given = dict(options or {})
        names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise ConfigError(f"unknown {cls._what()} {', '.join(map(repr, unknown))}; known: {', '.join(names)}")
        return cls(**given)

    def to_dict(self) -> dict[str, Any]:
        """The fields that were given (what the index stores and the option key hashes)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)  # type: ignore[arg-type]
                if getattr(self, f.name) is not None}

    def _fail(self, name: str, want: str) -> None:
        raise ConfigError(f"{self._what()[:-1]} {name} must be {want}, not {getattr(self, name)!r}")

    def _check_int(self, name: str, minimum: int) -> None:
        v = getattr(self, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < minimum):
            self._fail(name, f"a whole number of at least {minimum}")

    def _check_str(self, *names: str) -> None:
        for name in names:
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v):
                self._fail(name, "a non-empty string")


@dataclass(frozen=True)
class ParseOptions(_Options):
    """Options of :func:`structrag.pipeline.parse_pdf` stored with an index (None: parse_pdf's default).

    Not here: ``progress`` and ``checkpoint``, which belong to one run rather
    than to the index, and predictor objects, which cannot be stored.
    """

    outline: Literal["auto", "ignore"] | None = None
    contents: Literal["auto", "ignore"] | None = None
    predictor: str | None = None
    memory: str | None = None
    granularity: str | int | None = None
    fallback: str | None = None
    min_score: float | None = None
    max_pages: int | None = None
    password: str | None = None
    layout_model: bool | None = None

    def __post_init__(self) -> None:
        # fail when the index is set up, not once per document
        for name in ("outline", "contents"):
            if getattr(self, name) not in (None, "auto", "ignore"):
                self._fail(name, "'auto' or 'ignore'")
        self._check_str("predictor", "memory", "fallback", "password")
        g = self.granularity
        if g is not None and not (g in ("heading", "page") or (isinstance(g, int) and not isinstance(g, bool)
                                                               and g >= 1)):
            self._fail("granularity", "'heading', 'page' or a number of pages")
        if self.min_score is not None and (isinstance(self.min_score, bool)
                                           or not isinstance(self.min_score, (int, float))):
            self._fail("min_score", "a number")
        self._check_int("max_pages", 1)
        if self.layout_model is not None and not isinstance(self.layout_model, bool):
            self._fail("layout_model", "True or False")


@dataclass(frozen=True)
class ChunkOptions(_Options):
    """Options of :func:`structrag.chunking.chunk_document` stored with an index (None: its default)."""

    max_tokens: int | None = None
    overlap: int | None = None
    tokenizer: str | None = None
    include_heading: bool | None = None

    def __post_init__(self) -> None:
        self._check_int("max_tokens", 1)
        self._check_int("overlap", 0)
        self._check_str("tokenizer")
        if self.include_heading is not None and not isinstance(self.include_heading, bool):
            self._fail("include_heading", "True or False")


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


def process_pdf(path: str, parse: ParseOptions, chunk: ChunkOptions, tokenizer: Mapping[str, Any],
                password: str | None = None) -> ProcessedPDF:
    """Parse, chunk and tokenise one PDF (runs in a worker process or a Ray actor); ``password``
    opens an encrypted one (it is never stored)."""
    from structrag.chunking import chunk_document
    from structrag.pipeline import parse_pdf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kept on the document as warnings
        parsed = parse_pdf(path, progress=False, password=password, **parse.to_dict())
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
                 ) -> Iterator[tuple[Path, str, ProcessedPDF | None, BaseException | None]]:
    """:func:`process_pdf` of each ``(path, sha1)``: ``(path, sha1, result, None)`` or ``(path, sha1, None, error)``.

    One worker: in this process, in order.  More: in that many spawned processes,
    as they finish.  ``password(path)``: the password of an encrypted file.
    """
    if workers == 1 or len(todo) == 1:
        for f, sha1 in todo:
            try:
                result = process_pdf(str(f), parse, chunk, tokenizer, password(f))
            except (StructragError, OSError, ValueError, RuntimeError) as e:
                yield f, sha1, None, e
            else:
                yield f, sha1, result, None
        return
    # spawn: a forked child would inherit torch's thread pools (and hang)
    with ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=get_context("spawn")) as ex:
        futs = {ex.submit(process_pdf, str(f), parse, chunk, tokenizer, password(f)): (f, sha1) for f, sha1 in todo}
        for fut in as_completed(futs):
            f, sha1 = futs[fut]
            try:
                result = fut.result()
            except Exception as e:  # the worker's exception, re-raised here
                yield f, sha1, None, e
            else:
                yield f, sha1, result, None


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
