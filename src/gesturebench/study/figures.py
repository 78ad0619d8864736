"""The study's figures as PNG files (matplotlib's object API, no global pyplot state). A figure made
from synthetic ratings carries a visible "synthetic ratings" stamp, so that it cannot pass as human
data; each `plot_*` saves its figure and returns it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from gesturebench.reporting.results import ARROWS
from gesturebench.runtime.atomic import atomic_path
from gesturebench.study.schema import DIMENSIONS, SCALE, metric_label

DPI = 150
#: The text stamped on every figure of a synthetic study.
SYNTHETIC_STAMP = "synthetic ratings"


def _save(fig: Figure, path: Path, synthetic: bool) -> Figure:
    """Stamp `fig` when its ratings are synthetic, then write it to `path`."""
    if synthetic:
        fig.text(
            0.5,
            0.5,
            SYNTHETIC_STAMP,
            ha="center",
            va="center",
            rotation=20,
            fontsize=40,
            color="red",
            alpha=0.25,
            fontweight="bold",
            gid="synthetic-stamp",
        )
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=DPI, bbox_inches="tight")
    return fig


CORRECTION_LABELS = {"holm": "Holm", "bh": "BH"}


def format_p(p: float) -> str:
    return "p<.001" if p < 0.001 else f"p={p:.3f}".replace("0.", ".", 1)


def row_label(metric: str, directions: dict[str, str]) -> str:
    """A metric's display name with its direction arrow (↑, ↓ or →0) where known."""
    return f"{metric_label(metric)} {ARROWS.get(directions.get(metric, ''), '')}".rstrip()


def _dimension_label(d: str) -> str:
    return f"{d.upper()}\n{DIMENSIONS.get(d, d)}".replace(
        "Absence of animation errors", "Absence of\nanim. errors"
    )


