"""How well :func:`structrag.identity.identify` reads a document's identity.

    python -m eval.bench.identity [--data DIR] [--out structrag-out/identity/identity.json]

References come from the shared data, never from the rules:

* ``retrieval/`` (37 filings and releases): issuer = ``docs.jsonl``'s ``company``; type, year and
  quarter from the FinanceBench file name (``3M_2018_10K``, ``AMCOR_2023Q2_10Q``,
  ``PEPSICO_2023_8K_dated-2023-05-05``, ``MGMRESORTS_2022Q4_EARNINGS``: an earnings release);
  language ``en``.  FinanceBench names a period by the *fiscal* year and quarter.
* ``headings/`` (17): what each file name says (``Verizon_2022_10_K``: Verizon, 10-K, 2022;
  ``SMA_Solar_Annual_Report_2023``: annual report, 2023; the six manuals: type ``manual``), written out
  in :data:`HEADINGS`; a field the name does not give has no reference.
* ``prospectus-zh/`` (3): issuer = the manifest's ``company``, type ``prospectus``, language ``zh``.
* ``longdoc/`` (24, MMLongBench categories, no issuer or period): only what is typed, as a check that
  papers, brochures and court files are not taken for filings (no accuracy: the categories are not
  ours).

Each PDF is extracted whole, as at ingestion (the auditor's report an issuer may be read from comes
late), and identified with its
outline's first titles as headings.  A field is right when it equals the reference (issuer: one
normalised name contains the other, :func:`~structrag.identity.normalize_issuer`); a missing value is
wrong.  Intervals: documents resampled (2,000 draws).
"""

from __future__ import annotations

import argparse
import json
import re
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from eval.bench.common import bootstrap_ci, data_dir, out_path, run_info
from structrag.extraction.pdf import extract
from structrag.identity import identify, normalize_issuer

FIELDS = ("issuer", "doc_type", "year", "quarter", "language")

#: headings/ references, from the file names alone (None: the name does not say)
HEADINGS: dict[str, dict[str, Any]] = {
    "AES_2020_10_K": {"issuer": "AES", "doc_type": "10-K", "year": 2020},
    "Verizon_2022_10_K": {"issuer": "Verizon", "doc_type": "10-K", "year": 2022},
    "JPMorgan_Chase_2023_Q2_10_Q": {"issuer": "JPMorgan Chase", "doc_type": "10-Q", "year": 2023, "quarter": 2},
    "TransUnion_Annual_Report_2022": {"issuer": "TransUnion", "doc_type": "annual report", "year": 2022},
    "Albany_International_2022": {"issuer": "Albany International", "year": 2022},
    "TD_SYNNEX_FY2022": {"issuer": "TD SYNNEX", "year": 2022},
    "Addiko_Bank_Sustainability_Report_2023": {"issuer": "Addiko Bank", "doc_type": "sustainability report",
                                               "year": 2023},
    "Swiss_Water_Decaffeinated_Coffee_2022": {"issuer": "Swiss Water Decaffeinated Coffee", "year": 2022},
    "SMA_Solar_Annual_Report_2023": {"issuer": "SMA Solar", "doc_type": "annual report", "year": 2023},
    "Federal_Reserve_2023_Annual_Report_2_levels": {"issuer": "Federal Reserve", "doc_type": "annual report",
                                                    "year": 2023},
    "US_DOT_2022_agency_plan": {"issuer": "US DOT", "year": 2022},
}
_FORMS = {"10K": "10-K", "10Q": "10-Q", "8K": "8-K", "EARNINGS": "earnings release"}


def filing_reference(file: str, company: str) -> dict[str, Any]:
    """``3M_2018_10K.pdf`` -> issuer, type, year (and ``2023Q2`` -> quarter) as FinanceBench names them."""
    m = re.match(r"^.+?_(\d{4})(?:Q([1-4]))?_([0-9A-Z]+?)(?:_dated-.*)?\.pdf$", file)
    if not m:
        raise ValueError(f"unexpected FinanceBench file name {file!r}")
    ref: dict[str, Any] = {"issuer": company, "doc_type": _FORMS[m.group(3)], "year": int(m.group(1)), "language": "en"}
    # a period without a quarter is a year (10-K) or a date (8-K): no quarter to read
    ref["quarter"] = int(m.group(2)) if m.group(2) else None
    return ref


