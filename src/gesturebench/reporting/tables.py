"""The tables of several results (a sweep's summary, the leaderboard): the paper's headline metrics
with their direction arrows, the diagnostics apart without arrows (most have no better direction),
4 significant digits in Markdown, every missing value with its reason as a footnote; CSV keeps 6
significant digits (the exact values stay in each run's results.json). A value with a bootstrap
interval (results.json `intervals`) reads ``value [lo, hi]`` in Markdown and has `<name>_lo` and
`<name>_hi` columns in CSV. A sweep whose rows mix presets or a metric's options says so in warning
lines and the columns `preset` and `variants` (`comparability.mixed_conventions`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gesturebench.reporting.comparability import mixed_conventions
from gesturebench.reporting.results import ARROWS, PAPER_METRICS, write_json
from gesturebench.runtime.atomic import write_atomic

#: significant digits of the CSV files (enough to rank and compare; results.json holds the rest)
CSV_FORMAT = "%.6g"


def metric_columns(rows: list[dict]) -> tuple[list[str], list[str]]:
    """(headline metrics some row configures, in the paper's order; the other values, the
    diagnostics, in order of first appearance). A paper metric that no row's preset configures
    (results.json lists it as "not computed") has no column."""
    names: list[str] = []
    for row in rows:
        names += [m for m in row.get("metrics", {}) if m not in names]
    headline = [m for m in PAPER_METRICS if m in names and any(configures(r, m) for r in rows)]
    return headline, [m for m in names if m not in PAPER_METRICS]


def configures(row: dict, metric: str) -> bool:
    """Whether the run of `row` configured `metric` (results.json `options`; a row without them,
    e.g. a failed job's: whether it has a value)."""
    if "options" in row:
        return metric in row["options"]
    return row.get("metrics", {}).get(metric) is not None


def results_frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    """One row per result: `columns` of the row, then headline metrics, then diagnostics, each
    followed by `<name>_lo` and `<name>_hi` where any row has its interval; a failed row's error in
    an `error` column."""
    headline, diagnostics = metric_columns(rows)
    bounded = {m for row in rows for m in row.get("intervals", {})}
    records = []
    for row in rows:
        rec = {c: row.get(c) for c in columns}
        for m in (*headline, *diagnostics):
            rec[m] = row.get("metrics", {}).get(m)
            if m in bounded:
                rec[f"{m}_lo"], rec[f"{m}_hi"] = row.get("intervals", {}).get(m, (None, None))
        if row.get("status", "ok") != "ok":
            rec["error"] = row.get("error", "")
        records.append(rec)
    return pd.DataFrame(records)


def to_csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False, float_format=CSV_FORMAT)


class Footnotes:
    """Numbered Markdown footnotes, one per distinct text; `prefix` keeps the labels of several
    tables in one file apart."""

    def __init__(self, prefix: str = "") -> None:
        self.texts: list[str] = []
        self.prefix = prefix

    def mark(self, text: str) -> str:
        if text not in self.texts:
            self.texts.append(text)
        return f"[^{self.prefix}{self.texts.index(text) + 1}]"

    def lines(self) -> list[str]:
        return [
            f"[^{self.prefix}{i}]: {' '.join(text.split())}" for i, text in enumerate(self.texts, 1)
        ]


def results_markdown(
    rows: list[dict],
    columns: list[str],
    title: str,
    warnings: list[str] | None = None,
    level: int = 1,
) -> str:
    """`title` (a heading of `level`), the `warnings` (a quoted line each), the headline table
    (arrows), the diagnostics table (none), then the footnotes: why a value is missing
    (results.json `skipped`), its caveat and why a row failed."""
    headline, diagnostics = metric_columns(rows)
    notes = Footnotes("" if level == 1 else f"{title}-".replace(" ", "-").replace("=", "-"))
    ids = []
    for row in rows:
        cells = [str(row.get(c, "")) for c in columns]
        if row.get("status", "ok") != "ok" and "status" in columns:
            cells[columns.index("status")] += notes.mark(f"failed: {row.get('error', '')}")
        ids.append(cells)

    def table(names: list[str], arrows: bool) -> list[str]:
        directions: dict[str, str] = {}
        for row in rows:
            directions.update(row.get("directions", {}))
        header = [
            f"{m} {ARROWS[directions[m]]}" if arrows and directions.get(m) in ARROWS else m
            for m in names
        ]
        lines = [
            "| " + " | ".join([*columns, *header]) + " |",
            "|" + "---|" * (len(columns) + len(names)),
        ]
        for row, cells in zip(rows, ids, strict=True):
            values = [cell(row, m, notes) for m in names]
            lines.append("| " + " | ".join([*cells, *values]) + " |")
        return lines

    sub = "#" * (level + 1)
    out = [f"{'#' * level} {title}", ""]
    out += [line for w in warnings or [] for line in (f"> **Warning:** {w}", "")]
    out += [f"{sub} Headline metrics", "", *table(headline, arrows=True)]
    if diagnostics:
        out += ["", f"{sub} Diagnostics", "", *table(diagnostics, arrows=False)]
    if notes.texts:
        out += ["", *notes.lines()]
    return "\n".join(out) + "\n"


def with_interval(value: float, bounds: list[float] | None) -> str:
    """`value` with 4 significant digits, followed by its interval ``[lo, hi]`` when it has one."""
    return f"{value:.4g}" + (f" [{bounds[0]:.4g}, {bounds[1]:.4g}]" if bounds else "")


def cell(row: dict, metric: str, notes: Footnotes) -> str:
    """A value with 4 significant digits (and its interval, ``value [lo, hi]``, and the footnote
    of its caveat where a degenerate output is known to score well on it), or `–` and the
    footnote of why it is missing."""
    value = row.get("metrics", {}).get(metric)
    if value is not None:
        caveat = (row.get("caveats") or {}).get(metric)
        shown = with_interval(value, row.get("intervals", {}).get(metric))
        return shown + (notes.mark(f"caveat: {caveat}") if caveat else "")
    if row.get("status", "ok") != "ok":
        return ""
    return "–" + notes.mark(row.get("skipped", {}).get(metric, "no value"))


#: The columns of a sweep summary before the metrics.
SUMMARY_COLUMNS = ["job", "status", "model", "dataset"]


def write_summary(
    folder: str | Path, rows: list[dict], title: str = "Sweep summary"
) -> pd.DataFrame:
    """summary.csv (plain metric names, for scripts), summary.md (`results_markdown`) and
    summary.json (metric → direction) in `folder`; returns the CSV's table. Rows that mix presets
    or a metric's options add the columns `preset` and `variants` and the warning lines."""
    folder = Path(folder)
    mix = mixed_conventions(rows)
    columns = SUMMARY_COLUMNS
    if mix.warnings:
        columns = [*SUMMARY_COLUMNS, "preset", "variants"]
        rows = [{**row, "variants": v} for row, v in zip(rows, mix.variants, strict=True)]
    frame = results_frame(rows, columns)
    directions: dict[str, str] = {}
    for row in rows:
        directions.update(row.get("directions", {}))
    write_atomic(folder / "summary.csv", to_csv(frame))
    write_atomic(folder / "summary.md", results_markdown(rows, columns, title, mix.warnings))
    write_json(folder / "summary.json", {m: d for m, d in directions.items() if m in frame})
    return frame
