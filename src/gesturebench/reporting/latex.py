"""LaTeX tables of results (docs/outputs.md, "LaTeX tables"): `summary.tex` of a sweep and
`leaderboard.tex` of the leaderboard, one booktabs table per (metrics preset, dataset, split).

Each table has a column per headline metric (`headline.headline_metrics`) with its direction arrow,
each value with its bootstrap interval as configured (`[lo, hi]`, `± half-width` or none), the
best value of a column in bold only where the paired tests of `reporting/comparisons.py`,
Holm-corrected over the metric's pairs, tell it apart from (and better than) every other row, and
a dagger on the rows those tests do not tell apart from the best; footnotes give why a value is
missing, its caveat (degenerate motion, left-out audio), the fields a model copied from the
reference, and a row's failure. The caption states the protocol in one sentence: the preset's
statement (`run/protocol.STATEMENTS`, the same text as docs/protocols.md's), the dataset, split and
speakers, whether the preset's pinned data was kept, and the body model file's SHA-256
(results.json `inputs.body_model`).
"""

from __future__ import annotations

import math
import unicodedata
from pathlib import Path
from typing import get_args

from gesturebench.reporting.comparability import mixed_conventions
from gesturebench.reporting.comparisons import badness, comparisons, labels, sequences
from gesturebench.reporting.headline import headline_metrics
from gesturebench.reporting.results import RESULTS_FILE, read_results
from gesturebench.run.config import LatexInterval
from gesturebench.run.protocol import statement
from gesturebench.runtime.atomic import write_atomic
from gesturebench.runtime.errors import ConfigError

#: how a value's bootstrap interval is shown (`report.latex.interval`)
Interval = LatexInterval
INTERVALS: tuple[str, ...] = get_args(Interval)
#: a headline metric's direction as its column header shows it
ARROWS = {"lower": r"$\downarrow$", "higher": r"$\uparrow$", "zero": r"$\to 0$"}
#: the files `write_latex_summary` and `write_latex_leaderboard` write
SUMMARY_TEX, LEADERBOARD_TEX = "summary.tex", "leaderboard.tex"
#: the hex digits of a SHA-256 a caption shows (results.json holds all 64)
HASH_DIGITS = 16

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "–": "--",
    "—": "---",
    "−": "$-$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "→": r"$\to$",
    "×": r"$\times$",
    "·": r"$\cdot$",
    "±": r"$\pm$",
    "…": r"\ldots{}",
    "‖": r"$\|$",
    "σ": r"$\sigma$",
    "Σ": r"$\Sigma$",
    "μ": r"$\mu$",
    "Δ": r"$\Delta$",
    "θ": r"$\theta$",
    "↑": r"$\uparrow$",
    "↓": r"$\downarrow$",
    "†": r"$\dagger$",
    "\n": " ",
}


def escape(text: object) -> str:
    """`text` as LaTeX typesets it literally under pdflatex's default encoding: its special
    characters escaped, a few common symbols as their commands, other non-ASCII characters by
    their compatibility decomposition (``é`` → ``e``, ``⁻¹`` → ``-1``) or, without one, their
    Unicode name in brackets."""
    out = []
    for char in str(text):
        if char in _SPECIAL:
            out.append(_SPECIAL[char])
        elif char.isascii():
            out.append(char)
        else:
            plain = "".join(
                c
                for c in unicodedata.normalize("NFKD", char)
                if c.isascii() and not unicodedata.combining(c)
            )
            out.append(
                escape(plain) if plain else f"[{unicodedata.name(char, f'U+{ord(char):04X}')}]"
            )
    return "".join(out)


def number(value: float, digits: int = 4) -> str:
    """`value` with `digits` significant digits in text mode: a minus sign as ``$-$``, an exponent
    as ``×10`` with a superscript."""
    text = f"{value:.{digits}g}"
    mantissa, _, exponent = text.partition("e")
    out = mantissa.replace("-", "$-$")
    if exponent:
        power = str(int(exponent)).replace("-", "$-$")
        out += rf"$\times$10\textsuperscript{{{power}}}"
    return out


