"""The evaluation loop's work per sequence (ISSUE scale): a sequence's body outputs (joints and
vertices) are freed before the next one is scored, so peak memory follows the longest sequence, not
the size of the split; and SMPL-X runs once per distinct motion."""

from __future__ import annotations

import gc

import pytest

from gesturebench.body.model import BodyModel
from gesturebench.body.output import BodyOutput
from gesturebench.run.evaluator import Evaluator
from gesturebench.tasks import evaluate
from gesturebench.tasks.job import Job
from gesturebench.tasks.run import Run


def live_body_outputs() -> int:
    gc.collect()
    return sum(type(o) is BodyOutput for o in gc.get_objects())


@pytest.fixture
def small(config, tmp_path):
    """A two-sequence evaluation with the cheap metrics and a cache of its own, and `overrides`."""
    return lambda *overrides: config(
        "metrics=fast",
        "logger=none",
        "task.render_clips=0",
        "dataset.max_sequences=2",
        "trainer.enable_progress_bar=false",
        f"paths.cache={tmp_path / 'cache'}",
        *overrides,
    )


def scored(cfg, tmp_path) -> dict:
    run = Run.of(cfg, Job())
    return evaluate.score(run, run.dataset.open(), tmp_path / "run", run.config, "test")


@pytest.mark.slow  # a whole evaluation with every metric: about 20 s
def test_no_body_output_outlives_its_sequence(small, tmp_path, monkeypatch):
    cfg = small(
        "model=perturbed",
        "+metrics.chamfer={_target_: gesturebench.metrics.chamfer.Chamfer, name: chamfer,"
        " num_points: 50}",
    )
    before_each_step = []
    test_step = Evaluator.test_step

    def counting_step(self, record, batch_idx):
        before_each_step.append(live_body_outputs())
        return test_step(self, record, batch_idx)

    monkeypatch.setattr(Evaluator, "test_step", counting_step)
    res = scored(cfg, tmp_path)
    assert len(res["per_sequence"]) == 2 and all(row["chamfer"] > 0 for row in res["per_sequence"])
    assert before_each_step == [0, 0]  # nothing of the previous sequence is still held
    assert live_body_outputs() == 0


@pytest.mark.parametrize("model,forwards", [("ground_truth", 2), ("perturbed", 4)])
def test_one_smplx_forward_per_distinct_motion(small, tmp_path, monkeypatch, model, forwards):
    calls = []
    forward = BodyModel.forward
    monkeypatch.setattr(
        BodyModel,
        "forward",
        lambda self, motion, **kw: calls.append(1) or forward(self, motion, **kw),
    )
    res = scored(small(f"model={model}"), tmp_path)
    assert (
        len(res["per_sequence"]) == 2 and len(calls) == forwards
    )  # 2 sequences: reference (and generated)
    assert (res["metrics"]["mjd"] == 0.0) == (model == "ground_truth")
