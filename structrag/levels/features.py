"""Features of one insertion candidate: put the target at level k (HELD).

For a target heading t after a heading of level p, the candidates are
k = 1..p+1 — the last-child slots of the rightmost branch.  Each candidate is
described by comparing t with what the memory shows around that slot:

``A``
    the memory's anchor at level k (for k <= p the sibling t would follow on
    the rightmost branch; for k = p+1 the last heading seen at that level);
``P``
    the anchor at level k-1, the parent t would get (none for k = 1);
``C``
    the anchor at level k+1 (if t looks like it, k is probably too shallow);
``siblings``
    P's children among the headings the memory shows.

plus document-wide style statistics of t (never levels) and the look of the
heading just before t.  Only the :class:`~.base.Memory` and the
:class:`~.base.PredictionContext` are read, so a weaker memory strategy
really gives the model less to go on.

:class:`View` is the memory as a predictor walks a step's targets: it adds
each target's predicted level before the next target is scored.
"""

from __future__ import annotations

import math
from typing import Sequence

from ..numbering import continues, opens_child
from .base import Memory
from .baselines import LocalBranch, NumberingPredictor, latest_anchors
from .rules import RulesPredictor
from .style import DocStyles, HeadingInfo, luminance

__all__ = ["View", "FEATURE_NAMES", "candidate_rows", "SCHEMES"]

NAN = float("nan")
SIZE_TOL = 0.25

#: Numbering schemes as a small categorical code (0: none).
SCHEMES = ("none", "decimal", "item", "part", "note", "schedule", "chapter", "section", "article", "appendix",
           "roman", "roman-lower", "alpha", "alpha-lower", "paren-alpha", "paren-ALPHA", "paren-roman",
           "paren-num", "cn-section", "cn-chapter", "cn-part", "cn-article", "cn-ordinal", "cn-paren", "num-dun")
_SCHEME_CODE = {s: i for i, s in enumerate(SCHEMES)}
SCHEMES += ("word-decimal",)
_SCHEME_CODE["word-decimal"] = len(SCHEMES) - 1

#: How high in a document a numbering scheme usually sits (a prior the model may use).
_SCHEME_RANK = {"part": 1, "cn-part": 1, "chapter": 2, "cn-chapter": 2, "cn-section": 2, "article": 2,
                "item": 3, "section": 3, "appendix": 3, "schedule": 3, "note": 4, "roman": 3, "alpha": 4,
                "decimal": 4, "word-decimal": 4, "cn-ordinal": 4, "cn-paren": 5, "roman-lower": 6,
                "alpha-lower": 6, "paren-alpha": 6, "paren-ALPHA": 6, "paren-roman": 7, "paren-num": 6,
                "num-dun": 5, "cn-article": 5}


_DOTTED = ("decimal", "word-decimal", "section")


def _scheme_code(h: HeadingInfo | None) -> float:
    if h is None:
        return NAN
    n = h.numbering
    return float(_SCHEME_CODE.get(n.scheme, len(SCHEMES)) if n is not None else 0)


def _scheme_rank(h: HeadingInfo | None) -> float:
    if h is None:
        return NAN
    n = h.numbering
    if n is None:
        return 0.0
    r = _SCHEME_RANK.get(n.scheme, 5)
    return float(r + (len(n.values) - 1 if n.scheme in ("decimal", "word-decimal", "section") else 0))


class View:
    """Anchors by level and children by parent, from a memory plus predictions so far."""

    __slots__ = ("by_level", "prev", "prev_index", "depth", "children", "parent_of")

    def __init__(self, memory: Memory) -> None:
        self.by_level: dict[int, int]
        self.by_level, self.prev, self.prev_index, self.depth = latest_anchors(memory)
        self.children: dict[int | None, list[int]] = {}
        self.parent_of: dict[int, int | None] = {}
        seen = set()
        for k in (*memory.known, *memory.anchors):
            if k.index in seen:
                continue
            seen.add(k.index)
            self.parent_of[k.index] = k.parent
        for i in sorted(seen):
            self.children.setdefault(self.parent_of[i], []).append(i)

    def at(self, level: int) -> int | None:
        return self.by_level.get(level)

    def push(self, index: int, level: int) -> None:
        parent = self.by_level.get(level - 1) if level > 1 else None
        self.parent_of[index] = parent
        self.children.setdefault(parent, []).append(index)
        self.by_level[level] = index
        self.prev = level
        self.prev_index = index
        self.depth = max(self.depth, level)


