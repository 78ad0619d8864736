"""EMAGE's generation over a whole recording, as its release does it: windows of `pose_length`
frames that overlap by `seed_frames`; each window sees only its first `seed_frames` frames of
motion (the seed, then the decoded end of the previous window) and the matching speech; its last
`seed_frames` outputs are dropped, except in a final shorter window that takes the rest. The codes
of all windows are decoded once at the end, translation integrated from `start_trans`."""

from __future__ import annotations

from collections.abc import Callable

import torch

from gesturebench.data.records import N_JOINTS
from gesturebench.models.emage.codecs import BodyCodec
from gesturebench.models.emage.generator import MOTION_DIM, EmageGenerator
from gesturebench.runtime.errors import DataError

PARTS = ("face", "upper", "hands", "lower")


def part_codes(cfg: object, out: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Per body part, what the release decodes: the argmax code where its ``c*`` weight is positive,
    else the regressed latent (snapped to the nearest code by `MotionVQ.decode`)."""
    codes = {}
    for part in PARTS:
        if getattr(cfg, "c" + part[0]) > 0:
            codes[part] = out[f"cls_{part}"].argmax(-1)
        elif getattr(cfg, "l" + part[0]) > 0:
            codes[part] = out[f"rec_{part}"]
        else:
            raise ValueError(f"EMAGE config decodes no {part} (c{part[0]} = l{part[0]} = 0)")
    return codes


def rest_motion(batch: int, frames: int, like: torch.Tensor) -> torch.Tensor:
    """(batch, frames, MOTION_DIM): every joint at zero rotation (6D 1,0,0,0,1,0), no translation
    or contact — the seed when none is given."""
    rot = like.new_tensor([1.0, 0, 0, 0, 1, 0]).repeat(N_JOINTS)
    return torch.cat([rot, like.new_zeros(MOTION_DIM - rot.numel())]).expand(batch, frames, -1)


@torch.no_grad()
def window_outputs(
    generator: EmageGenerator,
    codec: BodyCodec,
    audio: torch.Tensor,
    seed: torch.Tensor | None = None,
    on_window: Callable[[int, int], None] | None = None,
) -> dict[str, torch.Tensor]:
    """The generator's ``rec_*`` latents and ``cls_*`` logits over the whole of `audio` (B, S) at
    16 kHz, window by window; `seed` (B, seed_frames, MOTION_DIM) holds the first frames' 6D joints,
    translation and foot contact (None: `rest_motion`). T is the audio's frame count, less the last
    ≤ seed_frames frames when they do not fill a final window. `on_window(done, total)` reports
    progress."""
    cfg = generator.cfg
    window, n_seed = cfg.pose_length, cfg.seed_frames
    hop, samples = window - n_seed, cfg.audio_sr // cfg.pose_fps
    batch, frames = audio.shape[0], audio.shape[1] * cfg.pose_fps // cfg.audio_sr
    rounds, remain = divmod(frames - n_seed, hop)
    spans = [(i * hop, window) for i in range(rounds)]
    if remain > n_seed:
        spans.append((rounds * hop, n_seed + remain))
    if not spans:
        raise DataError(
            "audio", f"{frames} frames of speech are too few for EMAGE (needs > {2 * n_seed})"
        )
    last = rest_motion(batch, n_seed, audio) if seed is None else seed.to(audio)
    speaker = torch.zeros(batch, 1, dtype=torch.long, device=audio.device)
    kept: dict[str, list[torch.Tensor]] = {}
    for i, (start, length) in enumerate(spans):
        motion = torch.cat([last, rest_motion(batch, length - n_seed, audio)], dim=1)
        mask = torch.ones_like(motion)
        mask[:, :n_seed] = 0
        clip = audio[:, start * samples : (start + length) * samples]
        out = generator(clip, motion, mask, speaker)
        final = i == len(spans) - 1 and length < window
        for key, value in out.items():
            kept.setdefault(key, []).append(value if final else value[:, :-n_seed])
        if not final:
            last = codec.decode(**part_codes(cfg, out))["motion"][:, -n_seed:]
        if on_window:
            on_window(i + 1, len(spans))
    return {key: torch.cat(values, dim=1) for key, values in kept.items()}


@torch.no_grad()
def generate(
    generator: EmageGenerator,
    codec: BodyCodec,
    audio: torch.Tensor,
    seed: torch.Tensor | None = None,
    start_trans: torch.Tensor | None = None,
    on_window: Callable[[int, int], None] | None = None,
) -> dict[str, torch.Tensor]:
    """`window_outputs` decoded: ``poses`` (B, T, 165) axis-angle, ``expressions`` (B, T, 100),
    ``trans`` (B, T, 3) at 30 fps, starting at `start_trans` (B, 3; None: the origin)."""
    whole = window_outputs(generator, codec, audio, seed, on_window)
    if start_trans is None:
        start_trans = audio.new_zeros(audio.shape[0], 3)
    decoded = codec.decode(**part_codes(generator.cfg, whole), start_trans=start_trans.to(audio))
    return {k: decoded[k] for k in ("poses", "expressions", "trans")}
