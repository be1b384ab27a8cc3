"""Model-backed level predictors over any OpenAI-compatible server (issue 4).

``vlm``: the paper's multimodal level-wise-memory predictor (page images with
the heading boxes drawn, DESIGN.md §2.3); ``llm``: the same memory and prompt
as text, bboxes written out; ``whole-document``: the one-prompt baseline
(every heading in one request, as MinerU does).  They are registered with
:func:`structrag.levels.register_predictor` when this package is imported, so
``assign_levels(..., predictor="vlm", model=..., base_url=...)`` works; the
core imports this package only when such a name is asked for, and ``openai`` /
``pillow`` (the ``llm`` extra) only when a predictor is built.
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import ConfigError
from ._client import DEFAULT_BASE_URL, ChatClient, ChatResult, Usage, require_llm_extra
from ._predictors import USAGE_KEYS, LLMPredictor, VLMPredictor, WholeDocumentPredictor
from ._prompt import AnswerError, parse_level_map
from ._render import KNOWN_COLOR, TARGET_COLOR, PageRenderer

__all__ = [
    "VLMPredictor",
    "LLMPredictor",
    "WholeDocumentPredictor",
    "ChatClient",
    "ChatResult",
    "Usage",
    "PageRenderer",
    "AnswerError",
    "parse_level_map",
    "require_llm_extra",
    "USAGE_KEYS",
    "KNOWN_COLOR",
    "TARGET_COLOR",
    "DEFAULT_BASE_URL",
    "PREDICTORS",
    "register",
]

#: Names this package adds to the predictor registry.
PREDICTORS: dict[str, type] = {
    "vlm": VLMPredictor,
    "llm": LLMPredictor,
    "whole-document": WholeDocumentPredictor,
}


def _factory(cls: type) -> Callable[..., Any]:
    def make(**options: Any):
        try:
            return cls(**options)
        except TypeError as exc:  # an unknown option: say which ones exist
            if "unexpected keyword" not in str(exc):
                raise
            import inspect

            names = set()
            for klass in cls.__mro__:
                init = klass.__dict__.get("__init__")
                if init is not None:
                    names |= {p for p in inspect.signature(init).parameters if p not in ("self", "options")}
            raise ConfigError(f"{cls.name} predictor: {exc}", hint="accepted options: " + ", ".join(sorted(names))) \
                from None

    make.__name__ = f"make_{cls.__name__}"
    make.__doc__ = cls.__doc__
    return make


_FACTORIES = {name: _factory(cls) for name, cls in PREDICTORS.items()}


def register() -> bool:
    """Register ``vlm``, ``llm`` and ``whole-document`` (idempotent; False if the registry is absent)."""
    try:
        from ..levels import register_predictor  # type: ignore[attr-defined]
    except ImportError:
        return False
    for name, make in _FACTORIES.items():
        register_predictor(name, make)
    return True


register()
