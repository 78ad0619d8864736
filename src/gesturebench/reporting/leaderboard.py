"""The leaderboard: the latest complete evaluation per (dataset, model, metrics preset, config
hash) found in run folders (single runs in outputs/, sweeps in multirun/), as one table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gesturebench.reporting.results import RESULTS_FILE, read_results
from gesturebench.reporting.tables import results_frame, results_markdown, to_csv
from gesturebench.runtime.atomic import write_atomic

#: The columns of a leaderboard before the metrics.
COLUMNS = ["dataset", "model", "preset", "config", "run"]


def collect(roots: list[str | Path]) -> list[dict]:
    """One row per (dataset, model, preset, config hash): the newest complete, committed
    `task=evaluate` results.json under `roots` (by modification time), sorted by dataset, preset
    and model."""
    latest: dict[tuple, dict] = {}
    for root in map(Path, roots):
        for path in sorted(root.rglob(RESULTS_FILE)) if root.is_dir() else []:
            try:
                doc = read_results(path)
            except (OSError, ValueError):
                continue
            if (
                not doc
                or not doc.get("complete")
                or doc.get("config", {}).get("task", {}).get("name")
                not in (
                    None,
                    "evaluate",
                )
            ):
                continue
            row = {
                **doc,
                "preset": doc.get("preset", "?"),
                "config": str(doc.get("config_hash", ""))[:8],
                "run": str(path.parent),
                "mtime": path.stat().st_mtime,
            }
            key = (row["dataset"], row["model"], row["preset"], doc.get("config_hash"))
            if key not in latest or row["mtime"] > latest[key]["mtime"]:
                latest[key] = row
    return sorted(latest.values(), key=lambda r: (r["dataset"], r["preset"], r["model"]))


def write_leaderboard(folder: str | Path, rows: list[dict]) -> pd.DataFrame:
    """leaderboard.csv (one table, its `preset` column saying each row's) and leaderboard.md, one
    section per metrics preset (runs of different presets are not comparable: their metrics and
    options differ), each with its headline metrics first, diagnostics apart, skip reasons as
    footnotes, in `folder`; returns the CSV's table."""
    folder = Path(folder)
    frame = results_frame(rows, COLUMNS)
    write_atomic(folder / "leaderboard.csv", to_csv(frame))
    presets = list(dict.fromkeys(r["preset"] for r in rows))
    sections = [
        results_markdown([r for r in rows if r["preset"] == p], COLUMNS, f"metrics={p}", level=2)
        for p in presets
    ]
    write_atomic(folder / "leaderboard.md", "\n".join(["# Leaderboard\n", *sections]))
    return frame
