"""``structrag toc PDF``: print a PDF's heading tree as text, JSON or Markdown."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..options import ParseOptions
from ..text import printable
from .options import (add_level_arguments, add_option_arguments, add_progress_arguments, parse_options_from_args,
                      report_fallback)

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    """Add ``toc`` to the ``structrag`` sub-parsers."""
    p = sub.add_parser("toc", help="print a PDF's heading tree", description="Print a PDF's heading tree "
                       "(with 1-based page numbers), as text, JSON or Markdown.")
    p.add_argument("pdf", help="the PDF file")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON: document, pages, headings in reading order")
    fmt.add_argument("--markdown", action="store_true", help="print the headings as Markdown '#' lines")
    p.add_argument("--corrections", default=None, metavar="FILE",
                   help="apply a corrections file exported by 'structrag view' (delete, re-level, add headings)")
    add_progress_arguments(p)
    add_option_arguments(p, ParseOptions, title="parsing")
    add_level_arguments(p, stats_help="print timings and the level predictor's accounting: calls, images, "
                        "tokens, retries, projections, fallbacks")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """``structrag toc``: parse the PDF and print its tree."""
    from ..corrections import apply_to_parsed, load_corrections
    from ..pipeline import parse_pdf

    corrections = load_corrections(args.corrections) if getattr(args, "corrections", None) else None  # fail fast
    options, run_options = parse_options_from_args(args)
    parsed = parse_pdf(args.pdf, options, progress=args.progress, **run_options)
    if corrections is not None:  # a user's fixes (structrag view): after levels, before the tree
        parsed = apply_to_parsed(parsed, corrections)
    doc, tree = parsed.document, parsed.tree
    for w in doc.warnings:
        print(printable(f"structrag: warning: {w}"), file=sys.stderr)
    report_fallback(parsed.stats.get("levels"), doc.path)
    if args.json:
        out: dict[str, Any] = {
            "document": doc.name,
            "pages": doc.page_count,
            "headings": [
                {
                    "text": h.text,
                    "level": h.level,
                    "page": h.page + 1,
                    "bbox": [round(v, 2) for v in h.bbox] if h.bbox is not None else None,
                    "source": h.source,
                    "score": round(h.score, 3),
                    "level_source": h.level_source,
                    "confidence": None if h.confidence is None else round(h.confidence, 4),
                }
                for h in tree.headings
            ],
        }
        if args.stats:
            out["stats"] = parsed.stats
        json.dump(out, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    elif args.markdown:
        sys.stdout.write(printable(tree.to_markdown()))
    else:
        counts = parsed.stats.get("heading_sources") or {}
        src = ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))) or "none"
        print(printable(f"{doc.name}: {doc.page_count} pages, {len(tree)} headings ({src}), depth {tree.depth}"))
        sys.stdout.write(printable(tree.to_text(pages=True)))  # a PDF may carry terminal escapes
    if args.stats and not args.json:
        print(json.dumps(parsed.stats, indent=2, default=str), file=sys.stderr)
    return 0