def check_interval(interval: str) -> Interval:
    """`interval` when it is one of `INTERVALS`, else a ConfigError naming the option."""
    if interval not in INTERVALS:
        raise ConfigError(
            f"report.latex.interval: {interval!r} is not one of {', '.join(INTERVALS)}"
        )
    return interval  # type: ignore[return-value]


class Notes:
    """Footnotes of one table: a letter per distinct text, in order of first mark."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def mark(self, text: str) -> str:
        text = " ".join(text.split())
        if text not in self.texts:
            self.texts.append(text)
        return _letter(self.texts.index(text))

    def lines(self) -> list[str]:
        return [rf"\textsuperscript{{{_letter(i)}}}\,{escape(t)}" for i, t in enumerate(self.texts)]


def _letter(i: int) -> str:
    """a, b, …, z, aa, ab, …"""
    return _letter(i // 26 - 1) + chr(97 + i % 26) if i >= 26 else chr(97 + i)


def _marks(letters: list[str]) -> str:
    return rf"\textsuperscript{{{','.join(letters)}}}" if letters else ""


def normalised(rows: list[dict]) -> list[dict]:
    """The rows with a `status` (ok where absent, as in the leaderboard's), a `job` (the run
    folder's name where absent) and their resolved `config` (the leaderboard's rows hold its short
    hash there instead: read back from the run's results.json; {} where it cannot be)."""
    return [
        {
            **row,
            "status": row.get("status", "ok"),
            "job": row.get("job") or Path(str(row.get("run", row.get("model", "?")))).name,
            "config": _config(row),
        }
        for row in rows
    ]


def _config(row: dict) -> dict:
    config = row.get("config")
    if isinstance(config, dict):
        return config
    if row.get("run"):
        try:
            doc = read_results(Path(row["run"]) / RESULTS_FILE)
        except (OSError, ValueError):
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("config"), dict):
            return doc["config"]
    return {}


#: the table of rows that have no results at all (every job failed or unreadable)
NO_RESULTS = ("?", "?", "?")


def groups(rows: list[dict]) -> list[list[dict]]:
    """The rows split by (metrics preset, dataset, split) of the successful rows, in order of first
    appearance: one protocol each, so that one caption is true of every row of a table. A row
    without results (a failed job, an unreadable results.json) joins the first table of its
    dataset, else the first table; rows without any results make one table."""
    out: dict[tuple, list[dict]] = {}
    for row in rows:
        if row["status"] == "ok":
            out.setdefault(_protocol_key(row), []).append(row)
    for row in rows:
        if row["status"] != "ok":
            keys = [k for k in out if k[1] == str(row.get("dataset"))] or list(out) or [NO_RESULTS]
            out.setdefault(keys[0], []).append(row)
    return list(out.values())


def _protocol_key(row: dict) -> tuple:
    return (str(row.get("preset", "?")), str(row.get("dataset", "?")), _split(row))


def _dataset_config(row: dict) -> dict:
    return (row.get("config") or {}).get("dataset") or {}


def _split(row: dict) -> str:
    return str(_dataset_config(row).get("split", "test"))


def columns(rows: list[dict]) -> list[str]:
    """The headline metrics of the successful rows (`headline.headline_metrics` of each), in order
    of first appearance."""
    names: list[str] = []
    for row in rows:
        if row["status"] == "ok" and "metrics" in row:
            names += [m for m in headline_metrics(row) if m not in names]
    return names