def _cmp(a: HeadingInfo, b: HeadingInfo) -> int:
    """+1 if a looks stronger than b, -1 weaker, 0 alike (size, then bold, then capitals)."""
    if a.size > b.size + SIZE_TOL:
        return 1
    if b.size > a.size + SIZE_TOL:
        return -1
    if a.bold != b.bold:
        return 1 if a.bold else -1
    if a.caps != b.caps:
        return 1 if a.caps else -1
    return 0


def _sig(h: HeadingInfo) -> tuple:
    n = h.numbering
    if n is None:
        return ("none",)
    return (n.scheme, len(n.values)) if n.scheme in ("decimal", "section") else (n.scheme,)


_PAIR = ("exists", "size_diff", "size_ratio", "same_key", "same_bold", "same_italic", "same_caps", "same_color",
         "same_family", "x0_diff", "stronger", "same_sig", "continues", "opens_child", "num_depth_diff",
         "page_gap", "rank_diff", "both_first_on_page", "chars_ratio", "same_centered", "scheme", "scheme_rank",
         "scheme_rank_diff", "bold", "caps", "size_rank", "num_prefix", "num_same_prefix", "freq_log_ratio",
         "numbered_share_diff", "luminance_diff",
         "both_unnumbered")


def _pair(t: HeadingInfo, x: HeadingInfo | None, styles: DocStyles) -> list[float]:
    if x is None:
        return [0.0] + [NAN] * (len(_PAIR) - 1)
    st = t.has_style and x.has_style
    tn, xn = t.numbering, x.numbering
    tv = tn.values if tn is not None and tn.scheme in _DOTTED else None
    xv = xn.values if xn is not None and xn.scheme in _DOTTED else None
    return [
        1.0,
        t.size - x.size if st else NAN,
        t.size / x.size if st and x.size > 0 else NAN,
        float(t.key == x.key) if st else NAN,
        float(t.bold == x.bold) if st else NAN,
        float(t.italic == x.italic) if st else NAN,
        float(t.caps == x.caps),
        float(t.color == x.color) if st else NAN,
        float(t.family == x.family) if st else NAN,
        t.x0 - x.x0 if t.x0 >= 0 and x.x0 >= 0 else NAN,
        float(_cmp(x, t)) if st else NAN,
        # two unnumbered headings share no numbering evidence: that is not "the same scheme"
        float(_sig(t) == _sig(x)) if tn is not None or xn is not None else NAN,
        float(continues(xn, tn)),
        float(opens_child(xn, tn)),
        float(len(tn.values) - len(xn.values)) if tn is not None and xn is not None and tn.scheme == xn.scheme else NAN,
        float(t.page - x.page),
        float(styles.style_rank.get(t.key, -1) - styles.style_rank.get(x.key, -1)) if st else NAN,
        float(t.first_on_page and x.first_on_page),
        math.log((t.n_chars + 1) / (x.n_chars + 1)),
        float(t.centered == x.centered) if st else NAN,
        _scheme_code(x),
        _scheme_rank(x),
        _scheme_rank(t) - _scheme_rank(x) if tn is not None and xn is not None else NAN,
        float(x.bold) if x.has_style else NAN,
        float(x.caps),
        float(styles.size_rank.get(round(x.size * 2) / 2, -1)) if x.has_style else NAN,
        float(tv[:-1] == xv) if tv is not None and xv is not None else NAN,
        float(len(tv) == len(xv) and tv[:-1] == xv[:-1]) if tv is not None and xv is not None else NAN,
        math.log((styles.counts.get(t.key, 0) + 1) / (styles.counts.get(x.key, 0) + 1)) if st else NAN,
        styles.numbered_share.get(t.key, 0.0) - styles.numbered_share.get(x.key, 0.0) if st else NAN,
        luminance(t.color) - luminance(x.color) if st else NAN,
        float(tn is None and xn is None),
    ]


