"""Tree metrics: definitions on hand-computed cases, engines against an oracle, readers and loaders."""

from __future__ import annotations

import functools
import json
import random

import pytest
from pdfgen import PDFBuilder

from eval import trees as T
from eval._kernels import HAVE_NUMBA, ned_matrix
from structrag.errors import ConfigError, ReferenceFormatError
from structrag.model import Heading
from structrag.text import normalize_title
from structrag.tree import HeadingTree

ENGINES = ["apted"] + (["zhang-shasha"] if HAVE_NUMBA else [])


def items(spec):
    """'A1 B2 C2' -> [(A, 1, 0), (B, 2, 0), (C, 2, 0)] (page 0 unless given as A1@3)."""
    out = []
    for tok in spec.split():
        page = 0
        if "@" in tok:
            tok, p = tok.split("@")
            page = int(p)
        out.append((tok[:-1], int(tok[-1]), page))
    return out


# --- the oracle: the textbook recursive forest distance ---------------------
def brute_ted(a: T.Outline, b: T.Outline, exact: bool = False) -> float:
    def forest(o, p):
        return tuple((normalize_title(o.texts[i]), forest(o, i)) for i in range(len(o)) if o.parents[i] == p)

    def size(f):
        return sum(1 + size(c) for _, c in f)

    def ren(x, y):
        if exact:
            return float(x != y)
        return float(ned_matrix([x], [y])[0, 0])

    @functools.lru_cache(maxsize=None)
    def fd(f, g):
        if not f and not g:
            return 0.0
        if not f:
            return float(size(g))
        if not g:
            return float(size(f))
        (l1, c1), (l2, c2) = f[-1], g[-1]
        return min(fd(f[:-1] + c1, g) + 1, fd(f, g[:-1] + c2) + 1, fd(c1, c2) + fd(f[:-1], g[:-1]) + ren(l1, l2))

    return fd(forest(a, -1), forest(b, -1))


def random_outline(rng: random.Random, n: int, max_depth: int = 4) -> T.Outline:
    words = ["Scope", "Scopes", "Risk factors", "Risk", "Item 7", "Notes", "", "Overview"]
    out, lv = [], 0
    for _ in range(n):
        lv = rng.randint(1, min(lv + 1, max_depth))
        out.append((rng.choice(words), lv, 0))
    return T.Outline.from_items(out)


# --- TED / TEDS ----------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_identical_trees_score_one(engine):
    o = items("Intro1 Scope2 Terms2 Details3 Annex1")
    assert T.ted(o, o, engine=engine) == 0.0
    s = T.score_document(o, o, engine=engine)
    assert s.protocol == "level-only"
    assert (s.teds, s.pruned_teds, s.parent_accuracy, s.path_accuracy, s.depth_accuracy, s.f1) == (1, 1, 1, 1, 1, 1)


def test_empty_cases():
    assert T.teds([], []) == 1.0
    assert T.ted([], items("A1 B2")) == 2.0
    assert T.teds([], items("A1 B2")) == 0.0
    s = T.score_document([], items("A1 B2"))
    assert (s.precision, s.recall, s.f1, s.parent_accuracy) == (0.0, 0.0, 0.0, 0.0)
    s = T.score_document(items("A1 B2"), [])
    assert (s.precision, s.recall, s.teds) == (0.0, 0.0, 0.0)
    s = T.score_document([], [])
    assert (s.precision, s.recall, s.f1, s.teds, s.parent_accuracy) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert T.score_corpus({}).n_documents == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_hand_computed_move(engine):
    # ref A(B, C); pred A(B(C)): C cannot stay mapped (it changes from sibling
    # to child of B), so TED = delete C + insert C = 2, TEDS = 1 - 2/3.
    ref, pred = items("A1 B2 C2"), items("A1 B2 C3")
    assert T.ted(pred, ref, engine=engine) == 2.0
    s = T.score_document(pred, ref, engine=engine)
    assert s.teds == pytest.approx(1 / 3)
    assert s.parent_accuracy == pytest.approx(2 / 3)
    assert s.path_accuracy == pytest.approx(2 / 3)
    assert s.depth_accuracy == pytest.approx(2 / 3)


