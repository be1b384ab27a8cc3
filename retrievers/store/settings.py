"""An index's settings: checked once when it is created, compared when it is opened to add more.

The settings are stored as JSON in the index's metadata (:mod:`retrievers.store.database`):
the BM25 tokenizer and parameters, the dense model and sequence length, and
the parse and chunk options (:mod:`retrievers.ingest.documents`).  A document's *option
key* (:func:`options_key`) hashes what its stored form depends on besides its
content, so a document indexed under other options is parsed again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Mapping

from structrag.errors import ConfigError
from structrag.files import content_key
from structrag.options import ChunkOptions, ParseOptions

from ..lexical.bm25 import BM25Params
from ..lexical.tokenizer import Tokenizer

__all__ = ["CREATE_OPTIONS", "options_key", "create_settings", "check_settings"]

#: The keyword arguments of :meth:`retrievers.index.Index.create` (and of ``Index.build`` beyond its own).
CREATE_OPTIONS = ("dense", "model", "max_seq_length", "tokenizer", "bm25", "parse_options", "chunk_options")


def options_key(parse: ParseOptions, chunk: ChunkOptions, tokenizer: Tokenizer, dense_setting: str | None) -> str:
    """What, besides its content, a document's stored form depends on (a changed key re-parses it).

    ``dense_setting`` is the model the index was created with: an ``auto`` model
    resolved at the first document must not change the key of the documents
    indexed before (or after) it.
    """
    return content_key(parse.to_dict(), chunk.to_dict(), tokenizer.to_dict(), dense_setting)


def create_settings(*, dense: bool | Literal["auto"], model: str | None, max_seq_length: int | None,
                    tokenizer: Tokenizer | None, bm25: BM25Params, parse_options: Any, chunk_options: Any
                    ) -> dict[str, Any]:
    """The settings a new index stores, from the arguments of :meth:`retrievers.index.Index.create` (its
    defaults and their meaning are there); wrong ones raise ConfigError."""
    from ..embed.encoder import AUTO_MODEL, DEFAULT_MAX_SEQ_LENGTH, dense_available, is_default_model, require_dense

    if dense == "auto":
        dense = dense_available()
    elif dense:
        require_dense("a dense index")
    elif model is not None:
        raise ConfigError("a dense model was given for an index built without dense retrieval (dense=False)",
                          hint="leave out the model, or build a dense index (dense=True)")
    tokenizer = tokenizer or Tokenizer()
    msl = max_seq_length or (DEFAULT_MAX_SEQ_LENGTH if model is not None and is_default_model(model) else None)
    return {
        "tokenizer": tokenizer.to_dict(),
        "bm25": BM25Params(*bm25)._asdict(),
        "dense_model": (model or AUTO_MODEL) if dense else None,
        "dense_model_setting": (model or AUTO_MODEL) if dense else None,
        "dense_max_seq_length": msl if dense else None,
        "parse_options": ParseOptions.of(parse_options).storable().to_dict(),
        "chunk_options": ChunkOptions.of(chunk_options).to_dict(),
    }


def check_settings(options: Mapping[str, Any], *, dense_model: str | None, tokenizer: Tokenizer,
                   path: str | Path | None = None) -> None:
    """Refuse ``Index.create`` options that disagree with an existing index's settings.

    ``dense_model`` and ``tokenizer``: the existing index's.  Options it does not
    store per index (``parse_options``, ``chunk_options``, ``bm25``) are free.
    """
    from ..embed.encoder import AUTO_MODEL, DEFAULT_MODEL, MULTILINGUAL_MODEL, is_multilingual_model

    unknown = set(options) - set(CREATE_OPTIONS)
    if unknown:
        raise ConfigError(f"unknown index options {sorted(unknown)}; known: {', '.join(CREATE_OPTIONS)}")
    if options.get("dense", "auto") is True and dense_model is None:
        raise ConfigError("this index was built without dense retrieval; create a new one with dense=True", path=path)
    model = options.get("model")
    if model is not None and model != AUTO_MODEL and dense_model not in (model, AUTO_MODEL) and not (
        dense_model == DEFAULT_MODEL and model in (DEFAULT_MODEL, "minilm")
    ) and not (dense_model == MULTILINGUAL_MODEL and is_multilingual_model(model)):
        raise ConfigError(f"this index embeds with {dense_model!r}, not {model!r}; use a new index directory",
                          path=path)
    tok = options.get("tokenizer")
    if tok is not None and tok != tokenizer:
        raise ConfigError("this index was built with another tokenizer; use a new index directory", path=path)
