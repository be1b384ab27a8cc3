"""The concept vocabulary (issue 26): questions in the reader's words reach the filer's words."""

from __future__ import annotations

import json

import numpy as np
import pytest

from indexutil import make_report
from retrievers.index import Index
from retrievers.lexical.tokenizer import Tokenizer
from retrievers.rank.concepts import NO_EXPANSION, ConceptVocabulary, default_vocabulary
from retrievers.rank.features import CONCEPT_FEATURES, compute_features
from retrievers.rank.question import question_years
from structrag.errors import ConfigError

TOK = Tokenizer()

# a report whose capex figure is printed only in the filer's words, on a statement page
CAPEX = [
    (1, "Item 1. Business", ["The company spent $27 million on capital projects for environmental protection in "
                             "2018 and describes its capital allocation priorities in this section."]),
    (1, "Item 7. Management's Discussion", ["Capital allocation remained disciplined, and the capital projects "
                                            "programme continued across the company's plants in 2018."]),
    (1, "Item 8. Financial Statements", ["The consolidated financial statements follow."]),
    (2, "Consolidated Statement of Cash Flows", ["Cash flows from investing activities 2018 2017. Purchases of "
                                                 "property, plant and equipment (1,577) (1,373). Proceeds from sale "
                                                 "of businesses 846 49."]),
]


def test_packaged_vocabulary_is_versioned_and_names_its_sources():
    v = default_vocabulary()
    assert v.data["format"] == "structrag-concepts/1" and v.version
    assert len(v.data["concepts"]) > 150 and len(v.data["derived"]) >= 10 and v.data["zh"]
    froms = " ".join(s["from"] for s in v.data["sources"])
    assert "edgartools" in froms and "eval/data/concept_aliases.json" in froms
    assert all("licence" in s for s in v.data["sources"])


def test_capex_expands_to_the_cash_flow_line_item():
    x = default_vocabulary().expand("What was 3M's capital expenditure in 2018?", TOK)
    assert x.concepts == ("Capital Expenditures",)
    assert tuple(TOK.tokenize("purchases of property plant and equipment")) in x.phrases
    assert tuple(TOK.tokenize("statement of cash flows")) in x.statements
    # expansion terms are the ones the question lacks
    assert "purchas" in x.terms and "expenditur" not in x.terms
    # a wording made of the question's own words is not a phrase: prose that repeats the question
    # ("capital projects ... expenditures") must not look like the filer's line item
    assert tuple(TOK.tokenize("capital expenditures")) not in x.phrases
    assert all(not set(r) <= set(TOK.tokenize("What was 3M's capital expenditure in 2018?")) for r in x.phrases)


def test_derived_metric_points_to_what_it_is_computed_from():
    x = default_vocabulary().expand("What is Amazon's FY2019 operating margin?", TOK)
    assert "Operating Margin" in x.concepts
    assert tuple(TOK.tokenize("operating income")) in x.phrases and tuple(TOK.tokenize("net sales")) in x.phrases


def test_chinese_concept_by_substring():
    x = default_vocabulary().expand("发行人报告期内的资本性支出是多少？", TOK)
    assert x.concepts == ("资本性支出",)
    assert "固定资产" in x.terms


def test_no_concept_no_expansion():
    assert default_vocabulary().expand("Who audits the company?", TOK) is NO_EXPANSION


def test_a_word_inside_another_word_is_not_an_alias():
    # "capex" must be a whole token run, not a substring of "capexx" or of a longer word
    assert default_vocabulary().expand("the capexx programme", TOK) is NO_EXPANSION


def test_bad_vocabulary_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "concepts.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="concept vocabulary"):
        ConceptVocabulary.load(bad)
    bad.write_text(json.dumps({"format": "other/1"}), encoding="utf-8")
    with pytest.raises(ConfigError, match="rebuild"):
        ConceptVocabulary.load(bad)


def test_question_years():
    assert question_years("capex in FY2018 vs 2017, and 2018年") == ("2018", "2017")
    assert question_years("what was capex?") == ()
    assert question_years("ticker 120189 on page 20189") == ()


@pytest.fixture(scope="module")
def capex_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("capex")
    make_report(root / "capex.pdf", CAPEX)
    ix = Index.create(root / "index", dense=False)
    ix.add([root / "capex.pdf"])
    yield ix
    ix.close()


def _row_of(ix, words: str) -> int:
    texts = [c.text for c in ix.chunks("capex.pdf")]
    return next(i for i, t in enumerate(texts) if words in t)


def test_statement_row_reaches_the_candidates_and_leads_the_concept_features(capex_index):
    ix = capex_index
    q = "What was the capital expenditure in 2018?"
    qs = ix.query_scores(q)
    assert qs.expansion.concepts == ("Capital Expenditures",) and qs.years == ("2018",)
    cand = ix.candidates(qs, n=100)
    stmt = _row_of(ix, "Purchases of property")
    rows = ix.corpus.doc_rows(ix.corpus.doc_id("capex.pdf"))
    stmt_row = int(rows[stmt])
    assert stmt_row in cand.tolist()
    X = compute_features(ix.corpus, qs, cand, CONCEPT_FEATURES)
    col = {n: X[:, j] for j, n in enumerate(CONCEPT_FEATURES)}
    i = cand.tolist().index(stmt_row)
    assert col["q_concept"][i] == 1.0
    assert col["x_phrase"][i] == 1.0 and col["x_phrase"].max() == 1.0
    assert col["x_bm25_z"][i] == col["x_bm25_z"].max() > 0
    assert col["x_anc"][i] > 0  # its heading is the cash-flow statement's title
    assert col["year_match"][i] == 1.0


def test_no_concept_means_zero_concept_features(capex_index):
    ix = capex_index
    qs = ix.query_scores("environmental protection projects")
    cand = ix.candidates(qs, n=100)
    X = compute_features(ix.corpus, qs, cand, CONCEPT_FEATURES)
    assert qs.x_chunk_bm25 is None and np.all(X == 0)
