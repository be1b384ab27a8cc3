"""The shared benchmark helpers of eval/bench/common.py: bootstrap intervals, the data folder, model caches."""

import numpy as np
import pytest

from eval.bench.common import bootstrap_diff, bootstrap_ratio


def test_ratio_of_identical_runs_is_exactly_one():
    a = np.linspace(0.0, 1.0, 50)
    r = bootstrap_ratio(a, a)
    assert r["ratio"] == 1.0 and r["ci95"] == [1.0, 1.0] and r["p_below_1.8"] == 1.0


def test_ratio_interval_contains_the_point_ratio_and_is_paired():
    rng = np.random.default_rng(3)
    b = rng.uniform(0.1, 0.5, 100)
    a = 2.0 * b  # per query exactly twice as good: a paired bootstrap sees no spread at all
    r = bootstrap_ratio(a, b)
    assert r["ratio"] == pytest.approx(2.0) and r["ci95"] == pytest.approx([2.0, 2.0])
    assert r["p_below_1.8"] == 0.0
    noisy = b * rng.uniform(1.0, 3.0, 100)
    r = bootstrap_ratio(noisy, b)
    assert r["ci95"][0] < r["ratio"] < r["ci95"][1]


def test_diff_signs_and_probability():
    rng = np.random.default_rng(5)
    b = rng.uniform(0.0, 0.6, 80)
    up = bootstrap_diff(b + 0.2, b)
    assert up["diff"] == pytest.approx(0.2) and up["p_not_above"] == 0.0
    down = bootstrap_diff(b, b + 0.2)
    assert down["ci95"][1] < 0 and down["p_not_above"] == 1.0
    mixed = bootstrap_diff(rng.permutation(b), b)  # same scores, shuffled across queries: no real difference
    assert mixed["ci95"][0] < 0 < mixed["ci95"][1]
