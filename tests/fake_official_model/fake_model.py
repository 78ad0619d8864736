"""A stand-in for a published model's test script: numpy, scipy and soundfile only, nothing from
gesturebench.

It reads a BEAT2-layout folder (the reference motion for seed frames and copied fields, the speech
audio) and writes one result file per sequence in the format a given official code base writes. Its
"generation" is deterministic: the reference with the arms swinging by the speech energy, the jaw
opening with it, the eyes wandering, the root swaying and a damped face, so that every harness
source (outputs, command, module) must reproduce exactly the same motion.

    # one sequence
    python fake_model.py --split-dir DIR --id ID --out OUT [--format F] [--fault F] [--counter FILE]
    # a whole split
    python fake_model.py --split-dir DIR --split test --out OUT [--format F]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.spatial.transform import Rotation

FPS = 30
ARM_CHANNELS = np.arange(3 * 16, 3 * 22)  # shoulders, elbows, wrists
FORMATS = ("beat2", "emage_test", "emage_audio", "rot6d", "joints52", "smplx")
FILE_NAMES = {"emage_test": "res_{id}.npz", "emage_audio": "{id}_output.npz"}
SMPLX_PARTS = {
    "global_orient": (0, 1),
    "body_pose": (1, 22),
    "jaw_pose": (22, 23),
    "leye_pose": (23, 24),
    "reye_pose": (24, 25),
    "left_hand_pose": (25, 40),
    "right_hand_pose": (40, 55),
}


def frame_energy(audio: np.ndarray | None, n_frames: int, sample_rate: int) -> np.ndarray:
    """RMS of the audio in each motion frame, scaled to a maximum of 1 (zeros without audio)."""
    if audio is None or len(audio) == 0:
        return np.zeros(n_frames)
    hop = sample_rate // FPS
    padded = np.pad(np.asarray(audio, np.float64), (0, max(0, n_frames * hop - len(audio))))[
        : n_frames * hop
    ]
    rms = np.sqrt((padded.reshape(n_frames, hop) ** 2).mean(axis=1))
    return rms / max(rms.max(), 1e-12)


def fake_gesture(batch: dict, gain: float = 0.3) -> dict[str, np.ndarray]:
    """The fake model's motion (BEAT2 arrays, float32) from a batch: reference arrays, audio, sample
    rate."""
    poses = np.array(batch["poses"], dtype=np.float64)
    n = len(poses)
    t = np.arange(n) / FPS
    energy = frame_energy(batch.get("audio"), n, batch.get("sample_rate", 16000))
    phase = np.linspace(0, np.pi, ARM_CHANNELS.size)
    poses[:, ARM_CHANNELS] += gain * energy[:, None] * np.sin(2 * np.pi * 0.7 * t[:, None] + phase)
    poses[:, 66] += 0.02 + 0.1 * energy  # the jaw opens with speech
    poses[:, 69:75] += 0.02 * np.sin(2 * np.pi * 0.3 * t)[:, None]  # the eyes wander
    trans = np.array(batch["trans"], dtype=np.float64)
    trans[:, 0] += 0.05 * np.sin(2 * np.pi * 0.2 * t)
    expressions = 0.5 * np.asarray(batch["expressions"], dtype=np.float64)
    return {
        "poses": poses.astype(np.float32),
        "trans": trans.astype(np.float32),
        "expressions": expressions.astype(np.float32),
        "betas": np.asarray(batch["betas"], np.float32),
    }


def rotation_6d(axis_angle: np.ndarray) -> np.ndarray:
    """(…, 3) axis-angle → (…, 6): the first two rows of the rotation matrix (pytorch3d's
    layout)."""
    mats = Rotation.from_rotvec(axis_angle.reshape(-1, 3)).as_matrix()
    return mats[:, :2, :].reshape(*axis_angle.shape[:-1], 6)


def smplx_parts(poses: np.ndarray) -> dict[str, np.ndarray]:
    """(T,165) axis-angle → the SMPL-X forward arguments of the `smplx` package."""
    joints = poses.reshape(len(poses), 55, 3)
    return {name: joints[:, a:b].reshape(len(poses), -1) for name, (a, b) in SMPLX_PARTS.items()}


def result_file(folder: Path, sequence_id: str, fmt: str) -> Path:
    return folder / FILE_NAMES.get(fmt, "{id}.npz").format(id=sequence_id)


def write_result(folder: Path, sequence_id: str, motion: dict, reference: dict, fmt: str) -> Path:
    """Write `motion` the way the code base `fmt` stands for does."""
    folder.mkdir(parents=True, exist_ok=True)
    path = result_file(folder, sequence_id, fmt)
    n = len(motion["poses"])
    meta = {"model": "smplx2020", "gender": "neutral", "mocap_frame_rate": 30}
    if fmt in ("beat2", "emage_test"):
        arrays = {**motion, **meta}
        if fmt == "emage_test":  # EMAGE-style test scripts write the reference beside the result
            np.savez(folder / f"gt_{sequence_id}.npz", **reference, **meta)
    elif fmt == "emage_audio":  # test_emage_audio.py: beat_format_save with zero betas
        arrays = {**motion, "betas": np.zeros(300, np.float32), **meta}
    elif (
        fmt == "rot6d"
    ):  # GestureLSM-style network output: 6D, a batch axis, no frame rate, the reference too
        arrays = {
            "rec_pose": rotation_6d(motion["poses"].reshape(n, 55, 3)).reshape(1, n, 330),
            "tar_pose": rotation_6d(reference["poses"].reshape(-1, 55, 3)).reshape(1, -1, 330),
            "rec_trans": motion["trans"][None],
            "rec_exps": motion["expressions"][None],
        }
    elif fmt == "joints52":  # body and hands only: no jaw, eyes or face
        joints = motion["poses"].reshape(n, 55, 3)
        arrays = {
            "pred_pose": np.concatenate([joints[:, :22], joints[:, 25:]], axis=1),
            "transl": motion["trans"],
        }
    elif fmt == "smplx":
        arrays = {
            **smplx_parts(motion["poses"]),
            "transl": motion["trans"],
            "expression": motion["expressions"],
            "betas": motion["betas"],
        }
    else:
        raise ValueError(f"unknown format {fmt!r}; one of {FORMATS}")
    np.savez(path, **arrays)
    return path


def read_batch(split_dir: Path, sequence_id: str) -> tuple[dict, dict]:
    """The batch (reference arrays + audio) of a sequence of a BEAT2 folder, and the reference
    arrays."""
    with np.load(split_dir / "smplxflame_30" / f"{sequence_id}.npz") as f:
        reference = {k: f[k] for k in ("poses", "trans", "expressions", "betas")}
    wav = split_dir / "wave16k" / f"{sequence_id}.wav"
    audio, sr = sf.read(wav, dtype="float32") if wav.is_file() else (None, 16000)
    return {**reference, "audio": audio, "sample_rate": sr}, reference


def split_ids(split_dir: Path, split: str) -> list[str]:
    rows = [
        line.split(",") for line in (split_dir / "train_test_split.csv").read_text().split()[1:]
    ]
    return [sid for sid, kind in rows if kind == split]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--split-dir", type=Path, required=True)
    p.add_argument("--id", help="one sequence (else every sequence of --split)")
    p.add_argument("--split", default="test")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--format", choices=FORMATS, default="beat2")
    p.add_argument("--gain", type=float, default=0.3)
    p.add_argument("--fault", choices=("none", "fail", "hang", "truncate"), default="none")
    p.add_argument("--counter", type=Path, help="append one line per run (to count runs)")
    args = p.parse_args(argv)
    if args.counter:
        with open(args.counter, "a") as f:
            f.write(f"{args.id or args.split}\n")
    if args.fault == "fail":
        sys.exit("RuntimeError: CUDA out of memory (fake failure for the test)")
    if args.fault == "hang":
        time.sleep(600)
    for sequence_id in [args.id] if args.id else split_ids(args.split_dir, args.split):
        batch, reference = read_batch(args.split_dir, sequence_id)
        path = write_result(
            args.out, sequence_id, fake_gesture(batch, args.gain), reference, args.format
        )
        if args.fault == "truncate":
            data = path.read_bytes()
            path.write_bytes(data[: len(data) // 2])
    print(f"fake model: wrote {args.format} results into {args.out}")


if __name__ == "__main__":
    main()
