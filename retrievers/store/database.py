"""On-disk layout of an index directory, and how it is written safely.

::

    DIR/
      index.sqlite          documents, heading trees, chunks, metadata (SQLite, WAL)
      vectors/*.npy         per-document chunk and section-path embeddings (content-addressed)
      derived/g00000042/    search arrays + BM25 matrices (+ faiss) for generation 42
      ranker.txt/.json      a ranker trained on this index (optional, LightGBM text)
      .lock                 held by the one process writing

Safety: every document is added in one SQLite transaction that also bumps
the index *generation*; vector files are written (temp file, fsync, rename)
before the transaction that refers to them commits, and derived files go to a
temporary folder renamed to ``derived/g<generation>`` only when complete.  A
crash or SIGKILL at any point therefore leaves the last committed generation
readable: its rows are in SQLite, its vectors are on disk, and if its derived
folder is missing (the crash came between the commit and the derived write)
the reader rebuilds it in memory from SQLite.  Nothing is ever unpickled:
``.npy``/``.npz`` load with ``allow_pickle=False``, the rest is SQLite, JSON,
faiss and LightGBM text.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import sqlite3
import threading
import zlib
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote
from typing import Any, Iterator, Mapping, NamedTuple, Sequence

from structrag.errors import ConfigError, IndexFormatError, SchemaVersionError
from structrag.files import check_output_folder

from .durable import DB_NAME, atomic_write_bytes, damaged, fsync_dir, read_only_storage, reads
from .files import DerivedFiles

__all__ = ["Store", "INDEX_FORMAT", "INDEX_SCHEMA", "DB_NAME", "DocRow", "ChunkRow", "atomic_write_bytes"]

INDEX_FORMAT = "structrag-index"
#: Schema of the index directory; the major part must match to open it.
INDEX_SCHEMA = "1.0"

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL,
    sha1 TEXT NOT NULL,
    options_key TEXT NOT NULL,
    page_count INTEGER NOT NULL,
    n_chunks INTEGER NOT NULL,
    vectors TEXT,
    tree TEXT,
    document BLOB,
    stats TEXT NOT NULL DEFAULT '{}',
    generation INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ord INTEGER NOT NULL,
    chunk_id TEXT NOT NULL,
    text TEXT NOT NULL,
    tokens TEXT NOT NULL,
    section_path TEXT NOT NULL,
    pages TEXT NOT NULL,
    sibling_index INTEGER NOT NULL,
    sibling_count INTEGER NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, ord);
CREATE INDEX IF NOT EXISTS chunks_cid ON chunks(chunk_id);
"""


class DocRow(NamedTuple):
    id: int
    name: str
    path: str
    sha1: str
    options_key: str
    page_count: int
    n_chunks: int
    vectors: str | None
    generation: int
    stats: dict


class ChunkRow(NamedTuple):
    rowid: int
    doc: str
    chunk_id: str
    text: str
    section_path: tuple[str, ...]
    pages: tuple[int, ...]
    data: dict


def _major(version: str) -> str:
    return str(version).split(".", 1)[0]


