"""Whole-page text in the index and the page-text features (issue 22, item 5): real PDFs, a real persisted
index, the shipped LightGBM rankers; nothing of ours mocked."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pdfgen import PDFBuilder
from retrievers.lexical.bm25 import SparseBM25
from retrievers.store.arrays import page_texts
from retrievers.store.corpus import LAYOUT
from retrievers.rank.features import (
    OPEN_PAGE_FEATURES, PAGE_TEXT_FEATURES, PORTABLE_FEATURES, PORTABLE_LEXICAL, compute_features,
)
from retrievers.index import Index
from retrievers.rank.ranker import LambdaRanker, default_model_path
from retrievers.rank.training import load_queries, make_training_set, train_ranker
from structrag.model import Chunk
from indexutil import GLOBEX, make_report

HEADER = "Zephyrion Holdings Annual Review"  # a running header: furniture, in no chunk


def _report(path):
    b = PDFBuilder(header=HEADER, footer="{page}")
    toc = []
    for i, (title, body) in enumerate([
        ("Overview", "The group designs pumps and valves for water utilities in twelve countries."),
        ("Liquidity", "Capital expenditures were $310 million, mostly for new foundry lines."),
        ("Employees", "The workforce grew to 8,400 people, with training hours up a third."),
        ("Dividends", "The board declared dividends of $1.20 per share and repurchased shares."),
    ]):
        b.new_page()
        b.heading(title, size=18)
        toc.append([1, title, i + 1])
        b.para(body)
    return b.save(path, toc=toc)


@pytest.fixture(scope="module")
def two_docs(tmp_path_factory):
    root = tmp_path_factory.mktemp("pt")
    (root / "pdfs").mkdir()
    _report(root / "pdfs" / "zephyrion.pdf")
    make_report(root / "pdfs" / "globex.pdf", GLOBEX)
    out = root / "index"
    Index.build([root / "pdfs"], out, dense=False).close()
    return out


def test_pages_hold_the_whole_page_text_and_are_persisted(two_docs):
    with Index.open(two_docs) as ix:
        c = ix.corpus
        done = json.loads(next((two_docs / "derived").glob("g*/COMPLETE")).read_text())
        assert done["layout"] == LAYOUT and (next((two_docs / "derived").glob("g*")) / "bm25_pages").is_dir()
        assert int(c.doc_page_start[-1]) == sum(d.page_count for d in ix.documents())
        toks = ix.tokenizer.tokenize("Zephyrion")
        # the running header is on every page of its document and in none of the chunks
        assert not np.any(c.bm25_chunks.scores(toks))
        z = c.doc_id("zephyrion.pdf")
        ps = c.bm25_pages.scores(toks)
        lo, hi = c.doc_page_start[z], c.doc_page_start[z + 1]
        assert hi - lo == 4 and np.all(ps[lo:hi] > 0) and not np.any(np.delete(ps, np.arange(lo, hi)))
        # the same BM25 as a page-BM25 over the stored document's pages (what the 20-line baseline ranks)
        texts = [t for d in ix.documents() for t in page_texts(ix.store.load_document(d.name))]
        direct = SparseBM25(*ix.bm25_params).fit([ix.tokenizer.tokenize(t) for t in texts])
        q = ix.tokenizer.tokenize("dividends declared per share")
        assert np.allclose(c.bm25_pages.scores(q), direct.scores(q))
        assert HEADER in page_texts(ix.store.load_document("zephyrion.pdf"))[2]
        # tokenised once, when the writer published them: stored beside the document, read back as they were
        ids = {d.name: d.id for d in ix.store.documents()}
        stored = ix.store.page_tokens()
        assert set(stored) == set(ids.values())
        assert stored[ids["zephyrion.pdf"]][2] == ix.tokenizer.tokenize(page_texts(ix.store.load_document("zephyrion.pdf"))[2])


def test_page_text_features_rank_pages_within_each_document_of_a_collection(two_docs):
    with Index.open(two_docs) as ix:
        c = ix.corpus
        qs = ix.query_scores("dividends per share", dense=False)
        cand = ix.candidates(qs, n=100)  # the whole collection: both documents' dividend pages
        X = compute_features(c, qs, cand, PAGE_TEXT_FEATURES)
        f = dict(zip(PAGE_TEXT_FEATURES, X.T))
        for doc, page in (("zephyrion.pdf", 3), ("globex.pdf", 1)):
            on = np.array([c.doc_names[c.chunk_doc[r]] == doc and page in c.pages_of(r) for r in cand])
            assert on.any()
            # each document's best page is first in it, whatever the other document scores
            assert np.all(f["page_text_rank"][on] == 0) and np.allclose(f["page_text_rel"][on], 1.0)
            off = np.array([c.doc_names[c.chunk_doc[r]] == doc for r in cand]) & ~on
            assert np.all(f["page_text_rank"][off] >= 1) and np.all(f["page_text_rel"][off] < 1)
        # zephyrion's dividend page is its last: its neighbour is the page before it, which does not match
        z_last = np.array([c.doc_names[c.chunk_doc[r]] == "zephyrion.pdf" and 3 in c.pages_of(r) for r in cand])
        assert np.all(f["page_text_nb"][z_last] == 0)


def test_open_page_features_are_the_page_text_unless_the_question_names_a_concept(two_docs):
    with Index.open(two_docs) as ix:
        c = ix.corpus
        qs = ix.query_scores("pumps and valves for water utilities", dense=False)
        assert not qs.expansion.concepts
        cand = ix.candidates(qs, n=100)
        assert np.array_equal(compute_features(c, qs, cand, OPEN_PAGE_FEATURES),
                              compute_features(c, qs, cand, PAGE_TEXT_FEATURES))
        # "capital expenditure" is a concept (purchases of property, plant and equipment): its best whole
        # page is the one in the reader's words, which a 10-K seldom answers on: unknown, not zero
        qs = ix.query_scores("What were the capital expenditures?", dense=False)
        assert qs.expansion.concepts
        cand = ix.candidates(qs, n=100)
        assert np.isnan(compute_features(c, qs, cand, OPEN_PAGE_FEATURES)).all()
        assert not np.isnan(compute_features(c, qs, cand, PAGE_TEXT_FEATURES)).any()
        assert set(OPEN_PAGE_FEATURES) <= set(PORTABLE_LEXICAL)  # the shipped rankers read them


def test_documents_added_as_chunks_take_their_pages_from_the_chunks(tmp_path):
    def chunk(i, text, pages):
        return Chunk(id=f"c{i}", doc_name="custom.pdf", doc_sha1="0" * 40, text=text, start=0, end=len(text),
                     section_id="s", section_path=("Notes",), heading_levels=(1,), sibling_index=i, sibling_count=2,
                     pages=pages, bboxes=(), block_ids=())

    with Index.create(tmp_path / "ix", dense=False) as ix:
        ix.add_chunks("custom.pdf", [chunk(0, "Goodwill impairment testing", (0, 1)),
                                     chunk(1, "Lease obligations by year", (2,))], page_count=4)
        c = ix.corpus
        assert int(c.doc_page_start[-1]) == 4
        s = c.bm25_pages.scores(ix.tokenizer.tokenize("goodwill"))
        assert s[0] > 0 and s[1] > 0 and s[2] == 0 and s[3] == 0  # a chunk over two pages counts on both
        assert ix.store.page_tokens() == {}  # nothing to store: the chunks are the text


def test_a_ranker_trained_with_the_page_text_reads_it_after_reopening(two_docs, tmp_path):
    rows = [("zephyrion.pdf", "How much were capital expenditures?", 1), ("zephyrion.pdf", "How large is the workforce?", 2),
            ("zephyrion.pdf", "dividends declared per share", 3), ("zephyrion.pdf", "pumps for water utilities", 0),
            ("globex.pdf", "competition from cloud vendors", 0), ("globex.pdf", "dividends per share and buybacks", 1)]
    qf = tmp_path / "q.jsonl"
    qf.write_text("".join(json.dumps({"qid": f"q{i}", "query": q, "doc": d, "relevant_pages": [p],
                                      "company": d.split(".")[0]}) + "\n" for i, (d, q, p) in enumerate(rows)))
    # the shipped set leaves them out (section 21 of eval/RESULTS.md); any ranker may name them
    assert not set(PAGE_TEXT_FEATURES) & set(PORTABLE_FEATURES)
    assert not set(PAGE_TEXT_FEATURES) & set(LambdaRanker.load(default_model_path(False)).features)
    names = PORTABLE_LEXICAL + PAGE_TEXT_FEATURES
    with Index.open(two_docs) as ix:
        ts = make_training_set(ix, load_queries(qf), features=names, scope="doc")
        col = [ts.features.index(f) for f in PAGE_TEXT_FEATURES]
        assert np.any(ts.X[:, col])
        model = train_ranker(ts, features=PAGE_TEXT_FEATURES + ("coverage",), n_estimators=20, min_child_samples=1)
        ix.set_ranker(model)  # stored in the index folder
    with Index.open(two_docs) as again:
        assert set(PAGE_TEXT_FEATURES) <= set(again.ranker.features)
        # the query path computes the pages' BM25 only for a ranker that reads it
        qs = again.query_scores("How much were capital expenditures?", dense=False)
        assert qs.page_text_bm25 is None
        hits = again.search("How much were capital expenditures?", k=4, doc="zephyrion.pdf", mode="ranker")
        assert {h.pages for h in hits} >= {(1,)}
        (two_docs / "ranker.txt").unlink()
        (two_docs / "ranker.json").unlink(missing_ok=True)


def test_train_ranker_names_the_page_text_features(two_docs):
    from retrievers.cli import resolve_features

    with Index.open(two_docs) as ix:
        names = resolve_features("portable+page-text", ix.corpus)
        assert names[-len(PAGE_TEXT_FEATURES):] == PAGE_TEXT_FEATURES
        assert not set(PAGE_TEXT_FEATURES) & set(resolve_features("portable", ix.corpus))
