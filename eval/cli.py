"""``structrag eval ...``: references, headings, retrieval, speed, report.

Registered through the ``structrag.commands`` entry point (``eval =
eval.cli:register``).  Each sub-command writes its table (Markdown + JSON) and
PNG plots to ``--out`` and prints the Markdown table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from structrag.cli.options import LEVEL_OPTIONS, add_option_arguments, add_progress_arguments, options_from_args
from structrag.errors import ConfigError
from structrag.options import ParseOptions

__all__ = ["register"]

#: where reports go without --out, relative to the working directory; not "eval/...": a folder named
#: "eval" there would hide the installed eval package from Python run in that folder
DEFAULT_OUT = "structrag-out"


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _method_options(pairs: list[str] | None) -> dict[str, dict[str, Any]]:
    """``-O learned.model_path=x.txt`` -> {"learned": {"model_path": "x.txt"}} (values parsed as JSON when they parse)."""
    out: dict[str, dict[str, Any]] = {}
    for p in pairs or []:
        key, eq, val = p.partition("=")
        method, dot, opt = key.partition(".")
        if not eq or not dot or not method or not opt:
            raise ConfigError(f"bad option {p!r}", hint="use METHOD.OPTION=VALUE, e.g. -O vlm.zoom=1.5")
        out.setdefault(method, {})[opt] = _value(val)
    return out


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [x for v in values for x in v.split(",") if x]


def _command(args: argparse.Namespace) -> str:
    """The command line that produced a report; reconstructed when the CLI was called in-process."""
    from .provenance import command_line

    if "eval" in sys.argv[1:3]:
        return command_line()
    opts = {k: v for k, v in vars(args).items()
            if k not in ("func", "eval_command", "command") and not k.startswith("_") and v is not None}
    return f"structrag eval {args.eval_command} (in-process call: {json.dumps(opts, default=str, sort_keys=True)})"


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default=None, help=f"output folder (default: {DEFAULT_OUT}/<command>)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    add_progress_arguments(p, noun="progress bars")


def _check_out(args: argparse.Namespace) -> None:
    """A wrong --out fails before the run, not after it."""
    from structrag.files import check_output_folder

    if args.out:
        check_output_folder(args.out, what="report folder", flag="--out")


def _finish(report: Any, args: argparse.Namespace, default_sub: str) -> int:
    out = Path(args.out or Path(DEFAULT_OUT) / default_sub)
    paths = report.write(out, plots=not args.no_plots)
    print(report.to_markdown())
    print("wrote: " + ", ".join(str(p) for p in paths), file=sys.stderr)
    return 0


def _cmd_references(args: argparse.Namespace) -> int:
    _check_out(args)
    from .references import build_reference_set, write_reference_set

    refs = build_reference_set(args.folder, doc_ids=_split(args.doc), outline=args.outline,
                               cache_dir=None if args.no_cache else "default", progress=args.progress)
    out = write_reference_set(refs, args.out or Path(DEFAULT_OUT) / "references")
    print(refs.report_markdown())
    print(f"wrote: {out}", file=sys.stderr)
    return 0 if refs.documents else 1


def _cmd_headings(args: argparse.Namespace) -> int:
    _check_out(args)
    from .runners import run_headings

    given = options_from_args(ParseOptions, args).to_dict()
    if args.protocol == "level-only":  # the headings are given: only the level options apply
        given = {k: v for k, v in given.items() if k in LEVEL_OPTIONS}
    rep = run_headings(args.data, protocol=args.protocol, methods=_split(args.predictor), doc_ids=_split(args.doc),
                       options=given, method_options=_method_options(args.option), threshold=args.threshold,
                       page_window=None if args.page_window < 0 else args.page_window,
                       cache_dir=None if args.no_cache else "default",
                       markdown_timeout=args.markdown_timeout, progress=args.progress, command=_command(args))
    return _finish(rep, args, "headings")


def _cmd_retrieval(args: argparse.Namespace) -> int:
    _check_out(args)
    from .runners import run_retrieval

    if args.misses_html:
        from structrag.view.render import check_view_paths

        check_view_paths(args.misses_html, inline=False, flag="--misses-html")
    ks = [int(k) for k in _split(args.k) or ["1", "2", "3", "5", "10", "20"]]
    rep = run_retrieval(args.queries, args.index, modes=_split(args.mode), ks=ks, depth=args.depth,
                        scope=args.scope, progress=args.progress, command=_command(args))
    if args.misses_html:  # the queries whose first hit missed, on their pages (retrievers.view_hits)
        from retrievers.index import Index
        from retrievers.rank.training import load_queries
        from retrievers.view_hits import failed_queries_view

        with Index.open(args.index) as index:
            failed_queries_view(index, load_queries(args.queries), args.misses_html,
                                mode=(_split(args.mode) or ["ranker"])[0])
    return _finish(rep, args, "retrieval")


def _cmd_speed(args: argparse.Namespace) -> int:
    _check_out(args)
    from .runners import SPEED_METHODS, run_speed

    pdfs = []
    for p in args.pdfs:
        pp = Path(p)
        pdfs += sorted(pp.glob("*.pdf")) if pp.is_dir() else [pp]
    if not pdfs:
        raise ConfigError("no PDFs given")
    methods = _split(args.method) or [m for m in SPEED_METHODS]
    options = options_from_args(ParseOptions, args)
    rep = run_speed(pdfs, methods=methods, max_pages=options.max_pages, predictor=options.predictor or "learned",
                    parse_options={k: v for k, v in options.to_dict().items() if k not in ("max_pages", "predictor")},
                    core=args.core, timeout=args.timeout, progress=args.progress, command=_command(args))
    return _finish(rep, args, "speed")


def _cmd_report(args: argparse.Namespace) -> int:
    _check_out(args)
    from .report import run_report

    path = run_report(args.data, out_dir=args.out or Path(DEFAULT_OUT) / ("report-quick" if args.quick else "report"),
                      quick=args.quick, parts=_split(args.part), index_dir=args.index, progress=args.progress,
                      command=_command(args))
    print(Path(path).read_text(encoding="utf-8"))
    print(f"wrote: {path}", file=sys.stderr)
    if args.results:
        from .report import splice_report

        print(f"updated: {splice_report(args.results, path)}", file=sys.stderr)
    return 0


def register(subparsers: Any) -> None:
    """Add ``eval`` and its sub-commands to the ``structrag`` CLI."""
    p = subparsers.add_parser("eval", help="evaluate heading trees, retrieval and speed",
                              description="Evaluation kit: tree metrics (STEDS), retrieval metrics (mAP, recall@k), "
                                          "speed; each side by side with the alternatives.")
    sub = p.add_subparsers(dest="eval_command", metavar="{references,headings,retrieval,speed,report}")
    sub.required = True

    r = sub.add_parser("references", help="build a level-only reference set from outline-bearing PDFs")
    r.add_argument("folder", help="folder of PDFs (outline from <name>.toc.json if present, else the bookmarks)")
    r.add_argument("--doc", action="append", help="only these PDF stems (repeat or comma-separate)")
    r.add_argument("--outline", choices=["auto", "sidecar", "pdf"], default="auto")
    r.add_argument("--no-cache", action="store_true", help="do not cache extracted documents under .cache/")
    _common(r)
    r.set_defaults(func=_cmd_references)

    h = sub.add_parser("headings", help="score heading trees against outline references")
    h.add_argument("data", help="folder of outline-bearing PDFs (e.g. shared/data/headings)")
    h.add_argument("--protocol", choices=["level-only", "end-to-end"], default="level-only",
                   help="level-only: reference headings given, levels predicted; end-to-end: from the raw PDF")
    h.add_argument("--predictor", action="append",
                   help="methods (repeat or comma-separate): learned, rules, font-size, size-rank, numbering, vlm, "
                        "pymupdf4llm, pymupdf4llm-legacy (default: all that can run)")
    h.add_argument("-O", "--option", action="append", metavar="METHOD.OPTION=VALUE",
                   help="an option for one method's predictor, e.g. -O learned.model_path=model.txt")
    # the outline is the answer key (never used) and --predictor names the methods compared
    add_option_arguments(h, ParseOptions, title="parsing (every method; level-only: the level options only)",
                         exclude=("outline", "predictor", "max_pages", "password"))
    h.add_argument("--doc", action="append", help="only these documents (PDF stems)")
    h.add_argument("--threshold", type=float, default=0.8, help="text similarity to align headings (end-to-end)")
    h.add_argument("--page-window", type=int, default=1, help="pages an aligned pair may differ by (-1: ignore)")
    h.add_argument("--markdown-timeout", type=float, default=None, help="seconds per pymupdf4llm conversion")
    h.add_argument("--no-cache", action="store_true", help="do not cache documents / Markdown under .cache/")
    _common(h)
    h.set_defaults(func=_cmd_headings)

    q = sub.add_parser("retrieval", help="score search modes on page-labelled queries")
    q.add_argument("queries", help="queries.jsonl (qid, query, doc, relevant_pages 0-based, evidence)")
    q.add_argument("--index", required=True, help="index directory (structrag index ...)")
    q.add_argument("--mode", action="append", help="bm25, dense, hybrid, ranker (default: all available)")
    q.add_argument("--k", action="append", help="cutoffs for recall@k (default 1,2,3,5,10,20)")
    q.add_argument("--depth", type=int, default=50, help="chunks retrieved per query")
    q.add_argument("--scope", choices=["both", "document", "collection"], default="both",
                   help="search within the query's document, the whole index (reported as <mode>@collection), "
                        "or both (default)")
    q.add_argument("--misses-html", default=None, metavar="FILE",
                   help="also write an HTML view of the queries whose first hit (first --mode, within the "
                   "query's document) is not on a relevant page, beside their relevant pages")
    _common(q)
    q.set_defaults(func=_cmd_retrieval)

    s = sub.add_parser("speed", help="pages/s and peak memory per method, one core")
    s.add_argument("pdfs", nargs="+", help="PDFs or folders")
    s.add_argument("--method", action="append",
                   help="get_text, pymupdf4llm, pymupdf4llm-legacy, structrag-parse, structrag-index (default: all)")
    # the outline is ignored so that the level predictor runs
    add_option_arguments(s, ParseOptions, title="parsing (structrag-parse, structrag-index; --max-pages: every method)",
                         exclude=("outline",))
    s.add_argument("--core", type=int, default=None, help="CPU to pin the measurements to (default: the last)")
    s.add_argument("--timeout", type=float, default=None, help="seconds per (method, PDF)")
    _common(s)
    s.set_defaults(func=_cmd_speed)

    a = sub.add_parser("report", help="regenerate the whole evaluation report on the shared data")
    a.add_argument("data", nargs="?", default=None, help="the data folder (default: ../shared/data)")
    a.add_argument("--quick", action="store_true", help="a subset that runs in a few minutes")
    a.add_argument("--part", action="append", help="only these parts: references, levels, end-to-end, retrieval, speed")
    a.add_argument("--index", default=None, help="an existing index of data/retrieval/pdfs (default: build one under .cache/)")
    a.add_argument("--out", default=None, help=f"output folder (default: {DEFAULT_OUT}/report[-quick])")
    a.add_argument("--results", default=None, metavar="FILE",
                   help="also put the report into FILE (Markdown) between its two marker lines")
    add_progress_arguments(a, noun="progress bars")
    a.set_defaults(func=_cmd_report)