class Store(DerivedFiles):
    """The SQLite file and the folders beside it (one per index directory)."""

    def __init__(self, root: Path, conn: sqlite3.Connection, *, read_only: bool = False) -> None:
        self.root = root
        self.conn = conn
        self.read_only = read_only
        self._lock = threading.RLock()
        self._lock_fd: int | None = None

    # --- opening ------------------------------------------------------------
    @staticmethod
    def _connect(db: Path, *, read_only: bool = False) -> sqlite3.Connection:
        if read_only:
            # a WAL reader creates the -shm file beside the database, which read-only storage refuses;
            # nothing can write there either, so the file is read as immutable
            conn = sqlite3.connect(f"file:{quote(str(db.resolve()))}?immutable=1", uri=True, timeout=30.0,
                                   isolation_level=None, check_same_thread=False)
        else:
            conn = sqlite3.connect(str(db), timeout=30.0, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    @classmethod
    def open(cls, root: str | os.PathLike) -> "Store":
        """Open an existing index; checks format and schema version."""
        root = Path(root)
        db = root / DB_NAME
        if not root.exists():
            raise IndexFormatError("no such index directory", path=root, hint="create one with: structrag index PDF... --out DIR")
        if not db.is_file():
            raise IndexFormatError(
                f"not a structrag index (no {DB_NAME})", path=root, hint="create one with: structrag index PDF... --out DIR"
            )
        read_only = read_only_storage(root, db)
        try:
            conn = cls._connect(db, read_only=read_only)
            rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as e:
            raise damaged(root, e) from e
        if rows.get("format") != INDEX_FORMAT:
            conn.close()
            raise IndexFormatError(f"not a structrag index (format {rows.get('format')!r})", path=root)
        version = rows.get("schema_version", "?")
        if _major(version) != _major(INDEX_SCHEMA):
            conn.close()
            raise SchemaVersionError(
                f"index schema version {version} cannot be read by this structrag (reads {INDEX_SCHEMA})",
                path=root,
                hint="re-create the index with this version: structrag index PDF... --out NEW_DIR",
            )
        return cls(root, conn, read_only=read_only)

    @classmethod
    def create(cls, root: str | os.PathLike, settings: Mapping[str, Any]) -> "Store":
        """Create a new, empty index at ``root`` (which must not hold one)."""
        root = Path(root)
        if (root / DB_NAME).exists():
            raise ConfigError(f"an index already exists in {root}")
        check_output_folder(root, what="index folder")  # a file there, or where a parent folder should be
        root.mkdir(parents=True, exist_ok=True)
        # build the database under a temporary name so a half-created index never exists
        tmp = root / f".{DB_NAME}.creating-{os.getpid()}"
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
        conn = cls._connect(tmp)
        conn.executescript(_DDL)
        meta = {"format": INDEX_FORMAT, "schema_version": INDEX_SCHEMA, "generation": "0"}
        meta.update({k: json.dumps(v, sort_keys=True) for k, v in settings.items()})
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", sorted(meta.items()))
        conn.execute("COMMIT")
        conn.close()
        os.replace(tmp, root / DB_NAME)
        fsync_dir(root)
        store = cls.open(root)
        store.conn.execute("PRAGMA journal_mode = WAL")
        return store

    def close(self) -> None:
        self.unlock()
        try:
            self.conn.close()
        except sqlite3.Error:
            pass

    # --- the writer's lock --------------------------------------------------
    def lock(self) -> None:
        """Take the directory's writer lock (one writing process at a time)."""
        if self._lock_fd is not None:
            return
        if self.read_only:
            raise ConfigError("the index is on read-only storage: it can be searched, not changed", path=self.root,
                              hint="copy it to writable storage to add or remove documents")
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise ConfigError("another process is writing to this index", path=self.root) from e
            raise
        self._lock_fd = fd

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the writer lock for the ``with`` block."""
        self.lock()
        try:
            yield
        finally:
            self.unlock()

    def unlock(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    # --- metadata ------------------------------------------------------------
    @reads
    def meta(self) -> dict[str, str]:
        with self._lock:
            return dict(self.conn.execute("SELECT key, value FROM meta").fetchall())

    def set_settings(self, settings: Mapping[str, Any]) -> None:
        """Store settings (JSON values) decided after creation, e.g. an ``auto`` dense model."""
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                                      sorted((k, json.dumps(v, sort_keys=True)) for k, v in settings.items()))
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    def setting(self, key: str, default: Any = None) -> Any:
        v = self.meta().get(key)
        return json.loads(v) if v is not None else default

    @reads
    def generation(self) -> int:
        with self._lock:
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0])

    # --- transactions ----------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic write; bumps the generation.  Rolled back on any exception."""
        with self._lock:
            c = self.conn
            c.execute("BEGIN IMMEDIATE")
            try:
                yield c
                c.execute("UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'generation'")
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise

    # --- documents -----------------------------------------------------------------
    @reads
    def documents(self) -> list[DocRow]:
        with self._lock:
            rows = self.conn.execute(
                "SELECT id, name, path, sha1, options_key, page_count, n_chunks, vectors, generation, stats "
                "FROM documents ORDER BY id"
            ).fetchall()
        return [DocRow(*r[:9], json.loads(r[9] or "{}")) for r in rows]

    def document(self, name: str) -> DocRow | None:
        for d in self.documents():
            if d.name == name:
                return d
        return None

    @reads
    def load_tree(self, name: str) -> dict | None:
        with self._lock:
            row = self.conn.execute("SELECT tree FROM documents WHERE name = ?", (name,)).fetchone()
        return json.loads(row[0]) if row and row[0] else None

    @reads
    def load_document(self, name: str) -> dict | None:
        with self._lock:
            row = self.conn.execute("SELECT document FROM documents WHERE name = ?", (name,)).fetchone()
        return json.loads(zlib.decompress(row[0]).decode("utf-8")) if row and row[0] else None

    def insert_document(
        self,
        c: sqlite3.Connection,
        *,
        name: str,
        path: str,
        sha1: str,
        options_key: str,
        page_count: int,
        chunks: Sequence[Mapping[str, Any]],
        tokens: Sequence[Sequence[str]],
        vectors: str | None,
        tree: Mapping[str, Any] | None,
        document: Mapping[str, Any] | None,
        stats: Mapping[str, Any],
    ) -> int:
        """Insert one document and its chunks inside transaction ``c`` (replacing one of that name)."""
        c.execute("DELETE FROM documents WHERE name = ?", (name,))
        gen = int(c.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]) + 1
        cur = c.execute(
            "INSERT INTO documents(name, path, sha1, options_key, page_count, n_chunks, vectors, tree, document, stats, generation) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                name,
                path,
                sha1,
                options_key,
                int(page_count),
                len(chunks),
                vectors,
                json.dumps(tree, ensure_ascii=False) if tree is not None else None,
                zlib.compress(json.dumps(document, ensure_ascii=False).encode("utf-8"), 6) if document is not None else None,
                json.dumps(dict(stats), sort_keys=True),
                gen,
            ),
        )
        doc_id = int(cur.lastrowid)
        rows = []
        for i, (ch, toks) in enumerate(zip(chunks, tokens)):
            data = {k: v for k, v in ch.items() if k != "text"}
            rows.append(
                (
                    doc_id,
                    i,
                    ch["id"],
                    ch["text"],
                    " ".join(toks),
                    json.dumps(list(ch["section_path"]), ensure_ascii=False),
                    json.dumps(sorted(set(int(p) for p in ch["pages"]))),
                    int(ch["sibling_index"]),
                    int(ch["sibling_count"]),
                    json.dumps(data, ensure_ascii=False),
                )
            )
        c.executemany(
            "INSERT INTO chunks(doc_id, ord, chunk_id, text, tokens, section_path, pages, sibling_index, sibling_count, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        return doc_id

    def rename_document(self, c: sqlite3.Connection, name: str, new: str) -> None:
        """Rename a document inside transaction ``c`` (its rows, vectors and chunks stay as they are)."""
        c.execute("UPDATE documents SET name = ? WHERE name = ?", (new, name))

    def delete_document(self, c: sqlite3.Connection, name: str) -> bool:
        return c.execute("DELETE FROM documents WHERE name = ?", (name,)).rowcount > 0

    # --- page tokens (the BM25 of whole pages, retrievers.store.corpus) ----------------------
    def _has_page_tokens(self) -> bool:
        with self._lock:
            return any(r[1] == "page_tokens" for r in self.conn.execute("PRAGMA table_info(documents)"))

    @reads
    def page_tokens(self) -> dict[int, list[list[str]]]:
        """Document id -> the stored BM25 tokens of each of its pages (documents without them are absent:
        an index or a document from before they were stored)."""
        if not self._has_page_tokens():
            return {}
        with self._lock:
            rows = self.conn.execute("SELECT id, page_tokens FROM documents WHERE page_tokens IS NOT NULL").fetchall()
        return {int(i): [t.split() for t in json.loads(zlib.decompress(b).decode("utf-8"))] for i, b in rows}

    def save_page_tokens(self, tokens: Mapping[int, Sequence[Sequence[str]]]) -> None:
        """Store page tokens (document id -> one token list per page); the writer only.  The column is added
        to an index written before it existed, as the identity column is (no schema bump: older readers
        ignore it)."""
        rows = [(zlib.compress(json.dumps([" ".join(p) for p in pages], ensure_ascii=False).encode("utf-8"), 6), int(i))
                for i, pages in tokens.items()]
        # not Store.transaction: a cache of what is committed, so the generation (and the search arrays
        # being written for it) stays as it is
        with self._lock:
            c = self.conn
            c.execute("BEGIN IMMEDIATE")
            try:
                if not any(r[1] == "page_tokens" for r in c.execute("PRAGMA table_info(documents)")):
                    c.execute("ALTER TABLE documents ADD COLUMN page_tokens BLOB")
                c.executemany("UPDATE documents SET page_tokens = ? WHERE id = ?", rows)
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise

    # --- chunks --------------------------------------------------------------------
    def iter_doc_chunks(self) -> Iterator[tuple[DocRow, list[tuple]]]:
        """(document, its chunk rows (rowid, pages, sib_i, sib_n, section_path, tokens)) in index order."""
        for d in self.documents():
            yield d, self._doc_chunk_rows(d.id)

    @reads
    def _doc_chunk_rows(self, doc_id: int) -> list[tuple]:
        with self._lock:
            return self.conn.execute(
                "SELECT id, pages, sibling_index, sibling_count, section_path, tokens FROM chunks "
                "WHERE doc_id = ? ORDER BY ord",
                (doc_id,),
            ).fetchall()

    @reads
    def doc_tokens(self, name: str) -> list[list[str]]:
        """The stored BM25 tokens of each chunk of document ``name``, in reading order."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT c.tokens FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE d.name = ? ORDER BY c.ord",
                (name,),
            ).fetchall()
        return [r[0].split() for r in rows]

    @reads
    def chunk_keys(self) -> list[tuple[str, str, int]]:
        """``(document name, chunk id, rowid)`` of every chunk."""
        with self._lock:
            return self.conn.execute(
                "SELECT d.name, c.chunk_id, c.id FROM chunks c JOIN documents d ON d.id = c.doc_id"
            ).fetchall()

    @reads
    def chunks_by_rowid(self, rowids: Sequence[int]) -> dict[int, ChunkRow]:
        if not len(rowids):
            return {}
        out: dict[int, ChunkRow] = {}
        ids = [int(r) for r in rowids]
        with self._lock:
            for i in range(0, len(ids), 500):
                part = ids[i : i + 500]
                q = (
                    "SELECT c.id, d.name, c.chunk_id, c.text, c.section_path, c.pages, c.data FROM chunks c "
                    f"JOIN documents d ON d.id = c.doc_id WHERE c.id IN ({','.join('?' * len(part))})"
                )
                for r in self.conn.execute(q, part):
                    out[r[0]] = ChunkRow(r[0], r[1], r[2], r[3], tuple(json.loads(r[4])), tuple(json.loads(r[5])), json.loads(r[6]))
        return out