def plot_ratings(
    means: pd.DataFrame, sources: list[str], path: Path, synthetic: bool = False
) -> Figure:
    """Figure 2: mean rating per source (bars) and dimension (groups), error bars = SD between
    sequences; a source without ratings is neither drawn nor in the legend."""
    dims = [d for d in DIMENSIONS if d in set(means["dimension"])]
    sources = [s for s in sources if s in set(means["source"])]
    fig = Figure(figsize=(2.0 + 1.7 * len(dims), 4.8))
    ax = fig.add_subplot()
    width = 0.8 / max(len(sources), 1)
    x = np.arange(len(dims))
    table = means.set_index(["source", "dimension"])
    for i, source in enumerate(sources):
        rows = table.reindex([(source, d) for d in dims])
        ax.bar(
            x + (i - (len(sources) - 1) / 2) * width,
            rows["mean"],
            width,
            yerr=rows["sd_between_sequences"],
            capsize=2.5,
            label=source,
            color=f"C{i}",
            error_kw={"elinewidth": 0.8},
        )
    ax.set_xticks(x, [_dimension_label(d) for d in dims])
    ax.set_ylim(SCALE[0], SCALE[1])
    ax.set_ylabel("Mean rating (1 = very poor, 7 = excellent)")
    ax.set_xlabel("Perceptual dimension")
    ax.set_title("Mean rating per source and dimension (error bars: SD between sequences)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(title="Source", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return _save(fig, path, synthetic)


def plot_correlations(
    table: pd.DataFrame,
    correction: str,
    n: int,
    path: Path,
    directions: dict[str, str],
    synthetic: bool = False,
) -> Figure:
    """Figure 3: heatmap of Spearman ρ (metric × dimension) with stars, raw and corrected p in every
    cell; each row labelled with its metric's direction (`directions`: metric → lower, higher or
    zero)."""
    metrics = list(dict.fromkeys(table["metric"]))
    dims = [d for d in DIMENSIONS if d in set(table["dimension"])]
    grid = table.set_index(["metric", "dimension"])
    rho = np.array([[grid.at[(m, d), "rho"] for d in dims] for m in metrics], dtype=float).reshape(
        len(metrics), len(dims)
    )
    fig = Figure(figsize=(3.0 + 1.6 * len(dims), 1.3 + 0.62 * max(len(metrics), 1)))
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(rho), cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    padj, label = f"p_{correction}", CORRECTION_LABELS.get(correction, correction)
    for i, m in enumerate(metrics):
        for j, d in enumerate(dims):
            row = grid.loc[(m, d)]
            if not np.isfinite(row["rho"]):
                ax.text(j, i, "n/a", ha="center", va="center", fontsize=8, color="grey")
                continue
            colour = "white" if abs(row["rho"]) > 0.6 else "black"
            ax.text(
                j,
                i - 0.12,
                f"{row['rho']:+.2f}{row['stars']}",
                ha="center",
                va="center",
                fontsize=9,
                color=colour,
                fontweight="bold",
            )
            ax.text(
                j,
                i + 0.24,
                f"{format_p(row['p'])} · {label} {format_p(row[padj])}",
                ha="center",
                va="center",
                fontsize=6.5,
                color=colour,
            )
    ax.set_xticks(range(len(dims)), [_dimension_label(d) for d in dims])
    ax.set_yticks(range(len(metrics)), [row_label(m, directions) for m in metrics])
    ax.set_xlabel("Perceptual dimension (mean rating per clip)")
    ax.set_ylabel("Objective metric")
    ax.set_title(
        f"Spearman ρ, metric vs rating, generated clips (n = {n})\n"
        f"stars: raw p (* <.05, ** <.01, *** <.001); second line: raw and {label}-corrected p",
        fontsize=10,
    )
    fig.colorbar(image, ax=ax, label="Spearman ρ", fraction=0.04, pad=0.02)
    return _save(fig, path, synthetic)


def plot_composites(
    predictions: pd.DataFrame,
    table3: pd.DataFrame,
    sources: list[str],
    path: Path,
    synthetic: bool = False,
) -> Figure:
    """Out-of-fold (leave-one-out) composite prediction against the mean rating, one panel per
    dimension (each source in its Figure 2 colour, only the sources with a prediction in the
    legend). A prediction beyond the rating scale is drawn at the scale's edge as a triangle
    pointing out of it (`gid` "clipped"), explained in the legend."""
    dims = list(table3["dimension"])
    fig = Figure(figsize=(3.2 * max(len(dims), 1), 3.6))
    rows = table3.set_index("dimension")
    lo, hi = SCALE
    rated: set[str] = set()
    clipped = False
    for k, d in enumerate(dims):
        ax = fig.add_subplot(1, len(dims), k + 1)
        part = predictions[predictions["dimension"] == d]
        for i, source in enumerate(sources):
            group = part[part["source"] == source]
            rating = group["rating"].to_numpy(float)
            predicted = group["loo_prediction"].to_numpy(float)
            inside = (predicted >= lo) & (predicted <= hi)
            ax.scatter(rating[inside], predicted[inside], s=14, color=f"C{i}", alpha=0.8)
            for beyond, edge, marker in ((predicted > hi, hi, "^"), (predicted < lo, lo, "v")):
                if beyond.any():
                    ax.scatter(
                        rating[beyond],
                        np.full(int(beyond.sum()), edge),
                        s=36,
                        marker=marker,
                        color=f"C{i}",
                        edgecolors="black",
                        linewidths=0.6,
                        clip_on=False,
                        zorder=3,
                        gid="clipped",
                    )
                    clipped = True
            if len(group):
                rated.add(source)
        ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls="--")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        r = rows.loc[d]
        ax.set_title(
            f"{DIMENSIONS.get(d, d)}: composite ρ = {r['rho']:.2f}\n"
            f"best single: {metric_label(r['best_metric'])} ρ = {r['rho_best']:.2f}",
            fontsize=9,
        )
        ax.set_xlabel("Mean rating of the clip (1–7)")
        if k == 0:
            ax.set_ylabel("Rating predicted by the composite\n(clip's sequence held out)")
    if dims:
        shown = [(i, s) for i, s in enumerate(sources) if s in rated]
        handles = [Line2D([], [], ls="", marker="o", color=f"C{i}") for i, _ in shown]
        labels = [s for _, s in shown]
        if clipped:
            handles.append(Line2D([], [], ls="", marker="^", color="grey", mec="black"))
            labels.append(f"▲/▼ predicted beyond {lo}–{hi},\ndrawn at the edge")
        fig.axes[-1].legend(
            handles,
            labels,
            title="Source",
            loc="upper left",
            bbox_to_anchor=(1.02, 1.0),
            frameon=False,
            fontsize=8,
        )
    fig.suptitle("Target-specific composites: leave-one-out predictions vs ratings", y=1.04)
    return _save(fig, path, synthetic)