@pytest.mark.parametrize("engine", ENGINES)
def test_flat_against_chain(engine):
    flat, chain = items("A1 B1 C1 D1"), items("A1 B2 C3 D4")
    # only one node can be mapped: 3 deletes + 3 inserts; TEDS clipped at 0
    assert T.ted(chain, flat, engine=engine) == 6.0
    assert T.teds(chain, flat, engine=engine) == 0.0
    s = T.score_document(chain, flat)
    assert s.parent_accuracy == 0.25 and s.path_accuracy == 0.25


def test_path_accuracy_is_stricter_than_parent_accuracy():
    # B wrongly goes to level 1; C keeps its parent B (parent right) but its path is wrong.
    ref, pred = items("A1 B2 C3 D1"), items("A1 B1 C2 D1")
    s = T.score_document(pred, ref)
    assert s.parent_correct == 3  # A, C, D
    assert s.path_correct == 2  # A, D
    assert T.parent_accuracy(pred, ref) == 0.75 and T.path_accuracy(pred, ref) == 0.5


def test_rename_cost_is_normalised_edit_distance():
    # one node each: renaming "Scope" -> "Scopes" costs 1/6
    assert T.ted([("Scope", 1, 0)], [("Scopes", 1, 0)]) == pytest.approx(1 / 6)
    assert T.ted([("Scope", 1, 0)], [("Scopes", 1, 0)], rename="exact") == 1.0
    # normalisation first: case and punctuation do not count
    assert T.ted([("RISK FACTORS.", 1, 0)], [("Risk factors", 1, 0)]) == 0.0
    with pytest.raises(ConfigError):
        T.ted([], [], rename="nope")


def test_micro_and_macro_steds():
    small_ref, small_pred = items("A1 B2 C2"), items("A1 B2 C3")  # TED 2, size 3
    big = items(" ".join(f"H{i}1" for i in range(7)))  # TED 0, size 7
    sc = T.score_corpus({"small": (small_pred, small_ref), "big": (big, big)})
    assert sc.micro_steds == pytest.approx(1 - 2 / 10)
    assert sc.macro_steds == pytest.approx((1 / 3 + 1) / 2)
    assert sc.parent_accuracy == pytest.approx(9 / 10)
    assert [d.name for d in sc.documents] == ["small", "big"]
    assert json.loads(json.dumps(sc.to_dict()))["n_documents"] == 2
    with pytest.raises(ConfigError):
        T.score_corpus({}, bogus=1)


@pytest.mark.parametrize("exact", [False, True])
def test_engines_match_the_textbook_definition(exact):
    rng = random.Random(7)
    rename = "exact" if exact else "edit-distance"
    for _ in range(120):
        a = random_outline(rng, rng.randint(0, 8))
        b = random_outline(rng, rng.randint(0, 8))
        want = brute_ted(a, b, exact)
        if HAVE_NUMBA:
            assert T.ted(a, b, rename=rename, engine="zhang-shasha") == pytest.approx(want, abs=1e-9)
        if exact:
            # apted 1.0.3 is exact with unit costs; with label-dependent float
            # renames it overestimates now and then, which is why the default
            # engine is the compiled Zhang-Shasha.
            assert T.ted(a, b, rename=rename, engine="apted") == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("engine", ENGINES)
