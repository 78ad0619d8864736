"""The table a single evaluation prints: every headline metric once, its arrow, its value or skip
reason, a mark on a value that partly compares the reference with itself, the seconds per stage in
one line and how many sequences and frames were scored."""

from __future__ import annotations

import random

from gesturebench.reporting.comparability import MARK
from gesturebench.reporting.headline import SHOWN_STAGES, headline_table
from gesturebench.reporting.results import PAPER_METRICS
from gesturebench.reporting.tables import TABLE_WIDTH


def test_headline_table_lists_values_arrows_reasons_and_seconds():
    metrics = {m: None for m in PAPER_METRICS}
    metrics.update({"mjd": 0.0123456, "pck": 0.9, "ldlj_rel": -0.25, "bc_ref": 7.0})
    results = {
        "model": "perturbed",
        "dataset": "mini_beat2",
        "metrics": metrics,
        "directions": {"mjd": "lower", "pck": "higher", "ldlj_rel": "zero"},
        "skipped": {"fgd": "not computed: no metric named 'fgd' in metrics=fast"},
        "intervals": {"pck": [0.85, 0.95]},
        "options": {m: {} for m in ("sc", "ldlj_rel", "pck", "mjd")},
        "timings": {"model": 1.04, "metric:mjd": 2.96, "smplx": 0.5},
        "per_sequence": [{"index": 0, "frames": 300}, {"index": 1, "frames": 1200}],
    }
    lines = headline_table(results).splitlines()
    assert lines[0] == "perturbed on mini_beat2:"
    rows = {line.split()[0]: line for line in lines[1:-2]}
    # the configured ones, in the paper's order; no diagnostics, no "not computed" rows
    assert list(rows) == ["mjd", "pck", "ldlj_rel", "sc"]
    assert rows["mjd"].split()[1:] == ["↓", "0.01235"]
    assert rows["pck"].split()[1:] == ["↑", "0.9", "[0.85,", "0.95]"]
    assert rows["ldlj_rel"].split()[1:] == ["→0", "-0.25"]
    assert rows["sc"].split()[1:] == ["-", "no", "value"]
    # the slowest stage first; the sum of the stages; then what was scored
    assert lines[-2] == "  seconds per stage (sum 4.5): metric:mjd 3.0, model 1.0, smplx 0.5"
    assert lines[-1] == "  scored 2 sequences, 1,500 frames"


def test_a_protocol_preset_shows_its_own_metrics():
    """`metrics=genea` lists its eight metrics, not the paper's 15 with 13 "not computed"."""
    names = ("fgd", "fd_g", "fd_k", "ba_a2m", "ba_m2a", "srgr", "div_pose", "div_k")
    metrics = {m: None for m in PAPER_METRICS} | {m: 0.5 for m in names} | {"ba_a2m_ref": 0.6}
    results = {
        "model": "ground_truth",
        "dataset": "beat2",
        "metrics": metrics,
        "directions": {"fd_g": "lower", "ba_a2m": "higher"},
        "options": {m: {} for m in names},
    }
    lines = headline_table(results).splitlines()
    assert [line.split()[0] for line in lines[1:]] == list(names)
    assert lines[2].split()[1:] == ["↓", "0.5"]


def test_div_sample_is_listed_only_where_several_samples_gave_it_a_value():
    """With one sample div_sample is only a skip reason (not a headline row); with K it follows."""
    options = {m: {} for m in ("mjd", "pck", "div_sample")}
    results = {
        "model": "perturbed",
        "dataset": "mini_beat2",
        "metrics": {"mjd": 0.1, "pck": 0.5, "div_sample": None},
        "options": options,
        "skipped": {"div_sample": "computed only with model.samples > 1"},
    }
    names = [line.split()[0] for line in headline_table(results).splitlines()[1:]]
    assert names == ["mjd", "pck"]
    results["metrics"]["div_sample"] = 0.02
    names = [line.split()[0] for line in headline_table(results).splitlines()[1:]]
    assert names == ["mjd", "pck", "div_sample"]


