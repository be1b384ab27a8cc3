"""The ``structrag`` command line: the parser, its sub-commands, and ``main``.

The core's sub-commands are :mod:`.toc` (``toc``), :mod:`.levels` (``levels``,
``train-levels``) and :mod:`structrag.view.cli` (``view``).  The packages built on the core add theirs
through the ``structrag.commands`` entry-point group (``index``, ``query``,
``train-ranker``, ``demo`` from retrievers; ``eval`` from eval), so the core
never imports them.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any, Callable, Sequence

from ..errors import StructragError, StructragWarning
from ..text import printable
from .levels import register as register_levels
from .toc import register as register_toc

__all__ = ["main", "build_parser"]


def build_parser(*, plugins: bool = True) -> argparse.ArgumentParser:
    """The ``structrag`` parser; ``plugins=False`` leaves out the entry-point commands (index, eval, ...)."""
    parser = argparse.ArgumentParser(
        prog="structrag",
        description="Structure-aware RAG over long documents: heading trees, section chunks, ranking, evaluation.",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"structrag {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    register_toc(sub)
    register_levels(sub)
    from ..view.cli import register as register_view

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
            print(printable(f"structrag: error: {exc}"), file=sys.stderr)  # a file name may carry escapes
            return 2
        except KeyboardInterrupt:
            print("structrag: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:  # `structrag toc x.pdf | head`
            return 0
