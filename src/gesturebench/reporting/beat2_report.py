"""The report of `task=prepare_beat2`: a BEAT2 check (`data.beat2_check.Beat2Check`) as
beat2_report.md, for reading, and beat2_report.json, for programs."""

from __future__ import annotations

from pathlib import Path

from gesturebench.data.beat2_check import Beat2Check
from gesturebench.reporting.results import write_json
from gesturebench.runtime.atomic import write_atomic

#: the report's files in the run folder
BEAT2_REPORT_MD, BEAT2_REPORT_JSON = "beat2_report.md", "beat2_report.json"


def write_beat2_report(out: Path, report: Beat2Check) -> str:
    """Write `report` into the folder `out` (beat2_report.json and .md); returns the Markdown."""
    markdown = report_markdown(report)
    write_json(out / BEAT2_REPORT_JSON, report.document())
    write_atomic(out / BEAT2_REPORT_MD, markdown)
    return markdown


def report_markdown(report: Beat2Check, shown: int = 50) -> str:
    """The check as Markdown: verdict, counts per split and speaker, rates, problems, notes."""
    verdict = (
        f"**Unusable**: {report.unusable}"
        if report.unusable
        else f"Usable for split '{report.split}'"
        + (f" ({len(report.problems)} problem(s) below)" if report.problems else "")
    )
    lines = [f"# BEAT2 check of {report.root}", "", verdict, "", "## Sequences", ""]
    lines += ["| split | speaker | sequences |", "|---|---|---|"]
    for kind, by_speaker in report.counts.items():
        lines += [f"| {kind} | {spk} | {n} |" for spk, n in by_speaker.items()]
        lines.append(f"| {kind} | all | {sum(by_speaker.values())} |")
    lines += ["", "## Rates", ""]
    lines += [f"- motion {r} fps: {n} file(s)" for r, n in report.frame_rates.items()]
    lines += [f"- audio {r} Hz: {n} file(s)" for r, n in report.audio_rates.items()]
    lines += [f"- audio {c} channel(s): {n} file(s)" for c, n in report.audio_channels.items()]
    lines += ["", f"## Problems ({len(report.problems)})", ""]
    lines += [f"- [{p['split']}] {p['item']}: {p['problem']}" for p in report.problems[:shown]]
    if len(report.problems) > shown:
        lines.append(f"- ... and {len(report.problems) - shown} more (beat2_report.json)")
    if not report.problems:
        lines.append("(none)")
    if report.notes:
        lines += ["", "## Notes", "", *(f"- {n}" for n in report.notes)]
    return "\n".join(lines) + "\n"