def test_a_fast_run_lists_only_its_two_metrics_and_a_caveat_stands_by_its_value():
    """`metrics=fast`: results.json lists the 13 other paper metrics as not computed; the table
    shows mjd and pck only. A value a degenerate output scores well on carries its caveat."""
    metrics = {m: None for m in PAPER_METRICS} | {"mjd": 0.2, "pck": 0.5, "sgp": 1.0}
    results = {
        "model": "mean_pose",
        "dataset": "mini_beat2",
        "metrics": metrics,
        "options": {"mjd": {}, "pck": {}},
        "directions": {"sgp": "higher"},
        "skipped": {m: "not computed" for m in PAPER_METRICS if metrics[m] is None},
    }
    assert [line.split()[0] for line in headline_table(results).splitlines()[1:]] == ["mjd", "pck"]
    results["options"]["sgp"] = {}
    results["caveats"] = {"sgp": "motionless output: SGP is 1"}
    assert headline_table(results).splitlines()[-1] == (
        "  sgp ↑  1  (caveat: motionless output: SGP is 1)"
    )


def test_the_seconds_of_many_stages_are_one_line_and_results_json_keeps_them():
    """35 stages (a real run has 30 and more): one line, their sum, the slowest few by name."""
    rng = random.Random(0)
    timings = {f"metric:m{i}": round(rng.uniform(0, 9), 4) for i in range(35)}
    results = {"model": "m", "dataset": "d", "metrics": {"mjd": 0.1}, "options": {"mjd": {}}}
    lines = headline_table({**results, "timings": timings}).splitlines()
    timing = [line for line in lines if "seconds" in line]
    assert len(timing) == 1 and timing == lines[-1:] and len(timing[0]) <= TABLE_WIDTH
    slowest = sorted(timings, key=timings.__getitem__, reverse=True)[:SHOWN_STAGES]
    named = ", ".join(f"{s} {timings[s]:.1f}" for s in slowest)
    assert timing[0] == (
        f"  seconds per stage (sum {sum(timings.values()):.1f}): {named}, "
        f"{35 - SHOWN_STAGES} more in results.json"
    )
    # long stage names: fewer named, still one line that fits
    long = {f"bootstrap:{'x' * 40}{i}": float(i) for i in range(35)}
    line = headline_table({**results, "timings": long}).splitlines()[-1]
    assert len(line) <= TABLE_WIDTH and line.endswith(", 34 more in results.json")


def test_the_table_says_how_many_sequences_and_frames_were_scored():
    """Several samples of a sequence count it (and its frames) once; no per_sequence, no line."""
    per_sequence = [
        {"index": i, "sample": k, "frames": n}
        for i, n in ((0, 90), (1, 3000), (2, 45))
        for k in range(3)
    ]
    results = {"model": "m", "dataset": "d", "metrics": {}, "options": {}}
    assert headline_table({**results, "per_sequence": per_sequence}).splitlines()[-1] == (
        "  scored 3 sequences, 3,135 frames"
    )
    assert "scored" not in headline_table(results)
    one = [{"index": 4, "frames": 7}]
    assert headline_table({**results, "per_sequence": one}).endswith("scored 1 sequence, 7 frames")


def test_a_value_that_partly_compares_the_reference_with_itself_is_marked_with_a_legend():
    """A model that copies translation: the values it enters carry the mark, and one legend line
    per reason names them; a value without a number is a skip (its reason), not marked."""
    why = "partly compares the reference with itself: M copies trans from the reference"
    results = {
        "model": "m",
        "dataset": "d",
        "metrics": {"fgd": 0.5, "density": 0.9, "mjd": 0.1, "foot_contact": None},
        "options": {m: {} for m in ("fgd", "density", "mjd", "foot_contact")},
        "directions": {"fgd": "lower", "density": "higher", "mjd": "lower"},
        "skipped": {"fgd": why, "density": why, "foot_contact": f"no vertices; {why}"},
        "self_compared": {"fgd": why, "density": why},
    }
    lines = headline_table(results).splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:5]}
    assert rows["fgd"] == ["↓", "0.5", MARK] and rows["density"] == ["↑", "0.9", MARK]
    assert rows["mjd"] == ["↓", "0.1"] and MARK not in " ".join(rows["foot_contact"])
    assert lines[5:] == [f"  {MARK} fgd, density: {why}"]
    # a results.json written before `self_compared`: the model's note under `skipped` says it
    del results["self_compared"]
    assert headline_table(results).splitlines()[5:] == [f"  {MARK} fgd, density: {why}"]
