"""Index a folder of reports and ask a question (offline).

    python examples/index_and_query.py REPORTS_DIR "What was capital expenditure in 2018?" [--index DIR]

The first run parses, chunks and embeds every PDF; later runs skip unchanged files.
"""

from __future__ import annotations

import argparse
import sys

from retrievers import Index
from structrag import StructragError


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Index a folder of PDF reports and answer a question from it.")
    p.add_argument("reports", help="a folder of PDF reports (searched recursively), or one PDF")
    p.add_argument("question", help="the question, e.g. \"What was capital expenditure in 2018?\"")
    p.add_argument("--index", default="example-index", help="the index folder (default: ./example-index)")
    p.add_argument("-k", type=int, default=5, help="how many hits to print (default: 5)")
    args = p.parse_args(argv)
    try:
        index = Index.build([args.reports], args.index, workers=2)
        print(index, index.last_report)
        for i, hit in enumerate(index.search(args.question, k=args.k), 1):
            pages = ", ".join(str(p + 1) for p in hit.pages)  # hit.pages are 0-based
            print(f"{i}. {hit.doc} p. {pages}  [{hit.score:.3f}]  {' > '.join(hit.section_path)}")
            print("   " + " ".join(hit.text.split())[:200])
    except StructragError as exc:  # a bad file or folder: one line, not a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
