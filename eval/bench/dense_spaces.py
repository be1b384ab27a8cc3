"""Calibrate the dense spaces of a mixed-language index: where each model puts an unrelated pair.

    python -m eval.bench.dense_spaces --en-index DIR --zh-index DIR [--pairs 3000] [--seed 0]

An ``auto`` index embeds an English document with all-MiniLM-L6-v2 and a document in CJK script with
multilingual-e5-small, and scores every chunk in one inner product (``retrievers.embed.spaces``).  The two
models' cosines live on different scales (e5 puts almost any two texts near 0.8, MiniLM near 0.1), so a
space's similarity is mapped onto MiniLM's scale by an affine map that sends its *unrelated* pairs onto
MiniLM's unrelated pairs: ``a = sd_minilm / sd_model``, ``c = mean_minilm - a * mean_model``.

An unrelated pair is a section heading used as a question (pseudo-query, no labels read) against a chunk of
another document of the same language: English from the indexes' documents in ``--en-index``, Chinese from
``--zh-index``.  No question and no relevance label is read.  Prints the means, standard deviations and the
constants for :data:`retrievers.embed.spaces.CALIBRATION`.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np


def _pairs(index_dir: str, n: int, seed: int, docs: list[str] | None) -> tuple[list[str], list[str]]:
    from retrievers.index import Index

    rng = np.random.default_rng(seed)
    with Index.open(index_dir) as ix:
        names = [d.name for d in ix.documents() if docs is None or d.name in docs]
        per_doc = {name: ix.chunks(name) for name in names}
    heads = [(name, c.section_path[-1]) for name, cs in per_doc.items() for c in cs if c.section_path]
    heads = list(dict.fromkeys(heads))
    chunks = [(name, c.text) for name, cs in per_doc.items() for c in cs]
    queries, texts = [], []
    while len(queries) < n:
        qn, q = heads[int(rng.integers(len(heads)))]
        cn, t = chunks[int(rng.integers(len(chunks)))]
        if qn != cn:  # another document: an unrelated pair
            queries.append(q)
            texts.append(t)
    return queries, texts


def _stats(model: str, queries: list[str], texts: list[str]) -> tuple[float, float]:
    from retrievers.embed.encoder import DEFAULT_MAX_SEQ_LENGTH, DEFAULT_MODEL, DenseEncoder

    enc = DenseEncoder(model, max_seq_length=DEFAULT_MAX_SEQ_LENGTH if model == DEFAULT_MODEL else None)
    q = np.stack([enc.encode_query(x) for x in queries])
    t = enc.encode(texts)
    cos = (q * t).sum(1)
    return float(cos.mean()), float(cos.std())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.bench.dense_spaces", description=__doc__.split("\n")[0])
    p.add_argument("--en-index", required=True, help="an index of English documents (their chunks are read)")
    p.add_argument("--zh-index", required=True, help="an index of Chinese documents")
    p.add_argument("--en-docs", default=None, help="only these documents of --en-index (comma-separated)")
    p.add_argument("--pairs", type=int, default=3000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    from retrievers.embed.encoder import DEFAULT_MODEL, MULTILINGUAL_MODEL

    en_q, en_t = _pairs(args.en_index, args.pairs, args.seed, args.en_docs.split(",") if args.en_docs else None)
    zh_q, zh_t = _pairs(args.zh_index, args.pairs, args.seed, None)
    out = {
        "minilm_en": _stats(DEFAULT_MODEL, en_q, en_t),
        "e5_zh": _stats(MULTILINGUAL_MODEL, zh_q, zh_t),
        "e5_en": _stats(MULTILINGUAL_MODEL, en_q, en_t),
        "e5_en_zh": _stats(MULTILINGUAL_MODEL, en_q[: len(zh_t)], zh_t),
    }
    (m0, s0), (m1, s1) = out["minilm_en"], out["e5_zh"]
    a = s0 / s1
    out["calibration_e5"] = [round(a, 4), round(m0 - a * m1, 4)]
    json.dump({k: [round(x, 4) for x in v] for k, v in out.items()}, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
