"""`structrag levels --backend vlm` (the level-only protocol) against a real loopback server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("openai")
pytest.importorskip("PIL")
pytest.importorskip("structrag.cli.levels")  # the `levels` command registers there

sys.path.insert(0, str(Path(__file__).resolve().parent))

from openai_server import OpenAIServer  # noqa: E402
from test_backends_cli import OUTLINE, _policy, pdf  # noqa: E402,F401  (pdf is a fixture)

from structrag.cli import main  # noqa: E402


def test_levels_command_with_the_vlm_backend(pdf, tmp_path, capsys):
    from structrag import extract, locate_outline

    doc = extract(pdf)
    ref = [{"text": x.heading.text, "page": x.heading.page + 1, "bbox": list(x.heading.bbox)}
           for x in locate_outline(doc)]
    ref_path = tmp_path / "reference.json"
    ref_path.write_text(json.dumps(ref))
    with OpenAIServer(_policy) as srv:
        rc = main(["levels", str(ref_path), "--pdf", str(pdf), "--backend", "vlm", "--base-url", srv.base_url,
                   "--backend-model", "served", "--zoom", "0.4", "--fallback", "rules", "--stats"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    got = json.loads(out.out)
    assert [(h["level"], h["text"]) for h in got] == OUTLINE
    assert {h["source"] for h in got} == {"vlm"}
    stats = json.loads(out.err[out.err.index("{"):])
    assert stats["usage"]["calls"] == len(srv.requests) == len(OUTLINE)
    assert {r.model for r in srv.requests} == {"served"}
