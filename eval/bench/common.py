"""What the benchmarks share: the data folder, the run's provenance, bootstrap intervals, held-out models.

Kept small on purpose: anything a user of the library would call belongs in the library
(:mod:`eval.retrieval_metrics`, :mod:`retrievers.rank.ranker`, ...), not here.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from eval.provenance import git_state
from eval.shared_data import shared_data_dir

__all__ = [
    "REPO",
    "CACHE",
    "OUT",
    "out_path",
    "data_dir",
    "commit",
    "run_info",
    "bootstrap_ci",
    "paired_resamples",
    "bootstrap_ratio",
    "bootstrap_diff",
    "paired_diff",
    "HeldOutModels",
    "training_key",
]

#: the repository root (benchmarks run from it: ``python -m eval.bench.<name>``)
REPO = Path(__file__).resolve().parents[2]
#: where benchmarks keep indexes, extractions and models between runs
CACHE = REPO / ".cache"
#: where a benchmark writes its results when ``--out`` is not given, relative to the working directory;
#: not ``eval/...``: a folder named ``eval`` in the working directory would hide the ``eval`` package
OUT = Path("structrag-out")


def out_path(bench: str, name: str) -> str:
    """The default ``--out`` of benchmark ``bench``: ``structrag-out/<bench>/<name>``."""
    return str(OUT / bench / name)


# --------------------------------------------------------------------------- data and provenance


def save_results(res: dict, json_path: str | None, report_path: str | None,
                 write_report: Callable[[dict, Path], None]) -> None:
    """Write a benchmark's results as JSON and its report as Markdown, where asked to."""
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps(res, indent=2, default=float) + "\n", encoding="utf-8")
    if report_path:
        write_report(res, Path(report_path))


def data_dir(*parts: str, explicit: str | os.PathLike | None = None) -> Path:
    """``parts`` below the shared data folder (:func:`eval.shared_data.shared_data_dir`: flag, env, beside the repo)."""
    return shared_data_dir(explicit, repo=REPO).joinpath(*parts)


def commit(*, mark_dirty: bool = False) -> str:
    """The short commit of the checkout (``+dirty`` appended when asked and tracked files changed)."""
    st = git_state(REPO)
    if not st["commit"]:
        return "unknown"
    return st["commit"][:7] + ("+dirty" if mark_dirty and st["dirty"] else "")


def run_info(module: str, argv: Sequence[str] | None) -> dict[str, str]:
    """The header every report starts with: command, commit, date, machine."""
    args = list(argv) if argv is not None else sys.argv[1:]
    return {
        "command": " ".join([f"python -m {module}", *args]),
        "commit": commit(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared), Python {platform.python_version()}",
    }


# --------------------------------------------------------------------------- bootstrap
# Queries are resampled with replacement, 2,000 times, seed 0; every interval is the 2.5 / 97.5
# percentile pair rounded to 3 places (every published interval was computed this way).


def fmt(x: Any, nd: int = 3) -> str:
    """A figure for a report table: ``nd`` decimals, "—" for a missing one (None or NaN)."""
    return "—" if x is None or (isinstance(x, float) and x != x) else f"{x:.{nd}f}"


def _ci95(x: np.ndarray) -> list[float]:
    return [round(float(v), 3) for v in np.percentile(x, [2.5, 97.5])]


def _draw(size: int, n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, size, size=(n, size))


def bootstrap_ci(values: Iterable[float], n: int = 2000, seed: int = 0) -> list[float]:
    """95% interval of the mean of ``values`` (NaNs when there are none)."""
    v = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, float)
    if v.size == 0:
        return [float("nan"), float("nan")]
    return _ci95(v[_draw(v.size, n, seed)].mean(axis=1))


