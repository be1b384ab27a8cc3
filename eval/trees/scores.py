"""Per-document and pooled scores: TEDS (plain, pruned, aligned), parent / path / depth accuracy, P/R/F1."""

from __future__ import annotations

from typing import Any, Iterable, Literal, Mapping, NamedTuple, Sequence

from structrag.errors import ConfigError
from structrag.text import normalize_title

from .align import Alignment, _prf, align, prune
from .outline import Outline, as_outline
from .ted import Engine, Rename, _ted, _teds_value

__all__ = ["Protocol", "parent_accuracy", "path_accuracy", "DocumentScores", "TreeScores", "score_document",
           "pool", "score_corpus"]

Protocol = Literal["auto", "level-only", "end-to-end"]



def _structure_counts(pred: Outline, ref: Outline, al: Alignment) -> tuple[int, int, int, Outline]:
    """(parent correct, path correct, depth correct, pruned prediction) over the reference headings."""
    matched_pred = [p for p, _ in al.pairs]
    pruned = prune(pred, matched_pred)
    # pruned index k corresponds to matched_pred[k] (sorted, and pairs are increasing)
    ref_of_pruned = [r for _, r in al.pairs]
    pruned_of_ref = {r: k for k, r in enumerate(ref_of_pruned)}
    pdepth = pruned.depths()
    rdepth = ref.depths()
    parent_ok = [False] * len(ref)
    path_ok = [False] * len(ref)
    depth_ok = 0
    for r in range(len(ref)):  # ref parents precede children, so path_ok of the parent is known
        k = pruned_of_ref.get(r)
        if k is None:
            continue
        pk = pruned.parents[k]
        pr = ref.parents[r]
        parent_ok[r] = (pk < 0 and pr < 0) or (pk >= 0 and ref_of_pruned[pk] == pr)
        path_ok[r] = parent_ok[r] and (pr < 0 or path_ok[pr])
        depth_ok += pdepth[k] == rdepth[r]
    return sum(parent_ok), sum(path_ok), depth_ok, pruned


def _same_headings(a: Outline, b: Outline) -> bool:
    return len(a) == len(b) and all(normalize_title(x) == normalize_title(y) for x, y in zip(a.texts, b.texts))


def _alignment_for(a: Outline, b: Outline, protocol: Protocol, threshold: float,
                   page_window: int | None) -> tuple[Alignment, str]:
    if protocol == "level-only" or (protocol == "auto" and _same_headings(a, b)):
        if len(a) != len(b):
            raise ConfigError(
                f"level-only protocol needs the same headings on both sides: {len(a)} predicted, {len(b)} reference",
                path=a.name or b.name or None,
            )
        for i, (x, y) in enumerate(zip(a.texts, b.texts)):
            if normalize_title(x) != normalize_title(y):
                raise ConfigError(
                    f"level-only protocol: heading {i} differs ({x!r} predicted vs {y!r} reference)",
                    path=a.name or b.name or None, hint="use protocol='end-to-end' to align them",
                )
        return Alignment.identity(len(a)), "level-only"
    if protocol not in ("auto", "end-to-end"):
        raise ConfigError(f"protocol must be 'auto', 'level-only' or 'end-to-end', got {protocol!r}")
    return align(a, b, threshold=threshold, page_window=page_window), "end-to-end"


def parent_accuracy(pred: Any, ref: Any, *, protocol: Protocol = "auto", threshold: float = 0.8,
                    page_window: int | None = 1) -> float:
    """Share of reference headings attached to the right parent (1.0 when the reference is empty)."""
    a, b = as_outline(pred), as_outline(ref)
    al, _ = _alignment_for(a, b, protocol, threshold, page_window)
    pc, _, _, _ = _structure_counts(a, b, al)
    return pc / len(b) if len(b) else 1.0


def path_accuracy(pred: Any, ref: Any, *, protocol: Protocol = "auto", threshold: float = 0.8,
                  page_window: int | None = 1) -> float:
    """Share of reference headings whose whole root-to-node path is right (HELD)."""
    a, b = as_outline(pred), as_outline(ref)
    al, _ = _alignment_for(a, b, protocol, threshold, page_window)
    _, pc, _, _ = _structure_counts(a, b, al)
    return pc / len(b) if len(b) else 1.0


class DocumentScores(NamedTuple):
    """Per-document scores; the counts let :class:`TreeScores` pool over documents."""

    name: str
    protocol: str
    n_pred: int
    n_ref: int
    ted: float
    size: int  # max(|T_pred|, |T_ref|)
    teds: float
    pruned_ted: float
    pruned_size: int
    pruned_teds: float
    aligned_ted: float
    aligned_teds: float
    matched: int
    precision: float
    recall: float
    f1: float
    parent_correct: int
    path_correct: int
    depth_correct: int
    parent_accuracy: float
    path_accuracy: float
    depth_accuracy: float

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


