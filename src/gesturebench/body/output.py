"""The result of one SMPL-X forward, shared by all metrics of a sequence."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class BodyOutput:
    """Global joints (T,55,3) and vertices (T,V,3) in metres, y up; `vertices` is None when not
    requested."""

    joints: torch.Tensor
    vertices: torch.Tensor | None

    def root_aligned_joints(self) -> torch.Tensor:
        """Joints with the pelvis of each frame moved to the origin (global orientation kept)."""
        return self.joints - self.joints[:, :1]

    def root_aligned_vertices(self) -> torch.Tensor:
        if self.vertices is None:
            raise ValueError("vertices were not computed for this sequence")
        return self.vertices - self.joints[:, :1]

    def frames(self, start: int, stop: int) -> BodyOutput:
        return BodyOutput(
            self.joints[start:stop], None if self.vertices is None else self.vertices[start:stop]
        )
