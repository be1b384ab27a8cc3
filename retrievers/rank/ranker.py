"""The learned ranker (LightGBM LambdaRank) and the rankers shipped in the package.

:class:`LambdaRanker` follows scikit-learn: parameters in ``__init__``,
learning in :meth:`~LambdaRanker.fit`, fitted state ending in ``_``.  Groups
are queries: ``fit(X, y, group=sizes)`` takes the number of consecutive rows
of each query, as LightGBM does.  A model is saved as LightGBM's own text
format plus a metadata JSON beside it (``model.txt`` + ``model.json``:
feature names, training parameters, seed, data hashes); nothing is pickled.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from structrag.errors import ConfigError, ModelError
from structrag.files import check_output_file, read_json

__all__ = ["LambdaRanker", "default_model_path", "MODEL_FORMAT"]

MODEL_FORMAT = "structrag-ranker/1"


def _meta_path(path: Path) -> Path:
    return path.with_suffix(".json")


class LambdaRanker:
    """LightGBM LambdaRank over named features.

    Parameters
    ----------
    features:
        Column names of ``X`` (stored with the model; :meth:`predict` checks them
        when given a mapping).
    n_estimators, learning_rate, num_leaves, min_child_samples, subsample,
    colsample_bytree, reg_lambda:
        LightGBM parameters (``num_iterations``, ``learning_rate``, ...).  The
        defaults take small steps (500 trees at 0.01, the same total step as 100
        at 0.05): with a few hundred training queries, bagged rows and features
        make a 100-tree model depend on its seed (leave-one-company-out mAP
        0.48-0.51 over seeds), and small steps average that out as an ensemble of
        seeds would, in one model.
    label_gain:
        Gain per relevance grade (LambdaRank's NDCG gains); default ``2**g - 1``.
    eval_at:
        Truncation of the NDCG that LambdaRank optimises.
    seed:
        Random seed; with ``deterministic`` LightGBM gives the same trees each run.
    monotone:
        Feature name -> +1 (the score may only rise with it), -1 (only fall) or 0,
        LightGBM's monotone constraints; e.g. :data:`retrievers.rank.features.EVIDENCE_DIRECTION`
        (more matching evidence never lowers a candidate).  Names not given are free.
    """

    def __init__(
        self,
        features: Sequence[str],
        *,
        n_estimators: int = 500,
        learning_rate: float = 0.01,
        num_leaves: int = 15,
        min_child_samples: int = 10,
        subsample: float = 0.8,
        colsample_bytree: float = 0.8,
        reg_lambda: float = 1.0,
        label_gain: Sequence[float] | None = None,
        eval_at: int = 10,
        seed: int = 0,
        monotone: Mapping[str, int] | None = None,
    ) -> None:
        self.features = tuple(features)
        if not self.features:
            raise ConfigError("a ranker needs at least one feature")
        self.n_estimators = int(n_estimators)
        self.learning_rate = float(learning_rate)
        self.num_leaves = int(num_leaves)
        self.min_child_samples = int(min_child_samples)
        self.subsample = float(subsample)
        self.colsample_bytree = float(colsample_bytree)
        self.reg_lambda = float(reg_lambda)
        self.label_gain = tuple(label_gain) if label_gain is not None else None
        self.eval_at = int(eval_at)
        self.seed = int(seed)
        self.monotone = None
        if monotone:
            unknown = sorted(set(monotone) - set(self.features))
            if unknown:
                raise ConfigError(f"monotone: features not in the model {unknown}; the model has {list(self.features)}")
            bad = sorted(k for k, v in monotone.items() if v not in (-1, 0, 1))
            if bad:
                raise ConfigError(f"monotone: directions must be -1, 0 or 1, got {bad}")
            self.monotone = {f: int(monotone[f]) for f in self.features if monotone.get(f)}

    def get_params(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "n_estimators": self.n_estimators,
            "learning_rate": self.learning_rate,
            "num_leaves": self.num_leaves,
            "min_child_samples": self.min_child_samples,
            "subsample": self.subsample,
            "colsample_bytree": self.colsample_bytree,
            "reg_lambda": self.reg_lambda,
            "label_gain": list(self.label_gain) if self.label_gain is not None else None,
            "eval_at": self.eval_at,
            "seed": self.seed,
            "monotone": dict(self.monotone) if self.monotone else None,
        }

    def _lgb_params(self, max_label: int) -> dict[str, Any]:
        gain = list(self.label_gain) if self.label_gain is not None else [float(2**g - 1) for g in range(max(max_label, 1) + 1)]
        extra = {}
        if self.monotone:
            extra["monotone_constraints"] = [self.monotone.get(f, 0) for f in self.features]
        return {
            **extra,
            "objective": "lambdarank",
            "metric": "ndcg",
            "eval_at": [self.eval_at],
            "lambdarank_truncation_level": max(self.eval_at, 20),
            "learning_rate": self.learning_rate,
            "num_leaves": self.num_leaves,
            "min_data_in_leaf": self.min_child_samples,
            "bagging_fraction": self.subsample,
            "bagging_freq": 1 if self.subsample < 1 else 0,
            "feature_fraction": self.colsample_bytree,
            "lambda_l2": self.reg_lambda,
            "label_gain": gain,
            "seed": self.seed,
            "deterministic": True,
            "force_row_wise": True,
            "num_threads": 1,  # shared machines; models are small
            "verbosity": -1,
        }

    def fit(self, X: np.ndarray, y: np.ndarray, group: Sequence[int], *, group_weight: Sequence[float] | None = None,
            metadata: Mapping[str, Any] | None = None) -> "LambdaRanker":
        """Learn from rows ``X`` with graded labels ``y`` (ints >= 0), ``group`` rows per query.

        ``group_weight``: one weight per query (>= 0), e.g. :func:`retrievers.rank.training.family_weights`
        so that a family with many questions does not outweigh the others; LightGBM
        scales each query's LambdaRank gradients by it.
        """
        import lightgbm as lgb

        X = np.asarray(X, dtype=np.float32)
        y = np.asarray(y)
        group = np.asarray(group, dtype=np.int64)
        if X.ndim != 2 or X.shape[1] != len(self.features):
            raise ConfigError(f"X must have {len(self.features)} columns ({', '.join(self.features)}), got shape {X.shape}")
        if y.shape[0] != X.shape[0]:
            raise ConfigError(f"{X.shape[0]} rows but {y.shape[0]} labels")
        if group.sum() != X.shape[0] or (group <= 0).any():
            raise ConfigError(f"group sizes must be positive and sum to {X.shape[0]}, got sum {int(group.sum())}")
        if (y < 0).any() or not np.array_equal(y, np.round(y)):
            raise ConfigError("labels must be non-negative integers (relevance grades)")
        y = y.astype(np.int32)
        weight = None
        if group_weight is not None:
            gw = np.asarray(group_weight, dtype=np.float64)
            if gw.shape != group.shape or (gw < 0).any() or not np.isfinite(gw).all():
                raise ConfigError(f"group_weight needs one finite weight >= 0 per query ({group.shape[0]}), "
                                  f"got shape {gw.shape}")
            weight = np.repeat(gw, group)  # LightGBM takes row weights; constant within a query
        params = self._lgb_params(int(y.max(initial=0)))
        ds = lgb.Dataset(X, label=y, group=group, weight=weight, feature_name=list(self.features), free_raw_data=True)
        self.booster_ = lgb.train(params, ds, num_boost_round=self.n_estimators)
        self.metadata_ = dict(metadata or {})
        self.metadata_.update({"n_rows": int(X.shape[0]), "n_queries": int(group.shape[0]), "n_positive": int((y > 0).sum())})
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "booster_"):
            raise ConfigError("the ranker is not fitted: call fit() or LambdaRanker.load()")

    def predict(self, X: np.ndarray) -> np.ndarray:
        """One score per row (higher ranks first); only the order within a query matters."""
        self._check_fitted()
        X = np.asarray(X, dtype=np.float32)
        if X.ndim != 2 or X.shape[1] != len(self.features):
            raise ConfigError(f"X must have {len(self.features)} columns ({', '.join(self.features)}), got shape {X.shape}")
        if X.shape[0] == 0:
            return np.zeros(0, dtype=np.float64)
        return self.booster_.predict(X, num_threads=1)

    def feature_importance(self, kind: str = "gain") -> dict[str, float]:
        self._check_fitted()
        return dict(zip(self.features, (float(v) for v in self.booster_.feature_importance(importance_type=kind))))

    # --- persistence -------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write ``path`` (LightGBM text) and ``path`` with ``.json`` (metadata); returns ``path``."""
        self._check_fitted()
        import lightgbm as lgb

        p = check_output_file(path, what="ranker model file", example="ranker.txt")
        if p.suffix == ".json":
            raise ConfigError(f"a model path ends in .txt, not .json: {p}")
        check_output_file(_meta_path(p), what="ranker metadata file")
        p.parent.mkdir(parents=True, exist_ok=True)
        text = self.booster_.model_to_string()
        meta = {
            "format": MODEL_FORMAT,
            "features": list(self.features),
            "params": self.get_params(),
            "lightgbm": lgb.__version__,
            "metadata": self.metadata_,
        }
        _atomic_write(p, text)
        _atomic_write(_meta_path(p), json.dumps(meta, indent=2, sort_keys=True) + "\n")
        return p

    @classmethod
    def load(cls, path: str | os.PathLike) -> "LambdaRanker":
        import lightgbm as lgb

        p = Path(path)
        mp = _meta_path(p)
        if not mp.exists():
            raise ModelError(f"ranker metadata {mp.name} is missing next to the model", path=p)
        meta = read_json(mp, what="ranker metadata", error=ModelError)
        if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
            fmt = meta.get("format") if isinstance(meta, dict) else None
            raise ModelError(f"not a structrag ranker (format {fmt!r}, expected {MODEL_FORMAT!r})", path=mp)
        try:
            booster = lgb.Booster(model_str=p.read_text(encoding="utf-8"))
        except (OSError, lgb.basic.LightGBMError) as e:
            raise ModelError(f"cannot read LightGBM model: {e}", path=p) from e
        try:
            params = dict(meta["params"])
            features = params.pop("features")
        except (KeyError, TypeError, ValueError):
            raise ModelError("ranker metadata lacks its \"params\" and their \"features\"", path=mp) from None
        if list(booster.feature_name()) != list(features):
            raise ModelError(f"model features {booster.feature_name()} do not match its metadata {features}", path=p)
        obj = cls(features, **params)
        obj.booster_ = booster
        obj.metadata_ = dict(meta.get("metadata", {}))
        return obj


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def default_model_path(dense: bool) -> Path:
    """The ranker shipped in the package (trained on the shared report queries)."""
    name = "default-dense.txt" if dense else "default-lexical.txt"
    return Path(str(resources.files("retrievers.rank") / "models" / name))
