"""Helpers for the index tests: small real report PDFs with an outline, and a queries file.

(No tests here, and not named like a test module; the index, Ray, engine and retriever tests import it.)
"""

from __future__ import annotations

import json
from pathlib import Path

from pdfgen import PDFBuilder

# (level, heading, paragraphs); every level-1 section starts a new page
ACME = [
    (1, "Item 1. Business", ["Acme Corporation makes adhesives, abrasives and safety products for industrial customers "
                             "in seventy countries, sold through distributors and directly."]),
    (2, "Business Segments", ["The company operates four business segments: Industrial, Safety and Graphics, "
                              "Health Care, and Consumer. Each segment is managed by its own president."]),
    (1, "Item 7. Management's Discussion and Analysis", ["This discussion should be read with the financial "
                                                         "statements and the notes that follow them."]),
    (2, "Liquidity and Capital Resources", ["Capital expenditures were $1,577 million in 2024, mostly purchases of "
                                            "property, plant and equipment for new manufacturing lines.",
                                            "The company expects capital spending of $1.7 billion in 2025, funded by "
                                            "cash from operations."]),
    (2, "Results of Operations", ["Net sales increased 3.5 percent to $32.8 billion. Operating income margins "
                                  "improved in every segment as raw material costs fell."]),
    (1, "Item 8. Financial Statements", ["The consolidated financial statements and notes follow."]),
    (2, "Consolidated Statement of Cash Flows", ["Net cash provided by operating activities 6,439. Purchases of "
                                                 "property, plant and equipment (1,577). Dividends paid (3,193)."]),
]

GLOBEX = [
    (1, "Overview", ["Globex Inc. sells logistics software to retailers and runs warehouses in Europe."]),
    (2, "Risk Factors", ["Competition from larger cloud vendors and the loss of key customers could reduce revenue. "
                         "Cyber attacks could interrupt warehouse operations."]),
    (1, "Shareholder Returns", ["The board declared dividends of $2.10 per share and repurchased 4 million shares "
                                "during the year."]),
]


def make_report(path: Path, sections=ACME, *, extra: str | None = None) -> Path:
    """A PDF with one page per level-1 section and a matching outline (bookmarks)."""
    b = PDFBuilder(header=None, footer="{page}")
    toc = []
    for level, title, paras in sections:
        if level == 1:
            b.new_page()
        b.heading(title, size=18 if level == 1 else 13)
        toc.append([level, title, b.doc.page_count])
        for p in paras:
            b.para(p)
    if extra:
        b.new_page()
        b.heading("Subsequent Events", size=18)
        toc.append([1, "Subsequent Events", b.doc.page_count])
        b.para(extra)
    return b.save(path, toc=toc)



def make_reports(folder: Path) -> Path:
    """``folder`` with the two generated reports, acme.pdf and globex.pdf (created if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    make_report(folder / "acme.pdf")
    make_report(folder / "globex.pdf", GLOBEX)
    return folder


def lexical_index(root: Path) -> Path:
    """``root/pdfs`` with the two reports, indexed without embeddings by the real CLI into ``root/index``."""
    from structrag.cli import main

    make_reports(root / "pdfs")
    out = root / "index"
    assert main(["index", str(root / "pdfs"), "--out", str(out), "--no-dense", "--quiet"]) == 0
    return out


def write_queries(path: Path) -> Path:
    rows = [
        {"qid": "q1", "query": "How much were capital expenditures in 2024?", "doc": "acme.pdf",
         "relevant_pages": [1], "company": "Acme"},
        {"qid": "q2", "query": "What are the company's business segments?", "doc": "acme.pdf",
         "relevant_pages": [0], "company": "Acme"},
        {"qid": "q3", "query": "dividends paid in the cash flow statement", "doc": "acme.pdf",
         "relevant_pages": [2], "company": "Acme"},
        {"qid": "q4", "query": "What risks does Globex face?", "doc": "globex.pdf", "relevant_pages": [0],
         "company": "Globex"},
        {"qid": "q5", "query": "dividend per share declared by the board", "doc": "globex.pdf",
         "relevant_pages": [1], "company": "Globex"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
