"""The parse and chunk options, declared once (structrag.options): the pipeline, the index and every
command build from the declaration, so the commands take the same options with the same help."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pdfgen import numbered_report  # noqa: E402

from structrag.cli import build_parser  # noqa: E402
from structrag.cli.options import add_option_arguments, options_from_args  # noqa: E402
from structrag.errors import ConfigError  # noqa: E402
from structrag.options import ChunkOptions, ParseOptions, option_fields  # noqa: E402


def _subparser(name: str, *path: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for step in (name, *path):
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[step]
    return parser


def _flags(parser: argparse.ArgumentParser) -> dict[str, tuple[str | None, str]]:
    """option string -> (dest, help) of every optional argument."""
    return {s: (a.dest, a.help) for a in parser._actions for s in a.option_strings}


def _declared(cls) -> dict[str, tuple[str, str]]:
    return {f.metadata["flag"].flag: (f.name, f.metadata["flag"].help) for f in option_fields(cls)}


@pytest.mark.parametrize("command,exclude", [
    (("toc",), ()),
    (("view",), ()),
    (("index",), ("--password",)),  # an index never stores a password: its own flag says so
    (("eval", "speed"), ("--ignore-outline",)),  # speed ignores the outline so that the levels run
    (("eval", "headings"), ("--ignore-outline", "--predictor", "--max-pages", "--password")),
])
def test_commands_take_the_declared_parse_options_with_their_help(command, exclude):
    flags = _flags(_subparser(*command))
    declared = {k: v for k, v in _declared(ParseOptions).items() if k not in exclude}
    assert {k: flags.get(k) for k in declared} == declared


def test_index_takes_the_declared_chunk_options():
    flags = _flags(_subparser("index"))
    assert {k: flags.get(k) for k in _declared(ChunkOptions)} == _declared(ChunkOptions)


def test_levels_takes_the_level_options_only():
    flags = _flags(_subparser("levels"))
    assert "--predictor" in flags and "--memory" in flags and "--granularity" in flags
    assert "--ignore-outline" not in flags and "--layout-model" not in flags


def test_every_field_declares_a_flag_help_and_a_default():
    for cls in (ParseOptions, ChunkOptions):
        for f in option_fields(cls):
            assert f.default is None, f"{cls.__name__}.{f.name}: None means 'not given'"
            flag = f.metadata["flag"]
            assert flag.flag.startswith("--") and flag.help, f.name
            assert "default" in f.metadata, f.name


def test_defaults_are_the_stages_defaults():
    """A field's declared default is what the stage it configures does without it."""
    from structrag.chunking import chunk_document
    from structrag.levels import assign_levels

    chunk = inspect.signature(chunk_document).parameters
    for f in option_fields(ChunkOptions):
        assert chunk[f.name].default == f.metadata["default"], f.name
    levels = inspect.signature(assign_levels).parameters
    for name in ("predictor", "memory", "granularity", "fallback"):
        assert levels[name].default == ParseOptions().resolved()[name], name


def test_flags_round_trip_to_options():
    p = argparse.ArgumentParser()
    add_option_arguments(p, ParseOptions)
    add_option_arguments(p, ChunkOptions)
    args = p.parse_args(["--ignore-outline", "--layout-model", "--granularity", "2", "--max-tokens", "300",
                         "--no-heading-in-chunks", "--memory", "previous-n"])
    assert options_from_args(ParseOptions, args).to_dict() == {
        "outline": "ignore", "memory": "previous-n", "granularity": 2, "layout_model": True}
    assert options_from_args(ChunkOptions, args).to_dict() == {"max_tokens": 300, "include_heading": False}
    assert options_from_args(ParseOptions, p.parse_args([])).to_dict() == {}  # nothing given, nothing stored


def test_bad_values_are_refused_where_given():
    p = argparse.ArgumentParser()
    add_option_arguments(p, ParseOptions)
    with pytest.raises(SystemExit):
        p.parse_args(["--granularity", "0"])
    with pytest.raises(SystemExit):
        p.parse_args(["--memory", "everything"])
    with pytest.raises(ConfigError, match="parse option outline must be 'auto' or 'ignore'"):
        ParseOptions(outline="never")
    with pytest.raises(ConfigError, match="unknown parse options 'outlines'"):
        ParseOptions.of({"outlines": "ignore"})
    with pytest.raises(ConfigError, match="chunk option overlap must be a whole number"):
        ChunkOptions(overlap=-1)


def test_a_predictor_object_runs_but_is_never_stored():
    from structrag.levels import make_predictor

    opts = ParseOptions(predictor=make_predictor("rules"))
    with pytest.raises(ConfigError, match="must be a predictor's name"):
        opts.storable()
    assert ParseOptions(predictor="rules").storable().to_dict() == {"predictor": "rules"}


def test_the_pipeline_reads_the_options_object_and_keywords_alike(tmp_path):
    from structrag.pipeline import detect_headings, parse_pdf

    pdf = numbered_report(tmp_path / "r.pdf", chapters=2, sections=2, subsections=0, with_toc=True)
    by_keywords = parse_pdf(pdf, outline="ignore", predictor="rules")
    by_object = parse_pdf(pdf, ParseOptions(outline="ignore", predictor="rules"))
    mixed = parse_pdf(pdf, {"outline": "auto", "predictor": "rules"}, outline="ignore")  # a keyword wins
    assert by_keywords.tree.to_text() == by_object.tree.to_text() == mixed.tree.to_text()
    assert {h.source for h in by_object.headings} != {"outline"}
    assert {h.source for h in parse_pdf(pdf, predictor="rules").headings} == {"outline"}
    with pytest.raises(ConfigError, match="unknown parse option"):
        detect_headings(by_object.document, outlines="ignore")


def test_the_index_stores_only_what_was_given():
    """The options an index stores hash into each document's option key: a default written down in the
    declaration must not change them (documents would be re-indexed for nothing)."""
    assert ParseOptions.of({"outline": "ignore"}).to_dict() == {"outline": "ignore"}
    assert ChunkOptions().to_dict() == {}
    assert [f.name for f in dataclasses.fields(ParseOptions)] == [
        "outline", "contents", "predictor", "memory", "granularity", "fallback", "min_score", "max_pages",
        "password", "layout_model", "heading_filter"]
