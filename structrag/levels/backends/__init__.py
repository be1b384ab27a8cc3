"""Model-backed level predictors over any OpenAI-compatible server.

``vlm``: the paper's multimodal level-wise-memory predictor (page images with
the heading boxes drawn); ``llm``: the same memory and prompt as text, bboxes
written out; ``whole-document``: the one-prompt baseline (every heading in one
request, as MinerU does).  :func:`structrag.levels.make_predictor` imports this
package only when such a name is asked for
(``assign_levels(..., predictor="vlm", model=..., base_url=...)``), and
``openai`` / ``pillow`` (the ``llm`` extra) only when a predictor is built.
"""

from __future__ import annotations

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
]
