"""The table a single `task=evaluate` run prints at its end: the headline metrics (the paper's, or a
protocol preset's own) with their direction, the reason of each one skipped, a mark on each value
that partly compares the reference with itself, the seconds spent per stage in one line and how
many sequences and frames were scored; plain text, so that it reads the same in a terminal, a log
file and a notebook."""

from __future__ import annotations

from gesturebench.metrics.sample_diversity import SampleDiversity
from gesturebench.reporting.comparability import MARK, self_compared
from gesturebench.reporting.results import ARROWS, PAPER_METRICS
from gesturebench.reporting.tables import TABLE_WIDTH, with_interval


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
    and the skip reason where a metric has no value); a value that partly compares the reference
    with itself (`comparability.self_compared`) carries `MARK`, with one legend line per reason;
    then the seconds of the stages in one line (`timing_line`) and how many sequences and frames
    were scored (`scored_line`)."""
    values, skipped = results["metrics"], results.get("skipped", {})
    caveats, notes = results.get("caveats") or {}, results.get("notes") or {}
    directions, intervals = results.get("directions", {}), results.get("intervals", {})
    names = headline_metrics(results)
    marked = self_compared(results)
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
            shown += f" {MARK}" if metric in marked else ""
            shown += f"  ({notes[metric]})" if metric in notes else ""
            shown += f"  (caveat: {caveats[metric]})" if metric in caveats else ""
        else:
            shown = f"-  {skipped.get(metric, 'no value')}"
        lines.append(f"  {labels[metric]:<{width}}  {shown}")
    reasons: dict[str, list[str]] = {}
    for metric in names:
        if metric in marked:
            reasons.setdefault(marked[metric], []).append(metric)
    lines += [f"  {MARK} {', '.join(ms)}: {' '.join(why.split())}" for why, ms in reasons.items()]
    timing, scored = timing_line(results.get("timings") or {}), scored_line(results)
    return "\n".join([*lines, *([timing] if timing else []), *([scored] if scored else [])])


#: The slowest stages `timing_line` names (the others are summed; all are in results.json).
SHOWN_STAGES = 3


def timing_line(timings: dict[str, float]) -> str | None:
    """The seconds of the stages in one line of at most `TABLE_WIDTH` characters: their sum, the
    `SHOWN_STAGES` slowest (fewer where their names are long) and how many more there are
    (results.json `timings` holds each); None without timings."""
    if not timings:
        return None
    stages = sorted(timings.items(), key=lambda item: -item[1])
    head = f"  seconds per stage (sum {sum(timings.values()):.1f}): "
    for shown in range(min(SHOWN_STAGES, len(stages)), 0, -1):
        text = ", ".join(f"{stage} {seconds:.1f}" for stage, seconds in stages[:shown])
        rest = len(stages) - shown
        line = head + text + (f", {rest} more in results.json" if rest else "")
        if len(line) <= TABLE_WIDTH:
            break
    return line


def scored_line(results: dict) -> str | None:
    """How many sequences and frames were scored (results.json `per_sequence`: a sequence with
    several samples counted once, with its first sample's frames); None where the document has no
    `per_sequence` (e.g. written by hand)."""
    rows = results.get("per_sequence")
    if rows is None:
        return None
    frames: dict[int, int] = {}
    for row in rows:
        frames.setdefault(row.get("index", len(frames)), int(row.get("frames") or 0))
    n = len(frames)
    return f"  scored {n} sequence{'s' if n != 1 else ''}, {sum(frames.values()):,} frames"
