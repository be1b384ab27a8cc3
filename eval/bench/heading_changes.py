"""Which detected headings a change adds or removes, on every shared PDF.

    python -m eval.bench.heading_changes write OUT.json [--data DIR]
    python -m eval.bench.heading_changes diff BEFORE.json AFTER.json [--md FILE]

``write`` runs detection with the PDF outline ignored (printed contents allowed, as users get it) on
every PDF under ``headings/``, ``retrieval/pdfs/``, ``longdoc/`` and ``prospectus-zh/`` of the shared
data and records ``(page, text, source)`` of each detected heading.  Run it in the checkout before and
the checkout after a change (``git worktree add``).

``diff`` lists, per document, the ``(page, text)`` pairs only one side has: the headings a rule removed
(``-``) and the ones it added or cut differently (``+``), with totals.  The precision benchmark
(:mod:`eval.bench.precision`) judges a change on a few hundred labelled headings; this list is the rest
of the evidence: every heading that moved, to be read on its page before a rule is kept.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Mapping

from eval.bench.precision import detect
from eval.shared_data import shared_data_dir

#: the shared folders whose PDFs are compared
FOLDERS = ("headings", "retrieval/pdfs", "longdoc", "prospectus-zh")


def pdfs_of(data: Path) -> list[Path]:
    out: list[Path] = []
    for folder in FOLDERS:
        out.extend(sorted((data / folder).rglob("*.pdf")))
    return out


def detected(path: Path) -> list[tuple[int, str, str]] | str:
    """``(page, text, source)`` of every heading detected with the outline ignored, as the precision
    benchmark detects them; an error's text when the file cannot be read."""
    from structrag.errors import StructragError

    try:
        _, heads = detect(path)
    except StructragError as e:
        return str(e)
    return [(h.page, h.text, h.source) for h in heads]


def write(data: Path, out: Path) -> int:
    pdfs = pdfs_of(data)
    if not pdfs:
        print(f"no PDFs under {data} ({', '.join(FOLDERS)})", file=sys.stderr)
        return 2
    found: dict[str, Any] = {}
    for p in pdfs:
        found[str(p.relative_to(data))] = detected(p)
    out.write_text(json.dumps(found, ensure_ascii=False), encoding="utf-8")
    print(f"{len(pdfs)} PDFs, {sum(len(v) for v in found.values() if isinstance(v, list))} headings -> {out}")
    return 0


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """Per document (present on both sides), the ``(page, text)`` pairs only one side has."""
    docs: dict[str, dict[str, Any]] = {}
    totals = {"before": 0, "after": 0, "removed": 0, "added": 0}
    for name in sorted(set(before) & set(after)):
        a, b = before[name], after[name]
        if isinstance(a, str) or isinstance(b, str):
            docs[name] = {"error": a if isinstance(a, str) else b}
            continue
        sa, sb = {(int(x[0]), x[1]) for x in a}, {(int(x[0]), x[1]) for x in b}
        totals["before"] += len(a)
        totals["after"] += len(b)
        gone, new = sorted(sa - sb), sorted(sb - sa)
        totals["removed"] += len(gone)
        totals["added"] += len(new)
        if gone or new:
            docs[name] = {"before": len(a), "after": len(b), "removed": gone, "added": new}
    return {"documents": docs, "totals": totals}


def to_markdown(res: Mapping[str, Any]) -> str:
    t = res["totals"]
    lines = ["# Detected headings that changed", "",
             f"{t['before']} → {t['after']} headings; {t['removed']} (page, text) pairs removed, {t['added']} added.", ""]
    for name, d in res["documents"].items():
        if "error" in d:
            lines.append(f"- **{name}**: {d['error']}")
            continue
        lines.append(f"## {name} ({d['before']} → {d['after']})")
        lines += [f"- p.{p + 1} {text!r}" for p, text in d["removed"]]
        lines += [f"+ p.{p + 1} {text!r}" for p, text in d["added"]]
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.heading_changes", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write", help="detect headings on every shared PDF and write them to OUT")
    w.add_argument("out", type=Path)
    w.add_argument("--data", default=None, help="the shared data folder")
    d = sub.add_parser("diff", help="list the headings only one of two written files has")
    d.add_argument("before", type=Path)
    d.add_argument("after", type=Path)
    d.add_argument("--md", type=Path, default=None, help="also write the list here as Markdown")
    args = ap.parse_args(argv)
    if args.cmd == "write":
        return write(shared_data_dir(args.data, required=True), args.out)
    res = changes(json.loads(args.before.read_text(encoding="utf-8")), json.loads(args.after.read_text(encoding="utf-8")))
    md = to_markdown(res)
    if args.md is not None:
        args.md.write_text(md, encoding="utf-8")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
