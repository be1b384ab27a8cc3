"""The learned offline predictor: a LightGBM model scoring insertion slots.

For each target, every candidate level k = 1..l_{i-1}+1 (each last-child slot
of the rightmost branch, HELD) is described by :mod:`.features` and scored by
a LightGBM binary model ("the heading goes here").  The highest score wins
(``probe="argmax"``), or, as in HELD, the first slot from the root down whose
probability passes 0.5 (``probe="root-to-leaf"``).  The confidence is the
winner's share of the candidates' probabilities.

The model ships in the package (``structrag/levels/models/levels.txt``,
LightGBM's text format, with ``levels.json`` beside it: feature names, seed,
training data hashes); ``structrag train-levels`` makes a new one.  Prediction
reads the text file with :mod:`structrag.levels.gbdt` (numpy), so parsing a PDF does
not import lightgbm; training does.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Literal, Sequence

from ..errors import ConfigError, ModelError
from ..files import read_json
from ..model import Heading
from .base import LevelPrediction, Memory, PredictionContext
from .features import FEATURE_NAMES, View, candidate_rows
from .style import DocStyles, HeadingInfo, describe

__all__ = ["LearnedPredictor", "default_model_path", "load_model", "load_booster", "MODEL_NAME"]

MODEL_NAME = "levels.txt"


def default_model_path() -> Path:
    """The model shipped inside the installed package."""
    return Path(str(resources.files("structrag.levels").joinpath("models", MODEL_NAME)))


def _check_file(p: Path) -> None:
    if not p.is_file():
        raise ModelError("level model file not found", path=p,
                         hint="reinstall structrag, or train one with `structrag train-levels`")


def _check_features(names: Sequence[str], p: Path) -> None:
    if tuple(names) != FEATURE_NAMES:
        raise ModelError(
            f"model was trained on {len(names)} features that do not match this structrag's "
            f"{len(FEATURE_NAMES)} level features",
            path=p,
            hint="retrain it with `structrag train-levels` for this version",
        )


def load_model(path: str | os.PathLike[str]):
    """The level model at ``path`` for prediction, checked against the feature set.

    A :class:`structrag.levels.gbdt.TreeEnsemble` (numpy; lightgbm is not imported,
    which saves ~2 s of start-up), or a LightGBM Booster for a model the numpy
    evaluator does not implement (linear trees).
    """
    from .gbdt import TreeEnsemble, UnsupportedModel

    p = Path(path)
    _check_file(p)
    try:
        model = TreeEnsemble.from_file(p)
    except UnsupportedModel:
        return load_booster(p)
    _check_features(model.feature_names, p)
    return model


def load_booster(path: str | os.PathLike[str]):
    """A LightGBM Booster from a text model file, checked against the feature set (imports lightgbm)."""
    import lightgbm as lgb

    p = Path(path)
    _check_file(p)
    try:
        booster = lgb.Booster(model_file=str(p))
    except Exception as exc:  # LightGBM raises LightGBMError / ValueError on bad files
        raise ModelError(f"not a LightGBM text model: {exc}", path=p) from None
    _check_features(booster.feature_name(), p)
    return booster


class LearnedPredictor:
    """LightGBM insertion-slot scorer (the default offline predictor)."""

    name = "learned"
    source = "model"
    max_retries = 0

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        probe: Literal["argmax", "root-to-leaf"] = "argmax",
        booster=None,
    ) -> None:
        if probe not in ("argmax", "root-to-leaf"):
            raise ConfigError(f"unknown probe {probe!r}", hint='use "argmax" or "root-to-leaf"')
        self.model_path = Path(model_path) if model_path is not None else default_model_path()
        self.probe = probe
        # a Booster passed in (training, benchmarks) or the model file read by numpy (load_model)
        self._booster = booster if booster is not None else load_model(self.model_path)
        self._infos: list[HeadingInfo] = []
        self._styles: DocStyles | None = None

    def begin(self, context: PredictionContext) -> None:
        self._infos = describe(context.document, context.headings)
        self._styles = DocStyles(self._infos, context.document)

    def _scores(self, rows: list[list[float]]):
        import numpy as np

        from .gbdt import TreeEnsemble

        X = np.asarray(rows, dtype=np.float64)
        if isinstance(self._booster, TreeEnsemble):
            return self._booster.predict(X)
        # one thread: a handful of rows per call, where OpenMP start-up costs more than it saves
        return self._booster.predict(X, num_threads=1)

    def predict(self, memory: Memory, targets: Sequence[Heading], *, attempt: int = 0,
                feedback: str | None = None) -> LevelPrediction:
        if self._styles is None:
            raise ConfigError("LearnedPredictor.predict called before begin()")
        view = View(memory)
        base = memory.previous.index + 1 if memory.previous is not None else 0
        levels, confs = [], []
        for j in range(len(targets)):
            i = base + j
            t = self._infos[i]
            if view.prev == 0:
                lv, c = 1, 1.0
            else:
                rows = candidate_rows(t, view, self._infos, self._styles)
                p = self._scores(rows)
                lv, c = self._choose(p)
            levels.append(lv)
            confs.append(c)
            view.push(i, lv)
        return LevelPrediction(tuple(levels), tuple(confs))

    def _choose(self, p) -> tuple[int, float]:
        total = float(p.sum())
        if self.probe == "root-to-leaf":
            for k, v in enumerate(p, 1):
                if v > 0.5:
                    return k, float(v / total) if total > 0 else 0.0
        k = int(p.argmax()) + 1
        return k, float(p[k - 1] / total) if total > 0 else 0.0

    def __repr__(self) -> str:
        return f"LearnedPredictor(model_path={str(self.model_path)!r}, probe={self.probe!r})"


def model_metadata(path: str | os.PathLike[str] | None = None) -> dict:
    """The JSON metadata written next to a model (empty if none)."""
    p = Path(path) if path is not None else default_model_path()
    meta = p.with_suffix(".json")
    if not meta.is_file():
        return {}
    data = read_json(meta, what="level model metadata", error=ModelError)
    if not isinstance(data, dict):
        raise ModelError("level model metadata must be a JSON object", path=meta)
    return data
