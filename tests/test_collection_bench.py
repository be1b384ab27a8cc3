"""Helpers of the collection-wide and generalisation benchmarks (eval/bench/collection.py, generalise.py)."""

from __future__ import annotations

from eval.bench.collection import collection_pages
from eval.bench.generalise import first_questions
from retrievers.rank.training import Query


class _Ranked:
    def __init__(self, pairs):
        self.pairs = pairs

    def page_ranking(self, rows):
        return [self.pairs[r] for r in rows]


def test_pages_of_other_documents_are_distinct_negatives():
    ix = _Ranked([("a.pdf", 3), ("b.pdf", 3), ("a.pdf", 7), ("c.pdf", 3), ("b.pdf", 3)])
    got = collection_pages(ix, [0, 1, 2, 3, 4], "a.pdf")
    assert got[0] == 3 and got[2] == 7  # the asked document's pages keep their numbers
    assert got[1] < 0 and got[3] < 0 and got[1] != got[3]  # b:3 and c:3 are two wrong pages, not page 3
    assert got[4] == got[1]  # the same wrong page again is the same negative


def test_first_questions_cut_at_the_first_question_mark_only_when_more_follows():
    q = Query("q1", "What is the FY2018 capital expenditure amount for 3M? Give a response from the cash flow "
              "statement.", "3M_2018_10K.pdf", (59,), "3M", "financebench", (), family="3M")
    short = first_questions([q, q._replace(qid="q2", query="What is 3M's FY2018 capex?"),
                             q._replace(qid="q3", query="Why? Because.")])
    assert [s.qid for s in short] == ["q1#first"]  # q2 has nothing after its mark, q3 is too short
    assert short[0].query == "What is the FY2018 capital expenditure amount for 3M?"
    assert short[0].relevant_pages == (59,) and short[0].doc == q.doc and short[0].family == q.family


def test_document_recall_reads_the_documents_in_first_page_order():
    from eval.bench.collection import doc_recall

    ix = _Ranked([("b.pdf", 1), ("b.pdf", 2), ("c.pdf", 0), ("d.pdf", 4), ("e.pdf", 1), ("f.pdf", 0), ("a.pdf", 3)])
    seen: list[str] = []
    collection_pages(ix, list(range(7)), "a.pdf", seen)
    assert seen == ["b.pdf", "c.pdf", "d.pdf", "e.pdf", "f.pdf", "a.pdf"]
    assert doc_recall(seen, "a.pdf") == 0.0 and doc_recall(seen, "a.pdf", k=6) == 1.0 and doc_recall(seen, "b.pdf") == 1.0


def test_the_distractor_set_is_the_folders_given():
    import pytest

    from eval.bench.generalise_build import SCALE_SOURCES, set_files

    assert [p.name for p in set_files("distractors", distractors="/x/a,/y/b")] == ["a", "b"]
    with pytest.raises(SystemExit, match="--distractors"):
        set_files("distractors")
    assert SCALE_SOURCES == ("filings", "distractors")
