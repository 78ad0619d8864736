"""FD_k: Fréchet distance between reference and generated frame-to-frame pose differences within
each sequence (T − 1 per sequence), the GENEA Leaderboard's (docs/protocols.md)."""

from __future__ import annotations

import numpy as np
import torch

from gesturebench.metrics.fd_g import PoseFrechet


class PoseDifferenceFrechet(PoseFrechet):
    """FD_k ↓: `PoseFrechet` on the differences between consecutive pose frames of each
    sequence."""

    default_name = "fd_k"

    def frames(self, poses: np.ndarray) -> torch.Tensor:
        return torch.diff(super().frames(poses), dim=0)
