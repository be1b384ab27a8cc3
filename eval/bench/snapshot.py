"""Behaviour snapshots: write what the library answers on the shared data, and compare two snapshots.

    python -m eval.bench.snapshot write OUT_DIR [--data DIR] [--sets toc,retrieval]
    python -m eval.bench.snapshot compare BEFORE_DIR AFTER_DIR

``write`` records, from the working tree it is run in:

- ``toc/<pdf>.json`` and ``toc-ignore-outline/<pdf>.json``: ``structrag toc --json`` (and with
  ``--ignore-outline``) on every PDF under the data folder, through the real command line;
- ``hits/<set>.jsonl``: the top 10 of every shared query (``retrieval``, ``longdoc`` and the two
  query sets in ``eval/data``) in every search mode (``bm25``, ``dense``, ``hybrid``, ``ranker``),
  within the query's document and across the collection, from an index built from scratch.

(The golden chunk file is held by ``tests/test_chunking.py`` against ``tests/golden``.)

``compare`` diffs two such folders file by file and prints the first differing lines of each; exit 0
only when they are byte-identical.  A restructuring step runs ``write`` at the commit before and the
commit after (``git worktree add``), with one ``STRUCTRAG_EMBEDDING_CACHE`` so that the dense
vectors of unchanged chunk texts are embedded once.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from eval.shared_data import shared_data_dir

MODES = ("bm25", "dense", "hybrid", "ranker")
REPO = Path.cwd()


def _query_sets(data: Path) -> dict[str, tuple[list[Path], Path]]:
    """Name -> (PDFs of its index, queries file)."""
    here = REPO / "eval" / "data"
    headings = sorted((data / "headings").glob("*.pdf"))
    filings = sorted((data / "retrieval" / "pdfs").glob("*.pdf"))
    return {
        "retrieval": (filings, data / "retrieval" / "queries.jsonl"),
        "longdoc": (sorted((data / "longdoc" / "pdfs").glob("*.pdf")), data / "longdoc" / "queries.jsonl"),
        "prospectus-zh": (sorted((data / "prospectus-zh").rglob("*.pdf")), here / "prospectus_zh_queries.jsonl"),
        "prospectus-style-en": (headings + filings, here / "prospectus_style_en_queries.jsonl"),
    }


def _toc(pdf: Path, extra: list[str]) -> tuple[str, str]:
    cmd = [sys.executable, "-c", "import sys; from structrag.cli import main; sys.exit(main())",
           "toc", str(pdf), "--json", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    return r.stdout, f"exit {r.returncode}\n{r.stderr}"


def write_tocs(data: Path, out: Path) -> None:
    pdfs = sorted(data.rglob("*.pdf"))
    for sub, extra in (("toc", []), ("toc-ignore-outline", ["--ignore-outline"])):
        (out / sub).mkdir(parents=True, exist_ok=True)
        with ThreadPoolExecutor(2) as pool:
            for pdf, (stdout, status) in zip(pdfs, pool.map(lambda p: _toc(p, extra), pdfs)):
                name = str(pdf.relative_to(data)).replace("/", "__")
                (out / sub / f"{name}.json").write_text(stdout + "\n--\n" + status.split("\n")[0] + "\n",
                                                        encoding="utf-8")


def _load(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def write_hits(data: Path, out: Path, sets: list[str], work: Path) -> None:
    from retrievers.index import Index

    (out / "hits").mkdir(parents=True, exist_ok=True)
    for name, (pdfs, qfile) in _query_sets(data).items():
        if name not in sets or not qfile.is_file():
            continue
        queries = _load(qfile)
        wanted = {q["doc"] for q in queries}
        pdfs = [p for p in pdfs if p.name in wanted]
        ix_dir = work / name
        # one worker: with several, documents are committed as they finish, and the collection order
        # (which breaks exact ties between documents) would differ from run to run
        with Index.build(pdfs, ix_dir, workers=1, progress=False) as ix:
            lines = []
            for q in queries:
                for scope in ("doc", "collection"):
                    for mode in MODES:
                        if mode in ("dense", "hybrid") and not ix.has_dense:
                            continue
                        try:
                            hits = ix.search(q["query"], k=10, doc=q["doc"] if scope == "doc" else None, mode=mode)
                            got = [[h.doc, h.chunk_id, list(h.pages), list(h.section_path), repr(h.score),
                                    hashlib.sha1(h.text.encode()).hexdigest()[:12]] for h in hits]
                        except Exception as exc:  # a changed error is a changed behaviour too
                            got = f"{type(exc).__name__}: {exc}"
                        lines.append(json.dumps({"qid": q["qid"], "scope": scope, "mode": mode, "hits": got},
                                                ensure_ascii=False))
        (out / "hits" / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def compare(a: Path, b: Path, *, context: int = 3) -> int:
    def kept(root: Path) -> set[Path]:  # a folder named "_..." at any depth holds work files (the indexes)
        return {p.relative_to(root) for p in root.rglob("*")
                if p.is_file() and not any(x.startswith("_") for x in p.relative_to(root).parts[:-1])}

    fa, fb = kept(a), kept(b)
    bad = 0
    for rel in sorted(fa ^ fb):
        print(f"only in {'before' if rel in fa else 'after'}: {rel}")
        bad += 1
    for rel in sorted(fa & fb):
        x, y = (a / rel).read_bytes(), (b / rel).read_bytes()
        if x != y:
            bad += 1
            diff = difflib.unified_diff(x.decode(errors="replace").splitlines(), y.decode(errors="replace").splitlines(),
                                        str(a / rel), str(b / rel), n=context, lineterm="")
            print("\n".join(list(diff)[:40]))
    print(f"{len(fa & fb)} files compared, {bad} differ" if bad else f"{len(fa & fb)} files byte-identical")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.bench.snapshot", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("out")
    w.add_argument("--data", default=None, help="the shared data folder (default: $STRUCTRAG_SHARED_DATA, "
                   "else shared/data beside the working tree or beside the folder holding it)")
    w.add_argument("--sets", default="toc,retrieval,longdoc,prospectus-zh,prospectus-style-en")
    w.add_argument("--work", default=None, help="where the indexes are built (default OUT/_work)")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    args = p.parse_args(argv)
    if args.cmd == "compare":
        return compare(Path(args.before), Path(args.after))
    out, data = Path(args.out), shared_data_dir(args.data, repo=REPO)
    out.mkdir(parents=True, exist_ok=True)
    sets = args.sets.split(",")
    if "toc" in sets:
        write_tocs(data, out)
    write_hits(data, out, sets, Path(args.work) if args.work else out / "_work")
    return 0


if __name__ == "__main__":
    sys.exit(main())
