"""report.html: one self-contained page per run and per sweep that a reader opens from disk.

The page holds, in this order: the headline table (each run's headline metrics, `headline_metrics`,
with their bootstrap intervals, caveats and skip reasons; one column per run), the comparability
warnings (`comparability.mixed_conventions`), the paired comparisons in words (a sweep of two or
more models on one dataset: `comparisons.comparisons`), per metric the distribution of the
per-sequence values (one PNG per metric, the runs side by side, inlined as a data: URI), the worst
sequences per headline metric with the run's rendered clip (reference | generated) where
`task.render_clips` rendered that sequence, else the command that renders it, and the provenance
(config hash, every hash results.json records, encoders, protocol pin, package versions, the
command that reproduces the run and its resolved config).

Nothing is fetched from the network: no script, no stylesheet or font from elsewhere; images are
data: URIs and a clip is a relative link to a file inside the report's folder (a sweep's report
copies the clips it shows from the job folders into its own `clips/job<n>/`).
"""

from __future__ import annotations

import base64
import html
import io
import json
import shlex
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml
from matplotlib.figure import Figure

from gesturebench.reporting.comparability import mixed_conventions
from gesturebench.reporting.comparisons import (
    badness,
    comparisons,
    labels,
    p_text,
    per_sequence_values,
)
from gesturebench.reporting.headline import headline_metrics
from gesturebench.reporting.results import ARROWS, OK
from gesturebench.reporting.tables import with_interval
from gesturebench.runtime.atomic import atomic_path, write_atomic

REPORT_FILE = "report.html"
#: the clips' folder in a run folder (`task.render_clips`) and in a report's folder
CLIPS = "clips"
#: the worst sequences shown per metric and run
WORST = 3
#: the keys of results.json that hold no hash (long lists of values): not searched for hashes
_NO_HASHES = (
    "per_sequence", "replicates", "samples", "intervals", "metrics", "display", "inputs",
)  # fmt: skip
_CSS = """
body { font-family: sans-serif; margin: 1.5em auto; padding: 0 1em; max-width: 1100px; color: #222 }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .6em 0; }
th, td { border: 1px solid #ccc; padding: .25em .6em; vertical-align: top; text-align: left; }
th { background: #f2f2f2; }
td.value { text-align: right; white-space: nowrap; }
.interval { color: #555; font-size: .85em; }
.missing { color: #999; }
.warning { background: #fff3cd; border-left: 4px solid #e0a800; padding: .4em .8em; }
.note { color: #555; font-size: .9em; }
pre { background: #f6f6f6; padding: .6em; overflow-x: auto; font-size: .85em; }
code { background: #f2f2f2; padding: 0 .2em; overflow-wrap: anywhere; }
video { width: 320px; display: block; }
figure { margin: .6em 0; }
"""


def write_run_report(run_dir: str | Path, results: dict, into: str | Path | None = None) -> Path:
    """report.html of one run (its results.json document `results`) in `into` (default: `run_dir`,
    the run folder), returned. The clips shown are `into`/clips/<sequence id>.mp4, linked by
    their path relative to `into`; so inside `runtime.commit.staged(run_dir)` pass the staging
    folder as `into` after the clips were rendered there: the report is committed with them. The
    reproducing command comes from `run_dir`/.hydra/overrides.yaml where Hydra wrote one."""
    run_dir = Path(run_dir)
    folder = Path(into) if into is not None else run_dir
    row = {"job": run_dir.name, "status": OK, **results}
    clips = {seq: f"{CLIPS}/{quote(seq)}.mp4" for seq in _clip_ids(folder / CLIPS)}
    title = f"{results.get('model')} on {results.get('dataset')}"
    page = _page(title, [row], [clips], [_Origin(run_dir)], sweep=False)
    path = folder / REPORT_FILE
    write_atomic(path, page)
    return path


