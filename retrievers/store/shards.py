"""Index shards: processed documents in Parquet files, merged into an index without re-parsing.

A distributed ingestion job (:mod:`retrievers.ray_ingest`) has many workers
parse, chunk and embed documents at once, but an index directory has one
writer.  Each worker therefore writes what it made to a *shard*: one Parquet
file per batch of documents, one row per document, holding exactly what
:meth:`retrievers.index.Index.merge_shards` needs to commit the document --
chunks, tokens, heading tree, the extracted document, stats and (for a dense
index) the chunk and section-path vectors.  Merging copies rows and vectors;
nothing is parsed or embedded again.

Why Parquet: it is what Ray Data and every object store speak (a shard can
live on a shared file system or S3 mount), it is columnar and compressed
(zstd), and it is a safe format -- strings, integers and raw little-endian
float32 bytes, never pickle.  A shard is written to a temporary name and
renamed, so a reader sees a whole shard or none; a job killed mid-run leaves
only whole shards, which the next run merges before parsing anything.

Schema (``SHARD_FORMAT`` in the file's metadata, with the index settings the
rows were made for: tokenizer, dense model, sequence length)::

    name, path, sha1, options_key          strings (the document's identity)
    page_count, n_chunks, dim              int32
    chunks, tokens, tree, document, stats  JSON strings (tree may be null)
    chunk_vectors, node_vectors            float32 bytes (null for a lexical index)
    space                                  JSON [model, max_seq_length] of the vectors (null: the index's
                                           first space; a shard written before the column: the same)
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator, Mapping, NamedTuple, Sequence

import numpy as np

from structrag.errors import IndexFormatError

from ..embed.spaces import Space
from ..extras import require

__all__ = ["SHARD_FORMAT", "ShardDocument", "write_shard", "read_shard", "shard_settings", "require_pyarrow"]

SHARD_FORMAT = "structrag-shard/1"
_META_KEY = b"structrag"


def require_pyarrow():
    """pyarrow, with its Parquet module loaded (ConfigError naming the extra when it is missing)."""
    require("pyarrow.parquet", what="index shards", package="pyarrow", extra="ray")
    return require("pyarrow", what="index shards", package="pyarrow", extra="ray")


class ShardDocument(NamedTuple):
    """One processed document (:class:`retrievers.ingest.documents.ProcessedPDF`) plus its identity and vectors."""

    name: str
    path: str
    sha1: str
    options_key: str
    page_count: int
    chunks: list[dict[str, Any]]
    tokens: list[list[str]]
    tree: dict[str, Any] | None
    document: dict[str, Any] | None
    stats: dict[str, Any]
    vectors: tuple[np.ndarray, np.ndarray] | None = None
    #: the vector space of ``vectors`` (:class:`retrievers.embed.spaces.Space`); None: the index's first
    space: Space | None = None


def shard_settings(tokenizer: Mapping[str, Any], dense_model: str | None, max_seq_length: int | None) -> dict[str, Any]:
    """The index settings a shard's rows depend on (checked when merging)."""
    return {"tokenizer": dict(tokenizer), "dense_model": dense_model, "dense_max_seq_length": max_seq_length}


def _schema(pa):
    return pa.schema([
        ("name", pa.string()), ("path", pa.string()), ("sha1", pa.string()), ("options_key", pa.string()),
        ("page_count", pa.int32()), ("n_chunks", pa.int32()), ("dim", pa.int32()),
        ("chunks", pa.large_string()), ("tokens", pa.large_string()), ("tree", pa.large_string()),
        ("document", pa.large_string()), ("stats", pa.string()),
        ("chunk_vectors", pa.large_binary()), ("node_vectors", pa.large_binary()), ("space", pa.string()),
    ])  # fmt: skip


def _dumps(x: Any) -> str:
    return json.dumps(x, ensure_ascii=False, default=str)


