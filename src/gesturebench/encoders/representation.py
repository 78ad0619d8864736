"""Per-frame motion representation and its windows: what the motion autoencoder and `fgd_raw_pose`
see.

A frame is the 55 SMPL-X joint rotations (global orientation included) as 6D rotations — the first
two rows of each rotation matrix, flattened row-major (pytorch3d's `matrix_to_rotation_6d` layout) —
followed by the root velocity in metres per second (frame differences of `trans` times fps; the
first frame repeats the second's). The root position itself is dropped, which makes the
representation root-relative.
"""

from __future__ import annotations

import torch
from smplx.lbs import batch_rodrigues

from gesturebench.data.records import N_JOINTS, Motion

ROT_DIM = 6
REP_DIM = N_JOINTS * ROT_DIM + 3


def rotation_6d(axis_angle: torch.Tensor) -> torch.Tensor:
    """Axis-angle (..., 3) → 6D rotation (..., 6): the first two rows of the rotation matrix."""
    mats = batch_rodrigues(axis_angle.reshape(-1, 3)).reshape(*axis_angle.shape[:-1], 3, 3)
    return mats[..., :2, :].flatten(-2)


def root_velocity(trans: torch.Tensor, fps: float) -> torch.Tensor:
    """(T, 3) positions → (T, 3) velocities in m/s; frame 0 repeats frame 1's (zeros for a single
    frame)."""
    if trans.shape[0] < 2:
        return torch.zeros_like(trans)
    vel = torch.diff(trans, dim=0) * fps
    return torch.cat([vel[:1], vel])


def motion_representation(motion: Motion, device: torch.device | str | None = None) -> torch.Tensor:
    """The (T, REP_DIM) float32 representation of a motion, on `device`."""
    poses = torch.as_tensor(motion.poses, dtype=torch.float32, device=device)
    trans = torch.as_tensor(motion.trans, dtype=torch.float32, device=device)
    rot = rotation_6d(poses.reshape(-1, N_JOINTS, 3)).reshape(-1, N_JOINTS * ROT_DIM)
    return torch.cat([rot, root_velocity(trans, motion.fps)], dim=1)


def sliding_windows(rep: torch.Tensor, window: int, hop: int) -> torch.Tensor:
    """(T, D) → (W, window, D): every full window starting at 0, hop, 2·hop, …; frames after the
    last full window are dropped. A sequence shorter than one window is padded by repeating its last
    frame into a single window, so every non-empty sequence contributes at least one window."""
    n = rep.shape[0]
    if n == 0:
        return rep.new_zeros((0, window, rep.shape[1]))
    if n < window:
        rep = torch.cat([rep, rep[-1:].expand(window - n, -1)])
    return rep.unfold(0, window, hop).transpose(1, 2)