class Significance:
    """Per metric, the best row's label and whether it is bold (the paired tests tell it better
    than every other row), the labels of the rows the tests do not tell apart from it (`tied`),
    and `alpha` (1 − `stats.confidence`)."""

    def __init__(self, rows: list[dict], metrics: list[str]) -> None:
        ok = [r for r in rows if r["status"] == "ok"]
        table, _, self.left_out = comparisons(rows)
        stats = (ok[0].get("config") or {}).get("stats") or {} if ok else {}
        self.alpha = 1 - float(stats.get("confidence") or 0.95)
        self.best: dict[str, str] = {}
        self.bold: dict[str, bool] = {}
        self.tied: dict[str, set[str]] = {}
        self.untested: dict[str, set[str]] = {}
        names = labels(ok)
        for metric in metrics:
            direction = next(
                (r["directions"][metric] for r in ok if metric in r.get("directions", {})), "lower"
            )
            values = {n: r["metrics"].get(metric) for n, r in zip(names, ok)}
            scored = [n for n in names if values[n] is not None]
            if len(scored) < 2:
                continue
            best = min(scored, key=lambda n: badness(values[n], direction))
            pairs = table[table.metric == metric]
            tied, untested = set(), set()
            for other in scored:
                if other == best:
                    continue
                verdict = _verdict(pairs, best, other, direction, self.alpha)
                if verdict is None:
                    untested.add(other)
                elif not verdict:
                    tied.add(other)
            self.best[metric] = best
            self.bold[metric] = not tied and not untested
            self.tied[metric] = tied
            self.untested[metric] = untested


def _verdict(pairs, best: str, other: str, direction: str, alpha: float) -> bool | None:
    """Whether the Holm-corrected paired test of `best` against `other` finds `best` better
    (None: no test of the pair): p_holm below `alpha` and, for a metric with a better direction,
    the difference on that side."""
    for a, b, sign in ((best, other, 1.0), (other, best, -1.0)):
        found = pairs[(pairs.a == a) & (pairs.b == b)]
        if len(found):
            record = found.iloc[0]
            better = {"lower": record.difference * sign < 0, "higher": record.difference * sign > 0}
            return bool(record.p_holm < alpha and better.get(direction, True))
    return None


def _scale(rows: list[dict], metric: str) -> float | None:
    """The display scale of `metric` (results.json `display`) when every row that has the value
    prints it with the same one, else None (the raw values)."""
    scales = {
        (r.get("display") or {}).get(metric, {}).get("scale") for r in rows if r["status"] == "ok"
    }
    scale = scales.pop() if len(scales) == 1 else None
    return float(scale) if scale else None


def _header(rows: list[dict], metric: str, scale: float | None) -> str:
    directions = {r.get("directions", {}).get(metric) for r in rows} - {None}
    arrow = ARROWS.get(directions.pop(), "") if len(directions) == 1 else ""
    head = escape(metric) + (f" {arrow}" if arrow else "")
    if scale:
        power = math.log10(scale)
        shown = f"10^{{{round(power)}}}" if abs(power - round(power)) < 1e-9 else f"1/{scale:g}"
        head += rf" (${{\times}}{shown}$)"
    return head


def cell(
    row: dict,
    label: str,
    metric: str,
    sig: Significance,
    notes: Notes,
    interval: Interval,
    scale: float | None = None,
) -> str:
    """The table cell of `metric` in `row`: the value (divided by its display `scale`; bold or
    daggered as `sig` says) with its interval, and footnote marks for a caveat; or ``--`` and the
    mark of why it is missing."""
    if row["status"] != "ok":
        return ""
    value = row.get("metrics", {}).get(metric)
    if value is None:
        return "--" + _marks([notes.mark((row.get("skipped") or {}).get(metric, "no value"))])
    scale = scale or 1.0
    shown = number(value / scale)
    if sig.best.get(metric) == label and sig.bold.get(metric):
        shown = rf"\textbf{{{shown}}}"
    if label in sig.tied.get(metric, ()):
        shown += r"$^\dagger$"
    bounds = (row.get("intervals") or {}).get(metric)
    if bounds and interval == "bracket":
        shown += rf" {{\footnotesize [{number(bounds[0] / scale)}, {number(bounds[1] / scale)}]}}"
    elif bounds and interval == "pm":
        shown += rf" {{\footnotesize $\pm$\,{number((bounds[1] - bounds[0]) / 2 / scale)}}}"
    letters = []
    caveat = (row.get("caveats") or {}).get(metric)
    if caveat:
        letters.append(notes.mark(f"caveat: {caveat}"))
    if label in sig.untested.get(metric, ()):
        letters.append(
            notes.mark("not in the paired tests (no sequence scored by it and the best row)")
        )
    return shown + _marks(letters)


