"""Whether the rows of a results table can be compared: the rows that used different metric presets,
or different options (variants, conventions) for the same metric, from results.json `preset` and
`options`, and the rows scored off their preset's pinned split (`protocol_mismatch`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gesturebench.reporting.results import OK

#: options that change how a value is printed, not the value itself
PRINT_ONLY = ("display_scale",)
#: the longest option value a `variants` cell shows
SHOWN_CHARS = 40


@dataclass
class Mix:
    """`warnings`: one line per kind of mix (none: the rows compare); `variants`: per row, the
    options it used among those that differ (``metric.option=value; …``)."""

    warnings: list[str]
    variants: list[str]


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else _key(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def mixed_conventions(rows: list[dict]) -> Mix:
    """The mixes among the successful rows (`status` ok): presets, each metric's options (less
    `PRINT_ONLY`) where two rows computed it differently, pinned splits not kept."""
    ok = [row for row in rows if row.get("status", OK) == OK]
    warnings = []
    presets = sorted({str(row.get("preset")) for row in ok})
    if len(presets) > 1:
        warnings.append(
            f"rows used different metric presets ({', '.join(presets)}): the same metric may "
            "follow different conventions in them (columns preset and variants)"
        )
    differing: dict[str, list[str]] = {}
    for metric in dict.fromkeys(m for row in ok for m in row.get("options", {})):
        seen = [row["options"][metric] for row in ok if metric in row.get("options", {})]
        names = dict.fromkeys(n for options in seen for n in options if n not in PRINT_ONLY)
        diff = [n for n in names if len({_key(options.get(n)) for options in seen}) > 1]
        if diff:
            differing[metric] = diff
            warnings.append(
                f"metric {metric} was computed with different options ({', '.join(diff)}) in "
                "different rows: its values are not comparable across them (column variants)"
            )
    off = [str(row.get("job", row.get("model"))) for row in ok if row.get("protocol_mismatch")]
    if off:
        warnings.append(
            f"rows {', '.join(off)} were scored off their preset's pinned split and speakers "
            "(results.json protocol_mismatch): not comparable with the published numbers"
        )
    variants, scored = [], {id(row) for row in ok}
    for row in rows:
        options = row.get("options", {}) if id(row) in scored else {}
        variants.append(
            "; ".join(
                f"{metric}.{name}={_shown(options[metric].get(name))}"
                for metric, names in differing.items()
                if metric in options
                for name in names
            )
        )
    return Mix(warnings, variants)


#: The mark of a value that partly compares the reference with itself (`self_compared`), in the
#: console table, the sweep summaries and the leaderboard, each with a legend line.
MARK = "‡"
#: The legend line of `MARK` in the Markdown tables.
MARK_LEGEND = (
    f"{MARK} partly compares the reference with itself: the model copies (or starts from) a field "
    "of the reference that the value reads (its footnote says which; results.json `self_compared`)"
)


#: Words of the models' notes on values that partly compare the reference with itself
#: (`skip_notes`), for a results.json written before `self_compared` was recorded.
SELF_COMPARED_WORDS = ("partly compares the reference with itself", "(model_info.")


def self_compared(row: dict) -> dict[str, str]:
    """Value name → why, for the values of a results.json document (or a table row) that have a
    number and yet partly compare the reference with itself (the model copies, or starts from, a
    field of the reference that they read): results.json `self_compared`; in a document written
    before it was recorded, the values with a number whose note under `skipped` is a model's
    (`SELF_COMPARED_WORDS`)."""
    values = row.get("metrics") or {}
    if "self_compared" in row:
        notes = row.get("self_compared") or {}
    else:
        notes = {
            m: why
            for m, why in (row.get("skipped") or {}).items()
            if any(words in why for words in SELF_COMPARED_WORDS)
        }
    return {m: why for m, why in notes.items() if values.get(m) is not None}
