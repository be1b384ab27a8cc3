"""Fill the embedding cache for a shard of an index's documents (parallel help for bench builds).

    python -m eval.bench.prefill_embeddings INDEX_DIR MODEL SHARD NSHARDS

Embeds every chunk text and section-path text of documents ``i`` with ``i % NSHARDS == SHARD``
into ``$STRUCTRAG_EMBEDDING_CACHE`` (default ``.cache/embeddings.sqlite``); an index
built afterwards with the same model finds them there and embeds nothing.
"""

from __future__ import annotations

import argparse
import os
import sys

from eval.bench.common import REPO


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.prefill_embeddings", description=__doc__.splitlines()[0])
    ap.add_argument("index", help="the index folder")
    ap.add_argument("model", help="the dense model (as the index build names it)")
    ap.add_argument("shard", type=int, help="this process embeds documents i with i %% NSHARDS == SHARD")
    ap.add_argument("nshards", type=int)
    args = ap.parse_args(argv)
    index_path, model, shard, n = args.index, args.model, args.shard, args.nshards
    os.environ.setdefault("STRUCTRAG_EMBEDDING_CACHE", str(REPO / ".cache" / "embeddings.sqlite"))
    from retrievers.embed.encoder import DenseEncoder
    from retrievers.index import Index
    from retrievers.ingest.sections import doc_nodes, section_path_text

    enc = DenseEncoder(model)
    with Index.open(index_path) as ix:
        for i, d in enumerate(ix.documents()):
            if i % n != shard:
                continue
            chunks = ix.chunks(d.name)
            enc.encode([c.text for c in chunks])
            enc.encode([section_path_text(p) for p in doc_nodes([c.section_path for c in chunks]).paths])
            print(f"shard {shard}: {d.name} ({len(chunks)} chunks)", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