def paired_resamples(a: Iterable[float], b: Iterable[float], n: int = 2000, seed: int = 0):
    """``(a, b, means of a, means of b)`` over ``n`` resamples, the same draw of queries for both."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    idx = _draw(a.size, n, seed)
    return a, b, a[idx].mean(axis=1), b[idx].mean(axis=1)


def bootstrap_ratio(a, b, *, n: int = 2000, seed: int = 0) -> dict[str, Any]:
    """95% interval of mean(a) / mean(b) with queries resampled (paired), and P(ratio < 1.8)."""
    a, b, ma, mb = paired_resamples(a, b, n, seed)
    r = ma / np.maximum(mb, 1e-12)
    return {"ratio": round(float(a.mean() / b.mean()), 4), "ci95": _ci95(r),
            "p_below_1.8": round(float((r < 1.8).mean()), 3), "resamples": n}


def bootstrap_diff(a, b, *, n: int = 2000, seed: int = 0) -> dict[str, Any]:
    """95% interval of mean(a) - mean(b) with queries resampled (paired), and P(difference <= 0)."""
    a, b, ma, mb = paired_resamples(a, b, n, seed)
    d = ma - mb
    return {"diff": round(float(a.mean() - b.mean()), 4), "ci95": _ci95(d),
            "p_not_above": round(float((d <= 0).mean()), 4), "resamples": n}


def paired_diff(pa: dict, pb: dict, qids: Sequence[str], metric: str = "map", n: int = 2000,
                seed: int = 0) -> dict[str, Any]:
    """:func:`bootstrap_diff` of one metric over per-query score dicts (queries scored by both); ``{}`` if none."""
    qids = [q for q in qids if q in pa and q in pb]
    if not qids:
        return {}
    d = bootstrap_diff([pa[q][metric] for q in qids], [pb[q][metric] for q in qids], n=n, seed=seed)
    return {"diff": d["diff"], "ci95": d["ci95"]}


# --------------------------------------------------------------------------- held-out level models

#: the level-model sources whose change makes a cached model stale: every module of the level stage,
#: sub-packages included, not only the features: DAgger training walks the document with the walk (and the
#: document's own logic, structrag/levels/walk/logic.py), so a model trained under older walk code must not
#: be reused (a stale cache once gave figures from models older than the walk they were scored with)
_LEVELS = Path(__file__).resolve().parents[2] / "structrag" / "levels"
_LEVEL_SOURCES = tuple(sorted(p.relative_to(_LEVELS).as_posix() for p in _LEVELS.rglob("*.py")))


def training_key(docs: Iterable[Any], params: str) -> str:
    """Cache key of a level model: its training documents (as a set), the level code, the features, ``params``."""
    import structrag.levels
    from structrag.levels.features import FEATURE_NAMES

    h = hashlib.sha1()
    for r in sorted(docs, key=lambda r: r.doc_id):
        h.update(f"{r.doc_id}:{r.pdf_sha1}:{r.toc_sha1}:{len(r.headings)}:{r.located}".encode())
    src = Path(structrag.levels.__file__).parent
    for f in _LEVEL_SOURCES:
        h.update(f.encode() + (src / f).read_bytes())
    h.update(",".join(FEATURE_NAMES).encode())
    h.update(params.encode())
    return h.hexdigest()[:16]


class HeldOutModels:
    """One learned level model per held-out group (a document, a family), trained on the others, cached on disk.

    ``group_of`` maps a reference document to its group; ``include`` picks the training documents among
    the other groups' (e.g. only ``headings/``'s).  Models are saved as
    ``cache/<folder>/<label>_<key>.txt``, the key from :func:`training_key`; ``label`` is the held-out
    group unless ``name`` is given (one variant of training sources).
    """

    def __init__(self, refs: Sequence[Any], cache: Path | None, *, folder: str,
                 group_of: Callable[[Any], str] = lambda r: r.doc_id, include: Callable[[Any], bool] = lambda r: True,
                 name: str | None = None, seed: int = 0, rounds: int | None = None, dagger_rounds: int | None = None,
                 train: Callable[..., Any] | None = None, load: Callable[[Path], Any] | None = None) -> None:
        from structrag.levels.training import DEFAULT_DAGGER_ROUNDS, DEFAULT_ROUNDS

        self.refs = list(refs)
        self.cache = cache
        self.folder = folder
        self.group_of = group_of
        self.include = include
        self.name = name
        self.seed = seed
        self.rounds = DEFAULT_ROUNDS if rounds is None else rounds
        self.dagger_rounds = DEFAULT_DAGGER_ROUNDS if dagger_rounds is None else dagger_rounds
        self._train = train
        self._load = load
        self._rows: dict = {}  # feature rows shared by every model's training (the expensive part)
        self._boosters: dict[str, Any] = {}
        self.train_seconds = 0.0

    def training_docs(self, held: str) -> list[Any]:
        return [r for r in self.refs if self.group_of(r) != held and self.include(r)]

    def key(self, held: str) -> str:
        return training_key(self.training_docs(held), f"{self.seed}:{self.rounds}:{self.dagger_rounds}")

    def path(self, held: str) -> Path | None:
        if self.cache is None:
            return None
        return Path(self.cache) / self.folder / f"{self.name or held}_{self.key(held)}.txt"

    def booster(self, held: str) -> Any:
        if held in self._boosters:
            return self._boosters[held]
        path = self.path(held)
        if path is not None and path.is_file():
            if self._load is None:
                from structrag.levels.learned import load_booster as load
            else:
                load = self._load
            b = load(path)
        else:
            if self._train is None:
                from structrag.levels.training import train_model as train
            else:
                train = self._train
            t0 = time.perf_counter()
            b, _ = train(self.training_docs(held), seed=self.seed, rounds=self.rounds,
                         dagger_rounds=self.dagger_rounds, rows_cache=self._rows)
            self.train_seconds += time.perf_counter() - t0
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                b.save_model(str(path))
        self._boosters[held] = b
        return b
