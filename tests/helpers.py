"""Plain helpers shared by the test modules (fixtures live in `conftest.py`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.pair import MotionPair
from gesturebench.run.config import register_configs

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"
#: the config groups of conf/ that a run chooses an option of
CONFIG_GROUPS = (
    "task",
    "dataset",
    "model",
    "metrics",
    "body_model",
    "encoder",
    "annotator",
    "study",
    "trainer",
    "stats",
    "logger",
)


def composed(*overrides: str, hydra: bool = False) -> DictConfig:
    """The project's config composed with `overrides`, as `launch.py` would (not resolved);
    `hydra`: with its `hydra` node, for running a job."""
    register_configs()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides), return_hydra_config=hydra)


def zero_motion(n_frames: int, fps: int = 30) -> Motion:
    """A motionless all-zero SMPL-X motion: for pairs whose metrics read only the body output."""
    return Motion(
        np.zeros((n_frames, 165)),
        np.zeros((n_frames, 3)),
        np.zeros(300),
        np.zeros((n_frames, 100)),
        fps=fps,
    )


def body_pair(
    index: int,
    gen: BodyOutput | torch.Tensor,
    ref: BodyOutput | torch.Tensor,
    generated: Motion | None = None,
    reference: Motion | None = None,
    **inputs,
) -> MotionPair:
    """A `MotionPair` from body outputs (or bare joint tensors); the motions default to zero motion
    of the same length, `inputs` are the pair's optional fields (audio, words, sem, ...)."""
    gen = gen if isinstance(gen, BodyOutput) else BodyOutput(gen, None)
    ref = ref if isinstance(ref, BodyOutput) else BodyOutput(ref, None)
    fps = inputs.pop("fps", 30)
    motion = zero_motion(int(gen.joints.shape[0]), fps)
    return MotionPair(
        index, f"seq{index}", generated or motion, reference or motion, gen, ref, **inputs
    )


def toy_context(checkpoints_dir: Path, auto_train: bool = False) -> MetricContext:
    """A context for preparing learned metrics from a checkpoint folder, with no data and no body
    model (checkpoints of dataset "toy")."""
    return MetricContext(
        dataset_name="toy",
        split=lambda s: [],
        cache_dir=checkpoints_dir,
        checkpoints_dir=checkpoints_dir,
        body_model=None,
        auto_train=auto_train,
    )
