"""Index a folder of reports and ask a question (offline).

    python examples/index_and_query.py REPORTS_DIR "What was capital expenditure in 2018?" [INDEX_DIR]

The first run parses, chunks and embeds every PDF; later runs skip unchanged files.
"""

import sys

from retrievers import Index


def main() -> None:
    reports, question = sys.argv[1], sys.argv[2]
    out = sys.argv[3] if len(sys.argv) > 3 else "example-index"
    index = Index.build([reports], out, workers=2)
    print(index, index.last_report)
    for i, hit in enumerate(index.search(question, k=5), 1):
        pages = ", ".join(str(p + 1) for p in hit.pages)
        print(f"{i}. {hit.doc} p. {pages}  [{hit.score:.3f}]  {' > '.join(hit.section_path)}")
        print("   " + " ".join(hit.text.split())[:200])


if __name__ == "__main__":
    main()