def write_sweep_report(
    folder: str | Path, rows: list[dict], jobs_dir: str | Path | None = None
) -> Path:
    """report.html of a sweep's jobs `rows` (`summary.collect_jobs`) in `folder`, returned. The
    job folders are in `jobs_dir`, by default the sweep folder that holds `folder` (the sweep's
    own folder `<sweep>/sweeps/<started>_<id>/`), else `folder` itself. A clip the page shows that
    lies outside `folder` is copied into `folder`/clips/job<n>/ (n: the row's position, from
    1), so that the page links only files
    inside its own folder."""
    folder = Path(folder)
    if jobs_dir is None:
        # `summary.SWEEPS` (not imported: the summary imports this module)
        jobs_dir = folder.parent.parent if folder.parent.name == "sweeps" else folder
    jobs_dir = Path(jobs_dir)
    clips, origins = [], []
    metrics = _metrics(rows)
    for n, row in enumerate(rows, start=1):
        job = jobs_dir / str(row.get("job", ""))
        found = _clip_ids(job / CLIPS) if _is_ok(row) else []
        shown = _worst_ids(row, metrics)
        links = {}
        for seq in found:
            if seq not in shown:
                continue
            source = job / CLIPS / f"{seq}.mp4"
            try:
                relative = source.resolve().relative_to(folder.resolve())
            except ValueError:
                relative = Path(CLIPS) / f"job{n}" / f"{seq}.mp4"
                with atomic_path(folder / relative) as tmp:
                    shutil.copyfile(source, tmp)
            links[seq] = "/".join(quote(part) for part in relative.parts)
        clips.append(links)
        origins.append(_Origin(job))
    sweep = next((r.get("sweep_id") for r in rows if r.get("sweep_id")), None)
    title = f"Sweep {str(sweep)[:8]} of {jobs_dir}" if sweep else f"Sweep of {jobs_dir}"
    path = folder / REPORT_FILE
    write_atomic(path, _page(title, rows, clips, origins, sweep=True))
    return path


def _clip_ids(folder: Path) -> list[str]:
    """The sequence ids of the clips in `folder` (<id>.mp4)."""
    return sorted(p.stem for p in folder.glob("*.mp4")) if folder.is_dir() else []


class _Origin:
    """A run's folder and the command-line overrides Hydra recorded there (None where none)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.overrides: list[str] | None = None
        try:
            found = yaml.safe_load((folder / ".hydra" / "overrides.yaml").read_text())
        except (OSError, yaml.YAMLError):
            return
        if isinstance(found, list):
            self.overrides = [str(o) for o in found]


def _launch(overrides: Iterable[str]) -> str:
    return shlex.join(["python", "launch.py", *overrides])


def _is_ok(row: dict) -> bool:
    """Whether a row is a run's results (not a failed job's error, not an unreadable file)."""
    return row.get("status", OK) == OK


def _ok(rows: list[dict]) -> list[dict]:
    return [r for r in rows if _is_ok(r)]


def _metrics(rows: list[dict]) -> list[str]:
    """The headline metrics of the successful rows (those each run prints), first seen first."""
    return list(dict.fromkeys(m for row in _ok(rows) for m in headline_metrics(row)))


def _directions(rows: list[dict]) -> dict[str, str]:
    out: dict[str, str] = {}
    for row in rows:
        out.update(row.get("directions") or {})
    return out


def _ids(row: dict) -> dict[int, str]:
    """Split index → sequence id of a run's per-sequence rows."""
    return {int(r["index"]): str(r.get("sequence_id", r["index"])) for r in row["per_sequence"]}


def _worst(row: dict, metric: str, direction: str) -> list[tuple[int, float]]:
    """The `WORST` (split index, value) of `metric` in `row`, worst first."""
    values = per_sequence_values(row, metric)
    ordered = sorted(values.items(), key=lambda item: -badness(float(item[1]), direction))
    return [(int(i), float(v)) for i, v in ordered[:WORST]]


def _worst_ids(row: dict, metrics: list[str]) -> set[str]:
    """The sequence ids of every worst sequence of `metrics` the page shows for `row`."""
    if not _is_ok(row) or not row.get("per_sequence"):
        return set()
    ids, directions = _ids(row), _directions([row])
    return {ids[i] for m in metrics for i, _ in _worst(row, m, directions.get(m, "lower"))}


