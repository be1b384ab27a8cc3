"""Collection-wide cues (issue 22 item 2): does the question name the document's issuer and period?"""

from __future__ import annotations

import numpy as np

from retrievers.index import Index
from retrievers.rank.features import DOC_FEATURES, compute_features
from retrievers.rank.named_documents import doc_cues, named_documents, question_quarter
from structrag.model import Chunk, DocumentIdentity

IDS = [DocumentIdentity(issuer="3M COMPANY", year=2018, doc_type="10-K"),
       DocumentIdentity(issuer="THE COCA-COLA COMPANY", year=2017),
       DocumentIdentity(issuer="3M COMPANY", year=2022),
       DocumentIdentity(issuer="湖南南岭民用爆破器材股份有限公司"),
       None,
       DocumentIdentity(issuer="Amcor plc", year=2023, quarter=2)]


def test_issuer_and_period_agreement():
    c = doc_cues(IDS, "What was 3M's capital expenditure in FY2018?")
    assert c.entity[0] == 1 and c.entity[2] == 1 and c.entity[1] == 0 and np.isnan(c.entity[4])
    assert c.period[0] == 1 and c.period[2] == 0 and c.named == 1
    assert named_documents(c).tolist() == [0]  # the 2022 filing of the same issuer is the wrong year
    c = doc_cues(IDS, "Coca Cola dividends")  # no year: the period is unknown, not wrong
    assert c.entity[1] == 1 and np.isnan(c.period).all() and named_documents(c).tolist() == [1]
    c = doc_cues(IDS, "湖南南岭民用爆破器材的控股股东是谁")
    assert c.entity[3] == 1
    c = doc_cues(IDS, "What was Amcor's revenue in the first quarter of 2023?")
    assert c.period[5] == 0.5  # right year, another quarter
    assert doc_cues(IDS, "What is the revenue?").named == 0 and not len(named_documents(doc_cues(IDS, "revenue")))


def test_partial_names_and_quarters():
    c = doc_cues([DocumentIdentity(issuer="American Express Company")], "What did Express report?")
    assert c.entity[0] == 0.5 and not len(named_documents(c))  # half a name routes nothing
    assert question_quarter("Q3 2022 results") == 3 and question_quarter("第二季度收入") == 2
    assert question_quarter("quarterly dividend") is None


def test_short_names_slips_and_abbreviations_name_the_issuer():
    ids = [DocumentIdentity(issuer="AMAZON.COM, INC.", year=2017), DocumentIdentity(issuer="Verizon Communications Inc."),
           DocumentIdentity(issuer="MGM RESORTS INTERNATIONAL"), DocumentIdentity(issuer="JPMorgan Chase & Co."),
           DocumentIdentity(issuer="Netflix, Inc."), DocumentIdentity(issuer="GENERAL MILLS, INC."),
           DocumentIdentity(issuer="Activision Blizzard, Inc.")]

    def named(q):
        return named_documents(doc_cues(ids, q)).tolist()

    assert named("what is Amazon's FY2017 return on equity?") == [0]  # the short name readers use
    assert named("Is Verizon a capital intensive business?") == [1]
    assert named("Which region had the highest EBITDAR for MGM during FY2022?") == [2]
    assert named("Which of JPM's segments had the lowest net revenue?") == [3]  # an upper-case abbreviation
    assert named("what is advertsing expense of Neflix in FY 2015?") == [4]  # one slip of the keyboard
    assert named("what is Netfilx's R&D expense?") == [4]  # two letters swapped
    assert named("what value stock does Activsion Blizzard repurchase?") == [6]
    assert named("General Mills free cash flow") == [5]
    # a generic first word alone names no one; nor does a lower-case word, a short slip or a lower-case prefix
    assert named("What General and administrative expenses were reported?") == []
    assert named("what did amazon report?") == [] and doc_cues(ids, "what did amazon report?").entity[0] == 0.5
    assert named("Net sales and Verizen") == [1]
    short = [DocumentIdentity(issuer="Amcor plc")]  # a slip in a word of fewer than six letters is not a name
    assert named_documents(doc_cues(short, "Amcar revenue")).tolist() == []
    assert named("the jpm segment") == [] and named("What is the Mgm? Jp?") == [2]
    assert named("Amazonian rainforest") == []  # a longer word is not the name


def _chunks(name: str, texts: list[str]) -> list[Chunk]:
    return [Chunk(id=f"c{i}", doc_name=name, doc_sha1="0" * 40, text=t, start=0, end=len(t), section_id="s",
                  section_path=("Item 7",), heading_levels=(1,), sibling_index=i, sibling_count=len(texts),
                  pages=(i,), bboxes=(), block_ids=()) for i, t in enumerate(texts)]


