"""FGD, Density and Coverage on a tiny motion autoencoder (untrained, seeded, fixed
normalisation): its checkpoint, the three metrics built for it, and the pairs they score (the
bodies are never read)."""

from __future__ import annotations

import dataclasses

import torch

from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion
from gesturebench.encoders.checkpoint import motion_ae_path, save_motion_ae
from gesturebench.encoders.motion_ae import MotionAutoencoder
from gesturebench.encoders.motion_ae_training import MotionAEConfig
from gesturebench.metrics.coverage import Coverage
from gesturebench.metrics.density import Density
from gesturebench.metrics.fgd import FGD
from gesturebench.metrics.pair import MotionPair

TINY = dataclasses.asdict(MotionAEConfig(hidden_dim=16, latent_dim=8, window=32, hop=16))


ENCODER_CONFIG = {"hidden_dim": 16, "latent_dim": 8}


def tiny_checkpoint(checkpoints_dir) -> str:
    torch.manual_seed(0)
    module = MotionAutoencoder(hidden_dim=16, latent_dim=8)
    module.set_normalisation(torch.zeros(333), torch.full((333,), 0.5))
    return save_motion_ae(module, motion_ae_path(checkpoints_dir, "toy"), TINY, {})


def pair(i: int, generated: Motion, reference: Motion) -> MotionPair:
    body = BodyOutput(torch.zeros(reference.n_frames, 55, 3), None)
    return MotionPair(i, f"s{i}", generated, reference, body, body)


def make_metrics() -> dict:
    return {
        "fgd": FGD(encoder_config=ENCODER_CONFIG),
        "density": Density(encoder_config=ENCODER_CONFIG),
        "coverage": Coverage(encoder_config=ENCODER_CONFIG),
    }
