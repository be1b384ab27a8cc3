"""Level reconstruction: level-wise memory, predictors, baselines (DESIGN.md §2.3).

>>> from structrag.levels import assign_levels
>>> result = assign_levels(document, headings)                 # learned predictor, recent memory
>>> result = assign_levels(document, headings, predictor="font-size", memory="branches", granularity=2)

Predictors are looked up by name in a registry; other packages add theirs with
:func:`register_predictor` (the VLM/LLM backends register ``vlm``, ``llm`` and
``whole-document`` when :mod:`structrag.backends` is imported, which
:func:`make_predictor` does on first use of an unknown name).
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import ConfigError
from .base import (
    KnownHeading,
    LevelPrediction,
    LevelPredictor,
    Memory,
    PredictionContext,
    check_levels,
    project_levels,
)
from .driver import LevelResult, assign_levels, plan_steps
from .memory import (
    MEMORY_STRATEGIES,
    BranchesMemory,
    MemoryStrategy,
    PreviousNMemory,
    RandomMemory,
    RecentMemory,
    make_memory,
)

__all__ = [
    "assign_levels",
    "LevelResult",
    "make_predictor",
    "register_predictor",
    "available_predictors",
    "PREDICTORS",
    "MEMORY_STRATEGIES",
    "make_memory",
    "plan_steps",
    "MemoryStrategy",
    "RecentMemory",
    "PreviousNMemory",
    "RandomMemory",
    "BranchesMemory",
    "KnownHeading",
    "Memory",
    "PredictionContext",
    "LevelPrediction",
    "LevelPredictor",
    "check_levels",
    "project_levels",
]

#: The built-in predictor names, in the order the CLI lists them.
PREDICTORS = ("learned", "rules", "font-size", "size-rank", "numbering")

_REGISTRY: dict[str, Callable[..., LevelPredictor]] = {}


def register_predictor(name: str, factory: Callable[..., LevelPredictor], *, replace: bool = False) -> None:
    """Make ``make_predictor(name, **options)`` call ``factory(**options)``.

    Registering a taken name raises :class:`ConfigError` unless ``replace``.
    """
    key = name.strip().lower()
    if not key:
        raise ConfigError("a predictor needs a non-empty name")
    if key in _REGISTRY and not replace and _REGISTRY[key] is not factory:
        raise ConfigError(f"predictor {name!r} is already registered", hint="pass replace=True to override it")
    _REGISTRY[key] = factory


def _learned(**options: Any) -> LevelPredictor:
    try:
        from .learned import LearnedPredictor
    except ModuleNotFoundError as exc:  # only while the learned predictor is being written
        from ..errors import ModelError

        raise ModelError(f"the learned predictor is not available yet ({exc})",
                         hint="use predictor='rules' or 'font-size' meanwhile") from None

    return LearnedPredictor(**options)


def _rules(**options: Any) -> LevelPredictor:
    from .rules import RulesPredictor

    return RulesPredictor(**options)


def _font_size(**options: Any) -> LevelPredictor:
    from .baselines import FontSizePredictor

    return FontSizePredictor(**options)


def _size_rank(**options: Any) -> LevelPredictor:
    from .baselines import SizeRankPredictor

    return SizeRankPredictor(**options)


def _numbering(**options: Any) -> LevelPredictor:
    from .baselines import NumberingPredictor

    return NumberingPredictor(**options)


for _name, _factory in (("learned", _learned), ("rules", _rules), ("font-size", _font_size),
                        ("size-rank", _size_rank), ("numbering", _numbering)):
    register_predictor(_name, _factory)


def available_predictors() -> tuple[str, ...]:
    """Registered names (the backends' names appear once :mod:`structrag.backends` is imported)."""
    return tuple(_REGISTRY)


def make_predictor(name: str, **options: Any) -> LevelPredictor:
    """A predictor by registered name, built with ``options``.

    Unknown names trigger one import of :mod:`structrag.backends` (where the
    VLM/LLM predictors register themselves) before giving up.
    """
    if not isinstance(name, str):
        raise ConfigError(f"predictor name must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    if key not in _REGISTRY:
        try:
            import structrag.backends  # noqa: F401  (registers vlm, llm, whole-document)
        except ImportError as exc:
            if key in ("vlm", "llm", "whole-document"):
                raise ConfigError(
                    f"predictor {name!r} needs the model-server backends, which cannot be imported ({exc})",
                    hint="pip install 'structrag[llm]'",
                ) from None
    if key not in _REGISTRY:
        raise ConfigError(f"unknown predictor {name!r}", hint="choose one of " + ", ".join(_REGISTRY))
    try:
        return _REGISTRY[key](**options)
    except TypeError as exc:
        if "keyword argument" not in str(exc):
            raise
        # unknown keyword arguments are rejected with the predictor named
        raise ConfigError(f"predictor {name!r}: {exc}") from None
