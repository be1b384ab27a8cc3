"""The level-wise memory walk: every heading without a level gets one here, in reading order.

:mod:`.driver` (:func:`assign_levels`: the steps, the predictor and its fallback, the checkpoint),
:mod:`.policies` (the walk's state and its rules as named, ordered tables), :mod:`.reasons` (why a
level is placed rather than predicted: reason codes, their words, their policies), :mod:`.logic`
(placements the document's own logic gives), :mod:`.listed` (levels of the printed contents' entries
and of the headings between them), :mod:`.looks` (a second look nested under the first, after the
walk) and :mod:`.checkpoint` (resumable runs).
"""

from __future__ import annotations

from .driver import CHECKPOINT_FORMAT, LevelResult, assign_levels, plan_steps
from .reasons import REASON_TEXT, LevelReason

__all__ = ["assign_levels", "LevelResult", "plan_steps", "CHECKPOINT_FORMAT", "LevelReason", "REASON_TEXT"]
