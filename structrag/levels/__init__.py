"""Levels, the third stage: every heading level is set here.

>>> from structrag.levels import assign_levels
>>> result = assign_levels(document, headings)                 # learned predictor, recent memory
>>> result = assign_levels(document, headings, predictor="font-size", memory="branches", granularity=2)

Modules: :mod:`.given` (levels the document gives: its outline, its printed contents' layout),
:mod:`.walk` (the level-wise memory walk over the headings left, with the levels the document's own
logic gives: note runs under their introducer, end matter at the top), :mod:`.memory` (which
processed headings a predictor sees), :mod:`.predictors` (predictors by name), the offline
predictors (:mod:`.learned` with :mod:`.features`, :mod:`.style` and the numpy evaluator
:mod:`.gbdt`; :mod:`.rules`; :mod:`.baselines`), the model-server predictors
(:mod:`.backends`) and :mod:`.training` (the learned model's training).
"""

from __future__ import annotations

from . import base
from .base import (
    KnownHeading,
    LevelPrediction,
    LevelPredictor,
    Memory,
    PredictionContext,
    check_levels,
    project_levels,
)
from .walk import LevelResult, assign_levels, plan_steps
from .memory import (
    MEMORY_STRATEGIES,
    BranchesMemory,
    MemoryStrategy,
    PreviousNMemory,
    RandomMemory,
    RecentMemory,
    make_memory,
)
from .predictors import PREDICTORS, available_predictors, make_predictor

__all__ = [
    "assign_levels",
    "LevelResult",
    "make_predictor",
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
]
__all__ += base.__all__  # the stage's contracts
