"""Questions in the reader's words, answers in the filer's words: the concept vocabulary.

Readers name a concept ("capex", "operating margin", "资本性支出"); filers print a
line item or a section title ("Purchases of property, plant and equipment",
"Operating income", "购建固定资产、无形资产和其他长期资产支付的现金").  The packaged
vocabulary ``retrievers/rank/data/concepts.json`` links the two:

* **concepts** (208): the standard concepts of the US-GAAP mappings of the
  ``edgartools`` package (MIT), each with the statement and section it sits in and
  the wordings of the US-GAAP elements filers tag it with, plus reader aliases;
* **derived** metrics (margins, turnover, conversion, days outstanding, growth): their
  aliases and the concepts they are computed from, so that "operating margin"
  looks for operating income and revenue on the income statement;
* **zh**: Chinese statement line items and prospectus section names;
* **statements**: the titles statements are printed under.

How it was built, from which sources and under which licences:
``eval/bench/concepts_build.py`` (``python -m eval.bench.concepts_build``) and the
reader-word layer ``eval/data/concept_aliases.json``.

:meth:`ConceptVocabulary.expand` finds the concepts a question names (an alias
or a label, as a run of index tokens, or a Chinese alias as a substring) and
returns an :class:`Expansion`: the filer wordings and statement titles as token
tuples, and the expansion terms the question lacks.  The ranker sees them only
as separate features (``retrievers.rank.features``: ``x_bm25_z``, ``x_phrase``,
``x_anc`` ...), so it learns when the expansion helps; the question's own BM25 is
unchanged.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from structrag.errors import ConfigError
from structrag.text import CJK_SCRIPT

from ..lexical.tokenizer import Tokenizer

__all__ = ["Expansion", "ConceptVocabulary", "default_vocabulary", "NO_EXPANSION", "VOCABULARY_FORMAT"]

VOCABULARY_FORMAT = "structrag-concepts/1"
#: filer wordings kept per matched concept (the most used first), and expansion terms per question
MAX_LABELS = 8
MAX_TERMS = 48


class Expansion(NamedTuple):
    """What a question's concepts add (empty when it names none)."""

    concepts: tuple[str, ...] = ()
    phrases: tuple[tuple[str, ...], ...] = ()  # filer wordings, as index tokens
    statements: tuple[tuple[str, ...], ...] = ()  # statement titles, as index tokens
    terms: tuple[str, ...] = ()  # distinct expansion tokens the question does not have
    alias_terms: tuple[str, ...] = ()  # the question's own tokens that named a concept ("capit", "expenditur")


NO_EXPANSION = Expansion()


def _has_cjk(s: str) -> bool:
    import re

    return re.search(f"[{CJK_SCRIPT}]", s) is not None


def _contains_run(tokens: list[str], run: tuple[str, ...]) -> bool:
    n = len(run)
    if not n or n > len(tokens):
        return False
    first = run[0]
    return any(tokens[i] == first and tuple(tokens[i:i + n]) == run for i in range(len(tokens) - n + 1))


