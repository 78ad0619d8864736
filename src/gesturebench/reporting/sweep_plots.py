"""Plots of a sweep over a numeric option (e.g. `-m model=perturbed model/perturbation=jitter,freeze
model.level=0.05,0.1,0.2`): `sweep_<metric>.png` per headline metric, the metric against the swept
value in words, one line per model (e.g. `perturbed_jitter`, `perturbed_freeze`: each combination of
the sweep's other options) with its bootstrap interval as a band, written beside the sweep's
summary. Level 0 of `model=perturbed` is the unperturbed reference: it is plotted when the sweep
includes it (`model.level=0,…`), and a note on the figure says how where it does not.

The swept options are read from the jobs' recorded configs: the leaves that differ between the
successful jobs. The x axis is the first numeric one taking at least two values (config order; an
option only some models have, such as `model.seed` in `-m model=mean_pose,random_clip`, is no axis);
the others label the lines.
Leaves named `name` are labels made from other options
(`perturbed_${model.perturbation.name}_${model.level}`), not options, so they neither split lines
nor make an axis."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from gesturebench.reporting.results import ARROWS, OK, PAPER_METRICS
from gesturebench.runtime.atomic import atomic_path

DPI = 120


def leaves(node: Any, prefix: str = "") -> dict[str, Any]:
    """A nested config as {dotted key: leaf value}."""
    if not isinstance(node, dict):
        return {prefix: node}
    out: dict[str, Any] = {}
    for key, value in node.items():
        out.update(leaves(value, f"{prefix}.{key}" if prefix else str(key)))
    return out


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def swept_options(configs: list[dict[str, Any]]) -> tuple[str | None, list[str]]:
    """(the numeric option on the x axis or None, the other swept options) of flattened configs."""
    keys = list(dict.fromkeys(k for c in configs for k in c))
    varying = [
        k
        for k in keys
        if k.rsplit(".", 1)[-1] != "name" and len({repr(c.get(k)) for c in configs}) > 1
    ]
    numeric = []
    for k in varying:
        values = [c[k] for c in configs if c.get(k) is not None]
        if all(is_number(v) for v in values) and len(set(values)) > 1:
            numeric.append(k)
    x = numeric[0] if numeric else None
    return x, [k for k in varying if k != x]


#: Axis words of the options a sweep commonly runs over; any other key reads as its words.
OPTION_WORDS = {
    "model.level": "perturbation level",
    "model.seed": "model seed",
    "model.samples": "samples per input",
    "dataset.max_sequences": "number of sequences",
}
#: How a direction reads on the y axis.
BETTER = {"lower": "lower is better", "higher": "higher is better", "zero": "closer to 0 is better"}
#: The model whose level 0 is the unperturbed reference (a level-0 job is that point).
PERTURBED = "gesturebench.models.perturbed.Perturbed"


def option_words(key: str) -> str:
    """An option's axis label in words, e.g. ``model.level`` → "perturbation level"."""
    return OPTION_WORDS.get(key, key.replace("_", " ").replace(".", " "))


def line_label(row: dict, config: dict[str, Any], x: str, keys: list[str]) -> str:
    """The line's model: its name without the swept value (``perturbed_jitter_0.1`` →
    ``perturbed_jitter``), then each other swept option whose value the name does not carry (a
    `_target_` as its class's name, which a name in snake case carries: ``Jitter``)."""
    name = str(row.get("model") or "model")
    value = f"_{config.get(x)}"
    name = name[: -len(value)] if name.endswith(value) else name
    parts = [name]
    for key in keys:
        shown = config.get(key)
        if key.endswith("_target_") and isinstance(shown, str):
            key, shown = key.rsplit(".", 1)[0], shown.rsplit(".", 1)[-1]
        if str(shown).replace("_", "").lower() not in name.replace("_", "").lower():
            parts.append(f"{option_words(key)} {shown}")
    return ", ".join(parts)


def y_label(metric: str, direction: str | None) -> str:
    """The metric's name, arrow and which way is better."""
    arrow = ARROWS.get(direction or "", "")
    better = BETTER.get(direction or "")
    return f"{metric} {arrow}".rstrip() + (f" ({better})" if better else "")


def level_zero_note(configs: list[dict[str, Any]], x: str) -> str | None:
    """The figure's note where the swept model defines a level-0 point that no job scored."""
    perturbed = any(c.get("model._target_") == PERTURBED for c in configs)
    if x != "model.level" or not perturbed or any(c.get(x) == 0 for c in configs):
        return None
    return "level 0 is the unperturbed reference: add 0 to model.level to plot it"


def draw_line(ax: Any, points: list[tuple[float, dict]], metric: str, label: str) -> None:
    """One model's values against the swept option, with its bootstrap interval as a band (a
    missing value is a gap)."""
    points = sorted(points, key=lambda p: p[0])
    xs = [p[0] for p in points]
    values = [p[1].get("metrics", {}).get(metric) for p in points]
    ys = [math.nan if v is None else v for v in values]
    (line,) = ax.plot(xs, ys, marker="o", label=label)
    bounds = [p[1].get("intervals", {}).get(metric) for p in points]
    if any(b is not None for b in bounds):
        lo, hi = ([math.nan if b is None else b[i] for b in bounds] for i in (0, 1))
        ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)


def write_sweep_plots(rows: list[dict], folder: str | Path) -> dict[Path, Figure]:
    """`sweep_<metric>.png` in `folder` for each headline metric with a value, when the successful
    jobs of `rows` (collect_jobs) differ in a numeric option: one line per model (named in the
    legend) with its interval band, the axes in words; returns path → figure."""
    ok = [r for r in rows if r.get("status", OK) == OK]
    configs = [leaves(r.get("config", {})) for r in ok]
    x, line_keys = swept_options(configs)
    if x is None:
        return {}
    lines: dict[str, list[tuple[float, dict]]] = {}
    for row, config in zip(ok, configs, strict=True):
        if config.get(x) is not None:
            lines.setdefault(line_label(row, config, x, line_keys), []).append((config[x], row))
    directions: dict[str, str] = {}
    for row in ok:
        directions.update(row.get("directions", {}))
    note = level_zero_note(configs, x)
    figures = {}
    for metric in PAPER_METRICS:
        if not any(r.get("metrics", {}).get(metric) is not None for r in ok):
            continue
        fig = Figure(figsize=(6.0, 4.0))
        ax = fig.add_subplot()
        for label, points in lines.items():
            draw_line(ax, points, metric, label)
        ax.set_xlabel(option_words(x))
        ax.set_ylabel(y_label(metric, directions.get(metric)))
        ax.set_title(f"{metric} against the {option_words(x)} (bands: bootstrap interval)")
        if note:
            fig.text(0.01, 0.01, note, fontsize=7, style="italic")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, frameon=False)
        path = Path(folder) / f"sweep_{metric}.png"
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=DPI, bbox_inches="tight")
        figures[path] = fig
    return figures