class _Notes:
    """Numbered footnotes of a table, one per distinct text."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def mark(self, text: str) -> str:
        if text not in self.texts:
            self.texts.append(text)
        n = self.texts.index(text) + 1
        return f'<sup class="fn"><a href="#note-{n}">{n}</a></sup>'

    def html(self) -> str:
        items = "".join(
            f'<li id="note-{i}">{html.escape(" ".join(t.split()))}</li>'
            for i, t in enumerate(self.texts, 1)
        )
        return f'<ol class="notes">{items}</ol>' if items else ""


def _e(value: Any) -> str:
    return html.escape(str(value))


def _page(
    title: str,
    rows: list[dict],
    clips: list[dict[str, str]],
    origins: list[_Origin],
    sweep: bool,
) -> str:
    names = labels(rows) if rows else []
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        _headline(rows, names),
        _warnings(rows),
    ]
    if sweep:
        parts.append(_comparisons(rows))
    parts += [
        _distributions(rows, names),
        _worst_section(rows, names, clips, origins),
        _provenance(rows, names, origins),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _headline(rows: list[dict], names: list[str]) -> str:
    """The headline metrics (rows) of every run (columns): value, interval, caveat and skip
    reasons as footnotes; a failed job's column says why."""
    metrics, directions, notes = _metrics(rows), _directions(rows), _Notes()
    head = "".join(
        f'<th data-model="{_e(n)}">{_e(n)}'
        + ("" if _is_ok(r) else notes.mark(f"{n} {r.get('status')}: {r.get('error', '')}"))
        + "</th>"
        for n, r in zip(names, rows, strict=True)
    )
    body = []
    for metric in metrics:
        arrow = ARROWS.get(directions.get(metric, ""), "")
        cells = "".join(_cell(row, name, metric, notes) for row, name in zip(rows, names))
        body.append(f'<tr><th scope="row">{_e(f"{metric} {arrow}".rstrip())}</th>{cells}</tr>')
    if not metrics:
        presets = ", ".join(sorted({str(r.get("preset")) for r in rows}))
        body.append(
            f'<tr><td colspan="{len(rows) + 1}">no metrics configured ({_e(presets)})</td></tr>'
        )
    return (
        '<h2 id="headline">Headline metrics</h2>'
        '<p class="note">Value to 4 significant digits and its bootstrap interval (results.json '
        "<code>intervals</code>); arrows: the better direction; numbered notes: why a value is "
        "missing, or its caveat.</p>"
        f'<table id="headline-table"><thead><tr><th>metric</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>{notes.html()}"
    )


def _cell(row: dict, name: str, metric: str, notes: _Notes) -> str:
    attrs = f'data-model="{_e(name)}" data-metric="{_e(metric)}"'
    if not _is_ok(row):
        return f'<td class="value missing" {attrs}></td>'
    value = (row.get("metrics") or {}).get(metric)
    if value is None:
        reason = (row.get("skipped") or {}).get(metric, "no value")
        return f'<td class="value missing" {attrs}>– {notes.mark(reason)}</td>'
    bounds = (row.get("intervals") or {}).get(metric)
    shown = with_interval(value, None)
    bounds_text = with_interval(value, bounds)[len(shown) :].strip()
    interval = f'<br><span class="interval">{_e(bounds_text)}</span>'
    extra = ""
    if metric in (row.get("notes") or {}):
        extra += notes.mark(row["notes"][metric])
    if metric in (row.get("caveats") or {}):
        extra += notes.mark(f"caveat: {row['caveats'][metric]}")
    return (
        f'<td class="value" {attrs} data-value="{value!r}">{_e(shown)}{extra}'
        f"{interval if bounds else ''}</td>"
    )


def _warnings(rows: list[dict]) -> str:
    found = mixed_conventions(rows).warnings
    body = (
        "".join(f'<div class="warning">{_e(w)}</div>' for w in found)
        if found
        else '<p class="note">None: the runs used the same metric preset and options, on their '
        "preset's pinned split where it pins one.</p>"
    )
    return f'<h2 id="warnings">Comparability warnings</h2>{body}'


