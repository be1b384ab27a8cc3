"""PNG plots of the runner reports (matplotlib, the ``eval`` extra; Agg backend, no display needed)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from structrag.errors import ConfigError

__all__ = ["plot_teds_vs_length", "plot_recall_curves", "plot_speed"]


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - matplotlib is in the eval extra
        raise ConfigError("plots need matplotlib", hint="pip install 'structrag[eval]'") from exc
    return plt


_MARKERS = "osD^v<>PX*h"


def plot_teds_vs_length(report: Any, path: str | os.PathLike) -> Path:
    """TEDS per document against its page count, one series per method (log x)."""
    plt = _pyplot()
    pages = {d["doc_id"]: d["pages"] for d in report.documents}
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    for i, m in enumerate(report.methods):
        ds = report.per_document[m]
        xs = [pages[d.name] for d in ds]
        ys = [d.teds for d in ds]
        micro = report.scores(m).micro_steds
        ax.scatter(xs, ys, marker=_MARKERS[i % len(_MARKERS)], alpha=0.75, label=f"{m} (micro {micro:.3f})")
    ax.set_xscale("log")
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("document length (pages, log scale)")
    ax.set_ylabel("TEDS")
    ax.set_title(f"Heading-tree TEDS per document ({report.protocol})")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out


def plot_recall_curves(report: Any, path: str | os.PathLike, *, level: str = "page") -> Path:
    """Any-hit (solid) and all-hit (dashed) recall@k against k, one colour per mode."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    ks = sorted(report.ks)
    for i, m in enumerate(report.modes):
        s = report.scores[level].get(m)
        if s is None:
            continue
        line = ax.plot(ks, [s.mean[f"recall_any@{k}"] for k in ks], marker=_MARKERS[i % len(_MARKERS)],
                       label=f"{m} any-hit")[0]
        ax.plot(ks, [s.mean[f"recall_all@{k}"] for k in ks], linestyle="--", color=line.get_color(),
                marker=_MARKERS[i % len(_MARKERS)], alpha=0.6, label=f"{m} all-hit")
    ax.set_xscale("log")
    ax.set_xticks(ks)
    ax.set_xticklabels([str(k) for k in ks])
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("k (distinct pages)" if level == "page" else "k (ranked units)")
    ax.set_ylabel("recall@k")
    ax.set_title(f"Recall@k, {level} level, {report.n_queries} queries")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2, loc="lower right")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out


def plot_speed(report: Any, path: str | os.PathLike) -> Path:
    """Pages per second per method (log scale), annotated with peak RSS."""
    plt = _pyplot()
    s = report.summary()
    names = list(s)
    fig, ax = plt.subplots(figsize=(7.5, 4.0), dpi=120)
    vals = [s[m]["pages_per_s"] for m in names]
    bars = ax.barh(names, vals, color="#4472c4")
    for b, m in zip(bars, names):
        ax.text(b.get_width() * 1.05, b.get_y() + b.get_height() / 2,
                f"{s[m]['pages_per_s']:.1f} p/s, {s[m]['peak_rss_mb']:.0f} MB", va="center", fontsize=8)
    if vals and min(vals) > 0:
        ax.set_xscale("log")
        ax.set_xlim(min(vals) / 2, max(vals) * 8)
    ax.set_xlabel("pages per second, one core (log scale)")
    ax.set_title("Throughput")
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out
