"""The tables of several results (a sweep's summary, the leaderboard): the paper's headline metrics
with their direction arrows, the diagnostics apart without arrows (most have no better direction),
4 significant digits in Markdown, every missing value with its reason as a footnote; CSV keeps 6
significant digits (the exact values stay in each run's results.json). A value with a bootstrap
interval (results.json `intervals`) reads ``value [lo, hi]`` in Markdown and has `<name>_lo` and
`<name>_hi` columns in CSV. A sweep whose rows mix presets or a metric's options says so in warning
lines and the columns `preset` and `variants` (`comparability.mixed_conventions`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd

from gesturebench.reporting.comparability import (
    MARK,
    MARK_LEGEND,
    mixed_conventions,
    self_compared,
)
from gesturebench.reporting.results import ARROWS, OK, PAPER_METRICS, write_json
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
    followed by `<name>_lo` and `<name>_hi` where any row has its interval; a failed or unreadable
    row's error in an `error` column (and its `status` in a column of that name where `columns`
    has none)."""
    headline, diagnostics = metric_columns(rows)
    bounded = {m for row in rows for m in row.get("intervals", {})}
    if "status" not in columns and any(row.get("status", OK) != OK for row in rows):
        columns = [*columns, "status"]
    records = []
    for row in rows:
        rec = {c: row.get(c, OK if c == "status" else None) for c in columns}
        for m in (*headline, *diagnostics):
            rec[m] = row.get("metrics", {}).get(m)
            if m in bounded:
                rec[f"{m}_lo"], rec[f"{m}_hi"] = row.get("intervals", {}).get(m, (None, None))
        if row.get("status", OK) != OK:
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


#: The widest line of a Markdown table (summary.md, leaderboard.md): a 120-column terminal, and a
#: page in landscape. Metric columns that do not fit beside the row's id columns go on into another
#: table below, which repeats the id columns (docs/outputs.md, "Reading the tables").
TABLE_WIDTH = 120
#: The short names of metric columns in Markdown (a legend line under the tables names them; CSV,
#: JSON and results.json keep the full names). A name not listed here and longer than
#: `SHORT_AFTER` characters is shortened by `short_name`.
SHORT_NAMES = {
    "density": "dens",
    "coverage": "cov",
    "diversity": "div",
    "diversity_ref": "div_ref",
    "chamfer": "cd",
    "hausdorff": "hd",
    "foot_contact": "fc",
    "contact_rate_gen": "cr_gen",
    "contact_rate_ref": "cr_ref",
    "ldlj_rel": "ldlj",
    "fgd_raw_pose": "fgd_raw",
    "div_sample": "div_s",
    "sgp_invalid": "sgp_inv",
    "sgp_events": "sgp_ev",
}
SHORT_AFTER = 8
#: The header of the row-number column that stands for the run folder (listed below the table).
NUMBER = "#"


def short_name(name: str) -> str:
    """`name` as a Markdown column header: `SHORT_NAMES`' entry, or where longer than
    `SHORT_AFTER`, its first part and the first letter of each other (``sgp_class_beat`` →
    ``sgp_c_b``); else `name`."""
    if name in SHORT_NAMES:
        return SHORT_NAMES[name]
    parts = name.split("_")
    if len(name) <= SHORT_AFTER or len(parts) == 1:
        return name
    return "_".join([parts[0], *(part[:1] for part in parts[1:] if part)])


def short_names(names: list[str]) -> dict[str, str]:
    """{name: header} of the columns `names`; a short name two of them would share is not used
    (both keep their full names)."""
    short = {name: short_name(name) for name in names}
    taken = list(short.values())
    unique = {s for s in taken if taken.count(s) == 1 and s not in names}
    return {n: s if s in unique else n for n, s in short.items()}


def results_markdown(
    rows: list[dict],
    columns: list[str],
    title: str,
    warnings: list[str] | None = None,
    level: int = 1,
    runs: str | None = None,
    runs_title: str = "Run folders",
    prefix: str | None = None,
) -> str:
    """`title` (a heading of `level`), the `warnings` (a quoted line each), the headline table
    (arrows), the diagnostics table (none), then the legends (short metric names, `MARK`), the
    numbered list of the rows' `runs` values (the row's folder: in the table only its number,
    column `NUMBER`) and the footnotes: why a value is missing (results.json `skipped`), why a value
    partly compares the reference with itself, its caveat and why a row failed or was not read.
    Every table line is at most `TABLE_WIDTH` characters where its id columns allow: the metric
    columns that do not fit go on into a further table, which repeats only the row's number and
    model (`fitted`). `prefix`: of the footnote labels (default:
    none at level 1, else the title's)."""
    headline, diagnostics = metric_columns(rows)
    if prefix is None:
        prefix = "" if level == 1 else f"{title}-".replace(" ", "-").replace("=", "-")
    notes = Footnotes(prefix)
    id_columns = [NUMBER if c == runs else c for c in columns]
    ids = []
    for number, row in enumerate(rows, 1):
        cells = [str(number) if c == runs else str(row.get(c, "")) for c in columns]
        status = row.get("status", OK)
        if status != OK and "status" in columns:
            cells[columns.index("status")] += notes.mark(f"{status}: {row.get('error', '')}")
        ids.append(cells)
    directions: dict[str, str] = {}
    for row in rows:
        directions.update(row.get("directions", {}))
    #: the id columns a further table of the same rows repeats: the row's number and model
    keys = [i for i, c in enumerate(id_columns) if c in (NUMBER, "model")] or None
    headers = short_names([*headline, *diagnostics])
    legend = {m: headers[m] for m in (*headline, *diagnostics) if headers[m] != m}
    marked = False

    def tables(names: list[str], arrows: bool) -> list[str]:
        nonlocal marked
        values = [[cell(row, m, notes) for m in names] for row in rows]
        marked = marked or any(MARK in v for vs in values for v in vs)
        header = [
            f"{headers[m]} {ARROWS[directions[m]]}"
            if arrows and directions.get(m) in ARROWS
            else headers[m]
            for m in names
        ]
        out: list[str] = []
        for shown, chunk in fitted(id_columns, ids, header, values, keys):
            cells = [[row[i] for i in shown] for row in ids]
            out += [
                "",
                *markdown_table([id_columns[i] for i in shown], cells, header, values, chunk),
            ]
        return out

    sub = "#" * (level + 1)
    out = [f"{'#' * level} {title}", ""]
    out += [line for w in warnings or [] for line in (f"> **Warning:** {w}", "")]
    out += [f"{sub} Headline metrics", *tables(headline, arrows=True)]
    if diagnostics:
        out += ["", f"{sub} Diagnostics", *tables(diagnostics, arrows=False)]
    legends = []
    if legend:
        pairs = ", ".join(f"{short} = {name}" for name, short in legend.items())
        legends.append(f"Metric names: {pairs}.")
    if marked:
        legends.append(MARK_LEGEND + ".")
    for text in legends:
        out += ["", *textwrap.wrap(text, TABLE_WIDTH, break_on_hyphens=False)]
    if runs is not None:
        out += ["", f"{runs_title}:", ""]
        out += [f"{i}. `{row.get(runs, '')}`" for i, row in enumerate(rows, 1)]
    if notes.texts:
        out += ["", *notes.lines()]
    return "\n".join(out) + "\n"


