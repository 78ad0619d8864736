"""Config composition: every group option composes against the structured schema; typos fail at
once."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from gesturebench.config import register_configs, repo_root

CONF = repo_root() / "conf"


def composed(overrides=()):
    register_configs()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def test_default_config_composes_and_resolves():
    cfg = composed()
    assert cfg.task.name == "evaluate"
    assert cfg.dataset.name == "mini_beat2"
    assert cfg.model._target_.endswith("GroundTruth")
    assert {"mjd", "pck"} <= set(cfg.metrics)
    assert Path(cfg.dataset.root).is_absolute()
    OmegaConf.to_container(cfg, resolve=True)


@pytest.mark.parametrize(
    "group", ["model", "metrics", "dataset", "trainer", "logger", "body_model", "task"]
)
def test_every_option_composes(group):
    for option in sorted(p.stem for p in (CONF / group).glob("*.yaml")):
        overrides = [f"{group}={option}"]
        if option in ("beat2", "beat2_speaker2"):
            overrides.append("dataset.root=/data/BEAT2")
        if option == "precomputed":
            overrides.append("model.dir=/tmp/outputs")
        cfg = composed(overrides)
        OmegaConf.to_container(cfg[group], resolve=True)


def test_typo_in_typed_group_fails_at_once():
    with pytest.raises(ConfigCompositionException, match="splt"):
        composed(["dataset.splt=test"])
    with pytest.raises(ConfigCompositionException, match="resum"):
        composed(["resum=false"])


def test_wrong_type_fails_at_once():
    with pytest.raises(ConfigCompositionException):
        composed(["max_length_gap=soon"])


def test_slurm_launcher_config_for_lightning():
    register_configs()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(
            config_name="config",
            overrides=["hydra/launcher=submitit_slurm", "hydra.launcher.gpus_per_node=4"],
            return_hydra_config=True,
        )
    launcher = cfg.hydra.launcher
    assert launcher._target_.endswith("SlurmLauncher")
    assert launcher.tasks_per_node == launcher.gpus_per_node == 4  # one Lightning process per GPU


def test_job_dirname_is_short_deterministic_and_distinct():
    from gesturebench.config import job_dirname

    assert job_dirname("model=emage") == "model=emage" and job_dirname("") == "default"
    long_a, long_b = "x" * 300 + "a", "x" * 300 + "b"
    assert len(job_dirname(long_a)) == 120 and job_dirname(long_a) == job_dirname(long_a)
    assert job_dirname(long_a) != job_dirname(long_b)