_TARGET = ("t_size", "t_size_rel_body", "t_size_rank", "t_style_rank", "t_n_styles", "t_style_freq", "t_bold",
           "t_italic", "t_caps", "t_numbered", "t_scheme", "t_num_depth", "t_chars", "t_words", "t_first_on_page",
           "t_y0", "t_x0", "t_centered", "t_has_style", "t_first_of_style", "doc_share_numbered", "doc_log_headings",
           "depth_minus_prev", "position", "t_scheme_rank", "t_key_seen_before", "t_size_rel_max",
           "t_all_caps_doc_share", "t_key_numbered_share", "t_luminance")
_PREV = ("prev_same_key", "prev_size_diff", "prev_page_gap", "prev_stronger", "prev_continues", "prev_opens_child")
_CAND = ("depth_minus_k", "k_minus_prev", "k_is_new", "k_is_one", "n_sib", "n_sib_same_key", "sib_same_key_share",
         "n_sib_same_sig", "best_key_delta", "deepest_key_delta", "cont_delta", "open_delta", "n_anc_weaker",
         "n_anc_same_key", "n_closed_stronger", "fontsize_delta", "prefix_parent", "rules_delta", "rules_conf",
         "numbering_delta")

FEATURE_NAMES: tuple[str, ...] = (
    _TARGET + _PREV + _CAND
    + tuple("A_" + n for n in _PAIR) + tuple("P_" + n for n in _PAIR) + tuple("C_" + n for n in _PAIR)
)


def _target_row(t: HeadingInfo, view: View, styles: DocStyles, n_total: int) -> list[float]:
    st = t.has_style
    num = t.numbering
    return [
        t.size if st else NAN,
        t.size / styles.body_size if st and styles.body_size > 0 else NAN,
        float(styles.size_rank.get(round(t.size * 2) / 2, -1)) if st else NAN,
        float(styles.style_rank.get(t.key, -1)) if st else NAN,
        float(styles.n_styles),
        styles.frequency(t) if st else NAN,
        float(t.bold) if st else NAN,
        float(t.italic) if st else NAN,
        float(t.caps),
        float(num is not None),
        float(_SCHEME_CODE.get(num.scheme, len(SCHEMES)) if num is not None else 0),
        float(len(num.values)) if num is not None else 0.0,
        math.log1p(t.n_chars),
        float(t.n_words),
        float(t.first_on_page) if st else NAN,
        t.y0 if t.y0 >= 0 else NAN,
        t.x0 if t.x0 >= 0 else NAN,
        float(t.centered) if st else NAN,
        float(st),
        float(styles.first_index.get(t.key, -1) == t.index) if st else NAN,
        styles.share_numbered,
        math.log1p(styles.n_headings),
        float(view.depth - view.prev),
        t.index / max(n_total, 1),
        _scheme_rank(t),
        float(styles.seen_before[t.index]) if st else NAN,
        t.size / styles.max_size if st and styles.max_size > 0 else NAN,
        styles.share_caps,
        styles.numbered_share.get(t.key, 0.0) if st else NAN,
        luminance(t.color) if st else NAN,
    ]


_RULES = RulesPredictor()
_NUMBERING = NumberingPredictor()