def row_notes(row: dict, notes: Notes) -> list[str]:
    """Footnote marks of a whole row: its failure, the fields its model copied from the reference,
    its run off the preset's pinned data."""
    letters = []
    if row["status"] != "ok":
        letters.append(notes.mark(f"{row['status']}: {row.get('error', '')}"))
    copied = (row.get("model_info") or {}).get("copied_fields")
    if copied:
        letters.append(notes.mark(f"copies {', '.join(copied)} from the reference motion"))
    if row.get("protocol_mismatch"):
        letters.append(
            notes.mark(
                "scored off the preset's pinned data: " + "; ".join(row["protocol_mismatch"])
            )
        )
    return letters


def body_model(rows: list[dict]) -> str:
    """The body model of the successful rows, as the caption names it: its file (`model_path`'s
    name, or the procedural body's model file) and the file's SHA-256 as results.json records it
    (`inputs.body_model.sha256`), or that it is not recorded."""
    files, hashes = set(), set()
    for row in rows:
        if row["status"] != "ok":
            continue
        path = ((row.get("config") or {}).get("body_model") or {}).get("model_path")
        files.add(f"file {Path(path).name}" if path else "file of the procedural body")
        recorded = ((row.get("inputs") or {}).get("body_model")) or {}
        hashes.add(recorded.get("sha256") if isinstance(recorded, dict) else None)
    name = " / ".join(sorted(files))
    if hashes == {None}:
        return f"the body model {name} (its SHA-256 not recorded in results.json)"
    if len(hashes) > 1:
        each = (str(h)[:HASH_DIGITS] + "…" if h else "not recorded" for h in hashes)
        shown = ", ".join(sorted(each))
        return f"body model files that differ across rows (SHA-256 {shown})"
    return f"the body model {name} (SHA-256 {str(hashes.pop())[:HASH_DIGITS]}…)"


def _data(rows: list[dict]) -> str:
    """The dataset, split, speakers and sequences of the rows."""
    row = rows[0]
    node = _dataset_config(row)
    speakers = node.get("speakers")
    who = "all speakers" if not speakers else "speakers " + ", ".join(map(str, sorted(speakers)))
    counts = {len(sequences(r)) for r in rows if r["status"] == "ok"}
    scored = f"{counts.pop()} sequences of " if len(counts) == 1 else ""
    return f"{scored}{row.get('dataset', '?')}'s {_split(row)} split ({who})"


def _pin(rows: list[dict]) -> str:
    """Whether the rows kept the preset's pinned data (results.json `protocol`)."""
    records = [r.get("protocol") for r in rows if r["status"] == "ok"]
    statuses = {(p or {}).get("status") for p in records}
    if not any(records):  # no successful row, or none recorded a pin
        return ""
    pin = next(p for p in records if p)
    published = f"dataset={pin.get('dataset')}, {pin.get('split', 'test')} split"
    if statuses == {"matched"}:
        return f", the data the preset was published on ({published})"
    if statuses == {"not applicable"}:
        return f", generated data, not the data the preset was published on ({published})"
    return f", not (in every row) the data the preset was published on ({published})"


def caption(rows: list[dict]) -> str:
    """The protocol of rows of one preset, dataset and split, in one sentence (plain text); rows
    none of which has results (every job failed) say only that."""
    if not any(r["status"] == "ok" for r in rows):
        return "No job of this table has results (why: the footnotes)."
    preset = str(rows[0].get("preset", "?"))
    said = statement(preset)
    return (
        f"Protocol: metrics={preset}, {said.text}; scored on {_data(rows)}{_pin(rows)}, with "
        f"{body_model(rows)}."
    )