def test_named_document_reaches_the_candidates_and_its_features(tmp_path):
    # nine filings that repeat the question's words, and the named one that says it once
    with Index.create(tmp_path / "ix", dense=False) as ix:
        for k in range(9):
            ix.add_chunks(f"other{k}.pdf", _chunks(f"other{k}.pdf", [
                f"Capital expenditure capital expenditure rose; capital expenditure plans {k}." for _ in range(12)]),
                page_count=12)
        ix.add_chunks("globex.pdf", _chunks("globex.pdf", ["Liquidity was strong.", "Capital expenditure was $40 million."]),
                      page_count=2)
        for k in range(9):
            ix.set_identity(f"other{k}.pdf", issuer=f"Initech {k} Inc", year=2019)
        ix.set_identity("globex.pdf", issuer="Globex Corporation", year=2019)
        qs = ix.query_scores("What was Globex's capital expenditure in 2019?", dense=False)
        g = ix.corpus.doc_id("globex.pdf")
        assert ix.named_docs(qs) == [g] and ix.named_docs(qs, "globex.pdf") == []
        routed = ix.candidates(qs, n=20)
        plain = ix.candidates(qs._replace(doc_cues=None), n=20)
        target = ix.corpus.doc_rows(g)
        assert not np.isin(target[1], plain) and np.isin(target[1], routed)  # only routing brings it in
        X = compute_features(ix.corpus, qs, routed, DOC_FEATURES)
        from_g = ix.corpus.chunk_doc[routed] == g
        assert (X[from_g, 0] == 1).all() and (X[~from_g, 0] == 0).all() and (X[:, 1] == 1).all() and (X[:, 2] == 1).all()
        X = compute_features(ix.corpus, qs._replace(doc_cues=None), routed, DOC_FEATURES)
        assert np.isnan(X).all()  # no identities: unknown, not "not named"
        # the search: the named document's chunks first, each part in the ranker's own order
        q = "What was Globex's capital expenditure in 2019?"
        free = ix.search(q, k=500, route=False)
        hits = ix.search(q, k=500)
        assert hits[0].doc == "globex.pdf"
        want = [h for h in free if h.doc == "globex.pdf"] + [h for h in free if h.doc != "globex.pdf"]
        assert [(h.doc, h.chunk_id, h.score) for h in hits] == [(h.doc, h.chunk_id, h.score) for h in want]
        assert free[0].doc != "globex.pdf"  # the ranker alone would not have put it there
        assert ix.search(q, k=3, doc="other1.pdf")[0].doc == "other1.pdf"  # within a document nothing moves


def test_issuer_words_are_root_terms_of_their_documents():
    from retrievers.lexical.tokenizer import Tokenizer
    from retrievers.rank.named_documents import IssuerTable

    tok = Tokenizer()
    table = IssuerTable(IDS, tok)
    # "3M" names documents 0 and 2; "company" is a legal suffix and names no one; "capital" no issuer
    assert table.root_terms(tok.tokenize("3M company capital")) == {"3m": [0, 2]}
    assert table.cues("3M capex in 2018").entity.tolist()[:3] == [1.0, 0.0, 1.0]


def test_a_trading_symbol_names_its_issuer_and_the_issuers_older_filings():
    ids = [DocumentIdentity(issuer="3M COMPANY", year=2022, tickers=("MMM",)),
           DocumentIdentity(issuer="3M COMPANY", year=2018),  # a cover from before 2019 prints no symbol
           DocumentIdentity(issuer="Verizon Communications Inc.", year=2022, tickers=("VZ",))]
    c = doc_cues(ids, "What was MMM's capital expenditure in FY2018?")
    assert c.entity[0] == 1 and c.entity[1] == 1 and c.entity[2] == 0
    assert named_documents(c).tolist() == [1]
    # lower case, or a question written in capitals, names no symbol
    assert doc_cues(ids, "what did mmm spend?").named < 1
    assert doc_cues(ids, "WHAT DID MMM SPEND ON VZ LINES?").named < 1


def test_a_named_document_type_picks_that_filing_among_the_issuers_same_period():
    ids = [DocumentIdentity(issuer="PepsiCo, Inc.", year=2023, quarter=1, doc_type="earnings release"),
           DocumentIdentity(issuer="PepsiCo, Inc.", year=2023, doc_type="8-K"),
           DocumentIdentity(issuer="PepsiCo, Inc.", year=2023, quarter=1, doc_type="10-Q"),
           DocumentIdentity(issuer="PepsiCo, Inc.", year=2022, doc_type="10-K")]
    assert named_documents(doc_cues(ids, "PepsiCo's Q1 2023 revenue?")).tolist() == [0, 1, 2]
    assert named_documents(doc_cues(ids, "PepsiCo's Q1 2023 revenue in its 10-Q?")).tolist() == [2]
    assert named_documents(doc_cues(ids, "What did PepsiCo's earnings release say about Q1 2023?")).tolist() == [0]
    # a type the issuer's matching documents lack changes nothing; the annual report is its 10-K
    assert named_documents(doc_cues(ids, "PepsiCo's 2023 20-F?")).tolist() == [0, 1, 2]
    assert named_documents(doc_cues(ids, "PepsiCo's 2022 annual report")).tolist() == [3]