def references(root: Path) -> list[tuple[str, Path, dict[str, Any]]]:
    """``(set, pdf, reference)`` of every shared PDF with a reference."""
    out = []
    for line in (root / "retrieval" / "docs.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        out.append(("filings", root / "retrieval" / "pdfs" / d["file"], filing_reference(d["file"], d["company"])))
    for line in (root / "headings" / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        ref = dict(HEADINGS.get(d["doc_id"], {}))
        if d["group"] == "manual":
            ref["doc_type"] = "manual"
        ref["language"] = "en"
        out.append(("headings", root / "headings" / f"{d['doc_id']}.pdf", ref))
    for line in (root / "prospectus-zh" / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        out.append(("prospectus-zh", root / "prospectus-zh" / d["file"],
                    {"issuer": d["company"], "doc_type": "prospectus", "language": "zh"}))
    return out


def correct(field: str, want: Any, got: Any) -> bool:
    if got is None:
        return False
    if field == "issuer":
        a, b = normalize_issuer(str(want)), normalize_issuer(str(got))
        return bool(a and b) and (a in b or b in a)
    return got == want


def identify_pdf(path: Path):
    doc = extract(path, progress=False)
    return identify(doc, headings=[o.title for o in doc.outline[:3]])


def run(root: Path) -> dict[str, Any]:
    rows = []
    t0 = time.perf_counter()
    for group, pdf, ref in references(root):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ident = identify_pdf(pdf)
        got = {f: getattr(ident, f) for f in FIELDS}
        # the report keeps the fields scored, not the cover's title text (the PDFs' words stay out of the repository)
        kept = {k: v for k, v in ident.to_dict().items() if k != "title"}
        rows.append({"set": group, "doc": pdf.name, "reference": ref, "identity": kept,
                     "right": {f: correct(f, ref[f], got[f]) if ref.get(f) is not None else None
                               for f in FIELDS if f in ref},
                     # a quarter reference of None (an annual filing): right when none is read
                     **({"quarter_none_right": got["quarter"] is None} if "quarter" in ref and ref["quarter"] is None
                        else {})})
    secs = time.perf_counter() - t0
    summary: dict[str, Any] = {}
    for group in ("all", "filings", "headings", "prospectus-zh"):
        sel = [r for r in rows if group == "all" or r["set"] == group]
        per: dict[str, Any] = {}
        for f in FIELDS:
            v = [1.0 if r["right"][f] else 0.0 for r in sel if r["right"].get(f) is not None]
            if v:
                per[f] = {"n": len(v), "accuracy": round(sum(v) / len(v), 3), "ci95": bootstrap_ci(v)}
        v = [1.0 if r["quarter_none_right"] else 0.0 for r in sel if "quarter_none_right" in r]
        if v:
            per["no_quarter_on_annual"] = {"n": len(v), "accuracy": round(sum(v) / len(v), 3), "ci95": bootstrap_ci(v)}
        summary[group] = per
    longdoc = []
    docs = root / "longdoc" / "docs.jsonl"
    if docs.is_file():
        for line in docs.read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ident = identify_pdf(root / "longdoc" / "pdfs" / d["file"])
            longdoc.append({"doc": d["file"], "category": d["doc_type"], "doc_type": ident.doc_type,
                            "language": ident.language})
    filing_types = {"10-K", "10-Q", "8-K", "20-F", "earnings release"}
    return {
        "documents": len(rows),
        "seconds": round(secs, 1),
        "summary": summary,
        "longdoc": {
            "documents": len(longdoc),
            "typed": dict(Counter(r["doc_type"] for r in longdoc)),
            "taken_for_filings": [r["doc"] for r in longdoc if r["doc_type"] in filing_types],
            "languages": dict(Counter(str(r["language"]) for r in longdoc)),
            "rows": longdoc,
        },
        "misses": [{"doc": r["doc"], "field": f, "reference": r["reference"][f],
                    "read": r["identity"][f]} for r in rows for f, ok in r["right"].items() if ok is False],
        "rows": rows,
    }


def filter_run(root: Path, index_dir: Path, k: int = 50) -> dict[str, Any]:
    """Collection-wide search over an index of ``retrieval/pdfs`` for every question of ``retrieval/``,
    without a filter and with ``where={company, year}`` taken from the question's reference (what a
    user who names them gets; an oracle, not routing).  Relevant: the question's pages of its document."""
    from eval.retrieval_metrics import average_precision, recall_at_k
    from retrievers.index import Index
    from structrag.errors import ConfigError

    import numpy as np

    company = {json.loads(x)["file"]: json.loads(x)["company"]
               for x in (root / "retrieval" / "docs.jsonl").read_text(encoding="utf-8").splitlines()}
    queries = [json.loads(x) for x in (root / "retrieval" / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    out: dict[str, Any] = {"queries": len(queries), "k": k}
    with Index.open(index_dir) as ix:
        t0 = time.perf_counter()
        ids = ix.identities()
        out["identities_seconds"] = round(time.perf_counter() - t0, 2)
        out["known"] = sum(1 for v in ids.values() if v is not None)
        runs: dict[str, dict[str, list[float]]] = {"none": {"ap": [], "r5": [], "ms": []},
                                                  "company+year": {"ap": [], "r5": [], "ms": []}}
        errors = []
        for q in queries:
            rel = {(q["doc"], p) for p in q["relevant_pages"]}
            ref = filing_reference(q["doc"], company[q["doc"]])
            for name, where in (("none", None), ("company+year", {"company": ref["issuer"], "year": ref["year"]})):
                t = time.perf_counter()
                try:
                    rows = ix.rank(q["query"], k=k, where=where).indices
                except ConfigError:  # no document matches: the user is shown the known values
                    rows = np.zeros(0, np.int64)
                    errors.append(q["qid"])
                runs[name]["ms"].append(1000 * (time.perf_counter() - t))
                pages = ix.page_ranking(rows.tolist())
                runs[name]["ap"].append(average_precision(pages, rel))
                runs[name]["r5"].append(recall_at_k(pages, rel, 5))
        for name, r in runs.items():
            out[name] = {"map": round(float(np.mean(r["ap"])), 3), "map_ci95": bootstrap_ci(r["ap"]),
                         "r5": round(float(np.mean(r["r5"])), 3), "r5_ci95": bootstrap_ci(r["r5"]),
                         "p50_ms": round(float(np.median(r["ms"])), 1)}
        out["filter_matched_nothing"] = sorted(set(errors))
        out["documents_wrongly_filtered_out"] = sorted({q["doc"] for q in queries
                                                         if not where_ok(ids.get(q["doc"]), company[q["doc"]],
                                                                         filing_reference(q["doc"], company[q["doc"]]))})
    return out


def where_ok(ident, company: str, ref: dict[str, Any]) -> bool:
    """Whether the document's own identity passes the company+year filter its questions get."""
    from retrievers.store.identities import Where

    return Where({"company": company, "year": ref["year"]}).matches(ident)


def markdown(rep: dict[str, Any]) -> str:
    lines = ["| set | issuer | type | year | quarter | language |", "|---|---:|---:|---:|---:|---:|"]
    for group, per in rep["summary"].items():
        cells = []
        for f in FIELDS:
            p = per.get(f)
            cells.append(f"{p['accuracy']:.3f} ({p['n']}; {p['ci95'][0]:.2f}–{p['ci95'][1]:.2f})" if p else "–")
        lines.append(f"| {group} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.identity", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=None, help="the shared data folder (default: found beside the checkout)")
    ap.add_argument("--out", default=out_path("identity", "identity.json"), help="the JSON report")
    ap.add_argument("--index", default=None, metavar="DIR",
                    help="an index of retrieval/pdfs: also search every retrieval/ question with and without a "
                         "company+year filter (skipped without it)")
    args = ap.parse_args(argv)
    root = data_dir(explicit=args.data)
    rep = {**run_info("eval.bench.identity", argv), **run(root)}
    if args.index:
        rep["filter"] = filter_run(root, Path(args.index))
        print(json.dumps({k: v for k, v in rep["filter"].items()}, indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rep, ensure_ascii=False, indent=1), encoding="utf-8")
    print(markdown(rep))
    print(f"\n{rep['documents']} documents in {rep['seconds']} s; misses:")
    for m in rep["misses"]:
        print(f"  {m['doc']}: {m['field']} {m['reference']!r} read {m['read']!r}")
    ld = rep["longdoc"]
    print(f"longdoc ({ld['documents']}): typed {ld['typed']}; taken for filings: {ld['taken_for_filings']}; "
          f"languages {ld['languages']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
