"""Level reconstruction: validation, memory strategies, the driver, predictors (no shared data needed)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from structrag.errors import BackendError, ConfigError
from structrag.levels import (
    BranchesMemory,
    LevelPrediction,
    LevelPredictor,
    PreviousNMemory,
    RandomMemory,
    RecentMemory,
    assign_levels,
    available_predictors,
    check_levels,
    make_memory,
    make_predictor,
    plan_steps,
    project_levels,
)
from structrag.levels.memory import TreeState
from structrag.model import Heading
from treeutil import parents  # noqa: E402


def H(text: str, page: int = 0, size: float = 10.0, bold: bool = False, i: int = 0) -> Heading:
    return Heading(text=text, page=page, bbox=(50.0, 100.0 + i, 300.0, 112.0 + i), block=i, block_end=i + 1,
                   font="Helvetica-Bold" if bold else "Helvetica", size=size, bold=bold)


# --- validation and projection -------------------------------------------------


def test_check_levels_rules():
    assert check_levels([1, 2, 3, 2, 1], 0) is None
    assert "below 1" in check_levels([0], 0)
    assert "more than one below" in check_levels([2], 0)  # a document starts at level 1
    assert check_levels([3], 2) is None
    assert "more than one below" in check_levels([1, 3], 0)
    assert "expected 2 levels" in check_levels([1], 0, n_targets=2)
    assert "not an integer" in check_levels([1, "2"], 0)
    assert "not an integer" in check_levels([True], 0)


def test_projection_is_valid_and_keeps_valid_answers():
    rng = random.Random(7)
    for _ in range(500):
        prev = rng.randint(0, 6)
        raw = [rng.randint(-3, 9) for _ in range(rng.randint(1, 8))]
        proj = project_levels(raw, prev)
        assert check_levels(list(proj), prev, len(raw)) is None
        assert project_levels(proj, prev) == proj  # idempotent
        if check_levels(raw, prev) is None:
            assert list(proj) == raw
    assert project_levels([5, "x", None], 1) == (2, 2, 2)


# --- memory strategies ------------------------------------------------------------

# levels:      1  2  3  3  2  3  1  2
LEVELS = [1, 2, 3, 3, 2, 3, 1, 2]
PAGES = [0, 0, 1, 1, 2, 3, 4, 4]


def _state(n=len(LEVELS)):
    hs = [H(f"h{i}", page=p, i=i) for i, p in enumerate(PAGES)]
    st = TreeState(hs)
    for lv in LEVELS[:n]:
        st.push(lv)
    return st


def test_tree_state_branch_and_parents():
    st = _state()
    assert st.parents == parents(LEVELS)
    assert st.branch == [6, 7]
    assert st.last_at == [6, 7, 5]
    assert st.depth == 3
    with pytest.raises(ValueError):
        st.push(4)  # 2 -> 4 skips a level


def test_recent_memory_is_most_recent_per_level():
    mem = RecentMemory().build(_state(), 8)
    assert [a.index for a in mem.anchors] == [5, 6, 7]
    assert [a.level for a in mem.anchors] == [3, 1, 2]
    assert mem.pages == (3, 4)
    assert [k.index for k in mem.known] == [5, 6, 7]  # every processed heading on the anchor pages
    assert mem.previous.index == 7 and mem.previous_level == 2
    assert mem.anchor_at(3).index == 5 and mem.anchor_at(4) is None
    # after 6 headings: anchors 4 (level 2), 5 (level 3), 0 (level 1); pages 0, 2, 3 with all their headings
    mem = RecentMemory().build(_state(6), 6)
    assert [a.index for a in mem.anchors] == [0, 4, 5]
    assert [k.index for k in mem.known] == [0, 1, 4, 5]


def test_previous_n_memory():
    mem = PreviousNMemory(3).build(_state(), 8)
    assert [a.index for a in mem.anchors] == [5, 6, 7]
    mem = PreviousNMemory(2).build(_state(5), 5)
    assert [a.index for a in mem.anchors] == [3, 4]
    assert [k.index for k in mem.known] == [2, 3, 4]  # page 1 holds 2 and 3, page 2 holds 4
    assert make_memory("previous-5").n == 5
    with pytest.raises(ConfigError):
        PreviousNMemory(0)


def test_random_memory_one_per_level_and_seeded():
    st = _state()
    a = RandomMemory(seed=1).build(st, 8)
    assert sorted(k.level for k in a.anchors) == [1, 2, 3]
    assert RandomMemory(seed=1).build(st, 8).anchors == a.anchors  # same seed and step: same draw
    draws = {tuple(k.index for k in RandomMemory(seed=s).build(st, 8).anchors) for s in range(30)}
    assert len(draws) > 1


def test_branches_memory_takes_rightmost_then_earlier_branches():
    st = _state()
    mem = BranchesMemory(window=4).build(st, 8)
    # rightmost branch 6 -> 7, then 5 (the branch 0 -> 4 -> 5) with its ancestor 4
    assert [a.index for a in mem.anchors] == [4, 5, 6, 7]
    mem = BranchesMemory(window=8).build(st, 8)
    assert [a.index for a in mem.anchors] == list(range(8))
    assert [a.index for a in BranchesMemory(window=1).build(st, 8).anchors] == [6, 7]  # branch kept whole


def test_make_memory_rejects_unknown():
    with pytest.raises(ConfigError, match="unknown memory"):
        make_memory("oldest")


# --- the driver ---------------------------------------------------------------------


class Scripted:
    """A predictor answering from a script per step; records what it was given."""

    name = "scripted"
    source = "scripted"

    def __init__(self, answers, max_retries=2, raise_at=None, exc=None):
        self.answers = answers  # step -> list of answers (one per attempt)
        self.max_retries = max_retries
        self.raise_at = raise_at
        self.exc = exc
        self.calls = []
        self.step = -1

    def begin(self, context):
        self.n = len(context.headings)

    def predict(self, memory, targets, *, attempt=0, feedback=None):
        if attempt == 0:
            self.step += 1
        self.calls.append((self.step, attempt, feedback, memory.previous_level, len(targets)))
        if self.raise_at is not None and self.step == self.raise_at:
            raise self.exc
        seq = self.answers.get(self.step, [[1] * len(targets)])
        lv = seq[min(attempt, len(seq) - 1)]
        return LevelPrediction(tuple(lv), tuple(0.9 for _ in lv), usage={"calls": 1, "tokens": 10})


def test_scripted_is_a_level_predictor():
    p = Scripted({})
    res = assign_levels(None, [H("a"), H("b", i=1)], predictor=p)
    assert p.n == 2  # begun once, with the document's headings
    assert [c[:2] for c in p.calls] == [(0, 0), (1, 0)]  # then asked once per step
    assert [h.level for h in res.headings] == [1, 1] and {h.level_source for h in res.headings} == {"scripted"}

    class NoPredict:  # begin but no predict: not a LevelPredictor, refused before any step
        name = source = "broken"
        max_retries = 0

        def begin(self, context):
            raise AssertionError("begun")

    assert not isinstance(NoPredict(), LevelPredictor)
    with pytest.raises(ConfigError, match="LevelPredictor"):
        assign_levels(None, [H("a")], predictor=NoPredict())


def test_retry_with_feedback_then_valid():
    hs = [H(f"h{i}", i=i) for i in range(3)]
    p = Scripted({1: [[5], [2]]})
    res = assign_levels(None, hs, predictor=p)
    assert [h.level for h in res.headings] == [1, 2, 1]
    assert p.calls[1][:2] == (1, 0) and p.calls[2][:2] == (1, 1)
    assert "more than one below" in p.calls[2][2]  # the validator's message is the feedback
    assert res.stats["retries"] == 1 and res.stats["invalid_answers"] == 1
    assert res.stats["usage"] == {"calls": 4, "tokens": 40}
    assert all(h.level_source == "scripted" for h in res.headings)


def test_single_heading_projected_after_retries():
    hs = [H(f"h{i}", i=i) for i in range(3)]
    res = assign_levels(None, hs, predictor=Scripted({1: [[4], [4], [4]]}))
    assert [h.level for h in res.headings] == [1, 2, 1]
    assert res.headings[1].level_source == "projected" and res.headings[1].confidence == 0.0
    assert res.stats["projected"] == 1 and res.stats["retries"] == 2


def test_group_invalid_goes_to_fallback():
    hs = [H(f"h{i}", page=i // 2, i=i) for i in range(4)]
    res = assign_levels(None, hs, predictor=Scripted({1: [[1, 3]]}, max_retries=0), granularity="page",
                        fallback="font-size")
    assert res.stats["fallback_steps"] == 1
    assert [h.level_source for h in res.headings[2:]] == ["fallback", "fallback"]
    assert check_levels([h.level for h in res.headings], 0) is None


def test_backend_error_uses_fallback_or_propagates(tmp_path):
    hs = [H(f"h{i}", i=i) for i in range(3)]
    res = assign_levels(None, hs, predictor=Scripted({}, raise_at=1, exc=BackendError("down")),
                        fallback="rules")
    assert res.headings[1].level_source == "fallback" and res.stats["backend_errors"] == 1
    with pytest.raises(BackendError) as ei:
        assign_levels(None, hs, predictor=Scripted({}, raise_at=1, exc=BackendError("down")))
    assert ei.value.page == 1  # the error names the (1-based) page


def test_checkpoint_resumes_after_interruption(tmp_path):
    hs = [H(f"h{i}", page=i, size=20 - i, i=i) for i in range(6)]
    ck = tmp_path / "levels.jsonl"
    with pytest.raises(KeyboardInterrupt):
        assign_levels(None, hs, predictor=Scripted({}, raise_at=3, exc=KeyboardInterrupt()), checkpoint=ck)
    lines = ck.read_text().splitlines()
    assert json.loads(lines[0])["format"].startswith("structrag-levels-checkpoint")
    assert len(lines) == 1 + 3  # header + the three completed steps survive Ctrl-C
    with open(ck, "a") as f:
        f.write('{"step": 3, "start": 3, "end"')  # a torn last write
    p = Scripted({3: [[2]], 4: [[3]], 5: [[1]]})
    p.step = 2  # the scripted steps continue where the first run stopped
    res = assign_levels(None, hs, predictor=p, checkpoint=ck)
    assert res.stats["resumed_steps"] == 3 and res.stats["predicted_steps"] == 3
    assert [h.level for h in res.headings] == [1, 1, 1, 2, 3, 1]
    assert [c[0] for c in p.calls] == [3, 4, 5]  # only the missing steps were asked
    again = assign_levels(None, hs, predictor=Scripted({}), checkpoint=ck)
    assert again.stats["resumed_steps"] == 6 and [h.level for h in again.headings] == [1, 1, 1, 2, 3, 1]
    with pytest.raises(ConfigError, match="another run"):
        assign_levels(None, hs, predictor="font-size", checkpoint=ck)


def test_granularity_plans():
    hs = [H(f"h{i}", page=p, i=i) for i, p in enumerate([0, 0, 1, 3, 3, 4, 7])]
    assert plan_steps(hs, "heading") == [(i, i + 1) for i in range(7)]
    assert plan_steps(hs, "page") == [(0, 2), (2, 3), (3, 5), (5, 6), (6, 7)]
    assert plan_steps(hs, 2) == [(0, 3), (3, 6), (6, 7)]
    assert plan_steps(hs, "4") == [(0, 5), (5, 7)]
    with pytest.raises(ConfigError):
        plan_steps(hs, "chapter")
    with pytest.raises(ConfigError):
        plan_steps(hs, 0)


@pytest.mark.parametrize("predictor", ["rules", "font-size", "size-rank", "numbering"])
@pytest.mark.parametrize("memory", ["recent", "previous-n", "random", "branches"])
@pytest.mark.parametrize("granularity", ["heading", "page", 2])
def test_every_predictor_gives_valid_sourced_levels(predictor, memory, granularity):
    rng = random.Random(3)
    hs = []
    for i in range(60):
        size = rng.choice([18, 14, 12, 10])
        num = rng.choice(["", "1 ", "2.1 ", "Item 7. "])
        hs.append(H(f"{num}Heading {i}", page=i // 3, size=size, bold=rng.random() < 0.5, i=i))
    res = assign_levels(None, hs, predictor=predictor, memory=memory, granularity=granularity, seed=1)
    levels = [h.level for h in res.headings]
    assert check_levels(levels, 0) is None
    assert all(h.level_source and h.confidence is not None for h in res.headings)
    assert res.stats["headings"] == 60 and res.stats["headings_per_s"] > 0


def test_predictor_names_and_errors():
    assert available_predictors() == ("learned", "rules", "font-size", "size-rank", "numbering",
                                      "vlm", "llm", "whole-document")
    with pytest.raises(ConfigError, match="unknown predictor"):
        make_predictor("no-such-predictor")
    with pytest.raises(ConfigError, match="unexpected keyword argument.*colour") as e:
        make_predictor("font-size", colour=3)
    assert "accepted options: none" in str(e.value)
    # options a backend passes on to its base class are accepted, others refused before the constructor runs
    with pytest.raises(ConfigError, match="accepted options: .*base_url.*include_style"):
        make_predictor("llm", colour=3)
    assert make_predictor(" Size-Rank ", max_level=3).max_level == 3
    res = assign_levels(None, [H("a"), H("b", i=1)], predictor=Scripted({}, max_retries=0))
    assert [h.level_source for h in res.headings] == ["scripted", "scripted"]
    with pytest.raises(ConfigError, match="instance"):
        assign_levels(None, [H("a")], predictor=Scripted({}), max_retries=1)


def test_empty_document():
    res = assign_levels(None, [], predictor="rules")
    assert res.headings == () and res.stats["steps"] == 0


# --- predictors on hand-built headings ----------------------------------------------


def _levels(predictor, hs, **kw):
    return [h.level for h in assign_levels(None, hs, predictor=predictor, **kw).headings]


def test_font_size_tree_is_cmm_construction():
    sizes = [20, 16, 12, 16, 14, 20, 12]
    hs = [H(f"h{i}", size=s, i=i) for i, s in enumerate(sizes)]
    # parent = nearest preceding heading with a strictly larger size
    assert _levels("font-size", hs) == [1, 2, 3, 2, 3, 1, 2]


def test_size_rank_one_level_per_size():
    hs = [H(f"h{i}", size=s, i=i) for i, s in enumerate([20, 12, 16, 12, 20])]
    # ranks 20 -> 1, 16 -> 2, 12 -> 3; "12" right after "20" is projected to 2
    res = assign_levels(None, hs, predictor="size-rank")
    assert [h.level for h in res.headings] == [1, 2, 2, 3, 1]
    assert res.headings[1].level_source == "projected"


def test_numbering_predictor_follows_numbers():
    texts = ["1 Intro", "1.1 Scope", "1.1.1 Detail", "1.2 Terms", "2 Method", "2.1 Data", "Appendix"]
    hs = [H(t, size=10, i=i) for i, t in enumerate(texts)]
    assert _levels("numbering", hs) == [1, 2, 3, 2, 1, 2, 3]


def test_rules_prefers_numbering_over_size_when_they_disagree():
    # "1.2" is printed larger than "1.1.1" but smaller than "1": numbering and style agree on 2;
    # "2.1" is printed as large as "1" — size says sibling of "2", numbering says child
    specs = [("1 Intro", 18), ("1.1 Scope", 14), ("1.1.1 Detail", 12), ("1.2 Terms", 14),
             ("2 Method", 18), ("2.1 Data", 18), ("2.1.1 Sources", 12)]
    hs = [H(t, size=s, bold=True, i=i) for i, (t, s) in enumerate(specs)]
    assert _levels("rules", hs) == [1, 2, 3, 2, 1, 2, 3]
    assert _levels("font-size", hs)[5] == 1  # the font-size tree is fooled


def test_rules_clusters_unnumbered_styles():
    specs = [("Overview", 16, True), ("Background", 12, True), ("detail a", 10, False),
             ("detail b", 10, False), ("Results", 12, True), ("Summary", 16, True)]
    hs = [H(t, size=s, bold=b, i=i) for i, (t, s, b) in enumerate(specs)]
    assert _levels("rules", hs) == [1, 2, 3, 3, 2, 1]


# --- fixed levels (printed table of contents) ---------------------------------------


def _fixed(h: Heading, level: int) -> Heading:
    from dataclasses import replace

    return replace(h, level=level, level_source="contents", confidence=1.0, source="contents")


def _mixed_headings(n: int = 48, seed: int = 5) -> list[Heading]:
    """Chapters and sections known from the contents (fixed), sub-headings between them to predict."""
    rng = random.Random(seed)
    hs: list[Heading] = []
    i = 0
    for c in range(1, 5):
        hs.append(_fixed(H(f"{c} Chapter", page=i // 3, size=18, bold=True, i=i), 1))
        i += 1
        for s in range(1, 3):
            hs.append(_fixed(H(f"{c}.{s} Section", page=i // 3, size=14, bold=True, i=i), 2))
            i += 1
            for u in range(rng.randint(1, 4)):
                hs.append(H(f"{c}.{s}.{u + 1} Detail", page=i // 3, size=rng.choice([12, 11]), bold=True, i=i))
                i += 1
    return hs


@pytest.mark.parametrize("predictor", ["learned", "rules", "font-size", "size-rank", "numbering"])
@pytest.mark.parametrize("memory", ["recent", "previous-n", "random", "branches"])
@pytest.mark.parametrize("granularity", ["heading", "page"])
def test_fixed_levels_are_kept_and_anchor_the_others(predictor, memory, granularity):
    hs = _mixed_headings()
    res = assign_levels(None, hs, predictor=predictor, memory=memory, granularity=granularity, seed=2)
    levels = [h.level for h in res.headings]
    assert check_levels(levels, 0) is None
    last_fixed = 0
    for before, after in zip(hs, res.headings):
        if before.level_source == "contents":
            assert after.level == before.level and after.level_source == "contents" and after.confidence == 1.0
            last_fixed = after.level
        else:
            assert after.level > last_fixed  # below the section the contents lists it under
            assert after.level_source != "contents"
    st = res.stats
    assert st["fixed"] == sum(1 for h in hs if h.level_source == "contents") and st["fixed_projected"] == 0
    assert st["sources"]["contents"] == st["fixed"]


def test_fixed_headings_are_in_the_memory_not_asked():
    hs = _mixed_headings()
    seen: list[tuple[tuple[int, ...], tuple[str, ...]]] = []

    class Recorder(Scripted):
        def predict(self, memory, targets, *, attempt=0, feedback=None):
            seen.append((tuple(k.level for k in memory.anchors), tuple(t.text for t in targets)))
            return LevelPrediction(tuple([1] * len(targets)), tuple([0.5] * len(targets)))

    res = assign_levels(None, hs, predictor=Recorder({}, max_retries=0))
    asked = [t for _, ts in seen for t in ts]
    assert asked == [h.text for h in hs if h.level_source != "contents"]
    # the first sub-heading's memory holds the chapter and section fixed before it
    assert seen[0][0] == (1, 2)
    # an answer of 1 under a fixed section of level 2 is raised to 3 and counted
    assert all(h.level == 3 for h in res.headings if h.level_source != "contents")
    assert res.stats["raised_below_fixed"] == len(asked)
    free = assign_levels(None, hs, predictor=Recorder({}, max_retries=0), floor_after_fixed=False)
    assert check_levels([h.level for h in free.headings], 0) is None and free.stats["raised_below_fixed"] == 0


def test_fixed_level_that_breaks_the_rule_is_projected_and_counted():
    hs = [_fixed(H("A", i=0), 1), H("b", i=1), _fixed(H("C", i=2), 4), _fixed(H("D", i=3), 1)]
    res = assign_levels(None, hs, predictor="rules")
    levels = [h.level for h in res.headings]
    assert check_levels(levels, 0) is None and levels[0] == 1 and levels[3] == 1
    assert res.stats["fixed_projected"] == 1
    # "b", predicted beside "A" (the rules predictor nests nothing), would take the listed "C" as its
    # sub-section; it moves under "A", and "C", projected to the level under "A", stays A's child
    assert levels == [1, 2, 2, 1] and res.stats["moved_under_listed"] == 1


def test_only_named_sources_are_fixed():
    hs = [H("A", size=18, i=0), H("B", size=12, i=1)]
    from dataclasses import replace

    hs = [replace(hs[0], level=3, level_source="outline"), replace(hs[1], level=1, level_source="reference")]
    res = assign_levels(None, hs, predictor="font-size")
    assert [h.level for h in res.headings] == [1, 2] and res.stats["fixed"] == 0
    kept = assign_levels(None, hs, predictor="font-size", fixed_sources=("reference",))
    assert kept.stats["fixed"] == 1 and kept.headings[1].level_source == "reference"


def test_checkpoint_with_fixed_levels_resumes(tmp_path):
    hs = _mixed_headings(seed=9)
    ck = tmp_path / "levels.jsonl"
    n_pred = sum(1 for h in hs if h.level_source != "contents")
    with pytest.raises(KeyboardInterrupt):
        assign_levels(None, hs, predictor=Scripted({}, raise_at=n_pred // 2, exc=KeyboardInterrupt()),
                      checkpoint=ck)
    full = assign_levels(None, hs, predictor="rules")
    res = assign_levels(None, hs, predictor="rules", checkpoint=tmp_path / "fresh.jsonl")
    assert [h.level for h in res.headings] == [h.level for h in full.headings]
    again = assign_levels(None, hs, predictor=Scripted({}), checkpoint=ck)
    assert again.stats["resumed_steps"] > 0 and check_levels([h.level for h in again.headings], 0) is None
    # a checkpoint of the same headings without fixed levels is another run
    from dataclasses import replace

    with pytest.raises(ConfigError, match="another run"):
        assign_levels(None, [replace(h, level=None, level_source=None) for h in hs], predictor=Scripted({}),
                      checkpoint=ck)


def test_fixed_levels_random_mixtures_stay_valid():
    """Random fixed levels (some breaking the rule), random looks and answers: always a valid sequence."""
    from dataclasses import replace

    for seed in range(40):
        rng = random.Random(seed)
        hs = []
        for i in range(30):
            h = H(f"h{i}", page=i // 3, size=rng.choice([10, 12, 14]), bold=rng.random() < 0.5, i=i)
            if rng.random() < 0.4:
                h = replace(h, level=rng.randint(1, 5), level_source="contents", source="contents")
            hs.append(h)

        class Random_(Scripted):
            def predict(self, memory, targets, *, attempt=0, feedback=None):
                prev = memory.previous_level
                out = []
                for _ in targets:
                    prev = rng.randint(1, prev + 1)
                    out.append(prev)
                return LevelPrediction(tuple(out), tuple(0.5 for _ in out))

        for gran in ("heading", "page"):
            res = assign_levels(None, hs, predictor=Random_({}, max_retries=0), granularity=gran)
            assert check_levels([h.level for h in res.headings], 0) is None
