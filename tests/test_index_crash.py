"""A writer killed with SIGKILL mid-write leaves the index readable with its previous content."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time

import pytest

from retrievers.index import Index
from retrievers.synthetic import synthetic_documents

WRITER = r"""
import sys
from retrievers.index import Index
from retrievers.synthetic import synthetic_documents
index = Index.open(sys.argv[1])
for name, pages, chunks in synthetic_documents(int(sys.argv[2]), chunks_per_doc=int(sys.argv[3]), seed=int(sys.argv[4])):
    print("writing", name, flush=True)
    index.add_chunks(name, chunks, page_count=pages)
    print("done", name, flush=True)
print("finished", flush=True)
"""

PER_DOC = 500


def _readline(proc, timeout: float) -> str:
    r, _, _ = select.select([proc.stdout], [], [], timeout)
    if not r:
        raise TimeoutError("the writer printed nothing")
    return proc.stdout.readline().strip()


def _kill_mid_write(index_dir, seed: int, delay: float) -> tuple[list[str], list[str]]:
    """Start a writer, SIGKILL it ``delay`` s after it starts its 2nd document.

    Returns the documents it reported done and those it had started but not reported done.
    """
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(index_dir), str(3 * PER_DOC), str(PER_DOC), str(seed)],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    done, current, writing_seen = [], None, 0
    try:
        while True:
            line = _readline(proc, 120)
            kind, _, name = line.partition(" ")
            if kind == "writing":
                current = name
                writing_seen += 1
                if writing_seen == 2:
                    time.sleep(delay)
                    os.kill(proc.pid, signal.SIGKILL)
                    break
            elif kind == "done":
                done.append(name)
            elif kind == "finished" or not line:
                pytest.fail(f"the writer ended before it was killed: {line!r}")
    finally:
        proc.wait(30)
        rest = proc.stdout.read()
        proc.stdout.close()
    # lines printed after the kill moment count too: on a fast machine the writer may finish the
    # second document and start (or even commit) the next one before the signal lands
    done += [ln.split(" ", 1)[1] for ln in rest.splitlines() if ln.startswith("done ")]
    started = [current] + [ln.split(" ", 1)[1] for ln in rest.splitlines() if ln.startswith("writing ")]
    assert proc.returncode == -signal.SIGKILL
    return done, [n for n in started if n not in done]


def _snapshot(index):
    return {d.name: d.n_chunks for d in index.documents()}, [h.chunk_id for h in index.search("aaaf", k=5, mode="bm25")]



def test_sigkill_mid_write_keeps_the_previous_index(tmp_path):
    out = tmp_path / "ix"
    with Index.create(out, dense=False) as index:
        for name, pages, chunks in synthetic_documents(300, chunks_per_doc=300, seed=0):
            index.add_chunks(name, chunks, page_count=pages)
        before_docs, before_hits = _snapshot(index)

    # kill at several moments of the second document's write: tokenising, in the
    # transaction, while the search arrays are written
    for seed, delay in ((1, 0.0), (2, 0.4), (3, 1.0)):
        done, unfinished = _kill_mid_write(out, seed=seed, delay=delay)
        with Index.open(out) as index:
            docs, hits = _snapshot(index)
            # the previous content is intact
            for name, n in before_docs.items():
                assert docs[name] == n
            # every document the writer finished is there whole; one it was writing is whole or absent
            for name in done:
                assert docs[name] == PER_DOC
            for name in unfinished:
                assert docs.get(name, PER_DOC) == PER_DOC
            assert set(docs) <= set(before_docs) | set(done) | set(unfinished)
            assert len(index) == sum(docs.values())
            name0 = next(iter(before_docs))
            assert len(index.chunks(name0)) == before_docs[name0]
            before_docs = docs

    # a later writer cleans up and carries on
    with Index.open(out) as index:
        for name, pages, chunks in synthetic_documents(PER_DOC, chunks_per_doc=PER_DOC, seed=9):
            index.add_chunks(name, chunks, page_count=pages)
        assert index.documents()[-1].n_chunks == PER_DOC
    leftovers = [p for p in out.rglob("*") if ".tmp-" in p.name]
    assert not leftovers
    with Index.open(out) as index:
        assert index.search("aaaf", k=1, mode="bm25")
