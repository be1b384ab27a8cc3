"""The ``structrag view`` sub-command: a PDF's heading tree as one HTML file.

Packages above the core extend the command: retrievers adds ``--query`` and a
handler for index folders (``structrag view INDEX --query ...``) by setting
``index_view`` on this parser, so the core never imports them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add ``view`` to the ``structrag`` sub-parsers."""
    from ..cli.options import add_level_arguments, add_option_arguments, add_progress_arguments
    from ..options import ParseOptions

    p = sub.add_parser(
        "view",
        help="write an HTML view of a PDF's heading tree (or of an index's search hits)",
        description="Write one self-contained HTML file: the heading tree (level, page, source, score; reasons "
        "on hover) beside the pages with each heading's box. In the page you can delete a heading, change "
        "its level or mark a line as a heading, and export a corrections file for "
        "'structrag toc --corrections' and 'structrag train-levels --also'.",
    )
    p.add_argument("target", help="the PDF (or an index folder, with --query)")
    p.add_argument("-o", "--output", default=None, metavar="HTML",
                   help="the HTML file to write (default: NAME.html in the current folder)")
    p.add_argument("--inline", action="store_true",
                   help="embed the page images in the HTML (one file, several MB larger) instead of a "
                   "NAME_pages/ folder beside it")
    p.add_argument("--dpi", type=int, default=None, help="resolution of the page images (default: 96)")
    p.add_argument("--corrections", default=None, metavar="FILE",
                   help="show the tree with an earlier corrections file applied")
    add_progress_arguments(p)
    add_option_arguments(p, ParseOptions, title="parsing")
    add_level_arguments(p, stats_help="print the driver's accounting on stderr")
    p.set_defaults(func=_cmd_view, index_view=None)


def _cmd_view(args: argparse.Namespace) -> int:
    from ..cli.options import parse_options_from_args, report_fallback
    from ..text import printable
    from ..corrections import apply_to_parsed, load_corrections
    from ..pipeline import parse_pdf
    from .render import DEFAULT_DPI, check_dpi, check_view_paths, write_tree_view

    target = Path(args.target)
    if os.path.isdir(target):  # not Path.is_dir: it raises for a name too long
        if args.index_view is None:
            raise ConfigError("is a folder: showing an index's search hits needs the retrievers package",
                              path=target, hint="pip install structrag (with retrievers), or pass a PDF")
        return int(args.index_view(args) or 0)
    if getattr(args, "query", None):
        raise ConfigError("--query needs an index folder, not a PDF", path=target,
                          hint="structrag index DIR REPORT.pdf, then structrag view DIR --query ...")
    # wrong settings fail before the parse: a dpi of 0, an output that is a folder
    dpi = check_dpi(DEFAULT_DPI if args.dpi is None else args.dpi)
    out = check_view_paths(args.output if args.output else target.stem + ".html", inline=args.inline, flag="-o")
    corrections = load_corrections(args.corrections) if args.corrections else None
    options, run_options = parse_options_from_args(args)
    parsed = parse_pdf(target, options, progress=args.progress, **run_options)
    if corrections is not None:
        parsed = apply_to_parsed(parsed, corrections)
    for w in parsed.document.warnings:
        print(printable(f"structrag: warning: {w}"), file=sys.stderr)
    report_fallback(parsed.stats.get("levels"), parsed.document.path)
    given = options.resolved()
    settings = {"outline": given["outline"], "contents": given["contents"], "predictor": str(args.predictor or "learned")}
    stats = write_tree_view(out, parsed.document, parsed.headings, pdf=target, inline=args.inline,
                            dpi=dpi, password=given["password"], settings=settings)
    print(printable(f"structrag: {stats.summary()}"), file=sys.stderr)
    if args.stats:
        print(json.dumps(parsed.stats, indent=2, default=str), file=sys.stderr)
    return 0
