"""Renamed command-line options: one name per meaning, the old spelling kept with a warning.

``--model`` used to mean three things: the model-server model (``toc``), the
LightGBM level model file (``levels``) and the sentence-transformers model
(``index``).  Each now has its own name, ``--backend-model``,
``--level-model`` and ``--embed-model``, on every command that takes it;
:func:`add_renamed_option` adds such an option together with the old spelling
where it existed.  The old spelling still works: it is hidden from ``--help``
and warns (:class:`~structrag.errors.DeprecatedOptionWarning`, naming the new
flag; ``structrag`` prints it once as ``structrag: warning: ...``).  Giving
both spellings with different values is an error that says so.
"""

from __future__ import annotations

import argparse
import warnings
from typing import Any, Sequence

from .errors import DeprecatedOptionWarning

__all__ = ["add_renamed_option", "report_option_warnings"]

# per parse, on the namespace: dest -> (spelling, value) of the last spelling seen
_SEEN = "_structrag_option_spellings"


class _Spelling(argparse.Action):
    """Store the value; refuse a second spelling of the same option with another value."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, canonical: str, meaning: str,
                 deprecated: bool = False, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.canonical = canonical
        self.meaning = meaning
        self.deprecated = deprecated

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        seen = namespace.__dict__.setdefault(_SEEN, {})
        prev = seen.get(self.dest)
        if prev is not None and prev[0] != option_string and prev[1] != values:
            parser.error(f"{prev[0]} {prev[1]!r} and {option_string} {values!r} both set {self.canonical} "
                         f"({self.meaning}), to different values; give {self.canonical} once")
        seen[self.dest] = (option_string, values)
        if self.deprecated:
            warnings.warn(DeprecatedOptionWarning(
                f"{option_string} is deprecated in '{parser.prog}': use {self.canonical} ({self.meaning}); "
                f"{option_string} will be removed"), stacklevel=2)
        setattr(namespace, self.dest, values)


def add_renamed_option(
    parser: argparse.ArgumentParser | Any,
    name: str,
    *,
    old: Sequence[str] = (),
    dest: str,
    meaning: str,
    help: str,
    default: Any = None,
    metavar: str | None = None,
    old_parser: argparse.ArgumentParser | None = None,
) -> None:
    """Add option ``name`` (a string value) to ``parser`` (or an argument group), and ``old`` spellings.

    ``meaning`` is a few words that say what the option names ("the LightGBM
    level model file"); it goes into the deprecation warning and the conflict
    error.  ``old`` spellings are added hidden (to ``old_parser`` when
    ``parser`` is an argument group: hidden options need no group).
    """
    parser.add_argument(name, dest=dest, default=default, metavar=metavar, help=help, action=_Spelling,
                        canonical=name, meaning=meaning)
    target = old_parser if old_parser is not None else parser
    for spelling in old:
        target.add_argument(spelling, dest=dest, default=argparse.SUPPRESS, metavar=metavar, help=argparse.SUPPRESS,
                            action=_Spelling, canonical=name, meaning=meaning, deprecated=True)


def report_option_warnings(caught: Sequence[warnings.WarningMessage], stream: Any) -> None:
    """Print the deprecation warnings caught while parsing once each; pass the other warnings on."""
    printed: set[str] = set()
    for w in caught:
        if issubclass(w.category, DeprecatedOptionWarning):
            text = str(w.message)
            if text not in printed:
                printed.add(text)
                print(f"structrag: warning: {text}", file=stream)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