def test_wide_and_deep_trees_do_not_hit_the_recursion_limit(engine):
    n = 1800 if engine == "zhang-shasha" else 200  # pure-Python APTED needs ~20 s at 1,800
    flat = [(f"Section {i}", 1, i // 10) for i in range(n)]
    deep = [(f"Part {i}", i % 10 + 1, i // 10) for i in range(n)]
    assert T.ted(flat, flat, engine=engine) == 0.0
    d = T.ted(deep, flat, engine=engine)
    assert n - 1 <= d <= 2 * n  # at most one node per chain can stay mapped to the flat list
    assert T.ted(deep, deep, engine=engine) == 0.0


def test_heading_tree_input_matches_items():
    hs = [
        Heading(text=t, page=p, bbox=(0, 0, 1, 1), block=i, block_end=i + 1, level=lv)
        for i, (t, lv, p) in enumerate(items("A1 B2 C3 D2 E1"))
    ]
    tree = HeadingTree.from_headings(hs, n_blocks=10, document="doc")
    o = T.as_outline(tree)
    assert o.parents == (-1, 0, 1, 0, -1) and o.name == "doc"
    assert T.teds(tree, items("A1 B2 C3 D2 E1")) == 1.0


def test_invalid_level_jump_follows_the_tree_rule():
    o = T.Outline.from_items(items("A1 B3 C2"))
    assert o.parents == (-1, 0, 0)  # B hangs from A (the most recent smaller level); C too
    assert o.depths() == (1, 2, 2)


def test_bad_items_are_rejected_with_the_heading_named():
    with pytest.raises(ReferenceFormatError, match="heading 1"):
        T.as_outline([("A", 1, 0), ("B", 0, 0)])
    with pytest.raises(ConfigError):
        T.as_outline("# A markdown string")


# --- alignment, P/R/F1, pruning --------------------------------------------------
def test_alignment_uses_page_window_and_numbering():
    ref = [("Scope", 1, 10), ("Definitions", 2, 11), ("Risk factors", 1, 30)]
    pred = [("2.1 Scope", 1, 11), ("Definitions", 2, 14), ("RISK FACTORS", 1, 29), ("Extra", 1, 31)]
    al = T.align(pred, ref)
    assert al.pairs == ((0, 0), (2, 2))  # "Definitions" is 3 pages away
    assert T.align(pred, ref, page_window=None).pairs == ((0, 0), (1, 1), (2, 2))
    prf = T.heading_prf(pred, ref)
    assert (prf.matched, prf.precision, prf.recall) == (2, 0.5, pytest.approx(2 / 3))


def test_alignment_is_monotone_and_one_to_one():
    ref = [("Alpha", 1, 0), ("Beta", 1, 0)]
    pred = [("Beta", 1, 0), ("Alpha", 1, 0), ("Alpha", 1, 0)]
    al = T.align(pred, ref)
    assert len(al.pairs) == 1
    assert all(p1 < p2 and r1 < r2 for (p1, r1), (p2, r2) in zip(al.pairs, al.pairs[1:]))


def test_truncated_title_matches_by_prefix():
    assert T.text_similarity("Item 7.", "ITEM 7. MANAGEMENT'S DISCUSSION AND ANALYSIS") >= 0.85
    assert T.text_similarity("Notes", "Notwithstanding") < 0.8


def test_pruning_promotes_children_and_pruned_teds_ignores_extras():
    # the prediction has an extra level the outline lacks (partial tree)
    ref = items("Part1 Alpha2 Beta2")
    pred = items("Part1 Sub2 Alpha3 Beta3 Foot2")
    s = T.score_document(pred, ref)
    assert s.protocol == "end-to-end"
    assert s.teds < 1.0
    assert s.pruned_teds == 1.0
    assert s.parent_accuracy == 1.0 and s.path_accuracy == 1.0
    assert (s.precision, s.recall) == (pytest.approx(3 / 5), 1.0)
    p = T.prune(pred, [0, 2, 3])
    assert p.texts == ("Part", "Alpha", "Beta") and p.parents == (-1, 0, 0)


def test_aligned_teds_ignores_printed_numbers():
    ref = [("Scope of work", 1, 0), ("Definitions used", 2, 0)]
    pred = [("1 Scope of work", 1, 0), ("1.1 Definitions used", 2, 0)]
    s = T.score_document(pred, ref)
    assert s.matched == 2
    assert s.pruned_teds < 1.0  # the rename costs of "1 " and "1.1 " remain
    assert s.aligned_teds == 1.0 and s.path_accuracy == 1.0
    wrong = T.score_document([("1 Scope of work", 1, 0), ("1.1 Definitions used", 1, 0)], ref)
    assert wrong.aligned_teds == 0.0  # moving one of two nodes costs delete + insert = 2 = max size


def test_level_only_protocol_checks_the_heading_lists():
    with pytest.raises(ConfigError, match="heading 1 differs"):
        T.score_document(items("A1 B2"), items("A1 C2"), protocol="level-only")
    with pytest.raises(ConfigError, match="2 predicted, 1 reference"):
        T.score_document(items("A1 B2"), items("A1"), protocol="level-only")


# --- Markdown (MPDocBench) and parent links --------------------------------------
def test_markdown_reading_pops_the_stack():
    md = "# A\n\ntext\n### B\n## C\n```\n# not a heading\n```\n#### **D** ##\n#hashtag\n## [E](http://x)\n"
    o = T.outline_from_markdown(md)
    assert o.texts == ("A", "B", "C", "D", "E")
    assert o.parents == (-1, 0, 0, 2, 0)  # C pops B (level 3 >= 2); D under C
    assert o.pages == (None,) * 5
    per_page = T.outline_from_markdown(["# A\n", "## B\n# C\n"])
    assert per_page.pages == (0, 1, 1)


def test_heading_teds_against_parent_links():
    ref = T.outline_from_parent_links(
        [
            {"id": "c", "parent": "a", "text": "C", "order": 3},
            {"id": "a", "parent": None, "text": "A", "order": 1},
            {"id": "b", "parent": "a", "text": "B", "order": 2},
        ]
    )
    assert ref.texts == ("A", "B", "C") and ref.parents == (-1, 0, 0)
    assert T.heading_teds("# A\n## B\n## C\n", ref) == 1.0
    assert T.heading_teds("# A\n## B\n### C\n", ref) == pytest.approx(1 / 3)
    with pytest.raises(ReferenceFormatError, match="unknown parent"):
        T.outline_from_parent_links([{"id": 1, "parent": 9, "text": "x"}])


# --- loaders ------------------------------------------------------------------------
def test_loaders_read_every_reference_kind(tmp_path):
    toc = [[1, "Intro", 1], [2, "Scope", 2], [1, "Annex", 3]]
    (tmp_path / "d.toc.json").write_text(json.dumps({"doc_id": "d", "toc": toc}))
    o = T.load_outline(tmp_path / "d.toc.json")
    assert o.name == "d" and o.pages == (0, 1, 2) and o.parents == (-1, 0, -1)

    payload = {"document": "d.pdf", "pages": 3,
               "headings": [{"text": t, "level": lv, "page": p, "bbox": None, "source": "detected", "score": 1.0}
                            for lv, t, p in toc]}
    (tmp_path / "s.json").write_text(json.dumps(payload))
    assert T.load_outline(tmp_path / "s.json").items() == o.items()

    hs = [Heading(text=t, page=p - 1, bbox=None, block=i, block_end=i + 1, level=lv)
          for i, (lv, t, p) in enumerate(toc)]
    (tmp_path / "tree.json").write_text(json.dumps(HeadingTree.from_headings(hs, 5, "d").to_dict()))
    assert T.load_outline(tmp_path / "tree.json").items() == o.items()

    (tmp_path / "d.md").write_text("# Intro\n## Scope\n# Annex\n")
    assert T.load_outline(tmp_path / "d.md").parents == o.parents

    b = PDFBuilder(footer=None)
    for i in range(3):
        b.new_page()
        b.heading(toc[i][1], size=18)
    b.save(tmp_path / "d.pdf", toc=toc)
    assert T.load_outline(tmp_path / "d.pdf").items() == o.items()


def test_loader_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ReferenceFormatError, match="bad.json"):
        T.load_outline(bad)
    shape = tmp_path / "shape.json"
    shape.write_text(json.dumps({"toc": [[1, "A", 1], ["x"]]}))
    with pytest.raises(ReferenceFormatError, match="shape.json.*toc entry 1"):
        T.load_outline(shape)
    with pytest.raises(ReferenceFormatError, match="not found"):
        T.load_outline(tmp_path / "missing.pdf")


def test_shared_outline_scores_itself_perfectly(shared_data):
    o = T.load_outline(shared_data / "headings" / "Verizon_2022_10_K.toc.json")
    assert len(o) == 344
    s = T.score_document(o, o)
    assert s.teds == 1.0 and s.path_accuracy == 1.0
