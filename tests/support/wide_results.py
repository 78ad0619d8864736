"""Results of a sweep of the default preset (`metrics=paper`) as wide as its tables get: every
value name of the preset with a 4-significant-digit negative value and its interval, for the tests
that check that summary.md and leaderboard.md fit `TABLE_WIDTH`, and a parser of their tables."""

from __future__ import annotations

import re

#: The value names of `metrics=paper` by metric, and the metric's direction (what the default
#: preset builds; tests/test_results.py checks this list against it in a slow test).
PAPER_VALUES = {
    "mjd": (("mjd",), "lower"),
    "pck": (("pck",), "higher"),
    "diversity": (("diversity", "diversity_ref"), "higher"),
    "chamfer": (("chamfer",), "lower"),
    "hausdorff": (("hausdorff",), "lower"),
    "dice": (("dice",), "higher"),
    "foot_contact": (("foot_contact", "contact_rate_gen", "contact_rate_ref"), "lower"),
    "ldlj_rel": (("ldlj_rel", "ldlj_gen", "ldlj_ref"), "zero"),
    "fgd": (("fgd", "fgd_raw_pose"), "lower"),
    "density": (("density",), "higher"),
    "coverage": (("coverage",), "higher"),
    "sgp": (
        (
            "sgp",
            "sgp_invalid",
            "sgp_events",
            "sgp_class_iconic",
            "sgp_class_metaphoric",
            "sgp_class_deictic",
            "sgp_class_beat",
            "sgp_class_none",
            "sgp_class_uncertain",
        ),
        "higher",
    ),
    "bc": (("bc", "bc_ref"), "higher"),
    "srgr": (("srgr",), "higher"),
    "sc": (("sc", "sc_ref"), "higher"),
    "div_sample": (("div_sample",), "higher"),
}
MODELS = ("ground_truth", "mean_pose", "random_clip")
COPIES = "partly compares the reference with itself: random_clip copies trans from the reference"


def wide_row(model: str, k: int) -> dict:
    """A results.json document of `model` (k-th of the sweep) scored with `metrics=paper`: every
    value negative with 4 significant digits and an interval (the widest cells), but div_sample,
    skipped (one sample), and, for the last model, the values `trans` enters marked as partly
    comparing the reference with itself."""
    metrics, intervals, directions, skipped = {}, {}, {}, {}
    for i, (names, direction) in enumerate(PAPER_VALUES.values()):
        for j, name in enumerate(names):
            value = -(1.234 + i / 10 + j / 100 + k / 1000) * 1e-4
            metrics[name], directions[name] = value, direction
            intervals[name] = [value * 1.0001, value * 0.9999]
    metrics["div_sample"] = None
    skipped["div_sample"] = "computed only with model.samples > 1"
    self_compared = {}
    if model == MODELS[-1]:
        self_compared = dict.fromkeys(("fgd", "density", "coverage", "foot_contact", "sc"), COPIES)
        skipped |= self_compared
    return {
        "task": "evaluate",
        "model": model,
        "dataset": "mini_beat2",
        "preset": "paper",
        "metrics": metrics,
        "intervals": intervals,
        "directions": directions,
        "skipped": skipped,
        "self_compared": self_compared,
        "options": {metric: {} for metric in PAPER_VALUES},
        "config_hash": f"{k}bcdef0123456789",
        "config": {"task": {"name": "evaluate"}},
        "complete": True,
    }


def tables(markdown: str) -> list[dict[str, dict[str, str]]]:
    """The Markdown tables of `markdown` (runs of lines starting with `|`), each as {row number
    (column `#`): {header: cell}}."""
    out, block = [], []
    for line in [*markdown.splitlines(), ""]:
        if line.startswith("|"):
            block.append(line)
            continue
        if block:
            header, *rows = ([c.strip() for c in b.strip("|").split(" | ")] for b in block)
            out.append({r[0]: dict(zip(header, r, strict=True)) for r in rows[1:]})
            block = []
    return out


def legend(markdown: str) -> dict[str, str]:
    """{short name: metric name} of the `Metric names:` legend of `markdown`."""
    text = " ".join(markdown.split("Metric names: ")[1].split(".\n")[0].split())
    return dict(re.findall(r"(\S+) = (\S+?)(?:,|$)", text))
