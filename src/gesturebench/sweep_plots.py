"""Plots of a sweep over a numeric option (e.g. `-m model=perturbed model.kind=jitter,freeze
model.level=0.05,0.1,0.2`): `sweep_<metric>.png` per headline metric, the metric against the swept
value, one line per combination of the sweep's other options (e.g. `model.kind`), written beside the
sweep's summary.

The swept options are read from the jobs' recorded configs: the leaves that differ between the
successful jobs. The x axis is the first numeric one taking at least two values (config order; an
option only some models have, such as `model.seed` in `-m model=mean_pose,random_clip`, is no axis);
the others label the lines.
Leaves named `name` are labels made from other options (`perturbed_${model.kind}_${model.level}`),
not options, so they neither split lines nor make an axis."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from gesturebench.atomic import atomic_path
from gesturebench.results import ARROWS, PAPER_METRICS

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


def line_label(config: dict[str, Any], keys: list[str]) -> str:
    """`key=value` of each line option (a `_target_` as its class name); "all jobs" if none."""
    parts = []
    for key in keys:
        value = config.get(key)
        if key.endswith("_target_") and isinstance(value, str):
            key, value = key.rsplit(".", 1)[0], value.rsplit(".", 1)[-1]
        parts.append(f"{key}={value}")
    return ", ".join(parts) or "all jobs"


def write_sweep_plots(rows: list[dict], folder: str | Path) -> dict[Path, Figure]:
    """`sweep_<metric>.png` in `folder` for each headline metric with a value, when the successful
    jobs of `rows` (collect_jobs) differ in a numeric option; returns path → figure."""
    ok = [r for r in rows if r.get("status", "ok") == "ok"]
    configs = [leaves(r.get("config", {})) for r in ok]
    x, line_keys = swept_options(configs)
    if x is None:
        return {}
    lines: dict[str, list[tuple[float, dict]]] = {}
    for row, config in zip(ok, configs, strict=True):
        if config.get(x) is not None:
            lines.setdefault(line_label(config, line_keys), []).append((config[x], row))
    directions: dict[str, str] = {}
    for row in ok:
        directions.update(row.get("directions", {}))
    figures = {}
    for metric in PAPER_METRICS:
        if not any(r.get("metrics", {}).get(metric) is not None for r in ok):
            continue
        fig = Figure(figsize=(6.0, 4.0))
        ax = fig.add_subplot()
        for label, points in lines.items():
            points = sorted(points, key=lambda p: p[0])
            values = [p[1].get("metrics", {}).get(metric) for p in points]
            ax.plot(
                [p[0] for p in points],
                [math.nan if v is None else v for v in values],
                marker="o",
                label=label,
            )
        ylabel = f"{metric} {ARROWS.get(directions.get(metric, ''), '')}".rstrip()
        ax.set_xlabel(x)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{metric} against {x}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, frameon=False)
        path = Path(folder) / f"sweep_{metric}.png"
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=DPI, bbox_inches="tight")
        figures[path] = fig
    return figures
