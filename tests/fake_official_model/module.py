"""The fake model as importable Python objects: what `source=module` and a user's own model class
look like.

- `FakeGestureModule`: a LightningModule whose weight (`gain`) must come from a checkpoint; returns
  SMPL-X forward arguments as tensors on the batch's `device` (the `smplx` package's names).
- `generate(batch)`: a plain function of the dict batch (no weights), returning BEAT2 arrays.
- `generate_from_record(record)`: a function of the `SequenceRecord`, returning a `Motion`.
- `FakeGestureModel`: a user's own `GestureModel` subclass, used through ``_target_`` in a YAML of
  their own.
"""

from __future__ import annotations

import pytorch_lightning as pl
import torch

from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.models.base import GestureModel
from gesturebench.models.batch import record_batch
from tests.fake_official_model.fake_model import fake_gesture, smplx_parts


class FakeGestureModule(pl.LightningModule):
    """Untrained, `gain` is 0 (the reference itself): only loaded weights make it move."""

    def __init__(self):
        super().__init__()
        self.gain = torch.nn.Parameter(torch.zeros(()))

    def predict_step(self, batch: dict, batch_idx: int = 0) -> dict[str, torch.Tensor]:
        motion = fake_gesture(batch, float(self.gain))
        out = {
            **smplx_parts(motion["poses"]),
            "transl": motion["trans"],
            "expression": motion["expressions"],
        }
        assert batch["device"] == self.gain.device, (
            "the batch names the device the module's parameters are on"
        )
        return {k: torch.as_tensor(v, device=batch["device"]) for k, v in out.items()}


def generate(batch: dict) -> dict:
    return fake_gesture(batch)


def generate_from_record(record: SequenceRecord) -> Motion:
    return Motion(**fake_gesture(record_batch(record)))


class FakeGestureModel(GestureModel):
    """A model class of the user's own: `generate(record) -> Motion` is all it implements."""

    def __init__(self, name: str = "my_model", gain: float = 0.3):
        super().__init__(name, gain=gain)
        self.gain = gain

    def generate(self, record: SequenceRecord) -> Motion:
        return Motion(**fake_gesture(record_batch(record), self.gain))
