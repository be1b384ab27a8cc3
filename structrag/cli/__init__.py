"""The ``structrag`` command line.

>>> from structrag.cli import main
>>> main(["toc", "report.pdf", "--json"])                             # doctest: +SKIP

:func:`main` runs a command line and returns its exit status (2 on a
:class:`~structrag.errors.StructragError`, with one line on stderr);
:func:`build_parser` builds the parser.  :mod:`structrag.cli.options` generates
the flags of the parse and chunk options from their declaration
(:mod:`structrag.options`), for the commands of the packages built on the core too.
"""

from __future__ import annotations

from .app import build_parser, main

__all__ = ["main", "build_parser"]