def _comparisons(rows: list[dict]) -> str:
    """Each ranked metric's ranking and pairs, in sentences (`comparisons.comparisons`)."""
    head = '<h2 id="comparisons">Paired comparisons</h2>'
    ok = _ok(rows)
    table, ranking, left_out = comparisons(rows)
    if table.empty or ranking.empty:
        why = (
            "fewer than two successful runs"
            if len(ok) < 2
            else "the runs scored different datasets"
            if len({r.get("dataset") for r in ok}) > 1
            else "no metric value that two runs share"
        )
        return f'{head}<p class="note">No paired comparison: {_e(why)}.</p>'
    stats = ok[0].get("config", {}).get("stats") or {}
    confidence = float(stats.get("confidence") or 0.95)
    directions = _directions(ok)
    out = [
        head,
        '<p class="note">Models share a rank unless their paired test, Holm-corrected over the '
        f"metric's pairs, gives p below {1 - confidence:.2g}; difference = a − b with its "
        "bootstrap interval (docs/statistics.md). comparisons.md and comparisons.csv hold the "
        "numbers and every other value's pairs.</p>",
    ]
    for metric in ranking.metric.unique():
        ranks = ranking[ranking.metric == metric].sort_values("rank")
        values = dict(zip(ranks.model, ranks.value, strict=True))
        items = []
        for rank, group in ranks.groupby("rank", sort=True):
            models = _and([f"{m} ({v:.4g})" for m, v in zip(group.model, group.value)])
            verb = "share" if len(group) > 1 else "has"
            items.append(f"{models} {verb} rank {rank}")
        items += [
            f"{m} is not ranked: {' '.join(why.split())}" for k, m, why in left_out if k == metric
        ]
        arrow = ARROWS.get(directions.get(metric, ""), "")
        pairs = table[table.metric == metric]
        sentences = [
            _pair_sentence(p, directions.get(metric, "lower"), confidence, values, len(pairs))
            for p in pairs.itertuples()
        ]
        out.append(
            f'<h3>{_e(f"{metric} {arrow}".rstrip())}</h3><ul class="ranking">'
            + "".join(f"<li>{_e(i)}</li>" for i in items)
            + '</ul><ul class="pairs">'
            + "".join(f"<li>{_e(s)}</li>" for s in sentences)
            + "</ul>"
        )
    return "".join(out)


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(items[:-1]), items[-1]]) if len(items) > 1 else "".join(items)


def _pair_sentence(pair: Any, direction: str, confidence: float, values: dict, family: int) -> str:
    """One pair's result in words, e.g. ``a is better than b: a − b = -0.1 [-0.2, -0.05] over 12
    sequences (sign-flip test, p = 0.001, Holm-corrected p = 0.002)``; `family`: the number of
    pairs Holm's correction counts."""
    a, b = pair.a, pair.b
    va, vb = values.get(a), values.get(b)
    if va is not None and vb is not None:
        a_better = badness(va, direction) < badness(vb, direction)
    else:
        a_better = {"lower": pair.difference < 0, "higher": pair.difference > 0}.get(
            direction, False
        )
    best, other = (a, b) if a_better else (b, a)
    apart = pair.p_holm < 1 - confidence
    verdict = (
        f"{best} is better than {other}"
        if apart
        else f"{a} and {b} are not told apart at {confidence:.0%}"
        + (
            _unreachable(pair.p_min, family, 1 - confidence)
            if family * pair.p_min >= 1 - confidence
            else ""
        )
    )
    return (
        f"{verdict}: {a} − {b} = {pair.difference:.4g} [{pair.lo:.4g}, {pair.hi:.4g}] over "
        f"{pair.sequences} sequences ({pair.test} test, p {_p(pair.p, pair.p_min)}, "
        f"Holm-corrected p {_p(pair.p_holm, pair.p_min)})"
    )


def _unreachable(p_min: float, family: int, alpha: float) -> str:
    """Why no pair can be told apart: the test's smallest attainable p (its sequences, or its
    bootstrap replicates, allow no smaller), times the `family` pairs of Holm's correction (each
    corrected p is at least that), is not below `alpha`."""
    holm = f" times the {family} pairs of Holm's correction" if family > 1 else ""
    return f" (this test's smallest attainable p here, {p_min:.2g},{holm} is not below {alpha:.2g})"


def _p(p: float, p_min: float) -> str:
    """``= 0.012``, or ``≤ 0.031`` at the test's smallest attainable p."""
    text = p_text(p, p_min)
    return text if text.startswith("≤") else f"= {text}"