def score_document(
    pred: Any,
    ref: Any,
    *,
    protocol: Protocol = "auto",
    rename: Rename = "edit-distance",
    threshold: float = 0.8,
    page_window: int | None = 1,
    engine: Engine = "auto",
    name: str | None = None,
) -> DocumentScores:
    """All tree scores for one document.

    ``protocol="auto"`` is level-only when both sides hold the same heading
    texts in the same order, end-to-end otherwise.  ``level-only`` checks that
    they do and raises :class:`ConfigError` naming the first difference.
    """
    a, b = as_outline(pred), as_outline(ref)
    al, proto = _alignment_for(a, b, protocol, threshold, page_window)
    pc, pathc, dc, pruned = _structure_counts(a, b, al)
    d = _ted(a, b, rename, engine)
    size = max(len(a), len(b))
    if proto == "level-only":
        pd_, psize, ad = d, size, d
    else:
        pd_ = _ted(pruned, b, rename, engine)
        psize = max(len(pruned), len(b))
        relabelled = Outline(tuple(b.texts[r] for _, r in al.pairs), pruned.levels, pruned.pages, pruned.parents,
                             pruned.name)
        ad = _ted(relabelled, b, rename, engine)
    prf = _prf(len(al.pairs), len(a), len(b))
    nr = len(b)
    return DocumentScores(
        name=name if name is not None else (b.name or a.name),
        protocol=proto,
        n_pred=len(a),
        n_ref=nr,
        ted=d,
        size=size,
        teds=_teds_value(d, size),
        pruned_ted=pd_,
        pruned_size=psize,
        pruned_teds=_teds_value(pd_, psize),
        aligned_ted=ad,
        aligned_teds=_teds_value(ad, psize),
        matched=prf.matched,
        precision=prf.precision,
        recall=prf.recall,
        f1=prf.f1,
        parent_correct=pc,
        path_correct=pathc,
        depth_correct=dc,
        parent_accuracy=pc / nr if nr else 1.0,
        path_accuracy=pathc / nr if nr else 1.0,
        depth_accuracy=dc / nr if nr else 1.0,
    )


class TreeScores(NamedTuple):
    """Scores pooled over documents.

    ``micro_steds`` = 1 - sum TED / sum size; ``macro_steds`` = mean TEDS
    (NaN over no documents).  Parent / path /
    depth accuracy and precision / recall / F1 are pooled over headings
    (micro); the ``macro_*`` fields average them per document.
    """

    n_documents: int
    micro_steds: float
    macro_steds: float
    pruned_micro_steds: float
    pruned_macro_steds: float
    aligned_micro_steds: float
    aligned_macro_steds: float
    precision: float
    recall: float
    f1: float
    parent_accuracy: float
    path_accuracy: float
    depth_accuracy: float
    macro_parent_accuracy: float
    macro_path_accuracy: float
    macro_f1: float
    documents: tuple[DocumentScores, ...]

    def to_dict(self, *, documents: bool = True) -> dict[str, Any]:
        d = self._asdict()
        d["documents"] = [x.to_dict() for x in self.documents] if documents else None
        if not documents:
            del d["documents"]
        return d


def _mean(xs: Sequence[float]) -> float:
    return float(sum(xs) / len(xs)) if xs else float("nan")


def pool(docs: Sequence[DocumentScores]) -> TreeScores:
    """Pool per-document scores into :class:`TreeScores` (NaN fields for no documents)."""
    docs = tuple(docs)
    nan = float("nan")
    size = sum(d.size for d in docs)
    psize = sum(d.pruned_size for d in docs)
    n_ref = sum(d.n_ref for d in docs)
    prf = _prf(sum(d.matched for d in docs), sum(d.n_pred for d in docs), n_ref) if docs else None
    return TreeScores(
        n_documents=len(docs),
        micro_steds=(_teds_value(sum(d.ted for d in docs), size) if docs else nan),
        macro_steds=_mean([d.teds for d in docs]),
        pruned_micro_steds=(_teds_value(sum(d.pruned_ted for d in docs), psize) if docs else nan),
        pruned_macro_steds=_mean([d.pruned_teds for d in docs]),
        aligned_micro_steds=(_teds_value(sum(d.aligned_ted for d in docs), psize) if docs else nan),
        aligned_macro_steds=_mean([d.aligned_teds for d in docs]),
        precision=prf.precision if prf else nan,
        recall=prf.recall if prf else nan,
        f1=prf.f1 if prf else nan,
        parent_accuracy=(sum(d.parent_correct for d in docs) / n_ref if n_ref else (1.0 if docs else nan)),
        path_accuracy=(sum(d.path_correct for d in docs) / n_ref if n_ref else (1.0 if docs else nan)),
        depth_accuracy=(sum(d.depth_correct for d in docs) / n_ref if n_ref else (1.0 if docs else nan)),
        macro_parent_accuracy=_mean([d.parent_accuracy for d in docs]),
        macro_path_accuracy=_mean([d.path_accuracy for d in docs]),
        macro_f1=_mean([d.f1 for d in docs]),
        documents=docs,
    )


def score_corpus(
    pairs: Mapping[str, tuple[Any, Any]] | Iterable[tuple[Any, Any]],
    **options: Any,
) -> TreeScores:
    """Score many documents: ``{name: (pred, ref)}`` or an iterable of ``(pred, ref)``.

    ``options`` are those of :func:`score_document` (unknown ones are rejected).
    Over no documents every score is NaN.
    """
    allowed = {"protocol", "rename", "threshold", "page_window", "engine"}
    bad = set(options) - allowed
    if bad:
        raise ConfigError(f"unknown option(s) for score_corpus: {sorted(bad)}; allowed: {sorted(allowed)}")
    if isinstance(pairs, Mapping):
        items = [(str(k), v) for k, v in pairs.items()]
    else:
        items = [(None, v) for v in pairs]
    docs = []
    for nm, pr in items:
        if not isinstance(pr, (tuple, list)) or len(pr) != 2:
            raise ConfigError("score_corpus expects (pred, ref) pairs")
        docs.append(score_document(pr[0], pr[1], name=nm, **options))
    return pool(docs)
