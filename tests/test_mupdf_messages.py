"""MuPDF's own messages go to the ``structrag.mupdf`` log and one counted document warning, never stdout.

Also: the lean PyMuPDF import (``import structrag`` imports no PyMuPDF; the
first import of pymupdf, structrag.extraction.import_pymupdf, skips pymupdf-layout / pymupdf4llm
and installs no import hook).
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import textwrap
import warnings
import zlib
from pathlib import Path


from structrag._pymupdf import MuPDFMessages
from structrag.errors import StructragWarning
from structrag.extraction import extract

REPO = Path(__file__).resolve().parents[1]


def damaged_pdf(path: Path, pages: int = 3) -> Path:
    """A PDF whose pages MuPDF reads with complaints: an unknown colour space, a truncated Flate stream.

    Each page shows a heading and a line of text, then sets a fill colour space
    that does not exist (MuPDF: "syntax error: unknown colorspace"); its
    second content stream is Flate data cut short ("premature end of data").
    """
    font = 3 + 3 * pages
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % (3 + 3 * i) for i in range(pages)),
                                                          pages)]
    for i in range(pages):
        text = (b"BT /F1 16 Tf 72 720 Td (Section %d Overview) Tj ET\n"
                b"BT /F1 10 Tf 72 690 Td (The segment grew in the year, and margins improved.) Tj ET\n" % (i + 1))
        bad = zlib.compress(b"/CSX cs 0.5 scn BT /F1 10 Tf 72 600 Td (Lost line) Tj ET\n")[:-8]
        objs.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> "
                    b"/ColorSpace << /CSX [/NoSuchSpace] >> >> /Contents [%d 0 R %d 0 R] >>" % (font, 4 + 3 * i, 5 + 3 * i))
        objs.append(b"<< /Length %d >>\nstream\n" % len(text) + text + b"\nendstream")
        objs.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(bad) + bad + b"\nendstream")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, o in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def _cli(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from structrag.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO, timeout=300)


def test_toc_json_stays_json_and_messages_are_counted(tmp_path):
    pdf = damaged_pdf(tmp_path / "damaged.pdf")
    proc = _cli("toc", str(pdf), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "MuPDF" not in proc.stdout  # PyMuPDF used to print "MuPDF error: ..." here
    out = json.loads(proc.stdout)
    assert out["pages"] == 3
    warning = [line for line in proc.stderr.splitlines() if "MuPDF" in line]
    assert len(warning) == 1, proc.stderr  # one counted line, not one per message
    assert "damaged.pdf" in warning[0] and re.search(r"MuPDF reported \d+ problem", warning[0])


def test_extract_logs_each_message_with_the_file_name(tmp_path, caplog):
    import pymupdf

    pdf = damaged_pdf(tmp_path / "damaged.pdf", pages=2)
    before = pymupdf.TOOLS.mupdf_display_errors()
    pymupdf.TOOLS.reset_mupdf_warnings()
    pymupdf.JM_mupdf_warnings_store.append("a message of the caller's")  # PyMuPDF's store: not ours to empty
    with caplog.at_level(logging.INFO, logger="structrag"), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        doc = extract(pdf)
    records = [r for r in caplog.records if r.name == "structrag.mupdf"]
    assert records and all(str(pdf) in r.getMessage() for r in records)
    assert any("colorspace" in r.getMessage() for r in records)
    assert any("flate" in r.getMessage() for r in records)
    mine = [w for w in doc.warnings if "MuPDF reported" in w]
    assert len(mine) == 1 and str(pdf) in mine[0]
    n = int(re.search(r"reported (\d+) problem", mine[0]).group(1))
    assert n >= len(records) >= 4
    assert any(issubclass(w.category, StructragWarning) and "MuPDF reported" in str(w.message) for w in seen)
    assert "margins improved" in doc.text  # the readable text is kept
    assert pymupdf.TOOLS.mupdf_display_errors() == before
    assert pymupdf.TOOLS.mupdf_warnings() == "a message of the caller's"


def test_clean_pdf_gets_no_mupdf_warning(tmp_path):
    from pdfgen import numbered_report

    doc = extract(numbered_report(tmp_path / "clean.pdf"))
    assert not [w for w in doc.warnings if "MuPDF" in w]


def test_repeated_messages_are_counted():
    m = MuPDFMessages("x.pdf")
    m.messages = ["premature end of data in flate filter", "... repeated 12 times...", "other"]
    assert m.count == 13  # MuPDF's N counts the line printed before it
    assert "13 problem(s)" in m.warning()


def test_shared_pdf_with_mupdf_messages(shared_data, caplog):
    pdf = shared_data / "headings" / "Addiko_Bank_Sustainability_Report_2023.pdf"
    with caplog.at_level(logging.INFO, logger="structrag"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = extract(pdf)
    assert [r for r in caplog.records if r.name == "structrag.mupdf" and pdf.name in r.getMessage()]
    assert [w for w in doc.warnings if "MuPDF reported" in w and pdf.name in w]
    assert doc.page_count > 10 and len(doc.blocks) > 100


def test_import_structrag_imports_no_pymupdf_and_the_first_import_is_lean():
    code = textwrap.dedent("""
        import sys
        meta_path = list(sys.meta_path)
        import structrag
        assert "pymupdf" not in sys.modules
        assert sys.meta_path == meta_path, "import structrag must not touch the import system"
        from structrag.extraction import import_pymupdf
        pymupdf = import_pymupdf()
        print(sorted(m for m in ("pymupdf4llm", "pymupdf.layout") if sys.modules.get(m) is not None))
        print(type(pymupdf.__spec__.loader).__name__, pymupdf.Document is not None)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "[]"
    assert "Lean" not in lines[1] and lines[1].endswith("True")
