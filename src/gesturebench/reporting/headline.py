"""The table a single `task=evaluate` run prints at its end: the headline metrics (the paper's, or a
protocol preset's own) with their direction, the reason of each one skipped, and the seconds spent
per stage; plain text, so that it reads the same in a terminal, a log file and a notebook."""

from __future__ import annotations

import textwrap

from gesturebench.metrics.sample_diversity import SampleDiversity
from gesturebench.reporting.results import ARROWS, PAPER_METRICS
from gesturebench.reporting.tables import with_interval


def headline_metrics(results: dict) -> tuple[str, ...]:
    """The run's configured metrics (computed or skipped, never those the preset leaves out): in
    the paper's order when all are the paper's, otherwise, e.g. `metrics=genea`, in their
    configured order; then div_sample where several samples gave it a value (with one sample it is
    only a skip reason)."""
    metrics, extra = results["metrics"], SampleDiversity.default_name
    configured = [m for m in results.get("options", {}) if m in metrics and m != extra]
    in_paper = all(m in PAPER_METRICS for m in configured)
    names = tuple(m for m in PAPER_METRICS if m in configured) if in_paper else tuple(configured)
    return names + ((extra,) if metrics.get(extra) is not None else ())


def headline_table(results: dict) -> str:
    """The headline lines of a results.json document (4 significant digits, the bootstrap interval
    where there is one, its note (e.g. SGP's annotator) and its caveat where a degenerate output is
    known to score well on it or its annotator is not validated on the data; `-`
    and the skip reason where a metric has no value)."""
    values, skipped = results["metrics"], results.get("skipped", {})
    caveats, notes = results.get("caveats") or {}, results.get("notes") or {}
    directions, intervals = results.get("directions", {}), results.get("intervals", {})
    names = headline_metrics(results)
    labels = {m: f"{m} {ARROWS.get(directions.get(m, ''), '')}".rstrip() for m in names}
    width = max(map(len, labels.values()), default=0)
    lines = [f"{results['model']} on {results['dataset']}:"]
    if not names:
        preset = results.get("preset", "?")
        lines.append(
            f"  no metrics configured (metrics={preset}): motion generated and cached only"
        )
    for metric in names:
        value = values.get(metric)
        if value is not None:
            shown = with_interval(value, intervals.get(metric))
            shown += f"  ({notes[metric]})" if metric in notes else ""
            shown += f"  (caveat: {caveats[metric]})" if metric in caveats else ""
        else:
            shown = f"-  {skipped.get(metric, 'no value')}"
        lines.append(f"  {labels[metric]:<{width}}  {shown}")
    return "\n".join([*lines, *_timing_lines(results.get("timings", {}))])


def _timing_lines(timings: dict[str, float]) -> list[str]:
    """Seconds per stage, slowest first, wrapped to 100 columns."""
    if not timings:
        return []
    stages = sorted(timings.items(), key=lambda item: -item[1])
    text = ", ".join(f"{stage} {seconds:.1f}" for stage, seconds in stages)
    total = sum(timings.values())
    return textwrap.wrap(
        f"seconds per stage (sum {total:.1f}): {text}",
        width=100,
        initial_indent="  ",
        subsequent_indent="    ",
    )