def candidate_rows(
    t: HeadingInfo,
    view: View,
    infos: Sequence[HeadingInfo],
    styles: DocStyles,
) -> list[list[float]]:
    """One feature row per candidate level 1..view.prev+1, in that order."""
    base = _target_row(t, view, styles, len(infos))
    prev = infos[view.prev_index] if view.prev_index is not None else None
    st = t.has_style
    if prev is not None:
        ps = st and prev.has_style
        base += [
            float(prev.key == t.key) if ps else NAN,
            t.size - prev.size if ps else NAN,
            float(t.page - prev.page),
            float(_cmp(prev, t)) if ps else NAN,
            float(continues(prev.numbering, t.numbering)),
            float(opens_child(prev.numbering, t.numbering)),
        ]
    else:
        base += [NAN] * len(_PREV)
    top = view.prev + 1
    anchors: dict[int, HeadingInfo | None] = {}
    for k in range(0, top + 2):
        i = view.at(k)
        anchors[k] = infos[i] if i is not None else None
    # branch-wide summaries, computed once for all candidates
    key_levels = [k for k in range(1, top + 1) if anchors[k] is not None and st and anchors[k].has_style
                  and anchors[k].key == t.key]
    best_key = key_levels[-1] if key_levels else None
    first_key = key_levels[0] if key_levels else None
    cont = [k for k in range(1, top + 1) if anchors[k] is not None and continues(anchors[k].numbering, t.numbering)]
    cont_level = cont[-1] if cont else None
    opn = [k for k in range(1, top) if anchors[k] is not None and opens_child(anchors[k].numbering, t.numbering)]
    open_level = opn[-1] + 1 if opn else None
    fs_level = 1
    if st:
        for k in range(view.prev, 0, -1):
            a = anchors[k]
            if a is not None and a.has_style and a.size > t.size + SIZE_TOL:
                fs_level = k + 1
                break
    stronger = [0] * (top + 2)  # stronger[k]: anchor at k visibly stronger than t
    weaker = [0] * (top + 2)
    same = [0] * (top + 2)
    for k in range(1, top + 1):
        a = anchors[k]
        if a is None or not (st and a.has_style):
            continue
        c = _cmp(a, t)
        stronger[k] = int(c > 0)
        weaker[k] = int(c < 0)
        same[k] = int(a.key == t.key)
    # what the rule-based predictors would answer from the same memory: the model learns when to
    # trust numbering and style clusters and when to overrule them
    br = LocalBranch.of(infos, view.by_level, view.prev, view.prev_index, view.depth)
    rules_k, rules_conf = _RULES.level(br, t)
    num_k = _NUMBERING.level(br, t)[0] if t.numbering is not None else None
    rows = []
    for k in range(1, top + 1):
        A, P, C = anchors[k], anchors[k - 1] if k > 1 else None, anchors[k + 1]
        parent_idx = view.at(k - 1) if k > 1 else None
        sibs = view.children.get(parent_idx, []) if (k == 1 or parent_idx is not None) else []
        n_sib = len(sibs)
        sib_key = sum(1 for s in sibs if st and infos[s].has_style and infos[s].key == t.key)
        sig = _sig(t)
        tn = t.numbering
        sib_sig = sum(1 for s in sibs if _sig(infos[s]) == sig) if tn is not None else -1
        prefix = NAN
        if P is not None and tn is not None and P.numbering is not None:
            pn = P.numbering
            prefix = float(pn.scheme == tn.scheme and len(tn.values) == len(pn.values) + 1
                           and tn.values[:-1] == pn.values)
        row = base + [
            float(view.depth - k),
            float(k - view.prev),
            float(k == top),
            float(k == 1),
            float(n_sib),
            float(sib_key),
            sib_key / n_sib if n_sib else NAN,
            float(sib_sig),
            float(k - best_key) if best_key is not None else NAN,
            float(k - first_key) if first_key is not None else NAN,
            float(k - cont_level) if cont_level is not None else NAN,
            float(k - open_level) if open_level is not None else NAN,
            float(sum(weaker[1:k])),
            float(sum(same[1:k])),
            float(sum(stronger[k:top + 1])),
            float(k - fs_level) if st else NAN,
            prefix,
            float(k - rules_k),
            rules_conf,
            float(k - num_k) if num_k is not None else NAN,
        ]
        row += _pair(t, A, styles)
        row += _pair(t, P, styles)
        row += _pair(t, C, styles)
        rows.append(row)
    return rows
