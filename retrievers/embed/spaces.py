"""Vector spaces: one per embedding model in a collection, laid side by side in one array.

An ``auto`` index embeds each document with the model for its script (:func:`.encoder.choose_model`):
English with all-MiniLM-L6-v2, a document mostly in CJK script with multilingual-e5-small.  Adding a
Chinese report to an index of English reports then embeds that report and nothing else, in every order of
adding.  A question must meet each document in its document's space, so when a collection holds more than
one space its arrays lay the spaces side by side (:func:`stack`): a row of space *s* holds its vector in
*s*'s block and a 1 in *s*'s bias column, and a question's vector (:func:`block_query`) holds, in each
block, the question embedded by that block's model and scaled by the space's calibration, and the
calibration's offset in the bias column.  One inner product then gives every row its own model's cosine,
mapped onto one scale, so the exact search, faiss, the search engines and the ranker's features all work
unchanged.  A collection with one space keeps plain vectors: nothing changes for it.

The scale is MiniLM's.  Each space's affine map ``a * cosine + c`` sends the space's *unrelated* pairs
(a section heading against a chunk of another document) onto MiniLM's: e5 puts almost any two texts of one
language near cosine 0.84 (sd 0.018), MiniLM near 0.18 (sd 0.12).  Measured on document text alone, no
question and no label (``python -m eval.bench.dense_spaces``, see the benchmarks page).  A model that cannot
read the question's script (MiniLM, English only, on a question in CJK script) gives its rows no
similarity but its offset: its best match would be noise.
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import numpy as np

from structrag.files import content_key

from .encoder import DEFAULT_MAX_SEQ_LENGTH, DEFAULT_MODEL, MULTILINGUAL_MODEL, choose_model, is_default_model

__all__ = ["Space", "CALIBRATION", "space_for_texts", "stack", "block_query", "reads"]

#: (scale, offset) of each model's cosine on the collection's one scale (MiniLM's); a model not listed
#: is never beside another (an index of a named model has one space)
CALIBRATION: dict[str, tuple[float, float]] = {
    DEFAULT_MODEL: (1.0, 0.0),
    MULTILINGUAL_MODEL: (6.717, -5.4524),
}


class Space(NamedTuple):
    """An embedding model and its sequence cut-off: the vectors of one space are comparable."""

    model: str
    max_seq_length: int | None

    @property
    def key(self) -> str:
        """The space's part of a vector file's name (also of the embedding cache's keys)."""
        return content_key(self.model, self.max_seq_length)[:8]

    @property
    def calibration(self) -> tuple[float, float]:
        return CALIBRATION.get(self.model, (1.0, 0.0))


def space_for_texts(texts: Sequence[str], max_seq_length: int | None = None) -> Space:
    """The space an ``auto`` index puts a document made of ``texts`` in: its script's model, MiniLM with
    the index's cut-off (128 tokens unless the index was given another), e5 with its own."""
    model = choose_model(texts)
    if is_default_model(model):
        return Space(model, max_seq_length or DEFAULT_MAX_SEQ_LENGTH)
    return Space(model, None)


def reads(space: Space, question: str) -> bool:
    """Whether ``space``'s model can read ``question``: MiniLM reads no CJK script."""
    return not (is_default_model(space.model) and choose_model([question]) == MULTILINGUAL_MODEL)


def stack(blocks: Sequence[tuple[int, np.ndarray]], dims: Sequence[int]) -> np.ndarray:
    """Rows of several spaces in one array: ``blocks`` are (space index, rows of that space) in row order,
    ``dims`` each space's dimension.  One space: its rows as they are."""
    if len(dims) == 1:
        return np.concatenate([b for _, b in blocks]).astype(np.float32, copy=False) if blocks \
            else np.zeros((0, dims[0]), np.float32)
    starts = np.concatenate([[0], np.cumsum(dims)]).astype(int)
    width = int(starts[-1]) + len(dims)
    out = np.zeros((sum(len(b) for _, b in blocks), width), np.float32)
    r = 0
    for s, b in blocks:
        out[r:r + len(b), starts[s]:starts[s + 1]] = b
        out[r:r + len(b), int(starts[-1]) + s] = 1.0  # the bias column of its space
        r += len(b)
    return out


def block_query(spaces: Sequence[Space], dims: Sequence[int], question: str,
                encode: Callable[[Space, str], np.ndarray]) -> np.ndarray:
    """The question's vector against rows laid out by :func:`stack`: ``encode(space, question)`` in each
    block, scaled by the space's calibration, and its offset in the space's bias column (one space: the
    plain query vector)."""
    if len(spaces) == 1:
        return encode(spaces[0], question)
    starts = np.concatenate([[0], np.cumsum(dims)]).astype(int)
    q = np.zeros(int(starts[-1]) + len(spaces), np.float32)
    for s, space in enumerate(spaces):
        a, c = space.calibration
        if reads(space, question):
            q[starts[s]:starts[s + 1]] = a * encode(space, question)
        q[int(starts[-1]) + s] = c
    return q
