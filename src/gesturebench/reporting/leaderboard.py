"""The leaderboard: the latest complete evaluation per (dataset, model, metrics preset, config
hash) found in run folders (single runs in outputs/, sweeps in multirun/), as one table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gesturebench.reporting.results import (
    OK,
    RESULTS_FILE,
    scan_results,
    unreadable_row,
)
from gesturebench.reporting.tables import results_frame, results_markdown, to_csv
from gesturebench.runtime.atomic import write_atomic

#: The columns of a leaderboard before the metrics (CSV; leaderboard.md shows each row's `run` as
#: its number, `NUMBER`, and lists the folders below each section's tables).
COLUMNS = ["dataset", "model", "preset", "config", "run"]
#: The files `write_leaderboard` writes.
LEADERBOARD_CSV, LEADERBOARD_MD = "leaderboard.csv", "leaderboard.md"
#: The columns of a section of leaderboard.md (one preset each: its heading says which).
MARKDOWN_COLUMNS = ["run", "dataset", "model", "config"]


def collect(roots: list[str | Path]) -> list[dict]:
    """One row per (dataset, model, preset, config hash): the newest complete, committed
    `task=evaluate` results.json under `roots` (by modification time), sorted by dataset, preset
    and model; then one row per results.json that could not be read (named in a warning,
    `results.scan_results`), status `UNREADABLE`, in path order."""
    latest: dict[tuple, dict] = {}
    unreadable = []
    for file in scan_results(list(roots)):
        doc, path = file.doc, file.path
        if file.problem is not None:
            unreadable.append({**unreadable_row(file), "config": ""})
            continue
        if (
            not doc
            or not doc.get("complete")
            or (doc.get("config") or {}).get("task", {}).get("name") not in (None, "evaluate")
        ):
            continue
        row = {
            **doc,
            "status": OK,
            "preset": doc.get("preset", "?"),
            "config": str(doc.get("config_hash", ""))[:8],
            "run": str(path.parent),
            "mtime": path.stat().st_mtime,
        }
        key = (row["dataset"], row["model"], row["preset"], doc.get("config_hash"))
        if key not in latest or row["mtime"] > latest[key]["mtime"]:
            latest[key] = row
    ranked = sorted(latest.values(), key=lambda r: (r["dataset"], r["preset"], r["model"]))
    return [*ranked, *unreadable]


def write_leaderboard(folder: str | Path, rows: list[dict]) -> pd.DataFrame:
    """leaderboard.csv (one table, its `preset` column saying each row's, an unreadable row's
    `status` and `error`) and leaderboard.md, one section per metrics preset (runs of different
    presets are not comparable: their metrics and options differ), each with its headline metrics
    first, diagnostics apart, skip reasons as footnotes, its run folders listed below, and a last
    section naming each results.json that could not be read, in `folder`; returns the CSV's
    table."""
    folder = Path(folder)
    frame = results_frame(rows, COLUMNS)
    write_atomic(folder / LEADERBOARD_CSV, to_csv(frame))
    read = [r for r in rows if r.get("status", OK) == OK]
    presets = list(dict.fromkeys(r["preset"] for r in read))
    sections = [
        results_markdown(
            [r for r in read if r["preset"] == p],
            MARKDOWN_COLUMNS,
            f"metrics={p}",
            level=2,
            runs="run",
            prefix=f"{i}-",
        )
        for i, p in enumerate(presets, 1)
    ]
    unread = [r for r in rows if r.get("status", OK) != OK]
    if unread:
        sections.append(
            "\n".join(
                [
                    f"## Not read ({len(unread)} {RESULTS_FILE})",
                    "",
                    *(f"- {r.get('error', '')}" for r in unread),
                ]
            )
            + "\n"
        )
    write_atomic(folder / LEADERBOARD_MD, "\n".join(["# Leaderboard\n", *sections]))
    return frame
