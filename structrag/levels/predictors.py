"""Level predictors by name: one explicit table, each entry imported only when it is built.

``make_predictor("learned")`` never imports the model-server backends, and ``"vlm"`` never
loads the LightGBM model.  Options are checked against the predictor's constructor before it is
called, so a misspelt option is a :class:`~structrag.errors.ConfigError` naming the accepted ones.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from ..errors import ConfigError
from .base import LevelPredictor

__all__ = ["make_predictor", "available_predictors", "PREDICTORS", "SERVER_PREDICTORS"]


def _learned() -> type:
    from .learned import LearnedPredictor

    return LearnedPredictor


def _rules() -> type:
    from .rules import RulesPredictor

    return RulesPredictor


def _font_size() -> type:
    from .baselines import FontSizePredictor

    return FontSizePredictor


def _size_rank() -> type:
    from .baselines import SizeRankPredictor

    return SizeRankPredictor


def _numbering() -> type:
    from .baselines import NumberingPredictor

    return NumberingPredictor


def _vlm() -> type:
    from .backends import VLMPredictor

    return VLMPredictor


def _llm() -> type:
    from .backends import LLMPredictor

    return LLMPredictor


def _whole_document() -> type:
    from .backends import WholeDocumentPredictor

    return WholeDocumentPredictor


#: The offline predictor names, in the order the CLI lists them.
PREDICTORS = ("learned", "rules", "font-size", "size-rank", "numbering")
#: The predictors that ask a model server (the ``llm`` extra).
SERVER_PREDICTORS = ("vlm", "llm", "whole-document")

_CLASSES: dict[str, Callable[[], type]] = {
    "learned": _learned,
    "rules": _rules,
    "font-size": _font_size,
    "size-rank": _size_rank,
    "numbering": _numbering,
    "vlm": _vlm,
    "llm": _llm,
    "whole-document": _whole_document,
}


def available_predictors() -> tuple[str, ...]:
    """Every predictor name :func:`make_predictor` builds."""
    return tuple(_CLASSES)


def _accepted_options(cls: type) -> set[str]:
    """Keyword names the constructor takes, following ``**options`` passed on to the base classes."""
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        params = list(inspect.signature(init).parameters.values())[1:]  # without self
        names |= {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            break
    return names


def make_predictor(name: str, **options: Any) -> LevelPredictor:
    """The predictor called ``name``, built with ``options``."""
    if not isinstance(name, str):
        raise ConfigError(f"predictor name must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    load = _CLASSES.get(key)
    if load is None:
        raise ConfigError(f"unknown predictor {name!r}", hint="choose one of " + ", ".join(_CLASSES))
    try:
        cls = load()
    except ImportError as exc:
        if key in SERVER_PREDICTORS:
            raise ConfigError(
                f"predictor {name!r} needs the model-server backends, which cannot be imported ({exc})",
                hint="pip install 'structrag[llm]'",
            ) from None
        raise
    accepted = _accepted_options(cls)
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ConfigError(f"predictor {name!r}: unexpected keyword argument(s) " + ", ".join(unknown),
                          hint="accepted options: " + (", ".join(sorted(accepted)) or "none"))
    return cls(**options)
