"""The options stored with an index and with each of its documents: how PDFs are parsed and chunked.

:class:`ParseOptions` go to :func:`structrag.pipeline.parse_pdf`, :class:`ChunkOptions` to
:func:`structrag.chunking.chunk_document`.  Only the fields that were given are stored
(``to_dict``), so an index written before these classes existed reads back the same options,
and its documents keep their option keys.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Literal, Mapping, TypeVar

from structrag.errors import ConfigError

__all__ = ["ParseOptions", "ChunkOptions"]

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