def write_shard(path: str | os.PathLike, docs: Sequence[ShardDocument], settings: Mapping[str, Any]) -> Path:
    """Write ``docs`` to the Parquet file ``path`` (temporary name, then rename); returns ``path``."""
    pa = require_pyarrow()
    import pyarrow.parquet as pq

    cols: dict[str, list] = {f: [] for f in _schema(pa).names}
    for d in docs:
        cv = nv = None
        dim = 0
        if d.vectors is not None:
            cv = np.ascontiguousarray(d.vectors[0], dtype="<f4")
            nv = np.ascontiguousarray(d.vectors[1], dtype="<f4")
            dim = int(cv.shape[1]) if cv.ndim == 2 else 0
        for key, value in (
            ("name", d.name), ("path", d.path), ("sha1", d.sha1), ("options_key", d.options_key),
            ("page_count", int(d.page_count)), ("n_chunks", len(d.chunks)), ("dim", dim),
            ("chunks", _dumps(d.chunks)), ("tokens", _dumps(d.tokens)),
            ("tree", None if d.tree is None else _dumps(d.tree)),
            ("document", None if d.document is None else _dumps(d.document)), ("stats", _dumps(d.stats)),
            ("chunk_vectors", None if cv is None else cv.tobytes()), ("node_vectors", None if nv is None else nv.tobytes()),
            ("space", None if d.space is None else _dumps(list(d.space))),
        ):  # fmt: skip
            cols[key].append(value)
    meta = {"format": SHARD_FORMAT, "settings": dict(settings)}
    table = pa.table(cols, schema=_schema(pa).with_metadata({_META_KEY: _dumps(meta).encode("utf-8")}))
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp-{os.getpid()}")
    pq.write_table(table, tmp, compression="zstd")
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, p)
    return p


def _vectors(blob: bytes | None, rows: int, dim: int, what: str, path: Path) -> np.ndarray | None:
    if blob is None:
        return None
    v = np.frombuffer(blob, dtype="<f4")
    if dim <= 0 or v.size != rows * dim:
        raise IndexFormatError(f"{what} of {v.size} floats do not make {rows} rows of {dim}", path=path)
    return v.reshape(rows, dim).astype(np.float32)


def read_shard(path: str | os.PathLike, *, names: set[str] | None = None) -> tuple[dict[str, Any], Iterator[ShardDocument]]:
    """``(settings, documents)`` of a shard file (only the documents in ``names`` if given).

    Raises :class:`~structrag.errors.IndexFormatError` for a file that is not a
    whole structrag shard.
    """
    require_pyarrow()
    import pyarrow.parquet as pq

    p = Path(path)
    try:
        table = pq.read_table(p)
        meta = json.loads((table.schema.metadata or {}).get(_META_KEY, b"{}").decode("utf-8"))
    except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
        raise IndexFormatError(f"not a readable index shard: {e}", path=p) from e
    if meta.get("format") != SHARD_FORMAT:
        raise IndexFormatError(f"not a structrag index shard (format {meta.get('format')!r}, expected {SHARD_FORMAT!r})",
                               path=p)
    rows = table.to_pylist()

    def docs() -> Iterator[ShardDocument]:
        for r in rows:
            if names is not None and r["name"] not in names:
                continue
            chunks = json.loads(r["chunks"])
            vectors = None
            if r["chunk_vectors"] is not None:
                dim = int(r["dim"])
                n_nodes = len(r["node_vectors"] or b"") // (4 * max(dim, 1))  # shape checked on commit
                vectors = (_vectors(r["chunk_vectors"], len(chunks), dim, "chunk vectors", p),
                           _vectors(r["node_vectors"] or b"", n_nodes, dim, "section vectors", p))
            yield ShardDocument(
                name=r["name"], path=r["path"], sha1=r["sha1"], options_key=r["options_key"],
                page_count=int(r["page_count"]), chunks=chunks, tokens=json.loads(r["tokens"]),
                tree=json.loads(r["tree"]) if r["tree"] is not None else None,
                document=json.loads(r["document"]) if r["document"] is not None else None,
                stats=json.loads(r["stats"]), vectors=vectors,
                space=Space(*json.loads(r["space"])) if r.get("space") else None,
            )

    return dict(meta.get("settings") or {}), docs()
