"""`EmageSource` (``model=emage model/source=native``, the default): EMAGE's released generator run
inside gesturebench, as its test-set path (``train_emage_audio.py``'s ``inference_fn``) runs it: the
sequence's 16 kHz speech, seeded with the reference's first frames (6D joints, translation, foot
contact), translation integrated from the reference's first frame. Its result files are kept in the
generated-motion cache like a command's: re-scoring never re-runs EMAGE."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from gesturebench.assets.table import EMAGE_TAG, Need, Table
from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.encoders.representation import rotation_6d
from gesturebench.models.emage.codecs import BodyCodec
from gesturebench.models.emage.generator import EmageGenerator
from gesturebench.models.emage.inference import generate
from gesturebench.models.emage.release import RELEASE, load_release
from gesturebench.models.sources.native import NativeSource

if TYPE_CHECKING:
    from gesturebench.metrics.base import GestureMetric

#: SMPL-X joints whose speed gives the foot contact (left/right ankle, left/right foot), and the
#: per-frame displacement (m) below which a joint is in contact — BEAT2's ``footcontact/`` files as
#: PantoMatrix's ``datasets/foot_contact.py`` computes them
CONTACT_JOINTS = (7, 8, 10, 11)
CONTACT_STEP = 0.01
#: what EMAGE takes from the reference (results.json ``model_info``)
FROM_REFERENCE = {
    "seed_frames": "the first seed_frames frames of poses (as 6D), trans and foot contact "
    "(from the reference's joints) condition the first window",
    "trans": "x and z start at the reference's first frame (y is generated)",
    "betas": "reference (body shape is not generated)",
}


def foot_contact(joints: torch.Tensor) -> torch.Tensor:
    """(T, 55, 3) joints → (T, 4) 1.0 where a `CONTACT_JOINTS` joint moves less than
    `CONTACT_STEP` to the next frame (the last frame counts as still)."""
    feet = joints[:, list(CONTACT_JOINTS)]
    step = torch.zeros(feet.shape[:2], dtype=feet.dtype, device=feet.device)
    step[:-1] = (feet[1:] - feet[:-1]).norm(dim=-1)
    return (step < CONTACT_STEP).to(feet.dtype)


class EmageSource(NativeSource):
    """EMAGE's weights (`RELEASE`, in the Hugging Face layout), run in eval mode in float32;
    generation is deterministic (argmax over codes)."""

    files = RELEASE

    @classmethod
    def public_assets(cls, options: Mapping[str, Any], table: Table, beat2: bool) -> list[Need]:
        """The released files, unless `weights` points at the user's own."""
        return [] if options.get("weights") else [(a, None) for a in table.needed_by(EMAGE_TAG)]

    def load(self) -> tuple[EmageGenerator, BodyCodec]:
        return load_release(self.weights, self.run_device)

    def seed_motion(self, record: SequenceRecord, frames: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The reference's first `frames` frames as EMAGE's motion input (1, frames, 337: 6D joints,
        translation, foot contact) and its first translation (1, 3)."""
        if self.body_model is None:
            raise RuntimeError(f"model={self.name}: prepare(context) must run before generate()")
        reference = record.motion
        joints = self.body_model(reference.frames(0, frames + 1), vertices=False).joints
        contact = foot_contact(joints.to(self.run_device, torch.float32))[:frames]
        poses = torch.as_tensor(reference.poses[:frames], device=self.run_device)
        trans = torch.as_tensor(reference.trans[:frames], device=self.run_device)
        rot = rotation_6d(poses.reshape(frames, -1, 3)).reshape(frames, -1)
        return torch.cat([rot, trans, contact], dim=-1)[None], trans[:1]

    def produce(self, record: SequenceRecord, work: Path) -> None:
        wave = self.needs_audio(record)
        generator, codec = self.nets()
        seed, start = self.seed_motion(record, generator.cfg.seed_frames)
        audio = torch.as_tensor(wave, device=self.run_device)[None]
        with self.bar(record) as on_window:
            out = generate(
                generator, codec, audio, seed=seed, start_trans=start, on_window=on_window
            )
        motion = Motion(
            poses=out["poses"][0].cpu().numpy(),
            trans=out["trans"][0].cpu().numpy(),
            betas=record.motion.betas,
            expressions=out["expressions"][0].cpu().numpy(),
        )
        self.save(motion, record, work)

    def where(self) -> dict[str, Any]:
        return {**super().where(), "from_reference": FROM_REFERENCE}

    def skip_notes(self, metrics: Iterable[GestureMetric]) -> dict[str, str]:
        """The base's notes, plus one for the values translation enters: its start is the
        reference's."""
        metrics = list(metrics)
        notes = super().skip_notes(metrics)
        for metric in metrics:
            for value in metric.values_reading("trans"):
                notes.setdefault(
                    value,
                    f"{self.title} starts its translation at the reference's first frame (x, z) "
                    f"and is seeded with the reference's first frames (model_info.from_reference)",
                )
        return notes
