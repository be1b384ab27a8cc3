"""Each indexed document's identity (issuer, type, period, language): stored, set by the user, filtered on.

Not to be confused with :mod:`retrievers.store.names`, which says which *file* a document is.

>>> index.identity("3M_2018_10K.pdf").label()                         # doctest: +SKIP
'3M COMPANY · 10-K · 2018'
>>> index.set_identity("3M_2018_10K.pdf", issuer="3M")                # doctest: +SKIP
>>> index.search("capital expenditure", where={"company": "3M", "year": 2018})   # doctest: +SKIP

The identity (:class:`structrag.model.DocumentIdentity`) is read at ingestion by
:func:`structrag.identity.identify` and kept in the ``identity`` column of the
``documents`` table.  An index written before that column existed still opens
and answers queries: the column is added by the first write, and until then a
document's identity is read from its stored pages when asked for (not stored).
Writing an identity does not bump the index generation: the search arrays do
not hold it.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from structrag.errors import ConfigError, InputError
from structrag.files import read_json_lines
from structrag.identity import COVER_PAGES, identify, normalize_issuer, normalize_type
from structrag.model import IDENTITY_FIELDS, Document, DocumentIdentity

__all__ = ["ensure_column", "save_identity", "stored_identities", "identity_of", "Where", "parse_where",
           "read_meta_file", "Identities", "WHERE_KEYS"]

#: ``--where`` keys and the identity field each filters on
WHERE_KEYS = {"company": "issuer", "issuer": "issuer", "title": "title", "type": "doc_type", "doc_type": "doc_type",
              "year": "year", "quarter": "quarter", "language": "language", "lang": "language", "ticker": "tickers",
              "tickers": "tickers"}
_LANGUAGES = {"english": "en", "chinese": "zh", "中文": "zh", "german": "de", "french": "fr", "spanish": "es",
              "japanese": "ja", "korean": "ko"}


# --- storage -------------------------------------------------------------------------------------
def _has_column(conn: sqlite3.Connection) -> bool:
    return any(r[1] == "identity" for r in conn.execute("PRAGMA table_info(documents)"))


def ensure_column(conn: sqlite3.Connection) -> None:
    """Add the ``identity`` column to an index written before it existed (inside a write transaction)."""
    if not _has_column(conn):
        conn.execute("ALTER TABLE documents ADD COLUMN identity TEXT")


def save_identity(conn: sqlite3.Connection, name: str, identity: DocumentIdentity | None) -> None:
    """Store ``identity`` for document ``name`` inside write transaction ``conn``."""
    ensure_column(conn)
    data = json.dumps(identity.to_dict(), ensure_ascii=False, sort_keys=True) if identity is not None else None
    conn.execute("UPDATE documents SET identity = ? WHERE name = ?", (data, name))


def user_values(conn: sqlite3.Connection, name: str) -> dict[str, Any]:
    """The fields a user set on stored document ``name`` (kept when a new version of its file replaces it)."""
    if not _has_column(conn):
        return {}
    row = conn.execute("SELECT identity FROM documents WHERE name = ?", (name,)).fetchone()
    try:
        old = DocumentIdentity.from_dict(json.loads(row[0])) if row and row[0] else None
    except (ValueError, TypeError):
        return {}
    return {f: getattr(old, f) for f in IDENTITY_FIELDS if old is not None and old.source(f) == "user"}


def stored_identities(store) -> dict[str, DocumentIdentity | None]:
    """name -> the stored identity (None: an index or document from before identities were stored)."""
    conn = store.conn
    try:
        if not _has_column(conn):
            return {d.name: None for d in store.documents()}
        rows = conn.execute("SELECT name, identity FROM documents ORDER BY id").fetchall()
        return {n: DocumentIdentity.from_dict(json.loads(v)) if v else None for n, v in rows}
    except (sqlite3.DatabaseError, ValueError, TypeError) as e:
        from .durable import damaged

        raise damaged(store.root, e) from e


def _first_headings(tree: Mapping[str, Any] | None) -> list[str]:
    nodes = (tree or {}).get("nodes") or (tree or {}).get("headings") or []
    out = []
    for n in nodes[:3]:
        t = n.get("text") or n.get("title") if isinstance(n, Mapping) else None
        if t:
            out.append(str(t))
    return out


def identity_of(document: Mapping[str, Any] | Document | None, tree: Mapping[str, Any] | None = None
                ) -> DocumentIdentity | None:
    """The identity read from a stored document (None for chunks added without one)."""
    if document is None:
        return None
    if not isinstance(document, (Document, Mapping)):
        return None
    if not isinstance(document, Document):
        # only the cover pages' blocks are read: building every block of a 500-page report costs seconds
        doc_dict = {**document, "furniture": [],
                    "blocks": [b for b in document.get("blocks", ()) if isinstance(b, Mapping)
                               and b.get("page", 0) < COVER_PAGES]}
        try:
            document = Document.from_dict(doc_dict)
        except (KeyError, TypeError, ValueError):  # chunks added with a document of another shape: no identity
            return None
    try:
        return identify(document, headings=_first_headings(tree if isinstance(tree, Mapping) else None))
    except (ValueError, IndexError, KeyError, TypeError, AttributeError):  # a guess must never cost a document
        return None


# --- the user's own values -------------------------------------------------------------------------
def _coerce(name: str, value: Any) -> Any:
    """A user's value for field ``name`` as stored (ValueError with the reason)."""
    if value is None:
        return None
    if name == "tickers":  # "MMM", "MMM, MMM26" or a list
        items = re.split(r"[,\s]+", value) if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(t, str) for t in items):
            raise ValueError(f"tickers must be a string or a list of strings, not {value!r}")
        out = tuple(dict.fromkeys(t.strip().upper() for t in items if t.strip()))
        if not out or not all(re.fullmatch(r"[A-Z0-9.\-/]{1,10}", t) for t in out):
            raise ValueError(f"tickers must be trading symbols such as MMM or BRK.B, not {value!r}")
        return out
    if name in ("year", "quarter"):
        text = str(value).strip().upper().lstrip("Q") if name == "quarter" else str(value).strip()
        if isinstance(value, bool) or not re.fullmatch(r"\d{1,4}", text):
            raise ValueError(f"{name} must be a whole number, not {value!r}")
        v = int(text)
        if name == "quarter" and not 1 <= v <= 4:
            raise ValueError(f"quarter must be 1 to 4, not {value!r}")
        return v
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string, not {value!r}")
    v = " ".join(value.split())
    if name == "doc_type":
        return normalize_type(v)
    if name == "language":
        return _LANGUAGES.get(v.lower(), v.lower())
    return v


