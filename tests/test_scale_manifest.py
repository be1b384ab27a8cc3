"""The distractor survey's reading of covers and its drops (issue 48): no snapshot, no shared data."""

from __future__ import annotations

import pytest

from eval.bench import scale_manifest

COVER_10K = ("UNITED STATES SECURITIES AND EXCHANGE COMMISSION Washington, D.C. 20549 FORM 10-K ANNUAL REPORT "
             "For the fiscal year ended December 31, {year} Commission File Number 001-12345 ACME CORP "
             "(Exact name of registrant as specified in its charter)")
COVER_10Q = ("FORM 10-Q QUARTERLY REPORT For the quarterly period ended {period} Commission File Number 001-1 "
             "ACME CORP (Exact name of registrant as specified in its charter)")
RULE = {"licence": "none found", "group": "business"}


@pytest.fixture(autouse=True)
def _no_guard(monkeypatch):
    # the held-out guard lives beside the checkout; these rows name no real issuer
    monkeypatch.setattr(scale_manifest, "guard_held", lambda args: [False] * (len(args) - 1))


def _row(path: str, first: str, sha1: str) -> dict:
    return {"repository": "o/r", "commit": "c" * 40, "path": path, "sha1": sha1, "pages": 80, "text3": 5000,
            "first": first, "held": False}


def test_cover_reading_of_a_10k():
    first = COVER_10K.format(year=2021)
    form = scale_manifest.form_of(first, "x.pdf", RULE)
    assert form == "10-K"
    assert scale_manifest.year_of(first, "x.pdf", form, RULE) == 2021
    assert scale_manifest.issuer_of(first, "x.pdf", form, RULE) == "ACME CORP"


def test_path_pattern_gives_issuer_year_and_form():
    rule = {**RULE, "on": "name", "pattern": r"^(?P<issuer>.+?)-+(?P<year>\d{4})-Financial-Statement",
            "spaces": "-", "form": "financial-statements"}
    name = "Some-Re-Ltd.---2020-Financial-Statement.pdf"
    form = scale_manifest.form_of("", name, rule)
    assert form == "financial-statements"
    assert scale_manifest.year_of("", name, form, rule) == 2020
    assert scale_manifest.issuer_of("", name, form, rule) == "Some Re Ltd."


def test_a_shared_filing_is_dropped_and_other_years_kept():
    rows = [_row("a/acme-2021.pdf", COVER_10K.format(year=2021), "1" * 40),
            _row("a/acme-2022.pdf", COVER_10K.format(year=2022), "2" * 40)]
    kept, left = scale_manifest.select(rows, {"o/r": RULE}, set(), {("acme", 2021, "10-K")})
    assert [r["year"] for r in kept] == [2022]
    assert left["a shared retrieval filing"] == 1


def test_quarters_are_kept_apart_and_a_second_copy_of_one_is_dropped():
    rows = [_row("q/1.pdf", COVER_10Q.format(period="March 31, 2022"), "1" * 40),
            _row("q/2.pdf", COVER_10Q.format(period="June 30, 2022"), "2" * 40),
            _row("q/3.pdf", COVER_10Q.format(period="June 30, 2022"), "3" * 40),  # same filing, other file
            _row("q/4.pdf", COVER_10Q.format(period="June 30, 2022"), "2" * 40)]  # same bytes
    kept, left = scale_manifest.select(rows, {"o/r": RULE}, set(), set())
    assert [r["path"] for r in kept] == ["q/1.pdf", "q/2.pdf"]
    assert left["same issuer, year and form"] == 1 and left["another copy"] == 1


def test_known_and_short_pdfs_are_left_out():
    short = {**_row("s.pdf", "x", "5" * 40), "pages": 19}
    rows = [_row("k.pdf", COVER_10K.format(year=2020), "4" * 40), short]
    kept, left = scale_manifest.select(rows, {"o/r": RULE}, {"4" * 40}, set())
    assert kept == [] and left["a shared-data or corpus PDF"] == 1 and left["under 20 pages or unreadable"] == 1
