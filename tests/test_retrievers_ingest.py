"""The typed ingest options: every value checked when an index is set up, errors that name the option,
and the same stored JSON and option keys as the untyped dicts they replace (old indexes open unchanged)."""

from __future__ import annotations

import hashlib
import json

import pytest

from retrievers.index import Index
from structrag.options import ChunkOptions, ParseOptions
from retrievers.lexical.tokenizer import Tokenizer
from structrag.errors import ConfigError


@pytest.mark.parametrize("cls, options, named", [
    (ParseOptions, {"outlines": "ignore"}, "outlines"),
    (ParseOptions, {"progress": True}, "progress"),
    (ParseOptions, {"checkpoint": "x.ckpt"}, "checkpoint"),
    (ParseOptions, {"outline": "never"}, "outline"),
    (ParseOptions, {"contents": False}, "contents"),
    (ParseOptions, {"predictor": ""}, "predictor"),
    (ParseOptions, {"granularity": 0}, "granularity"),
    (ParseOptions, {"granularity": "chapter"}, "granularity"),
    (ParseOptions, {"max_pages": -3}, "max_pages"),
    (ParseOptions, {"min_score": "high"}, "min_score"),
    (ChunkOptions, {"max_token": 256}, "max_token"),
    (ChunkOptions, {"max_tokens": 0}, "max_tokens"),
    (ChunkOptions, {"max_tokens": True}, "max_tokens"),
    (ChunkOptions, {"max_tokens": "256"}, "max_tokens"),
    (ChunkOptions, {"overlap": -1}, "overlap"),
    (ChunkOptions, {"include_heading": "yes"}, "include_heading"),
])
def test_bad_options_name_the_option(cls, options, named):
    with pytest.raises(ConfigError, match=named) as e:
        cls.of(options)
    assert isinstance(e.value, ValueError)


def test_unknown_option_lists_the_known_ones():
    with pytest.raises(ConfigError, match="unknown chunk options 'size'; known: max_tokens, overlap"):
        ChunkOptions.of({"size": 3})


def test_only_given_fields_are_stored():
    assert ParseOptions.of(None) == ParseOptions() and ParseOptions().to_dict() == {}
    p = ParseOptions.of({"outline": "auto", "predictor": "rules", "granularity": 2})
    assert p.to_dict() == {"outline": "auto", "predictor": "rules", "granularity": 2}
    assert ParseOptions.of(p) is p and ParseOptions.of(p.to_dict()) == p
    assert ChunkOptions.of({"max_tokens": 128, "overlap": 0}).to_dict() == {"max_tokens": 128, "overlap": 0}
    with pytest.raises(AttributeError):
        p.outline = "ignore"  # frozen: the options of a stored index do not change under it


def test_index_refuses_bad_options_before_any_document(tmp_path):
    with pytest.raises(ConfigError, match="outline"):
        Index.create(tmp_path / "a", dense=False, parse_options={"outline": "sometimes"})
    with pytest.raises(ConfigError, match="progress"):
        Index.create(tmp_path / "b", dense=False, parse_options={"progress": True})
    with pytest.raises(ConfigError, match="layout_model must be True or False"):
        Index.create(tmp_path / "d", dense=False, parse_options={"layout_model": "yes"})
    with Index.create(tmp_path / "c", dense=False) as index, pytest.raises(ConfigError, match="overlap"):
        index.add([], chunk_options={"overlap": -2})


def test_stored_json_and_option_keys_are_those_of_the_untyped_dicts(tmp_path):
    popts, copts = {"outline": "ignore", "predictor": "rules"}, {"max_tokens": 128}
    with Index.create(tmp_path / "ix", dense=False, parse_options=popts, chunk_options=copts) as index:
        meta = index.store.meta()
        assert json.loads(meta["parse_options"]) == popts and json.loads(meta["chunk_options"]) == copts
        assert index.parse_options == ParseOptions(outline="ignore", predictor="rules")
        # the key documents were stored under before the options were typed: a sha1 of the JSON list
        old = hashlib.sha1(json.dumps([popts, copts, Tokenizer().to_dict(), None], sort_keys=True,
                                      default=str).encode("utf-8")).hexdigest()
        assert index.options_key(index.parse_options, index.chunk_options) == old
        assert index.options_key(popts, copts) == old