class ConceptVocabulary:
    """The vocabulary (``data``: the parsed ``concepts.json``); see the module docstring."""

    def __init__(self, data: dict[str, Any], *, source: str = "<memory>") -> None:
        if data.get("format") != VOCABULARY_FORMAT:
            raise ConfigError(f"not a concept vocabulary (format {data.get('format')!r}, expected "
                              f"{VOCABULARY_FORMAT!r})", path=source,
                              hint="rebuild it: python -m eval.bench.concepts_build")
        self.data = data
        self.source = source
        self.version = str(data.get("version", ""))
        self._tokenised: dict[tuple[Tokenizer, bool], list] = {}

    @classmethod
    def load(cls, path: str | Path) -> "ConceptVocabulary":
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ConfigError(f"cannot read the concept vocabulary: {e}", path=p) from None
        return cls(data, source=str(p))

    def __len__(self) -> int:
        return len(self.data["concepts"]) + len(self.data["derived"]) + len(self.data["zh"])

    def _entries(self, tok: Tokenizer, *, zh: bool) -> list:
        """Per entry: (name, alias token runs, CJK aliases, label runs, statement title runs), tokenised once
        per tokenizer; the Chinese entries (``zh``) apart, so that an English question never loads jieba."""
        key = (tok, zh)
        got = self._tokenised.get(key)
        if got is not None:
            return got
        d = self.data
        stmts = d["statements"]

        def runs(phrases) -> tuple[tuple[str, ...], ...]:
            out = [tuple(tok.tokenize(p)) for p in phrases if zh or not _has_cjk(p)]
            return tuple(dict.fromkeys(r for r in out if r))

        entries = []
        if zh:
            titles = tuple(r for s in stmts.values() for r in runs(s.get("zh", [])))
            for name, c in d["zh"].items():
                # a cash-flow line item is printed under the cash-flow statement's title
                cash = any("现金" in lab for lab in c["labels"])
                entries.append((name, (), tuple(c["aliases"]), runs(c["labels"]),
                                tuple(r for r in titles if cash and "现金" in "".join(r))))
            self._tokenised[key] = entries
            return entries

        def titles_of(statement: str | None) -> tuple[tuple[str, ...], ...]:
            return runs(stmts.get(statement or "", {}).get("en", []))

        concepts = d["concepts"]
        for name, c in concepts.items():
            labels = runs(c["labels"][:MAX_LABELS])
            section = runs([c["section"]]) if c.get("section") else ()
            entries.append((name, runs(c["aliases"] + c["labels"][:2]), (), labels + section,
                            titles_of(c.get("statement"))))
        for name, c in d["derived"].items():
            labels = list(runs(c["labels"]))
            st: list = []
            for f in c["from"]:
                labels += runs(concepts[f]["labels"][:3])
                st += titles_of(concepts[f].get("statement"))
            entries.append((name, runs(c["aliases"]), (), tuple(dict.fromkeys(labels)), tuple(dict.fromkeys(st))))
        self._tokenised[key] = entries
        return entries

    def expand(self, query: str, tokenizer: Tokenizer, tokens: list[str] | None = None) -> Expansion:
        """The concepts ``query`` names and what they add (:class:`Expansion`; empty if none)."""
        qtok = list(tokens) if tokens is not None else tokenizer.tokenize(query)
        names, phrases, statements, named_by = [], [], [], []
        entries = self._entries(tokenizer, zh=False)
        if _has_cjk(query):
            entries = entries + self._entries(tokenizer, zh=True)
        for name, alias_runs, cjk_aliases, labels, titles in entries:
            hit = [r for r in alias_runs if _contains_run(qtok, r)]
            if hit or any(a in query for a in cjk_aliases):
                named_by += [t for r in hit for t in r]
                names.append(name)
                phrases += labels
                statements += titles
        if not names:
            return NO_EXPANSION
        have = set(qtok)
        # a wording made only of the question's own words adds nothing BM25 does not already see, and as
        # a phrase feature it would reward any prose that repeats the question ("capital ... expenditures")
        phrases = [r for r in dict.fromkeys(phrases) if not set(r) <= have]
        statements = [r for r in dict.fromkeys(statements) if not set(r) <= have]
        terms = [t for r in phrases + statements for t in r if t not in have]
        return Expansion(tuple(names), tuple(phrases), tuple(statements), tuple(dict.fromkeys(terms))[:MAX_TERMS],
                         tuple(dict.fromkeys(named_by)))


@lru_cache(maxsize=1)
def default_vocabulary() -> ConceptVocabulary:
    """The packaged vocabulary (``retrievers/rank/data/concepts.json``), read once."""
    return ConceptVocabulary.load(Path(str(resources.files("retrievers.rank") / "data" / "concepts.json")))
