"""Token counters for chunk budgets, all usable offline.

A chunk budget is a number of tokens, so the chunker needs something that
counts them.  Three kinds are offered:

* :class:`RegexTokenizer` (the default, name ``"regex"``): words, numbers and
  punctuation marks are one token each (a run of one repeated mark, such as a
  dot leader, is one token), and every CJK character (Han, kana,
  Hangul) is one token, because CJK text has no spaces to split on and
  sub-word tokenizers spend about one token per character on it.  Fast, no
  files, and *additive*: the count of a text is the sum of the counts of its
  whitespace-separated parts, which lets the chunker add counts up instead of
  re-counting.
* :class:`TiktokenTokenizer` (``"tiktoken"``, ``"tiktoken:o200k_base"``, or an
  encoding name such as ``"cl100k_base"``): OpenAI's BPE via ``tiktoken``.
  Without a network the encoding files must be cached; llama-index-core ships
  ``cl100k_base`` and ``o200k_base`` in ``llama_index/core/_static/tiktoken_cache``,
  which is found on disk here *without importing* LlamaIndex (the core never
  imports it), and used the way ``llama_index.core.utils.get_tokenizer`` uses
  it: ``TIKTOKEN_CACHE_DIR`` pointed there while the encoding loads, unless the
  user set that variable.
* :class:`CallableTokenizer`: any ``f(text)`` returning a count or a sequence
  of tokens (LlamaIndex's ``get_tokenizer()``, a Hugging Face tokenizer's
  ``encode``, ...).

:func:`get_tokenizer` turns any of those specifications into a
:class:`Tokenizer`.
"""

from __future__ import annotations

import importlib.util
import os
import re
import threading
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, Union, runtime_checkable

from .errors import ConfigError
from .text import CJK_WIDE

__all__ = [
    "Tokenizer",
    "RegexTokenizer",
    "TiktokenTokenizer",
    "CallableTokenizer",
    "TokenizerSpec",
    "get_tokenizer",
    "bundled_tiktoken_cache",
    "count_tokens",
]

# CJK ideographs (incl. extension A and compatibility), kana, Hangul syllables,
# CJK symbols and full-width forms are counted one per character.
_CJK = CJK_WIDE
# a run of one repeated mark ("........" dot leaders, "-----" rules) is one token, as in BPE vocabularies
_TOKEN_RE = re.compile(
    rf"[{_CJK}]|[^\W_{_CJK}]+(?:['’][^\W_{_CJK}]+)*|(?P<rep>[^\w\s{_CJK}])(?P=rep)+|[^\s{_CJK}]", re.UNICODE
)


@runtime_checkable
class Tokenizer(Protocol):
    """What the chunker needs: a name (for reports) and a token count.

    ``additive`` is True when ``count(a + " " + b) == count(a) + count(b)`` for
    texts split at whitespace; the chunker then sums piece counts instead of
    re-counting joined text.
    """

    name: str
    additive: bool

    def count(self, text: str) -> int: ...