def _png(fig: Figure) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _distributions(rows: list[dict], names: list[str]) -> str:
    """Per headline metric, a box plot of the per-sequence values of each run (the points over
    it); a metric with none (a distributional one, e.g. FGD) says so."""
    ok = [(n, r) for n, r in zip(names, rows, strict=True) if _is_ok(r)]
    directions = _directions(rows)
    out = [
        '<h2 id="distributions">Per-sequence values</h2>'
        '<p class="note">One box per run: the values of each sequence (per_sequence.csv; with '
        "several samples per input, their mean), the box the quartiles, the line the median; "
        "each point one sequence.</p>"
    ]
    for metric in _metrics(rows):
        series = [(n, per_sequence_values(r, metric)) for n, r in ok]
        series = [(n, s) for n, s in series if len(s)]
        arrow = ARROWS.get(directions.get(metric, ""), "")
        label = f"{metric} {arrow}".rstrip()
        if not series:
            out.append(
                f'<h3>{_e(label)}</h3><p class="note">No per-sequence values: {_e(metric)} is one '
                "value over all sequences (or was not computed).</p>"
            )
            continue
        fig = Figure(figsize=(max(4.0, 1.3 * len(series) + 2.0), 3.0))
        ax = fig.add_subplot()
        data = [s.to_numpy(dtype=float) for _, s in series]
        ax.boxplot(data, showfliers=False)
        for position, values in enumerate(data, start=1):
            spread = 0.08 * (((values.argsort().argsort() % 5) - 2) / 2)
            ax.plot(position + spread, values, "o", alpha=0.6, markersize=4, color="C0")
        ax.set_xticks(range(1, len(series) + 1), [n for n, _ in series], fontsize=8)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, axis="y")
        alt = f"{metric}: per-sequence values of " + ", ".join(n for n, _ in series)
        out.append(
            f'<figure><figcaption><b>{_e(label)}</b></figcaption><img alt="{_e(alt)}" '
            f'data-metric="{_e(metric)}" src="{_png(fig)}"></figure>'
        )
    return "".join(out)


def _worst_section(
    rows: list[dict],
    names: list[str],
    clips: list[dict[str, str]],
    origins: list[_Origin],
) -> str:
    directions = _directions(rows)
    out = [
        '<h2 id="worst">Worst sequences</h2>'
        f'<p class="note">Per headline metric and run, the {WORST} sequences with the worst '
        "values, with the run's clip (reference | generated, <code>task.render_clips</code>) "
        "where one was rendered for that sequence.</p>"
    ]
    for metric in _metrics(rows):
        direction = directions.get(metric, "lower")
        body = []
        for name, row, links, origin in zip(names, rows, clips, origins, strict=True):
            if not _is_ok(row) or not row.get("per_sequence"):
                continue
            ids = _ids(row)
            for index, value in _worst(row, metric, direction):
                seq = ids.get(index, str(index))
                body.append(
                    f'<tr data-metric="{_e(metric)}"><td>{_e(name)}</td><td>{_e(seq)}</td>'
                    f'<td class="value">{value:.4g}</td>'
                    f"<td>{_clip_cell(seq, index, links, origin.overrides)}</td></tr>"
                )
        if body:
            arrow = ARROWS.get(direction, "")
            out.append(
                f'<h3>{_e(f"{metric} {arrow}".rstrip())}</h3><table class="worst"><thead><tr>'
                "<th>run</th><th>sequence</th><th>value</th><th>reference | generated</th>"
                f"</tr></thead><tbody>{''.join(body)}</tbody></table>"
            )
    return "".join(out)


def _clip_cell(seq: str, index: int, links: dict[str, str], overrides: list[str] | None) -> str:
    if seq in links:
        return (
            f'<video controls preload="metadata" src="{_e(links[seq])}"></video>'
            f'<a href="{_e(links[seq])}">{_e(seq)}.mp4</a>'
        )
    kept = [
        o
        for o in overrides or []
        if not o.split("=", 1)[0].lstrip("+~").startswith(("task.render_clips", "hydra."))
    ]
    if overrides is None:
        kept = ["<the run's overrides>"]
    command = _launch([*kept, f"task.render_clips={index + 1}"])
    return (
        '<span class="note">not rendered (clips are rendered for the first '
        "<code>task.render_clips</code> sequences): rerun into a new folder (the generated "
        f"motion is cached) with <code>{_e(command)}</code></span>"
    )


