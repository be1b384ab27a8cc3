"""Dense retrieval with the offline MiniLM model and faiss; a dense index end to end."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("faiss")

from retrievers.embed.encoder import DenseEncoder, resolve_model  # noqa: E402
from retrievers.embed.cache import EmbeddingCache
from retrievers.store.vectors import VectorIndex, exact_top_k  # noqa: E402
from retrievers.index import Index  # noqa: E402
from structrag.errors import ConfigError, ModelError  # noqa: E402
from indexutil import make_reports  # noqa: E402

TEXTS = [
    "Capital expenditures were 1,577 million dollars, mostly new factories.",
    "The board declared a quarterly dividend per share.",
    "Cyber attacks could disrupt our warehouse systems.",
    "Net sales grew by three and a half percent.",
]


@pytest.fixture(scope="module")
def encoder():
    return DenseEncoder()


def test_default_model_is_the_packaged_minilm(encoder):
    assert resolve_model(None).endswith("model") and encoder.name == "all-MiniLM-L6-v2"
    assert encoder.max_seq_length == 128 and encoder.dim == 384


def test_embeddings_are_normalised_and_meaningful(encoder):
    v = encoder.encode(TEXTS)
    assert v.shape == (4, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    q = encoder.encode_query("How much did the company spend on capex?")
    assert int(np.argmax(v @ q)) == 0
    q = encoder.encode_query("security breach risk")
    assert int(np.argmax(v @ q)) == 2
    assert encoder.encode([]).shape == (0, 384)


def test_embedding_cache_returns_identical_vectors(encoder, tmp_path):
    cached = DenseEncoder(cache=tmp_path / "emb.sqlite")
    a = cached.encode(TEXTS[:2])
    b = cached.encode(TEXTS[:3])  # two from the cache, one computed
    np.testing.assert_array_equal(a, b[:2])
    np.testing.assert_allclose(b, encoder.encode(TEXTS[:3]), atol=1e-6)
    c = EmbeddingCache(tmp_path / "emb.sqlite", "other-model|128")
    assert c.get(TEXTS[:1]) == [None]  # keyed by model


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf"])
def test_vector_index_kinds_agree_with_exact_search(kind, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, 32)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    vi = VectorIndex(kind, nlist=16, nprobe=16).fit(x)
    q = x[17] + 0.05 * rng.normal(size=32).astype(np.float32)
    exact = exact_top_k(x, q, 10)
    got = vi.search(q, 10)
    assert got.indices[0] == 17
    assert len(set(got.indices.tolist()) & set(exact.indices.tolist())) >= 8
    vi.save(tmp_path / "v.faiss")
    back = VectorIndex.load(tmp_path / "v.faiss", nprobe=16)
    assert back.kind_ == kind and back.search(q, 10).indices.tolist() == got.indices.tolist()


def test_auto_kind_switches_to_hnsw_when_large():
    x = np.eye(8, dtype=np.float32)
    assert VectorIndex(exact_below=100).fit(x).kind_ == "flat"
    assert VectorIndex(exact_below=4).fit(x).kind_ == "hnsw"
    with pytest.raises(ConfigError):
        VectorIndex("annoy")


def test_unknown_model_is_a_clear_error():
    with pytest.raises(ModelError, match="cannot load sentence-transformers model"):
        DenseEncoder("/no/such/model").encode(["x"])


def test_dense_index_end_to_end(tmp_path):
    d = tmp_path / "pdfs"
    d.mkdir()
    make_reports(d)
    with Index.build([d], tmp_path / "ix", dense=True) as index:
        assert index.dense_model == "all-MiniLM-L6-v2" and index.corpus.chunk_vectors.shape == (10, 384)
        assert index.corpus.node_vectors.shape[0] == index.corpus.n_nodes
        q = "cyber attacks on warehouse operations"
        for mode in ("dense", "hybrid", "ranker"):
            hits = index.search(q, k=3, mode=mode)
            assert hits[0].doc == "globex.pdf", mode
        assert index.search(q, k=3, mode="dense", doc="acme.pdf")[0].doc == "acme.pdf"
        # re-indexing the same files embeds nothing and changes nothing
        gen = index.store.generation()
        assert index.add([d]).unchanged == ["acme.pdf", "globex.pdf"] and index.store.generation() == gen
    with Index.open(tmp_path / "ix") as again:
        assert again.search("warehouse risks", k=1, mode="dense")[0].doc == "globex.pdf"
