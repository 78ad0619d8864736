"""The GENEA Leaderboard parity fixture (tests/fixtures/genea_official.json) and the motions it was
computed on, rebuilt from the real BEAT2 sample."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion
from gesturebench.metrics.pair import MotionPair

GENEA = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "genea_official.json").read_text()
)


def genea_motions(sample_dir: Path) -> tuple[Motion, dict[str, Motion]]:
    """The sample's motion and the fixture's generated motions: ``rolled`` (along time) and
    ``perturbed`` (seeded Gaussian noise on every pose value)."""
    from gesturebench.data.beat2 import read_motion_npz

    motion = read_motion_npz(sample_dir / "2_scott_0_1_1.npz")
    roll = GENEA["roll_frames"]
    rolled = dataclasses.replace(
        motion,
        **{k: np.roll(getattr(motion, k), roll, 0) for k in ("poses", "trans", "expressions")},
    )
    noise = np.random.default_rng(GENEA["noise_seed"]).normal(
        scale=GENEA["noise_scale"], size=motion.poses.shape
    )
    perturbed = dataclasses.replace(motion, poses=motion.poses.astype(np.float64) + noise)
    return motion, {"rolled": rolled, "perturbed": perturbed}


def pose_pair(
    index: int, generated: Motion, reference: Motion, sem: list | None = None
) -> MotionPair:
    """A pair for metrics that read the poses only or rerun the body model: its bodies are empty
    placeholders."""
    still = BodyOutput(torch.zeros(0, 55, 3), None)
    return MotionPair(index, f"s{index}", generated, reference, still, still, sem=sem)


def genea_pairs(sample_dir: Path, tmp_path: Path, sem: list | None = None) -> tuple[Any, list]:
    """A context with the default body model, and the fixture's (rolled, reference) pair."""
    from gesturebench.body.model import BodyModel
    from gesturebench.metrics.context import MetricContext

    reference, generated = genea_motions(sample_dir)
    context = MetricContext("beat2", lambda s: [], tmp_path, tmp_path, BodyModel())
    return context, [pose_pair(0, generated["rolled"], reference, sem)]
