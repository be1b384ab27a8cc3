"""Synthetic chunk collections shaped like report chunks (for tests and benchmarks).

Words follow a Zipf law over a fixed vocabulary, as in natural text, so BM25
postings and idf behave like a real collection's; every document gets a
heading tree (``depth`` levels, a few sections per level) and each section a
few chunks, with the section path, sibling positions and pages a chunker would
give.  Deterministic for a seed.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from structrag.model import Chunk

__all__ = ["synthetic_documents"]


def _vocab(n: int, rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = set()
    while len(words) < n:
        k = int(rng.integers(3, 10))
        words.add("".join(rng.choice(letters, size=k)))
    return sorted(words)


def synthetic_documents(
    n_chunks: int,
    *,
    chunks_per_doc: int = 500,
    words_per_chunk: int = 120,
    vocab_size: int = 30_000,
    depth: int = 3,
    seed: int = 0,
) -> Iterator[tuple[str, int, list[Chunk]]]:
    """Yield ``(name, page_count, chunks)`` until ``n_chunks`` chunks in all."""
    rng = np.random.default_rng(seed)
    vocab = np.array(_vocab(vocab_size, rng))
    made = 0
    d = 0
    while made < n_chunks:
        n = min(chunks_per_doc, n_chunks - made)
        name = f"synthetic-{seed}-{d:05d}.pdf"
        sha = f"{seed:04x}{d:036x}"
        chunks: list[Chunk] = []
        path: list[str] = []
        i = 0
        pages_per_chunk = 0.25
        while i < n:
            # next section: go up or down the tree like a report does
            lvl = int(rng.integers(1, depth + 1)) if path else 1
            lvl = min(lvl, len(path) + 1)
            title_words = vocab[np.minimum(rng.zipf(1.2, size=int(rng.integers(1, 5))), vocab_size) - 1]
            path = path[: lvl - 1] + [" ".join(title_words).title()]
            count = min(int(rng.integers(1, 6)), n - i)
            for j in range(count):
                lens = int(rng.integers(words_per_chunk // 2, words_per_chunk * 3 // 2))
                ids = np.minimum(rng.zipf(1.15, size=lens), vocab_size) - 1
                text = " ".join(vocab[ids])
                page = int(i * pages_per_chunk)
                chunks.append(
                    Chunk(
                        id=f"{sha[-8:]}-{i:06d}",
                        doc_name=name,
                        doc_sha1=sha,
                        text=text,
                        start=0,
                        end=len(text),
                        section_id=f"s{len(chunks)}",
                        section_path=tuple(path),
                        heading_levels=tuple(range(1, len(path) + 1)),
                        sibling_index=j,
                        sibling_count=count,
                        pages=(page,),
                        bboxes=(),
                        block_ids=(),
                    )
                )
                i += 1
        made += n
        yield name, int(n * pages_per_chunk) + 1, chunks
        d += 1
