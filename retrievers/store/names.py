"""Which indexed document a file is, and which document a name given by the user means.

A document's identity is its file: the resolved path it was indexed from, with its content hash.
Two different files never share a document, even when they share a base name
(``acme/annual_report_2022.pdf`` and ``globex/annual_report_2022.pdf``); the file at the same path
with new content replaces the old one; the same content under the same base name (a moved or
copied file) is the same document.

A document's *name* is what hits show and what ``--doc`` takes: the base name while it is unique
in the index, else the shortest trailing part of its path that tells it from the others of that
base name (``acme/annual_report_2022.pdf``).
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath
from typing import Iterable, Literal, Mapping, NamedTuple, Sequence

from structrag.errors import ConfigError

__all__ = ["Match", "match_file", "display_names", "resolve_name", "known_names_hint"]


class Match(NamedTuple):
    """What an incoming file is with respect to the indexed documents."""

    kind: Literal["same-path", "same-content", "new"]
    name: str | None  # the indexed document's name (None for "new")


def _parts(path: str) -> tuple[str, ...]:
    return PurePosixPath(os.path.abspath(path).replace(os.sep, "/")).parts


def match_file(path: str, sha1: str, indexed: Iterable[tuple[str, str, str]]) -> Match:
    """How the file at ``path`` (content ``sha1``) relates to ``indexed`` ``(name, path, sha1)`` rows.

    ``same-path``: it was indexed from this very path (its content may have changed: replace it);
    ``same-content``: a document of the same base name holds these bytes (a moved or copied file);
    ``new``: anything else -- a different file that may share a base name, kept beside the others.
    """
    here = _parts(path)
    base = here[-1]
    twin = None
    for name, old_path, old_sha1 in indexed:
        if _parts(old_path) == here:
            return Match("same-path", name)
        if twin is None and old_sha1 == sha1 and _parts(old_path)[-1] == base:
            twin = name
    return Match("same-content", twin) if twin is not None else Match("new", None)


def display_names(paths: Sequence[str]) -> list[str]:
    """A unique name for each of ``paths`` (distinct files): the base name, or the shortest distinguishing tail."""
    split = [_parts(p) for p in paths]
    if len(set(split)) != len(split):
        raise ConfigError("the same file is listed twice")
    groups: dict[str, list[int]] = {}
    for i, parts in enumerate(split):
        groups.setdefault(parts[-1], []).append(i)
    out = [s[-1] for s in split]
    for members in groups.values():
        if len(members) < 2:
            continue
        depth = max(len(split[i]) for i in members)
        for k in range(2, depth + 1):
            tails = ["/".join(split[i][-k:]) for i in members]
            if len(set(tails)) == len(tails):
                break
        for i, t in zip(members, tails):
            out[i] = t.lstrip("/") or t
    return out


def resolve_name(query: str, docs: Mapping[str, str]) -> str:
    """The indexed document ``query`` means: a document name, a trailing part of its path, or its path.

    ``docs`` maps each name to the path it was indexed from.  An ambiguous ``query`` (two documents
    of that base name) is an error listing the names that would pick each one.
    """
    if query in docs:
        return query
    want = query.replace(os.sep, "/").strip("/")
    want_parts = tuple(p for p in want.split("/") if p)
    full = _parts(query) if os.path.isabs(query) or os.path.exists(query) else None
    found = []
    for name, path in docs.items():
        parts = _parts(path)
        if full is not None and parts == full:
            return name
        if want_parts and (parts[-len(want_parts):] == want_parts or name.endswith("/" + want)):
            found.append(name)
    if len(found) == 1:
        return found[0]
    if not found:
        raise ConfigError(f"no document named {query!r} in the index", hint=known_names_hint(query, list(docs)))
    raise ConfigError(f"document name {query!r} is ambiguous: it matches {', '.join(sorted(found))}",
                      hint="pass one of these names (or the file's path) to pick one")


def known_names_hint(query: str, names: Sequence[str], shown: int = 8) -> str:
    """The fix for an unknown document name: the index's names, the closest to ``query`` first."""
    if not names:
        return "the index is empty: structrag index PDF... --out DIR adds documents"
    import difflib

    close = difflib.get_close_matches(query, names, n=shown, cutoff=0.5)
    listed = close + [n for n in sorted(names) if n not in close][: max(shown - len(close), 0)]
    more = f" and {len(names) - len(listed)} more" if len(names) > len(listed) else ""
    return f"pass a name as shown in the hits or the path the file was indexed from; indexed: " \
           f"{', '.join(listed)}{more}"
