"""A second look among a parent's children nests under the first (issue 23, item 6):
:func:`structrag.levels.walk.looks.nest_second_look` on described headings, and the driver on a real PDF."""

from __future__ import annotations

import pytest

from structrag.levels.walk.looks import nest_second_look
from structrag.levels.style import describe
from structrag.model import Heading
from structrag.numbering import parse_numbering

BAND = 0xFFFFFF  # white text on a band
BLACK = 0x231F20


def _h(text: str, size: float = 10.0, color: int = BLACK, italic: bool = False, bold: bool = True) -> Heading:
    return Heading(text=text, page=0, bbox=(40.0, 10.0, 300.0, 22.0), block=0, block_end=1, font="Arial",
                   size=size, bold=bold, italic=italic, color=color, numbering=parse_numbering(text)[0])


def _run(specs, levels, frozen=None):
    hs = [_h(*s) if isinstance(s, tuple) else _h(s) for s in specs]
    infos = describe(None, hs)
    return nest_second_look(levels, infos, frozen or [False] * len(hs))


def test_black_sub_sections_nest_under_the_band_sections_before_them():
    specs = [("Item 7. Management's Discussion", 10.0, BAND, True), ("Overview", 10.0, BAND, True),
             ("Highlights of the Year", 10.0, BLACK), ("Revenue by Segment", 9.0, BLACK),
             ("Business Overview", 10.0, BLACK), ("Consolidated Results", 10.0, BAND, True),
             ("Operating Revenues", 10.0, BLACK)]
    levels, moved = _run(specs, [1, 2, 2, 3, 2, 2, 2])
    # the black 10 pt headings go under the band heading before them, carrying their own children
    assert levels == [1, 2, 3, 4, 3, 2, 3]
    assert moved == 3


def test_three_looks_nest_in_rounds():
    specs = [("Item 1. Business", 10.0, BAND, True), ("Service Offerings", 10.0, BAND, True),
             ("Wireless", 10.0, BLACK), ("Wireless Services", 9.0, BLACK), ("Wireless Equipment", 9.0, BLACK),
             ("Fios", 10.0, BLACK), ("Fios Video", 9.0, BLACK)]
    levels, _ = _run(specs, [1, 2, 2, 2, 2, 2, 2])
    assert levels == [1, 2, 3, 4, 4, 3, 4]


@pytest.mark.parametrize("case", ["first-is-weaker", "numbered", "frozen", "one-look", "root", "reversed-elsewhere",
                                  "larger"])
def test_left_alone(case):
    levels = [1, 2, 2, 2]
    frozen = None
    specs = [("Item 7. Discussion", 12.0), ("Overview", 10.0, BAND, True), ("Highlights", 10.0, BLACK),
             ("Outlook", 10.0, BLACK)]
    if case == "first-is-weaker":
        specs[1] = ("Overview", 9.0, BLACK)
    elif case == "numbered":
        specs[2] = ("1. Highlights", 10.0, BLACK)
    elif case == "frozen":
        frozen = [False, False, True, False]
    elif case == "one-look":
        specs[2] = specs[3] = ("Highlights", 10.0, BAND, True)
    elif case == "root":
        levels = [1, 1, 1, 1]
    elif case == "reversed-elsewhere":
        # a black heading heads a band heading somewhere else: the document does not rank the looks that way
        specs += [("Segment Results", 10.0, BLACK), ("Consumer", 10.0, BAND, True)]
        levels = [1, 2, 2, 2, 2, 3]
    elif case == "larger":
        specs[3] = ("Outlook", 11.0, BLACK)
    got, moved = _run(specs, levels, frozen)
    assert got == levels and moved == 0


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError):
        nest_second_look([1, 2], describe(None, [_h("A")]), [False])


def test_driver_nests_on_a_real_pdf(tmp_path):
    pytest.importorskip("pymupdf")
    from pdfgen import PDFBuilder
    from structrag.extraction import extract
    from structrag.levels import assign_levels
    from structrag.pipeline import parse_document

    b = PDFBuilder(header=None)
    b.heading("Item 7. Management's Discussion and Analysis", size=14)
    b.para()
    for sec, subs in (("Overview of the Year", ("Highlights", "Outlook")),
                      ("Results of Operations", ("Revenue", "Expenses", "Income Taxes")),
                      ("Liquidity and Capital Resources", ("Cash Flows", "Debt"))):
        b.heading(sec, size=12, color=(0.1, 0.3, 0.7))  # the section look: blue
        b.para()
        for s in subs:
            b.heading(s, size=12)  # the sub-section look: black, the same size
            b.para()
    doc = extract(b.save(tmp_path / "looks.pdf"), progress=False)
    parsed = parse_document(doc, outline="ignore", predictor="font-size")
    nested = assign_levels(doc, list(parsed.headings), predictor="font-size", nest_looks=True)
    hs = {h.text: h.level for h in nested.headings}
    assert hs["Overview of the Year"] == hs["Item 7. Management's Discussion and Analysis"] + 1
    for sub in ("Highlights", "Revenue", "Income Taxes", "Debt"):
        assert hs[sub] == hs["Overview of the Year"] + 1, sub
    # without the pass (the default), size alone puts both looks on one level
    flat = {h.text: h.level for h in parsed.headings}
    assert flat["Highlights"] == flat["Overview of the Year"]
    assert nested.stats["look_nested"] == 7


@pytest.mark.parametrize("font, cls", [("ABCDEF+Arial-BoldMT", "sans"), ("Calibri-Bold", "sans"),
                                        ("TimesNewRomanPS-BoldMT", "serif"), ("Georgia-Italic", "serif"),
                                        ("CMR10", "serif"), ("LMRoman10-Regular", "serif"), ("Times-Roman", "serif"),
                                        ("Courier-Bold", "mono"), ("Consolas", "mono"), ("Helvetica-Roman", "sans"),
                                        ("Gotham-Book", "sans"), ("CenturyGothic-Bold", "sans"), ("", "")])
def test_a_look_knows_a_fonts_class_not_its_name(font, cls):
    from structrag.levels.style import font_family

    # two sans faces set one look: a report assembled from parts in Calibri and Arial is one style
    assert font_family(font) == cls
