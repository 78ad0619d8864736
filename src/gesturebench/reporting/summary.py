"""The end of a multirun: summary.csv / .md / .json (and comparisons.csv / .md where it scored
several models on the same sequences) of its jobs, written into the sweep's own folder
`sweeps/<start time>_<id>/` (kept) and, as the latest, beside the job folders (the sweep folder
itself stays deterministic, so that rerunning a sweep resumes it). The Hydra callback that calls it
is `tasks/sweep_summary.py`'s."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import NamedTuple

from gesturebench.reporting.comparability import mixed_conventions
from gesturebench.reporting.comparisons import COMPARISONS_CSV, COMPARISONS_MD, write_comparisons
from gesturebench.reporting.latex import SUMMARY_TEX, Interval, write_latex_summary
from gesturebench.reporting.report import write_sweep_report
from gesturebench.reporting.results import (
    ERROR_FILE,
    FAILED,
    OK,
    RESULTS_FILE,
    UNREADABLE,
    RunFile,
    scan_results,
    unreadable_row,
)
from gesturebench.reporting.sweep_plots import write_sweep_plots
from gesturebench.reporting.tables import SUMMARY_CSV, SUMMARY_JSON, SUMMARY_MD, write_summary
from gesturebench.runtime.atomic import write_atomic

log = logging.getLogger(__name__)
#: The folder, beside a multirun's job folders, that keeps each sweep's own summary.
SWEEPS = "sweeps"


def collect_jobs(sweep_dir: Path, sweep_id: str) -> list[dict]:
    """Rows of the jobs of this multirun: error.json or committed results.json tagged with
    `sweep_id`; a results.json (or error.json) that cannot be read is named in a warning and its
    row marked `UNREADABLE` (`results.scan_results`), whatever sweep wrote it."""
    rows = []
    for job_dir in sorted(p for p in sweep_dir.iterdir() if p.is_dir()):
        error = _error_doc(job_dir / ERROR_FILE)
        if isinstance(error, RunFile):
            rows.append({**unreadable_row(error), "job": job_dir.name})
            continue
        if error is not None and error.get("sweep_id") == sweep_id:
            rows.append({"job": job_dir.name, "status": FAILED, **error})
            continue
        for file in scan_results([job_dir / RESULTS_FILE]):
            if file.problem is not None:
                rows.append({**unreadable_row(file), "job": job_dir.name})
            elif file.doc and file.doc.get("sweep_id") == sweep_id:
                rows.append({"job": job_dir.name, "status": OK, **file.doc})
    return rows


def _error_doc(path: Path) -> dict | RunFile | None:
    """A job's error.json as written (None where absent), or the `RunFile` naming why it cannot
    be read (named in a warning)."""
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        problem = f"not a readable {ERROR_FILE} ({error})"
    else:
        if isinstance(doc, dict):
            return doc
        problem = f"not a JSON object (a {type(doc).__name__})"
    log.warning("%s: %s; marked %s", path, problem, UNREADABLE)
    return RunFile(path, None, problem)


class SweepSummary(NamedTuple):
    """What `write_sweep_summary` wrote: the sweep's own folder, its CSV tables by name (summary,
    then comparisons where written), and whether any job failed (an unreadable results.json is
    named and marked in the tables but does not fail the sweep: it may be an older sweep's)."""

    folder: Path
    tables: dict[str, Path]
    failed: bool


def write_sweep_summary(
    sweep_dir: Path, sweep_id: str, started: str, interval: Interval = "bracket"
) -> SweepSummary | None:
    """The summary (and comparisons, and summary.tex with intervals as `interval` says) of the jobs
    of multirun `sweep_id` in `sweep_dir`, written into its own folder `sweeps/<started>_<id>/`
    and, as the latest, into `sweep_dir`, with the sweep's report.html in its own folder; the
    comparability warnings logged. None where the sweep has no job."""
    if not sweep_dir.is_dir():
        return None
    rows = collect_jobs(sweep_dir, sweep_id)
    if not rows:
        return None
    own = sweep_dir / SWEEPS / f"{started}_{sweep_id[:8]}"
    for warning in mixed_conventions(rows).warnings:
        log.warning("summary: %s", warning)
    title = f"Sweep {sweep_id[:8]} of {sweep_dir}"
    write_summary(own, rows, title)
    write_sweep_plots(rows, own)
    write_latex_summary(own, rows, interval, title)
    write_sweep_report(own, rows)
    names = [SUMMARY_CSV, SUMMARY_MD, SUMMARY_JSON, SUMMARY_TEX]
    if write_comparisons(own, rows) is not None:
        names += [COMPARISONS_CSV, COMPARISONS_MD]
    for name in names:
        write_atomic(sweep_dir / name, (own / name).read_text())
    log.info(
        "summary of %d jobs: %s (the latest also in %s)\n%s",
        len(rows),
        own / SUMMARY_MD,
        sweep_dir,
        (own / SUMMARY_MD).read_text(),
    )
    tables = {Path(name).stem: own / name for name in names if name.endswith(".csv")}
    return SweepSummary(own, tables, any(r["status"] == FAILED for r in rows))