def markdown_table(
    columns: list[str],
    ids: list[list[str]],
    header: list[str],
    values: list[list[str]],
    chunk: list[int],
) -> list[str]:
    """The Markdown lines of a table of the id `columns` (cells `ids`, one list per row) and the
    metric columns `chunk` (indices into `header` and each row of `values`)."""
    names = [header[i] for i in chunk]
    lines = [
        "| " + " | ".join([*columns, *names]) + " |",
        "|" + "---|" * (len(columns) + len(names)),
    ]
    for cells, row in zip(ids, values, strict=True):
        lines.append("| " + " | ".join([*cells, *(row[i] for i in chunk)]) + " |")
    return lines


def fitted(
    columns: list[str],
    ids: list[list[str]],
    header: list[str],
    values: list[list[str]],
    keys: list[int] | None = None,
) -> list[tuple[list[int], list[int]]]:
    """The metric columns split into consecutive tables, each (id columns, metric columns) as
    indices into `columns` and `header`: the first table with every id column, the further ones
    with the `keys` id columns only (default: all), each as many metric columns as fit beside
    them in `TABLE_WIDTH` characters (at least one)."""
    every = list(range(len(columns)))
    keys = every if keys is None else keys

    def width(shown: list[int], chunk: list[int]) -> int:
        lines = markdown_table(
            [columns[i] for i in shown],
            [[row[i] for i in shown] for row in ids],
            header,
            values,
            chunk,
        )
        return max(map(len, lines))

    tables: list[tuple[list[int], list[int]]] = []
    for i in range(len(header)):
        if tables and width(tables[-1][0], [*tables[-1][1], i]) <= TABLE_WIDTH:
            tables[-1][1].append(i)
        else:
            tables.append((keys if tables else every, [i]))
    return tables or [(every, [])]


def with_interval(value: float, bounds: list[float] | None) -> str:
    """`value` with 4 significant digits, followed by its interval ``[lo, hi]`` when it has one."""
    return f"{value:.4g}" + (f" [{bounds[0]:.4g}, {bounds[1]:.4g}]" if bounds else "")


def cell(row: dict, metric: str, notes: Footnotes) -> str:
    """A value with 4 significant digits (and its interval, ``value [lo, hi]``; `MARK` and the
    footnote of why where it partly compares the reference with itself; the footnote of its caveat
    where a degenerate output is known to score well on it), or `–` and the footnote of why it is
    missing."""
    value = row.get("metrics", {}).get(metric)
    if value is not None:
        shown = with_interval(value, row.get("intervals", {}).get(metric))
        why = self_compared(row).get(metric)
        caveat = (row.get("caveats") or {}).get(metric)
        shown += MARK + notes.mark(why) if why else ""
        return shown + (notes.mark(f"caveat: {caveat}") if caveat else "")
    if row.get("status", OK) != OK:
        return ""
    return "–" + notes.mark(row.get("skipped", {}).get(metric, "no value"))


#: The columns of a sweep summary before the metrics.
SUMMARY_COLUMNS = ["job", "status", "model", "dataset"]
#: The files `write_summary` writes.
SUMMARY_CSV, SUMMARY_MD, SUMMARY_JSON = "summary.csv", "summary.md", "summary.json"


def write_summary(
    folder: str | Path, rows: list[dict], title: str = "Sweep summary"
) -> pd.DataFrame:
    """summary.csv (plain metric names, the job folders, for scripts), summary.md
    (`results_markdown`: each job by its number, its folder listed below the tables) and
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
    write_atomic(folder / SUMMARY_CSV, to_csv(frame))
    markdown = results_markdown(
        rows,
        columns,
        title,
        mix.warnings,
        runs="job",
        runs_title="Job folders",
    )
    write_atomic(folder / SUMMARY_MD, markdown)
    write_json(folder / SUMMARY_JSON, {m: d for m, d in directions.items() if m in frame})
    return frame