def latex_table(rows: list[dict], interval: str = "bracket", label: str | None = None) -> str:
    """One booktabs table (a `table` float) of rows of one preset, dataset and split."""
    chosen = check_interval(interval)
    rows = normalised(rows)
    metrics = columns(rows)
    sig = Significance(rows, metrics)
    notes = Notes()
    scales = {m: _scale(rows, m) for m in metrics}
    ok_labels = dict(
        zip(
            (id(r) for r in rows if r["status"] == "ok"),
            labels([r for r in rows if r["status"] == "ok"]),
        )
    )
    body = []
    for row in rows:
        name = ok_labels.get(id(row)) or str(row.get("model") or row["job"])
        cells = [escape(name) + _marks(row_notes(row, notes))]
        cells += [cell(row, name, m, sig, notes, chosen, scales[m]) for m in metrics]
        body.append(" & ".join(cells) + r" \\")
    legend = _legend(sig, metrics, chosen, rows)
    warnings = [escape(f"Warning: {w}.") for w in mixed_conventions(rows).warnings]
    tabular = [
        rf"\begin{{tabular}}{{l{'r' * len(metrics)}}}",
        r"\toprule",
        " & ".join(["Model", *(_header(rows, m, scales[m]) for m in metrics)]) + r" \\",
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}",
    ]
    # shrunk to the line width where wider, never enlarged
    tabular = [r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%", *tabular, "}"]
    key = "-".join(_protocol_key(rows[0]))
    return (
        "\n".join(
            [
                r"\begin{table}[tbp]",
                r"\centering",
                rf"\caption{{{escape(caption(rows))}}}",
                rf"\label{{{label or 'tab:gesturebench-' + _label(key)}}}",
                *tabular,
                r"\par\smallskip",
                r"\begin{minipage}{\linewidth}\footnotesize",
                " \\\\\n".join([legend, *warnings, *notes.lines()]),
                r"\end{minipage}",
                r"\end{table}",
            ]
        )
        + "\n"
    )


def _label(key: str) -> str:
    return "".join(c if c.isalnum() or c in "-:" else "-" for c in key)


def _legend(sig: Significance, metrics: list[str], interval: Interval, rows: list[dict]) -> str:
    """How to read the table: the intervals, the bold and the dagger."""
    ok = [r for r in rows if r["status"] == "ok"]
    level = round((1 - sig.alpha) * 100, 6)
    parts = []
    if interval != "none" and any(r.get("intervals") for r in ok):
        shown = "[lo, hi]" if interval == "bracket" else "± half its width"
        parts.append(
            f"Values with their {level:g}% percentile bootstrap interval over sequences ({shown})."
        )
    parts.append(
        "Bold: the best value of a column where the paired test (Holm-corrected over the "
        f"metric's pairs, p < {sig.alpha:g}) finds it better than every other row; †: not told "
        "apart from the best by that test."
    )
    return escape(" ".join(parts))


def latex_tables(rows: list[dict], interval: str = "bracket") -> list[str]:
    """One table (`latex_table`) per metrics preset, dataset and split of `rows`."""
    return [latex_table(group, interval) for group in groups(normalised(rows))]


#: the packages a table needs (the document's preamble)
PREAMBLE = r"""\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\usepackage[a4paper, landscape, margin=1.5cm]{geometry}
\usepackage{booktabs}
\usepackage{graphicx}
"""


def latex_document(rows: list[dict], interval: str = "bracket", title: str | None = None) -> str:
    """A document that pdflatex compiles: the tables of `rows` (`latex_tables`); copy a table
    (from ``\\begin{table}`` to ``\\end{table}``) into a paper that loads booktabs and
    graphicx."""
    tables = latex_tables(rows, interval)
    head = [f"% {escape(title)}"] if title else []
    return "\n".join([*head, PREAMBLE, r"\begin{document}", *tables, r"\end{document}", ""])


def write_latex_summary(
    folder: str | Path,
    rows: list[dict],
    interval: str = "bracket",
    title: str | None = None,
    name: str = SUMMARY_TEX,
) -> Path:
    """`name` (summary.tex) in `folder`: the document of a sweep's rows (`collect_jobs`)."""
    document = latex_document(rows, interval, title)
    path = Path(folder) / name
    write_atomic(path, document)
    return path


def write_latex_leaderboard(
    folder: str | Path, rows: list[dict], interval: str = "bracket"
) -> Path:
    """leaderboard.tex in `folder`: one table per metrics preset, dataset and split of the
    leaderboard's rows (`leaderboard.collect`)."""
    return write_latex_summary(folder, rows, interval, "Leaderboard", LEADERBOARD_TEX)