class RegexTokenizer:
    """Words, numbers and punctuation marks one token each; CJK characters one each."""

    name = "regex"
    additive = True

    def count(self, text: str) -> int:
        return len(_TOKEN_RE.findall(text))

    def pieces(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` character spans of the tokens of ``text``."""
        return [m.span() for m in _TOKEN_RE.finditer(text)]

    def __repr__(self) -> str:
        return "RegexTokenizer()"


def bundled_tiktoken_cache() -> Path | None:
    """The tiktoken cache folder llama-index-core ships, found without importing it.

    ``llama_index`` is a namespace package, so looking up its search locations
    runs none of LlamaIndex's code.  Returns None when llama-index-core is not
    installed or ships no cache.
    """
    try:
        spec = importlib.util.find_spec("llama_index")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    for loc in spec.submodule_search_locations or ():
        cand = Path(loc) / "core" / "_static" / "tiktoken_cache"
        if cand.is_dir() and any(p.is_file() and not p.name.startswith(".") for p in cand.iterdir()):
            return cand
    return None


_TIKTOKEN_LOCK = threading.Lock()


class TiktokenTokenizer:
    """OpenAI BPE token counts via ``tiktoken``, offline through a local cache.

    ``encoding`` is a tiktoken encoding name (``cl100k_base``, ``o200k_base``,
    ...) or a loaded ``tiktoken.Encoding``.  ``cache_dir`` overrides where the encoding file is looked up; by
    default ``$TIKTOKEN_CACHE_DIR`` if set, else llama-index-core's bundled
    cache (see :func:`bundled_tiktoken_cache`).
    """

    additive = False

    def __init__(self, encoding: Any = "cl100k_base", *, cache_dir: str | os.PathLike[str] | None = None) -> None:
        if not isinstance(encoding, str):  # an already loaded tiktoken Encoding
            self._enc = encoding
            self.encoding_name = str(getattr(encoding, "name", "?"))
            self.name = f"tiktoken:{self.encoding_name}"
            return
        try:
            import tiktoken
        except ImportError:
            raise ConfigError(
                "the tiktoken tokenizer needs the tiktoken package",
                hint="pip install tiktoken (or structrag[llama-index]), or use tokenizer='regex'",
            ) from None
        self.encoding_name = encoding
        self.name = f"tiktoken:{encoding}"
        if cache_dir is None and "TIKTOKEN_CACHE_DIR" not in os.environ:
            bundled = bundled_tiktoken_cache()
            cache_dir = str(bundled) if bundled is not None else None
        with _TIKTOKEN_LOCK:  # the environment is process-wide; set it only while loading
            saved = os.environ.get("TIKTOKEN_CACHE_DIR")
            if cache_dir is not None:
                os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
            try:
                self._enc = tiktoken.get_encoding(encoding)
            except ValueError as exc:  # unknown encoding name
                raise ConfigError(f"unknown tiktoken encoding {encoding!r}: {exc}",
                                  hint="use cl100k_base or o200k_base") from None
            except Exception as exc:  # no cached file and no network
                raise ConfigError(
                    f"tiktoken encoding {encoding!r} could not be loaded ({type(exc).__name__}: {exc})",
                    hint="install llama-index-core (it bundles cl100k_base and o200k_base), set "
                    "TIKTOKEN_CACHE_DIR to a folder holding the encoding file, or use tokenizer='regex'",
                ) from None
            finally:
                if cache_dir is not None:
                    if saved is None:
                        os.environ.pop("TIKTOKEN_CACHE_DIR", None)
                    else:
                        os.environ["TIKTOKEN_CACHE_DIR"] = saved

    def count(self, text: str) -> int:
        # special-token strings in documents are ordinary text, never an error
        return len(self._enc.encode(text, disallowed_special=()))

    def offsets(self, text: str) -> list[int]:
        """Character offset where each token of ``text`` starts (lets a chunker count a
        text's parts with one encoding of the whole)."""
        toks = self._enc.encode(text, disallowed_special=())
        decoded, offs = self._enc.decode_with_offsets(toks)
        if decoded != text:  # cannot happen for valid text; fall back to no offsets
            raise ValueError("tiktoken round trip changed the text")
        return list(offs)

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self.encoding_name!r})"


class CallableTokenizer:
    """Wrap ``fn(text) -> int | Sequence`` (a count, or the tokens themselves)."""

    additive = False

    def __init__(self, fn: Callable[[str], Any], name: str | None = None) -> None:
        if not callable(fn):
            raise ConfigError(f"tokenizer must be callable, got {type(fn).__name__}")
        self._fn = fn
        self.name = name or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__

    def count(self, text: str) -> int:
        out = self._fn(text)
        if isinstance(out, bool):
            raise ConfigError(f"tokenizer {self.name} returned a bool, expected a count or a token sequence")
        if isinstance(out, int):
            return out
        try:
            return len(out)
        except TypeError:
            raise ConfigError(
                f"tokenizer {self.name} returned {type(out).__name__}, expected a count or a token sequence"
            ) from None

    def __repr__(self) -> str:
        return f"CallableTokenizer({self.name!r})"


def _tiktoken_encoding_of(spec: Any) -> Any:
    """The tiktoken Encoding behind ``spec`` (itself, its bound ``encode``, or a partial of it)."""
    import functools

    cand = spec
    if isinstance(cand, functools.partial):
        cand = cand.func
    cand = getattr(cand, "__self__", cand)  # a bound method -> its Encoding
    if type(cand).__module__.startswith("tiktoken") and callable(getattr(cand, "encode", None)) \
            and callable(getattr(cand, "decode_with_offsets", None)):
        return cand
    return None


TokenizerSpec = Union[None, str, Tokenizer, Callable[[str], Any]]

_TIKTOKEN_ENCODINGS = ("cl100k_base", "o200k_base", "p50k_base", "r50k_base", "p50k_edit", "gpt2")
_CACHE: dict[str, Tokenizer] = {}


def get_tokenizer(spec: TokenizerSpec = None) -> Tokenizer:
    """A :class:`Tokenizer` from a name, a tokenizer object or a callable.

    ``None`` / ``"regex"``: :class:`RegexTokenizer`.  ``"tiktoken"``:
    ``cl100k_base``; ``"tiktoken:NAME"`` or a bare encoding name: that
    encoding.  An object with ``count`` and ``name`` is used as is; an object
    with ``encode`` (a tiktoken ``Encoding``, a Hugging Face tokenizer) counts
    ``len(encode(text))``; any other callable is wrapped in
    :class:`CallableTokenizer`.
    """
    if spec is None:
        spec = "regex"
    if isinstance(spec, str):
        key = spec.strip().lower()
        if key in _CACHE:
            return _CACHE[key]
        if key in ("regex", "words", "default"):
            tok: Tokenizer = RegexTokenizer()
        elif key == "tiktoken":
            tok = TiktokenTokenizer("cl100k_base")
        elif key.startswith("tiktoken:"):
            tok = TiktokenTokenizer(key.split(":", 1)[1])
        elif key in _TIKTOKEN_ENCODINGS:
            tok = TiktokenTokenizer(key)
        else:
            raise ConfigError(
                f"unknown tokenizer {spec!r}",
                hint="use 'regex', 'tiktoken', 'tiktoken:<encoding>', a tokenizer object or a callable",
            )
        _CACHE[key] = tok
        return tok
    if isinstance(spec, Tokenizer):
        return spec
    enc = _tiktoken_encoding_of(spec)
    if enc is not None:  # an Encoding, or LlamaIndex's partial(enc.encode, ...): count with offsets
        return TiktokenTokenizer(enc)
    count = getattr(spec, "count", None)
    if callable(count) and not isinstance(spec, type) and not callable(spec):
        return CallableTokenizer(count, name=str(getattr(spec, "name", type(spec).__name__)))
    encode = getattr(spec, "encode", None)
    if callable(encode) and not isinstance(spec, type):
        name = getattr(spec, "name", None) or getattr(spec, "name_or_path", None) or type(spec).__name__
        return CallableTokenizer(encode, name=str(name))
    if callable(spec):
        return CallableTokenizer(spec)
    raise ConfigError(
        f"tokenizer must be a name, a tokenizer object or a callable, not {type(spec).__name__}",
        hint="use 'regex', 'tiktoken', or a function text -> token list",
    )


def count_tokens(texts: Sequence[str], tokenizer: TokenizerSpec = None) -> list[int]:
    """Token counts of several texts with one tokenizer (convenience for reports)."""
    tok = get_tokenizer(tokenizer)
    return [tok.count(t) for t in texts]