def user_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` checked and coerced (``type``/``company`` accepted for ``doc_type``/``issuer``); ValueError."""
    out: dict[str, Any] = {}
    for k, v in fields.items():
        name = {"type": "doc_type", "company": "issuer", "lang": "language"}.get(k, k)
        if name not in IDENTITY_FIELDS:
            raise ValueError(f"unknown field {k!r}; known: {', '.join(IDENTITY_FIELDS)}")
        out[name] = _coerce(name, v)
    return out


def read_meta_file(path: str | Path, resolve) -> list[tuple[str, dict[str, Any]]]:
    """``(document name, fields)`` of each line of a JSON-lines ``--meta`` file (``{"doc": ..., "issuer": ...}``);
    ``resolve(doc)`` names the indexed document.  Every line is checked before anything is written."""
    p = Path(path)
    out = []
    for n, row in read_json_lines(p, what="metadata file", error=InputError):
        if not isinstance(row, dict) or not isinstance(row.get("doc"), str):
            raise InputError(f'line {n}: want a JSON object with "doc" (the indexed file) and identity fields', path=p)
        try:
            name = resolve(row["doc"])
        except ConfigError as e:
            raise InputError(f"line {n}: {e.message}", path=p, hint=e.hint) from None
        try:
            fields = user_fields({k: v for k, v in row.items() if k != "doc"})
        except ValueError as e:
            raise InputError(f"line {n}: {e}", path=p) from None
        out.append((name, fields))
    return out


# --- filters -----------------------------------------------------------------------------------------
class Where:
    """A filter over identities: each key's value must match (issuer and title: a substring after
    :func:`~structrag.identity.normalize_issuer`; type: after :func:`~structrag.identity.normalize_type`;
    year, quarter, language: equal; ticker: one of the document's symbols)."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.spec: dict[str, Any] = {}
        for k, v in spec.items():
            key = str(k).lower()
            if key not in WHERE_KEYS:
                raise ConfigError(f"unknown filter {k!r}; known: {', '.join(sorted(set(WHERE_KEYS)))}")
            try:
                self.spec[key] = _coerce(WHERE_KEYS[key], v)
            except ValueError as e:
                raise ConfigError(f"filter {k}: {e}") from None

    @staticmethod
    def _match(field: str, want: Any, ident: DocumentIdentity) -> bool:
        have = getattr(ident, field)
        if field in ("issuer", "title"):
            w = normalize_issuer(str(want))
            vals = [ident.issuer, ident.title] if field == "issuer" else [ident.title]
            return bool(w) and any(v and w in normalize_issuer(v) for v in vals)
        if have is None:
            return False
        if field == "tickers":
            return any(t in have for t in want)
        if field == "doc_type":
            return normalize_type(str(have)) == want
        return have == want

    def matches(self, ident: DocumentIdentity | None) -> bool:
        return ident is not None and all(self._match(WHERE_KEYS[k], v, ident) for k, v in self.spec.items())

    def select(self, identities: Mapping[str, DocumentIdentity | None], path: Any = None) -> list[str]:
        """The documents that match; ConfigError listing the known values when none does."""
        names = [n for n, i in identities.items() if self.matches(i)]
        if names:
            return names
        parts = []
        for key in self.spec:
            field = WHERE_KEYS[key]
            vals = sorted({str(v) for i in identities.values() if i for v in (
                getattr(i, field) if field == "tickers" else [getattr(i, field)]) if v is not None})
            shown = ", ".join(vals[:12]) + (" ..." if len(vals) > 12 else "")
            parts.append(f"{key}: {shown or '(none known)'}")
        want = ", ".join(f"{k}={v}" for k, v in self.spec.items())
        raise ConfigError(f"no indexed document matches {want}", path=path, hint="known values -- " + "; ".join(parts))


def parse_where(items: Iterable[str]) -> dict[str, str]:
    """``["company=3M", "year=2018"]`` (the CLI's ``--where``) as a mapping; ConfigError for a bad item."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(f"--where takes KEY=VALUE, not {item!r}",
                              hint=f"keys: {', '.join(sorted(set(WHERE_KEYS)))}")
        out[key.strip()] = value.strip()
    return out


class Identities:
    """The identity methods of :class:`retrievers.index.Index` (a mixin, as :class:`retrievers.store.commit.Writes`)."""

    _identity_cache: dict[str, DocumentIdentity | None] | None = None

    def identities(self) -> dict[str, DocumentIdentity | None]:
        """name -> identity of every document (read from the stored pages where none is stored)."""
        cache = self._identity_cache
        if cache is None or set(cache) != set(self.corpus.doc_names):
            stored = stored_identities(self.store)
            for name, ident in stored.items():
                if ident is None:  # an index from before identities: read, not written (it may be read-only)
                    stored[name] = identity_of(self.store.load_document(name), self.store.load_tree(name))
            cache = self._identity_cache = stored
        return dict(cache)

    def identity(self, doc: str) -> DocumentIdentity | None:
        """The identity of document ``doc`` (None for chunks added without a document)."""
        name = self.resolve_doc(doc)
        return self.identities().get(name)

    def set_identity(self, doc: str, **fields: Any) -> DocumentIdentity:
        """Set identity fields of ``doc`` (``issuer``, ``title``, ``doc_type``, ``year``, ``quarter``,
        ``language``); they win over detected ones and are marked ``user``.  Returns the new identity."""
        name = self.resolve_doc(doc)
        try:
            values = user_fields(fields)
        except ValueError as e:
            raise ConfigError(str(e), path=self.path) from None
        return self.set_identities([(name, values)])[name]

    def set_identities(self, rows: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, DocumentIdentity]:
        """Set checked user fields of several documents (by indexed name) in one transaction."""
        current = self.identities()
        out: dict[str, DocumentIdentity] = {}
        with self.store.writing():
            conn = self.store.conn
            with self.store._lock:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    for name, values in rows:
                        base = out.get(name) or current.get(name) or DocumentIdentity()
                        out[name] = base.with_fields("user", **values)
                        save_identity(conn, name, out[name])
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
        self._identity_cache = None
        return out

    def where_rows(self, where: Mapping[str, Any] | None) -> np.ndarray | None:
        """Corpus rows of the documents matching ``where`` (None: no filter)."""
        if not where:
            return None
        names = Where(where).select(self.identities(), path=self.path)
        c = self.corpus
        parts = [c.doc_rows(i) for i in (c.doc_id(n) for n in names) if i is not None]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)
