"""structrag.text: the one copy of each small text helper, with each call site's variant pinned."""

from __future__ import annotations

import re

from structrag import text as T


def test_cjk_classes_are_the_ranges_the_stages_used():
    assert T.CJK_WIDE == "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
    assert T.HAN_ANY == "\u3400-\u9fff" and T.HAN == "\u4e00-\u9fff"
    assert re.fullmatch(rf"[{T.CJK_WIDE}]", "，") and not re.fullmatch(rf"[{T.HAN}]", "㐀")  # ext. A is not HAN


def test_contents_title_full_and_plain():
    for t in ("Contents", "TABLE OF CONTENTS", "目 录", "目录"):
        assert T.is_contents_title(t) and T.is_contents_title(t, plain=True)
    # a later contents page's title, 目次, a colon, letter spacing: contents titles, but not the plain one
    for t in ("Contents (continued)", "目次", "Contents:", "C O N T E N T S", "目录（续）"):
        assert T.is_contents_title(t) and not T.is_contents_title(t, plain=True)
    assert not T.is_contents_title("Index") and T.is_contents_title("Index", index=True)
    assert T.is_contents_title("I N D E X", index=True)
    assert not T.is_contents_title("Contents of the report")


def test_capitals_variants():
    assert T.upper_line("ITEM 7.") and not T.upper_line("ABC") and not T.upper_line("Item 7")
    assert T.latin_capitals("RISK FACTORS") and not T.latin_capitals("公司 ABCD 的业务发展情况与未来规划说明")
    assert T.all_capitals("II. RELATED WORK") and not T.all_capitals("二、公司概况")
    assert T.capitals_share("NOTES to", min_letters=3, share=0.7, ascii_only=True)
    assert not T.capitals_share("NOTES to", min_letters=3, share=0.9, ascii_only=True)
    assert T.capitals_share("ÉTÉ", min_letters=2, share=0.8, ascii_only=False)
    assert not T.capitals_share("ÉTÉ", min_letters=2, share=0.8, ascii_only=True)  # no ASCII letters


def test_normalisation_and_number_stripping():
    assert T.normalize_title("  Item 7. Management’s  Discussion & Analysis ") == \
        "item 7 management s discussion and analysis"
    assert T.strip_number("item 7 risk", "Item 7. Risk") == "risk"
    assert T.strip_number("risk", "Risk") == "risk"
    assert T.strip_number_pattern("2 3 results") == "results"
    assert T.strip_number_pattern("a look back") == "look back"  # wider than strip_number, on purpose
    assert T.strip_number("a look back", "A look back") == "a look back"
