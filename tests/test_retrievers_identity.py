"""Document identity: files, not base names, are documents; names are unique and resolvable."""

from __future__ import annotations

import pytest

from retrievers.store.names import display_names, match_file, resolve_name
from structrag.errors import ConfigError


def test_display_names_are_base_names_until_two_files_share_one():
    assert display_names(["/x/a/report.pdf", "/y/z.pdf"]) == ["report.pdf", "z.pdf"]
    assert display_names(["/x/a/report.pdf", "/x/b/report.pdf", "/y/z.pdf"]) == ["a/report.pdf", "b/report.pdf",
                                                                                 "z.pdf"]
    # the shortest tail that tells them apart
    assert display_names(["/x/a/q/report.pdf", "/x/b/q/report.pdf"]) == ["a/q/report.pdf", "b/q/report.pdf"]
    with pytest.raises(ConfigError):
        display_names(["/x/a.pdf", "/x/a.pdf"])


def test_match_file():
    rows = [("report.pdf", "/x/a/report.pdf", "s1")]
    assert match_file("/x/a/report.pdf", "s2", rows).kind == "same-path"  # changed in place: replace
    assert match_file("/moved/report.pdf", "s1", rows) == ("same-content", "report.pdf")  # moved: same document
    assert match_file("/x/b/report.pdf", "s2", rows) == ("new", None)  # another file: kept beside it


def test_resolve_name():
    docs = {"a/report.pdf": "/x/a/report.pdf", "b/report.pdf": "/x/b/report.pdf", "z.pdf": "/y/z.pdf"}
    assert resolve_name("z.pdf", docs) == "z.pdf"
    assert resolve_name("b/report.pdf", docs) == "b/report.pdf"
    assert resolve_name("/x/a/report.pdf", docs) == "a/report.pdf"
    with pytest.raises(ConfigError, match="ambiguous.*a/report.pdf, b/report.pdf"):
        resolve_name("report.pdf", docs)
    with pytest.raises(ConfigError, match="no document named 'nope.pdf'"):
        resolve_name("nope.pdf", docs)
