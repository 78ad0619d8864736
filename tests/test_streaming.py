"""Evaluation streams (ISSUE scale): a sequence's body outputs (joints and vertices) are freed before the next
sequence is scored, so peak memory follows the longest sequence, not the size of the split."""

from __future__ import annotations

import gc

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from gesturebench.body.output import BodyOutput
from gesturebench.config import register_configs, repo_root
from gesturebench.data.datamodule import open_dataset
from gesturebench.evaluator import Evaluator
from gesturebench.tasks import evaluate


def live_body_outputs() -> int:
    gc.collect()
    return sum(type(o) is BodyOutput for o in gc.get_objects())


def test_no_body_output_outlives_its_sequence(tmp_path, monkeypatch):
    register_configs()
    overrides = ["model=perturbed", "metrics=fast", "logger=none", "task.render_clips=0", "dataset.max_sequences=2",
                 "trainer.enable_progress_bar=false", f"paths.cache={tmp_path / 'cache'}",
                 "+metrics.chamfer={_target_: gesturebench.metrics.surface.Chamfer, name: chamfer, num_points: 50}"]
    with initialize_config_dir(config_dir=str(repo_root() / "conf"), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    before_each_step = []
    test_step = Evaluator.test_step

    def counting_step(self, record, batch_idx):
        before_each_step.append(live_body_outputs())
        return test_step(self, record, batch_idx)

    monkeypatch.setattr(Evaluator, "test_step", counting_step)
    config = OmegaConf.to_container(cfg, resolve=True)
    res = evaluate.score(cfg, open_dataset(cfg.dataset), tmp_path / "run", config, "test")
    assert len(res["per_sequence"]) == 2 and all(row["chamfer"] > 0 for row in res["per_sequence"])
    assert before_each_step == [0, 0]  # nothing of the previous sequence is still held
    assert live_body_outputs() == 0
