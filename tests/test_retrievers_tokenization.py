"""The retrieval tokeniser: English words, numbers, codes, CJK bigrams, settings."""

from __future__ import annotations

import pytest

from retrievers.lexical.tokenizer import Tokenizer, tokenize
from structrag.errors import ConfigError


@pytest.mark.parametrize(
    "text, expected",
    [
        # thousands separators, currency, zero fractions: one number token, the same in query and table
        ("Capital expenditure was $1,577.00 million", ["capit", "expenditur", "1577", "million"]),
        ("1,577", ["1577"]),
        ("(1,577)", ["1577"]),
        ("3.5% growth", ["3.5", "growth"]),
        ("0.50", ["0.5"]),
        ("1,234,567.89", ["1234567.89"]),
        # filing codes with a digit stay whole
        ("Form 10-K and 8-K", ["form", "10-k", "8-k"]),
        ("COVID-19 impact", ["covid-19", "impact"]),
        ("fiscal 2018-2019", ["fiscal", "2018-2019"]),
        # letter+digit words stay whole and give their year
        ("FY2018 results", ["fy2018", "2018", "result"]),
        ("Item 7A. Quantitative", ["item", "7a", "quantit"]),
        # alphabetic hyphenation splits; possessives go
        ("year-over-year", ["year", "year"]),
        ("Company's", ["compani"]),
        ("Company\u2019s net sales", ["compani", "net", "sale"]),
        # stop words and punctuation go, case folds
        ("What is THE Total, of Revenues?", ["total", "revenu"]),
        ("", []),
        ("   ...  ", []),
    ],
)
def test_english(text, expected):
    assert tokenize(text) == expected


def test_nfkc_folds_full_width_forms():
    assert tokenize("Ｒｅｖｅｎｕｅ １２３") == ["revenu", "123"]


def test_chinese_bigrams_and_numbers():
    bigram = Tokenizer(cjk="bigram")
    assert bigram.tokenize("主营业务收入为1,234万元") == ["主营", "营业", "业务", "务收", "收入", "入为", "1234", "万元"]
    # a lone CJK character is a unigram; digits next to CJK are still numbers
    assert bigram.tokenize("2018年") == ["2018", "年"]
    assert bigram.tokenize("第一节 释义") == ["第一", "一节", "释义"]


def test_chinese_words_by_default():
    # jieba's search mode: the words and the dictionary words inside them, never a pair
    # of characters across a word boundary ("务收")
    assert tokenize("主营业务收入为1,234万元") == ["主营", "营业", "业务", "主营业务", "收入", "为", "1234", "万元"]
    assert tokenize("2018年") == ["2018", "年"]
    assert tokenize("第一节 释义") == ["第一", "一节", "第一节", "释义"]


def test_chinese_unigram_option():
    assert Tokenizer(cjk="unigram").tokenize("收入") == ["收", "入"]


def test_mixed_script_line():
    assert Tokenizer(cjk="bigram").tokenize("营业收入 revenue 10-K") == ["营业", "业收", "收入", "revenu", "10-k"]
    assert tokenize("营业收入 revenue 10-K") == ["营业", "收入", "revenu", "10-k"]


def test_options_change_output():
    raw = Tokenizer(stem="none", stopwords="none")
    assert raw.tokenize("The Revenues") == ["the", "revenues"]
    assert Tokenizer(lowercase=False, stem="none").tokenize("Revenues") == ["Revenues"]
    assert Tokenizer(min_length=3).tokenize("an ox ran 7") == ["ran", "7"]


def test_round_trip_and_validation():
    t = Tokenizer(stem="none", cjk="unigram")
    assert Tokenizer.from_dict(t.to_dict()) == t
    with pytest.raises(ConfigError):
        Tokenizer(stem="porter")
    with pytest.raises(ConfigError, match="unknown tokenizer settings"):
        Tokenizer.from_dict({"stem": "none", "language": "fr"})


def test_duplicates_are_kept_for_term_frequency():
    assert tokenize("cash cash cash") == ["cash", "cash", "cash"]


def test_chinese_words_and_bigrams_together():
    both = Tokenizer(cjk="jieba-search+bigram").tokenize("主营业务收入为1,234万元")
    # the words first, then each bigram the words do not already hold (no term counted twice)
    assert both[:5] == tokenize("主营业务收入")
    assert "务收" in both and "入为" in both and both.count("营业") == 1
    assert "1234" in both and "万元" in both
    assert Tokenizer(cjk="jieba-search+bigram").tokenize("revenue 10-K") == ["revenu", "10-k"]
