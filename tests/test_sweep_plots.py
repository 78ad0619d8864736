"""Sweep plots: `sweep_<metric>.png`, a metric against the swept numeric option, one line per
combination of the other swept options, beside the sweep's own summary."""

from __future__ import annotations

import json

import numpy as np
from matplotlib.colors import to_rgb
from omegaconf import OmegaConf

from gesturebench.reporting.sweep_plots import write_sweep_plots
from gesturebench.tasks.sweep_summary import SweepSummaryCallback

LEVELS = (0.2, 0.05, 0.1)  # out of order: the lines are drawn in level order
KINDS = ("jitter", "freeze")


def job(kind: str, level: float, **extra) -> dict:
    """A results.json-like row of `model=perturbed model/perturbation=<kind>
    model.level=<level>`; fgd grows with the level (twice as fast for freeze), mjd is missing at
    the smallest level."""
    slope = 2.0 if kind == "freeze" else 1.0
    return {
        "job": f"model/perturbation={kind},model.level={level}",
        "status": "ok",
        "model": f"perturbed_{kind}_{level}",
        "dataset": "mini_beat2",
        "metrics": {
            "fgd": slope * level,
            "mjd": None if level == 0.05 else 10 * level,
            "pck": None,
        },
        "directions": {"fgd": "lower", "mjd": "lower", "pck": "higher"},
        "config": {
            "seed": 0,
            "model": {
                "_target_": "gesturebench.models.perturbed.Perturbed",
                "name": f"perturbed_{kind}_{level}",
                "perturbation": {
                    "_target_": f"gesturebench.models.perturbed.{kind.title()}",
                    "name": kind,
                },
                "level": level,
                "seed": 0,
            },
        },
        **extra,
    }


def test_one_line_per_kind_with_the_metric_against_the_level(tmp_path):
    rows = [job(k, v) for k in KINDS for v in LEVELS]
    rows.append({"job": "broken", "status": "failed", "model": "x", "error": "boom"})
    figures = write_sweep_plots(rows, tmp_path)
    assert sorted(p.name for p in figures) == ["sweep_fgd.png", "sweep_mjd.png"]  # pck: no value
    for path in figures:
        assert path.parent == tmp_path and path.read_bytes()[:4] == b"\x89PNG"
    ax = figures[tmp_path / "sweep_fgd.png"].axes[0]
    assert ax.get_xlabel() == "perturbation level"
    assert ax.get_ylabel() == "fgd ↓ (lower is better)"
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"perturbed_jitter", "perturbed_freeze"}  # the models, by name
    assert {t.get_text() for t in ax.get_legend().get_texts()} == set(lines)
    for kind, slope in (("jitter", 1.0), ("freeze", 2.0)):
        np.testing.assert_allclose(lines[f"perturbed_{kind}"].get_xdata(), [0.05, 0.1, 0.2])
        np.testing.assert_allclose(
            lines[f"perturbed_{kind}"].get_ydata(), [slope * 0.05, slope * 0.1, slope * 0.2]
        )
    mjd = figures[tmp_path / "sweep_mjd.png"].axes[0].get_lines()[0].get_ydata()
    assert np.isnan(mjd[0]) and np.allclose(mjd[1:], [1.0, 2.0])  # the missing value is a gap


def test_each_line_has_its_interval_band_and_level_zero_is_plotted_or_noted(tmp_path):
    """The band spans each point's [lo, hi] in the line's colour; without a level-0 job the figure
    says how to get that point (the unperturbed reference), with one it is on the line."""
    rows = [job("jitter", v, intervals={"fgd": [v - 0.01, v + 0.02]}) for v in LEVELS]
    ax = write_sweep_plots(rows, tmp_path)[tmp_path / "sweep_fgd.png"].axes[0]
    (band,) = ax.collections
    corners = band.get_paths()[0].vertices
    for level in (0.05, 0.1, 0.2):
        at = corners[np.isclose(corners[:, 0], level), 1]
        np.testing.assert_allclose(sorted(set(np.round(at, 9))), [level - 0.01, level + 0.02])
    np.testing.assert_allclose(band.get_facecolor()[0][:3], to_rgb(ax.get_lines()[0].get_color()))
    notes = [t.get_text() for t in ax.figure.texts]
    assert notes == ["level 0 is the unperturbed reference: add 0 to model.level to plot it"]
    rows.append(job("jitter", 0.0, intervals={"fgd": [0.0, 0.0]}))
    ax = write_sweep_plots(rows, tmp_path)[tmp_path / "sweep_fgd.png"].axes[0]
    assert ax.get_lines()[0].get_xdata()[0] == 0.0 and not ax.figure.texts


def test_no_plot_without_a_swept_number(tmp_path):
    rows = [job(k, 0.1) for k in KINDS]  # only the kind (a string) differs
    assert write_sweep_plots(rows, tmp_path) == {}
    models = [  # -m model=mean_pose,random_clip: only random_clip has a (numeric) seed
        {"status": "ok", "metrics": {"fgd": 1.0}, "config": {"model": {"name": "mean_pose"}}},
        {"status": "ok", "metrics": {"fgd": 2.0}, "config": {"model": {"seed": 0}}},
    ]
    assert write_sweep_plots(models, tmp_path) == {}
    assert not list(tmp_path.glob("*.png"))


def test_the_sweep_callback_writes_the_plots_beside_its_own_summary(tmp_path, monkeypatch):
    monkeypatch.setenv("GESTUREBENCH_SWEEP_ID", "unset")
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}})
    callback = SweepSummaryCallback()
    callback.on_multirun_start(config)
    for level in LEVELS:
        folder = tmp_path / f"model.level={level}"
        folder.mkdir()
        doc = job("jitter", level, sweep_id=callback.sweep_id)
        (folder / "results.json").write_text(json.dumps(doc))
    callback.on_multirun_end(config)
    (own,) = (tmp_path / "sweeps").iterdir()
    assert (own / "summary.md").is_file()
    assert (own / "sweep_fgd.png").read_bytes()[:4] == b"\x89PNG"
