"""The ``structrag`` command line.

Core sub-commands are defined here (``toc``) and in :mod:`structrag.cli_levels`
(``levels``, ``train-levels``).  The packages built on the core add theirs
through the ``structrag.commands`` entry-point group (``index``, ``query``,
``train-ranker``, ``demo`` from retrievers; ``eval`` from eval), so the core
never imports them.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Any, Callable, Sequence

from . import cli_levels
from .cli_options import add_level_arguments, level_options_from_args
from .errors import StructragError, StructragWarning
from .text import printable

__all__ = ["main", "build_parser"]


def _toc(args: argparse.Namespace) -> int:
    from .corrections import apply_to_parsed, load_corrections
    from .pipeline import parse_pdf

    corrections = load_corrections(args.corrections) if getattr(args, "corrections", None) else None  # fail fast
    parsed = parse_pdf(
        args.pdf,
        outline="ignore" if args.ignore_outline else "auto",
        contents="ignore" if args.ignore_contents else "auto",
        password=args.password,
        layout_model=args.layout_model,
        progress=None if args.progress is None else args.progress,
        **level_options_from_args(args),
    )
    if corrections is not None:  # a user's fixes (structrag view): after levels, before the tree
        parsed = apply_to_parsed(parsed, corrections)
    doc, tree = parsed.document, parsed.tree
    for w in doc.warnings:
        print(f"structrag: warning: {w}", file=sys.stderr)
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


def build_parser(*, plugins: bool = True) -> argparse.ArgumentParser:
    """The ``structrag`` parser; ``plugins=False`` leaves out the entry-point commands (index, eval, ...)."""
    parser = argparse.ArgumentParser(
        prog="structrag",
        description="Structure-aware RAG over long documents: heading trees, section chunks, ranking, evaluation.",
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"structrag {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("toc", help="print a PDF's heading tree", description="Print a PDF's heading tree "
                       "(with 1-based page numbers), as text, JSON or Markdown.")
    p.add_argument("pdf", help="the PDF file")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON: document, pages, headings in reading order")
    fmt.add_argument("--markdown", action="store_true", help="print the headings as Markdown '#' lines")
    p.add_argument("--ignore-outline", action="store_true",
                   help="do not use the PDF's own outline (bookmarks); detect headings from the layout")
    p.add_argument("--ignore-contents", action="store_true",
                   help="do not use the printed table of contents; headings from the layout only "
                   "(each heading's source in --json: outline, contents or layout)")
    p.add_argument("--layout-model", action="store_true",
                   help="ask PyMuPDF's layout model for a second opinion: no heading inside a table or a picture "
                   "(about 0.2 s a page)")
    p.add_argument("--password", default=None, help="password of an encrypted PDF")
    p.add_argument("--corrections", default=None, metavar="FILE",
                   help="apply a corrections file exported by 'structrag view' (delete, re-level, add headings)")
    p.add_argument("--progress", dest="progress", action="store_true", default=None, help="show a progress bar")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="never show a progress bar")
    add_level_arguments(p, stats_help="print timings and the level predictor's accounting: calls, images, "
                        "tokens, retries, projections, fallbacks")
    p.set_defaults(func=_toc)
    cli_levels.register(sub)
    from .view.cli import register as register_view

    register_view(sub)  # before the plugins: retrievers extends `view` to index folders

    if plugins:
        _register_plugins(sub)
    return parser


def _register_plugins(sub: Any) -> None:
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group="structrag.commands"), key=lambda e: e.name):
        try:
            register: Callable[[Any], None] = ep.load()
        except Exception as exc:  # keep the other commands usable, say why this one is not
            _unavailable(sub, ep.name, exc)
            continue
        register(sub)


def _unavailable(sub: Any, name: str, exc: Exception) -> None:
    p = sub.add_parser(name, help=f"(unavailable: {exc.__class__.__name__})", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)

    def fail(_args: argparse.Namespace) -> int:
        print(f"structrag: error: the '{name}' command cannot be loaded: {exc}", file=sys.stderr)
        return 2

    p.set_defaults(func=fail)


# commands defined in the core: their runs need not discover the plugins' (importlib.metadata
# reads every installed distribution's entry points: ~30 ms of each start)
_CORE_COMMANDS = frozenset({"toc", "levels", "train-levels"})


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(plugins=not (argv and argv[0] in _CORE_COMMANDS))
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        # warnings a command reports itself (they are kept on the document) are not repeated
        warnings.simplefilter("ignore", StructragWarning)
        try:
            return int(args.func(args) or 0)
        except StructragError as exc:
            print(f"structrag: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("structrag: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:  # `structrag toc x.pdf | head`
            return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
