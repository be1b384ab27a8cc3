"""Leave-one-company-out cross-validation and training-set concatenation, on synthetic groups."""

from __future__ import annotations

import numpy as np
import pytest

from retrievers.rank.training import Query, TrainingSet, concat_training_sets, cross_validate
from structrag.errors import ConfigError

FEATURES = ("x", "noise")
PER = 20  # candidates per query


def _set(groups: dict[str, int], *, direction: dict[str, int], seed: int, tag: str = "") -> TrainingSet:
    """``groups``: queries per group; in a group with direction +1 the relevant candidates
    have the largest ``x``, with -1 the smallest."""
    rng = np.random.default_rng(seed)
    X, y, size, queries, rows = [], [], [], [], []
    for g, n in groups.items():
        for k in range(n):
            x = rng.normal(size=PER)
            lab = np.zeros(PER, np.int32)
            lab[np.argsort(-direction[g] * x)[:2]] = 1
            X.append(np.c_[x, rng.normal(size=PER)])
            y.append(lab)
            size.append(PER)
            rows.append(np.arange(PER) + 1000 * len(queries))
            queries.append(Query(f"{tag}{g}{k}", "q", f"{g}.pdf", (0,), g, "", ()))
    return TrainingSet(np.concatenate(X).astype(np.float32), np.concatenate(y), np.asarray(size), queries,
                       np.concatenate(rows), np.tile(np.arange(PER), len(queries)), FEATURES)


def _top_is_large_x(ts: TrainingSet, ranked: list[np.ndarray], group: str) -> float:
    """Share of the group's queries whose first-ranked candidate has an x above the median."""
    out = []
    for q, s, order in zip(ts.queries, ts.query_slices(), ranked):
        if q.group == group:
            x = dict(zip(ts.rows[s].tolist(), ts.X[s, 0].tolist()))
            out.append(x[int(order[0])] > np.median(ts.X[s, 0]))
    return float(np.mean(out))


def test_cross_validate_ranks_every_candidate_once():
    ts = _set({"A": 6, "B": 6, "C": 6}, direction={"A": 1, "B": 1, "C": 1}, seed=0)
    ranked = cross_validate(ts, n_estimators=30, learning_rate=0.1, min_child_samples=2)
    assert len(ranked) == len(ts.queries)
    for s, order in zip(ts.query_slices(), ranked):
        assert sorted(order.tolist()) == sorted(ts.rows[s].tolist())
    # learned from the other groups: the largest x comes first
    assert _top_is_large_x(ts, ranked, "A") == 1.0


def test_extra_training_groups_are_used_but_never_the_held_out_company():
    # A is scored; B says "large x is relevant"; the extra set has many more A queries saying the opposite.
    ts = _set({"A": 6, "B": 10}, direction={"A": 1, "B": 1}, seed=1)
    extra = _set({"A": 40}, direction={"A": -1}, seed=2, tag="coll-")
    ranked = cross_validate(ts, also=[extra], n_estimators=30, learning_rate=0.1, min_child_samples=2)
    assert _top_is_large_x(ts, ranked, "A") == 1.0  # the extra A queries were left out of A's model
    # an extra group of another company is used: it outweighs B and flips A's ranking
    other = _set({"C": 40}, direction={"C": -1}, seed=3, tag="coll-")
    flipped = cross_validate(ts, also=[other], n_estimators=30, learning_rate=0.1, min_child_samples=2)
    assert _top_is_large_x(ts, flipped, "A") < 0.5


def test_cross_validate_needs_two_groups_and_matching_features():
    one = _set({"A": 4}, direction={"A": 1}, seed=4)
    with pytest.raises(ConfigError, match="two groups"):
        cross_validate(one)
    ts = _set({"A": 3, "B": 3}, direction={"A": 1, "B": 1}, seed=5)
    narrow = ts.subset(range(len(ts.queries)), ["x"])
    with pytest.raises(ConfigError, match="lacks features"):
        cross_validate(ts, also=[narrow])


def test_concat_training_sets():
    a = _set({"A": 2}, direction={"A": 1}, seed=6)
    b = _set({"B": 3}, direction={"B": 1}, seed=7)
    both = concat_training_sets([a, b])
    assert both.X.shape[0] == a.X.shape[0] + b.X.shape[0] and both.group.tolist() == [PER] * 5
    assert [q.group for q in both.queries] == ["A"] * 2 + ["B"] * 3
    np.testing.assert_array_equal(both.subset([2, 3, 4]).X, b.X)
    assert concat_training_sets([a]) is a
    with pytest.raises(ConfigError, match="nothing"):
        concat_training_sets([])
    with pytest.raises(ConfigError, match="different features"):
        concat_training_sets([a, b.subset(range(3), ["x"])])
