"""results.json, per_sequence.csv and the multirun summary; every file written atomically (temp +
rename)."""

from __future__ import annotations

import hashlib
import json
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from gesturebench.atomic import write_atomic

#: The contract's metric keys (docs/design.md) and their directions: lower, higher or closer to
#: zero is better.
METRIC_DIRECTIONS = {
    "fgd": "lower",
    "density": "higher",
    "coverage": "higher",
    "diversity": "higher",
    "chamfer": "lower",
    "hausdorff": "lower",
    "mjd": "lower",
    "pck": "higher",
    "dice": "higher",
    "foot_contact": "lower",
    "ldlj_rel": "zero",
    "bc": "higher",
    "srgr": "higher",
    "sc": "higher",
    "sgp": "higher",
}
ARROWS = {"lower": "↓", "higher": "↑", "zero": "→0"}
RESULTS_FILE = "results.json"
ERROR_FILE = "error.json"


def write_json(path: str | Path, obj: Any) -> None:
    write_atomic(
        path, json.dumps(obj, indent=2, sort_keys=False, default=str, allow_nan=False) + "\n"
    )


def config_hash(config: dict) -> str:
    """Hash of a resolved config without the keys that do not change results (resume, logger)."""
    relevant = {k: v for k, v in config.items() if k not in ("resume", "logger")}
    return hashlib.sha256(json.dumps(relevant, sort_keys=True, default=str).encode()).hexdigest()


def load_complete(run_dir: str | Path, expected_hash: str) -> dict | None:
    """The run folder's results.json if it is complete and was made with the same config, else None."""
    path = Path(run_dir) / RESULTS_FILE
    try:
        results = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return (
        results if results.get("complete") and results.get("config_hash") == expected_hash else None
    )


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in (
        "gesturebench",
        "torch",
        "pytorch-lightning",
        "torchmetrics",
        "smplx",
        "numpy",
        "librosa",
        "hydra-core",
    ):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def finite_or_none(value: float | None) -> float | None:
    return (
        None if value is None or value != value or value in (float("inf"), float("-inf")) else value
    )


def write_per_sequence_csv(path: str | Path, rows: list[dict]) -> None:
    write_atomic(path, pd.DataFrame(rows).to_csv(index=False))


def summary_table(rows: list[dict]) -> pd.DataFrame:
    """One row per job: job, status, model, dataset, then one column per metric with its direction
    arrow."""
    metric_names: list[str] = []
    for row in rows:
        metric_names += [m for m in row.get("metrics", {}) if m not in metric_names]
    records = []
    for row in rows:
        rec = {
            "job": row["job"],
            "status": row["status"],
            "model": row.get("model"),
            "dataset": row.get("dataset"),
        }
        directions = row.get("directions", {})
        for m in metric_names:
            arrow = ARROWS.get(directions.get(m, METRIC_DIRECTIONS.get(m, "")), "")
            rec[f"{m} {arrow}".strip()] = row.get("metrics", {}).get(m)
        if row["status"] != "ok":
            rec["error"] = row.get("error", "")
        records.append(rec)
    return pd.DataFrame(records)


def write_summary(sweep_dir: str | Path, rows: list[dict]) -> pd.DataFrame:
    """summary.csv and summary.md in the sweep folder."""
    table = summary_table(rows)
    write_atomic(Path(sweep_dir) / "summary.csv", table.to_csv(index=False))
    write_atomic(
        Path(sweep_dir) / "summary.md", table.to_markdown(index=False, floatfmt=".4g") + "\n"
    )
    return table
