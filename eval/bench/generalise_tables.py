"""Markdown tables of a generalisation result (:mod:`eval.bench.generalise`)."""

from __future__ import annotations

__all__ = ["render"]


def _fmt(s: dict, m: str) -> str:
    ci = s.get(m + "_ci95")
    return f"{s[m]:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def render(result: dict) -> str:
    """Markdown tables of a result JSON."""
    g = result["groups"]
    methods = ["page-bm25", "bm25", "dense", "hybrid", "ranker:portable"]
    lines = []

    def table(title, keys, metric_cols=("map", "recall_any@5")):
        lines.append(f"\n### {title}\n")
        head = "| group | n | " + " | ".join(f"{m} {c}" for m in methods for c in ("mAP", "R@5")) + \
               " | ranker − max(BM25, hybrid) |"
        lines.append(head)
        lines.append("|" + "---|" * (3 + 2 * len(methods)))
        for k in keys:
            if k not in g:
                continue
            row = g[k]
            n = next(iter(row.values()))["n"] if row else 0
            cells = []
            for m in methods:
                s = row.get(m)
                cells += [_fmt(s, c) if s else "—" for c in metric_cols]
            r = row.get("ranker:portable", {}).get("map", float("nan"))
            base = max(row.get("bm25", {}).get("map", float("nan")), row.get("hybrid", {}).get("map", float("nan")))
            lines.append(f"| {k.split(':', 1)[1]} | {n} | " + " | ".join(cells) + f" | {r - base:+.3f} |")

    sets = [k for k in g if k.startswith("set:")]
    table("Per query set (ranker: leave-one-family-out)", sets)
    table("Per family (ranker: leave-one-family-out)", sorted(k for k in g if k.startswith("family:")))
    table("Filings by source", sorted(k for k in g if k.startswith("source:")))
    table("Questions that name a section (labelled by the question writer)",
          sorted(k for k in g if k.startswith("names_section:")))
    table("Questions whose text contains one of their document's headings (detector)",
          sorted(k for k in g if k.startswith("mention_detected:")))
    others = [m for m in next(iter(g.values())) if m.startswith("ranker:") and m != "ranker:portable"]
    lines.append("\n### Ranker variants (mAP)\n")
    lines.append("| group | ranker:portable | " + " | ".join(others) + " |")
    lines.append("|" + "---|" * (2 + len(others)))
    for k in sets + sorted(k for k in g if k.startswith(("names_section:", "mention_detected:"))):
        row = g[k]
        lines.append(f"| {k.split(':', 1)[1]} | " + " | ".join(
            f"{row[m]['map']:.3f}" if m in row else "—" for m in ["ranker:portable"] + others) + " |")
    if "company_cv" in result:
        c = result["company_cv"]
        lines.append(f"\nLeave-one-company-out on the filings, trained on the filings alone (portable features): "
                     f"mAP {c['mean']:.3f} +- {c['sd']:.3f} over seeds {', '.join(c['map'])} "
                     f"({', '.join(f'{v:.3f}' for v in c['map'].values())}); BM25 {c['bm25']:.3f}; "
                     f"ratio {c['ratio']:.2f}x")
    return "\n".join(lines)