def _hashes(node: Any, prefix: str = "") -> list[tuple[str, str]]:
    """(dotted key, value) of every string whose key names a hash (sha256, hash) in a results
    document, the per-sequence lists and the values aside."""
    out: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if not prefix and key in _NO_HASHES:
                continue
            path = f"{prefix}.{key}" if prefix else str(key)
            low = str(key).lower()
            if isinstance(value, str) and ("sha256" in low or "hash" in low):
                out.append((path, value))
            else:
                out += _hashes(value, path)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _hashes(value, f"{prefix}[{i}]")
    return out


def _inputs(inputs: Any) -> tuple[list[tuple[str, str]], str]:
    """The input files results.json `inputs` records: ((what, SHA-256) of the dataset's root and
    the body model file, the table of the dataset's files by their path under its root)."""
    if not isinstance(inputs, dict):
        return [], ""
    dataset = inputs.get("dataset") or {}
    files = dataset.get("files") or {}
    out = [("dataset root", str(dataset.get("root")))] if dataset.get("root") else []
    if files:
        out.append(("dataset files", f"{len(files)} files: SHA-256 of each below"))
    body = inputs.get("body_model") or {}
    if body:
        out.append((f"body model file {body.get('path')}", str(body.get("sha256"))))
    rows = "".join(
        f"<tr><th>{_e(n)}</th><td><code>{_e(h)}</code></td></tr>" for n, h in files.items()
    )
    table = (
        f'<details><summary>dataset files ({len(files)})</summary><table class="inputs">{rows}'
        "</table></details>"
        if files
        else ""
    )
    return out, table


def _provenance(rows: list[dict], names: list[str], origins: list[_Origin]) -> str:
    out = [
        '<h2 id="provenance">Provenance</h2>'
        '<p class="note">What results.json records of each run: the hashes of its configuration '
        "and inputs, its package versions and the command that reproduces it.</p>"
    ]
    for name, row, origin in zip(names, rows, origins, strict=True):
        overrides = origin.overrides
        if not _is_ok(row):
            why = f"{row.get('status')}: {row.get('error', '')}"
            out.append(f"<h3>{_e(name)}</h3><p>{_e(why)}</p>")
            continue
        facts = [
            ("model", row.get("model")),
            ("dataset", row.get("dataset")),
            ("metrics preset", row.get("preset")),
            ("sweep", row.get("sweep_id")),
        ]
        hashes = _hashes(row)
        inputs, files = _inputs(row.get("inputs"))
        if not row.get("inputs") and not any(k != "config_hash" for k, _ in hashes):
            facts.append(("input hashes", "none recorded in results.json beyond the config hash"))
        table = "".join(
            f"<tr><th>{_e(k)}</th><td><code>{_e(v)}</code></td></tr>"
            for k, v in [*facts, *hashes, *inputs]
        )
        versions = "".join(
            f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>"
            for k, v in (row.get("versions") or {}).items()
        )
        if overrides is not None:
            command = f"<pre>{_e(_launch(overrides))}</pre>"
        else:
            command = (
                '<p class="note">No command recorded (the run was not started by launch.py, or '
                "its .hydra/ folder is gone): its resolved configuration below is the whole "
                "configuration.</p>"
            )
        command += (
            "<p>and the command that re-runs it from what results.json records and compares every "
            "value (docs/outputs.md, Verifying a run):</p>"
            f"<pre>{_e(_launch(['task=verify', f'task.run={origin.folder}']))}</pre>"
        )
        extras = [
            ("encoders", row.get("encoders")),
            ("protocol", row.get("protocol")),
            ("model", row.get("model_info")),
            ("resolved config", row.get("config")),
        ]
        details = "".join(
            f"<details><summary>{_e(title)}</summary><pre>"
            f"{_e(json.dumps(value, indent=2, default=str))}</pre></details>"
            for title, value in extras
            if value
        )
        out.append(
            f'<h3>{_e(name)}</h3><table class="provenance" data-model="{_e(name)}">{table}</table>'
            f"{files}<p>the command that ran it (a new run folder reproduces it):</p>{command}"
            f"<details><summary>package versions</summary><table>{versions}</table></details>"
            f"{details}"
        )
    return "".join(out)
