"""Shared fixtures.

``shared_data`` points at the research data set beside the checkout
(``../shared/data``, or ``$STRUCTRAG_SHARED_DATA``); tests that use it skip
cleanly when it is absent, so the suite passes on a bare machine.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared_data_dir() -> Path | None:
    env = os.environ.get("STRUCTRAG_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared" / "data", REPO.parent.parent / "shared" / "data"]
    for c in candidates:
        if (c / "headings" / "manifest.jsonl").exists():
            return c
    return None


SHARED_DATA = _shared_data_dir()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if SHARED_DATA is None:
        pytest.skip("../shared/data is not present (set STRUCTRAG_SHARED_DATA to run the integration tests)")
    return SHARED_DATA


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared_data)
