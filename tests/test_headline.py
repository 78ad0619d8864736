"""The table a single evaluation prints: every headline metric once, its arrow, its value or skip
reason, and the seconds per stage."""

from __future__ import annotations

from gesturebench.reporting.headline import headline_table
from gesturebench.reporting.results import PAPER_METRICS


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
    }
    lines = headline_table(results).splitlines()
    assert lines[0] == "perturbed on mini_beat2:"
    rows = {line.split()[0]: line for line in lines[1:-1]}
    # the configured ones, in the paper's order; no diagnostics, no "not computed" rows
    assert list(rows) == ["mjd", "pck", "ldlj_rel", "sc"]
    assert rows["mjd"].split()[1:] == ["↓", "0.01235"]
    assert rows["pck"].split()[1:] == ["↑", "0.9", "[0.85,", "0.95]"]
    assert rows["ldlj_rel"].split()[1:] == ["→0", "-0.25"]
    assert rows["sc"].split()[1:] == ["-", "no", "value"]
    # the slowest stage first; the sum of the stages
    assert lines[-1] == "  seconds per stage (sum 4.5): metric:mjd 3.0, model 1.0, smplx 0.5"


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
