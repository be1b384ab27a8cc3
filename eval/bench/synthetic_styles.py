"""Publisher templates for the synthetic corpus: one random :class:`Style` per family, drawn from a seed.

What varies is what varies between real publishers: fonts, body and heading sizes (two levels may share
a size and differ only by weight, colour, capitals or numbering), colours, indentation, numbering
schemes, one or two columns, running headers and footers, a cover, a printed contents page, captions,
callout boxes, numeric tables with row groups and signature blocks.  Used by
:mod:`eval.bench.synthetic_render`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

FONTS = ("serif", "Times", "sans-serif")  # Charis SIL, Nimbus Roman, Nimbus Sans in MuPDF's Story
COLOURS = ("#000000", "#1f3b70", "#7a1f1f", "#0b5d4b", "#444444", "#5a2d82", "#b35c00", "#00577a")
NUMBERINGS = ("none", "decimal", "decimal-dot", "section", "chapter", "roman-alpha", "alpha", "legal")
CAPTIONS = ("Table {n}: ", "Table {n} - ", "Table {n}. ", "TABLE {n} ", "Exhibit {n}: ")
PAGE_NUMBERS = ("{n}", "Page {n}", "- {n} -", "{n} | {org}", "Page {n} of {total}")
SIDEBAR_TITLES = ("Key points", "At a glance", "Note", "Did you know?", "In brief", "Highlights",
                  "Key facts", "Important", "Summary", "Case study")


@dataclass(frozen=True, slots=True)
class HeadingStyle:
    """How one heading level is printed."""

    size: float
    bold: bool
    italic: bool
    colour: str
    caps: str  # "none", "upper" or "small" (small capitals drawn as upper case at two sizes)
    indent: float  # points
    font: str
    align: str  # "left" or "center"
    rule: bool  # a line under the heading


@dataclass(frozen=True, slots=True)
class Style:
    """One publisher template (``family`` = ``synthetic-<k>``)."""

    family: str
    body_font: str
    body_size: float
    line_height: float
    page: str  # "a4" or "letter"
    margin: float
    columns: int
    justify: bool
    levels: tuple[HeadingStyle, ...]  # levels 1-4
    numbering: str
    numbered_levels: int
    level1_new_page: bool
    cover: bool
    contents: bool
    header: bool
    footer: str  # a PAGE_NUMBERS pattern, "" for none
    body_numbers: bool  # printed page numbers count from the first body page (else the physical page)
    caption: str
    sidebar_rate: float
    table_rate: float  # numeric tables with row groups, per level-1 or level-2 section
    signature: bool
    accent: str


def _sizes(rng: random.Random, body: float) -> list[float]:
    """Heading sizes for levels 1-4, non-increasing, sometimes equal for two neighbours (or all the lower ones)."""
    top = body + rng.choice((3, 4, 5, 6, 8, 10))
    sizes = [top]
    for _ in range(3):
        step = rng.choice((0, 1, 1.5, 2, 2, 3)) if sizes[-1] > body else 0
        sizes.append(max(body, sizes[-1] - step))
    return sizes


def draw_style(k: int, seed: int) -> Style:
    """The ``k``-th template for ``seed`` (same arguments, same template)."""
    rng = random.Random(f"synthetic-style:{seed}:{k}")
    body = rng.choice((8, 8.5, 9, 9.5, 10, 10, 10.5, 11, 11, 12))
    head_font = rng.choice(FONTS)
    body_font = rng.choice(FONTS) if rng.random() < 0.5 else head_font
    accent = rng.choice(COLOURS)
    sizes = _sizes(rng, body)
    levels = []
    for lv, size in enumerate(sizes, 1):
        bold = rng.random() < (0.9 if lv <= 2 else 0.6)
        italic = not bold and rng.random() < 0.5 or lv >= 3 and rng.random() < 0.2
        caps = rng.choices(("none", "upper", "small"), (6, 2, 1) if lv <= 2 else (12, 1, 1))[0]
        levels.append(HeadingStyle(
            size=size, bold=bold, italic=italic,
            colour=accent if rng.random() < (0.6 if lv <= 2 else 0.3) else "#000000",
            caps=caps, indent=rng.choice((0, 0, 0, 6, 12, 18)) * (lv - 1) / 2,
            font=head_font if rng.random() < 0.85 else body_font,
            align="center" if lv == 1 and rng.random() < 0.15 else "left",
            rule=lv == 1 and rng.random() < 0.3))
    _separate(levels, rng)
    numbering = rng.choice(NUMBERINGS)
    return Style(
        family=f"synthetic-{k}", body_font=body_font, body_size=body,
        line_height=rng.choice((1.15, 1.25, 1.35, 1.5)), page=rng.choice(("a4", "letter")),
        margin=rng.choice((50, 60, 72, 80)), columns=2 if rng.random() < 0.25 else 1,
        justify=rng.random() < 0.5, levels=tuple(levels), numbering=numbering,
        numbered_levels=rng.choice((1, 2, 3, 4, 4)) if numbering != "none" else 0,
        level1_new_page=rng.random() < 0.4, cover=rng.random() < 0.85, contents=rng.random() < 0.7,
        header=rng.random() < 0.75, footer=rng.choice(PAGE_NUMBERS) if rng.random() < 0.9 else "",
        body_numbers=rng.random() < 0.35, caption=rng.choice(CAPTIONS),
        sidebar_rate=rng.choice((0, 0.1, 0.25)), table_rate=rng.choice((0, 0.15, 0.3)),
        signature=rng.random() < 0.5, accent=accent)


def _separate(levels: list[HeadingStyle], rng: random.Random) -> None:
    """Make each level look different from the one above it when their sizes are equal (bold, colour,
    capitals or italics): a reader, and a model, need some cue; numbering may be the only other one."""
    from dataclasses import replace

    for i in range(1, len(levels)):
        a, b = levels[i - 1], levels[i]
        if (a.size, a.bold, a.italic, a.colour, a.caps) == (b.size, b.bold, b.italic, b.colour, b.caps):
            cue = rng.choice(("bold", "italic", "colour", "caps"))
            if cue == "bold":
                b = replace(b, bold=not a.bold)
            elif cue == "italic":
                b = replace(b, italic=not a.italic)
            elif cue == "colour":
                b = replace(b, colour="#000000" if a.colour != "#000000" else "#555555")
            else:
                b = replace(b, caps="none" if a.caps != "none" else "upper")
            levels[i] = b


def _roman(n: int) -> str:
    out = ""
    for v, s in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
                 (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= v:
            out += s
            n -= v
    return out


def _alpha(n: int) -> str:
    return chr(ord("A") + (n - 1) % 26) * (1 + (n - 1) // 26)


def number_label(scheme: str, counters: list[int]) -> str:
    """The printed number of a heading whose level is ``len(counters)`` (``counters`` = 1-based positions
    along its path), with its trailing separator; "" for none."""
    lv, n = len(counters), counters[-1]
    if scheme == "decimal":
        return ".".join(map(str, counters)) + " "
    if scheme == "decimal-dot":
        return ".".join(map(str, counters)) + ". "
    if scheme in ("section", "chapter"):
        word = "Section" if scheme == "section" else "Chapter"
        return f"{word} {n}: " if lv == 1 else ".".join(map(str, counters)) + " "
    if scheme == "roman-alpha":
        return (f"{_roman(n)}. ", f"{_alpha(n)}. ", f"{n}. ", f"({_alpha(n).lower()}) ")[lv - 1]
    if scheme == "alpha":
        return _alpha(counters[0]) + ("." + ".".join(map(str, counters[1:])) if lv > 1 else ".") + " "
    if scheme == "legal":
        return (f"{n}. ", f"({_alpha(n).lower()}) ", f"({_roman(n).lower()}) ", f"({n}) ")[lv - 1]
    return ""


def company(rng: random.Random) -> tuple[str, list[str]]:
    """A company-like name and its address lines, for covers and signature blocks."""
    first = ("Northwind", "Bluewater", "Crestline", "Harbor", "Meridian", "Summit", "Ironbark", "Silverleaf",
             "Oakridge", "Redfern", "Keystone", "Lakeside", "Granite", "Aurora", "Pinecrest", "Westgate")
    second = ("Holdings", "Group", "Partners", "Systems", "Capital", "Industries", "Consulting", "Networks",
              "Foundation", "Authority", "Services", "Labs")
    suffix = ("Ltd", "Inc.", "plc", "S.A.", "GmbH", "Pty Ltd", "LLC", "")
    name = " ".join(x for x in (rng.choice(first), rng.choice(second), rng.choice(suffix)) if x)
    street = f"{rng.randint(1, 480)} {rng.choice(('King', 'Queen', 'Market', 'Collins', 'Elm', 'Main', 'Bridge'))} " \
             f"{rng.choice(('Street', 'Road', 'Avenue', 'Lane'))}"
    city = rng.choice(("Springfield 4021", "Riverton, RV 20931", "Port Ellis 3300", "Lindenau 04177",
                       "Kingsbridge KB2 7QT", "Valmont 75012"))
    return name, [street, city, f"Tel. +{rng.randint(10, 99)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}"]


def person(rng: random.Random) -> tuple[str, str]:
    """A signatory's name and role."""
    given = ("Alex", "Maria", "John", "Priya", "Chen", "Laura", "Samuel", "Ines", "Tomas", "Grace")
    family = ("Morgan", "Rossi", "Fischer", "Okafor", "Tanaka", "Dubois", "Novak", "Walsh", "Silva", "Berg")
    role = ("Chief Executive Officer", "Chair of the Board", "Director", "Head of Security",
            "Chief Financial Officer", "Secretary", "Programme Manager")
    return f"{rng.choice(given)} {rng.choice(family)}", rng.choice(role)
