"""structrag's public surface: ``__all__`` resolves, matches the guide's list, and importing costs nothing."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import structrag
from structrag.errors import StructragError

ROOT = Path(__file__).resolve().parents[1]


def test_every_exported_name_resolves():
    for name in structrag.__all__:
        assert getattr(structrag, name) is not None, name
    assert set(structrag.__all__) <= set(dir(structrag))


def test_the_guide_lists_the_exported_names():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    para = text[text.index("- `structrag.__all__`:"):]
    para = para[len("- `structrag.__all__`:"): para.index("- `structrag.levels`")]  # then the stage packages' APIs
    listed = set(re.findall(r"`([A-Za-z_][A-Za-z_0-9]*)`", para))
    errors = {n for n in structrag.__all__ if isinstance(getattr(structrag, n), type)
              and issubclass(getattr(structrag, n), (StructragError, Warning))}
    expected = set(structrag.__all__) - errors - {"__version__"}
    assert expected <= listed, expected - listed
    assert {"StructragError", "StructragWarning"} <= listed
    assert listed - expected - {"StructragError", "StructragWarning"} == set()


def test_import_structrag_is_lean_and_changes_nothing_global():
    code = ("import sys; hooks = list(sys.meta_path); import structrag; "
            "assert sys.meta_path == hooks; "
            "heavy = [m for m in ('pymupdf', 'numpy', 'structrag.chunking', 'structrag.levels', 'structrag.pipeline') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
