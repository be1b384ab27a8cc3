"""Crash test: SIGKILL ``structrag index`` mid-write and show the index still opens with its previous content.

    python -m eval.bench.retrieval_crash [--data ../shared/data/retrieval/pdfs] [--kills 3]

1. ``structrag index 3M_2018_10K.pdf --out DIR`` (the previous content);
2. ``structrag index FOLDER --out DIR`` with more reports, killed with SIGKILL at
   a different moment each round (right after it starts writing a document,
   and later), in a subprocess;
3. ``Index.open(DIR)``: which documents are there, whether each is complete
   (its chunk count equals a clean index's), and whether the first query's
   hits are unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eval.bench.common import REPO, data_dir

QUERY = "capital expenditures purchases of property plant and equipment"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from structrag.cli import main; sys.exit(main(sys.argv[1:]))", *args]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.retrieval_crash", description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(data_dir("retrieval", "pdfs")))
    ap.add_argument("--kills", type=int, default=3)
    ap.add_argument("--predictor", default="rules")
    args = ap.parse_args(argv)
    from retrievers.index import Index

    data = Path(args.data)
    first = data / "3M_2018_10K.pdf"
    others = sorted(p for p in data.glob("*.pdf") if p.name.startswith(("AMCOR", "PEPSICO")))[:6]
    work = Path(tempfile.mkdtemp(prefix="crash-"))
    batch = work / "batch"
    batch.mkdir()
    for p in others:
        os.symlink(p, batch / p.name)
    out = work / "index"
    opts = ["--no-dense", "--predictor", args.predictor, "--quiet", "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run(_cli("index", str(first), "--out", str(out), *opts), check=True, env=env)
    with Index.open(out) as ix:
        before = {d.name: [c.id for c in ix.chunks(d.name)] for d in ix.documents()}
    # chunk counts of a clean run, to check that whatever survives is whole
    clean = work / "clean"
    subprocess.run(_cli("index", str(batch), "--out", str(clean), *opts), check=True, env=env)
    with Index.open(clean) as ix:
        whole = {d.name: d.n_chunks for d in ix.documents()}
    rows = []
    for k in range(args.kills):
        proc = subprocess.Popen(_cli("index", str(batch), "--out", str(out), "--no-dense", "--predictor",
                                     args.predictor, "--no-progress"), stderr=subprocess.PIPE, text=True, env=env)
        # wait until it has committed one new document, then kill during the next one
        t0 = time.perf_counter()
        while True:
            line = proc.stderr.readline()
            if not line or " added " in line:
                break
        time.sleep((0.0, 0.5, 1.5, 3.0)[k % 4])
        killed_at = time.perf_counter() - t0
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
        t = time.perf_counter()
        with Index.open(out) as ix:
            docs = {d.name: d.n_chunks for d in ix.documents()}
            prev = {n: [c.id for c in ix.chunks(n)] for n in before if n in docs}
            searchable = bool(ix.search(QUERY, k=5, mode="bm25"))
        rows.append({
            "round": k + 1, "killed_after_s": round(killed_at, 2), "returncode": proc.returncode,
            "opens": True, "open_s": round(time.perf_counter() - t, 2),
            "documents": len(docs),
            "previous_intact": prev == before,
            "all_complete": all(c == (whole[n] if n in whole else len(before[n])) for n, c in docs.items()),
            "searchable": searchable,
        })
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    # a rerun finishes the job: the documents that were whole are skipped (no-op by content hash)
    r = subprocess.run(_cli("index", str(batch), "--out", str(out), *opts[:-2], "--json", "--no-progress"),
                       capture_output=True, text=True, env=env)
    final = json.loads(r.stdout)
    shutil.rmtree(work, ignore_errors=True)
    print("| round | killed after s | exit | opens | open s | docs | previous intact | all docs complete | searchable |")
    print("|---|---|---|---|---|---|---|---|---|")
    for x in rows:
        print(f"| {x['round']} | {x['killed_after_s']} | {x['returncode']} | {x['opens']} | {x['open_s']} | "
              f"{x['documents']} | {x['previous_intact']} | {x['all_complete']} | {x['searchable']} |")
    print(f"\nrerun: {len(final['added'])} added, {len(final['unchanged'])} unchanged, {len(final['failed'])} failed, "
          f"{final['documents']} documents")
    return 0 if all(x["previous_intact"] and x["all_complete"] for x in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
