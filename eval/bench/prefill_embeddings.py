"""Fill the embedding cache for a shard of an index's documents (parallel help for bench builds).

    python eval/prefill_embeddings.py INDEX_DIR MODEL SHARD NSHARDS

Embeds every chunk text and section-path text of documents ``i`` with ``i % NSHARDS == SHARD``
into ``$STRUCTRAG_EMBEDDING_CACHE`` (default ``.cache/embeddings.sqlite``); an index
built afterwards with the same model finds them there and embeds nothing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main(argv=None) -> int:
    argv = argv if argv is not None else sys.argv[1:]
    index_path, model, shard, n = argv[0], argv[1], int(argv[2]), int(argv[3])
    os.environ.setdefault("STRUCTRAG_EMBEDDING_CACHE", str(REPO / ".cache" / "embeddings.sqlite"))
    from retrievers.corpus import doc_nodes, path_text
    from retrievers.dense import DenseEncoder
    from retrievers.index import Index

    enc = DenseEncoder(model)
    with Index.open(index_path) as ix:
        for i, d in enumerate(ix.documents()):
            if i % n != shard:
                continue
            chunks = ix.chunks(d.name)
            enc.encode([c.text for c in chunks])
            enc.encode([path_text(p) for p in doc_nodes([c.section_path for c in chunks]).paths])
            print(f"shard {shard}: {d.name} ({len(chunks)} chunks)", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
