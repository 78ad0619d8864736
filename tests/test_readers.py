"""The motion and audio readers' contracts (docs/faults.md, "Readers"): motion past its plausible
bounds is refused in one line naming the file (a reference) or the output (a model's), never
scored; audio without speech is skipped by the metrics of speech with its reason, the headline
computed over the other sequences. The runs go through `run_task` in the test process, as
`launch.py` runs them; one real `launch.py` process (slow) shows the exit status a user sees."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from gesturebench import api
from gesturebench.data.audio import load_audio, write_wav
from gesturebench.data.beat2 import AUDIO_DIR, MOTION_DIR, SPLIT_FILE, read_split_table
from gesturebench.metrics.bc import BeatConsistency
from gesturebench.models.formats import read_result
from gesturebench.runtime.errors import DataError
from tests.helpers import CONF, body_pair, zero_motion
from tests.launch import error_line, launch, stopped
from tests.support.outcomes import refusal

#: MJD alone: the metric the float32 cancellation of 1e30 values fooled (a value, or none, exit 0)
MJD = ("metrics=none", "+metrics.mjd._target_=gesturebench.metrics.mjd.MeanJointDistance")
#: BC alone, on mean joint speeds that give mini-BEAT2's sequences a BC near 0.9
BC = (
    "metrics=none",
    "+metrics.bc._target_=gesturebench.metrics.bc.BeatConsistency",
    f"+metrics.bc.mean_speed=[{','.join(['0.03'] * 55)}]",
)
HUGE = 1e30


def two_sequences(mini_beat2: Path, root: Path) -> list[str]:
    """A BEAT2 folder at `root` holding copies of mini-BEAT2's first two test sequences; their
    ids."""
    table = read_split_table(mini_beat2 / SPLIT_FILE)
    ids = list(table.loc[table["type"] == "test", "id"][:2])
    for folder in (MOTION_DIR, AUDIO_DIR):
        (root / folder).mkdir(parents=True)
        for sid in ids:
            name = f"{sid}.npz" if folder == MOTION_DIR else f"{sid}.wav"
            shutil.copy(mini_beat2 / folder / name, root / folder / name)
    table[table["id"].isin(ids)].to_csv(root / SPLIT_FILE, index=False)
    return ids


def shifted(path: Path, key: str, out: Path | None = None) -> Path:
    """The motion npz `path` with `HUGE` added to its `key` array, written to `out` (default: in
    place)."""
    arrays = dict(np.load(path, allow_pickle=False))
    arrays[key] = arrays[key] + HUGE
    out = out or path
    np.savez(out, **arrays)
    return out


def overrides(root: Path, tmp_path: Path, *extra: str) -> tuple[str, ...]:
    return (
        "dataset=beat2",
        f"dataset.root={root}",
        "logger=none",
        "task.render_clips=0",
        "stats.bootstrap=0",
        f"hydra.run.dir={tmp_path / 'run'}",
        *extra,
    )


def test_a_reference_past_the_bounds_is_one_line_naming_the_file(
    mini_beat2, tmp_path, in_process, capsys
):
    root = tmp_path / "two"
    first, _ = two_sequences(mini_beat2, root)
    path = shifted(root / MOTION_DIR / f"{first}.npz", "trans")
    line = error_line(stopped(capsys, *overrides(root, tmp_path, *MJD)))
    assert str(path) in line and "'trans' has a translation of 1e+30 m" in line


def test_a_result_file_past_the_bounds_is_refused_not_scored(
    mini_beat2, tmp_path, in_process, capsys
):
    # before: poses +1e30 left MJD unscored ("no finite value"), trans +1e30 gave MJD 0.39
    # (float32 cancellation; the distance is 1e30), both with exit 0 and no caveat
    root, out = tmp_path / "two", tmp_path / "out"
    out.mkdir()
    ids = two_sequences(mini_beat2, root)
    files = [shifted(root / MOTION_DIR / f"{s}.npz", "poses", out / f"{s}.npz") for s in ids]
    run = overrides(root, tmp_path, *MJD, "model=precomputed", f"model.dir={out}")
    stop = stopped(capsys, *run)
    assert refusal(stop.code, stop.err) is None
    assert all(str(f) in stop.err for f in files) and "nothing was scored" in stop.err
    assert "'poses' has a rotation of |θ| = 1.73e+30 rad" in stop.err
    assert not (tmp_path / "run" / "results.json").exists()


def test_generated_motion_past_the_bounds_is_refused_naming_model_and_sequence(
    mini_beat2, tmp_path, in_process, capsys
):
    root = tmp_path / "two"
    first, _ = two_sequences(mini_beat2, root)
    model = ("model=perturbed", "model/perturbation=jitter", f"model.level={HUGE}")
    run = overrides(root, tmp_path, *MJD, *model, f"paths.cache={tmp_path / 'cache'}")
    line = error_line(stopped(capsys, *run))
    assert f"model=perturbed_jitter_{HUGE}, sequence {first}" in line
    assert "'poses' has a rotation of" in line and "4π rad" in line


def test_silent_speech_is_skipped_by_bc_with_its_reason(mini_beat2, tmp_path, sandbox, capsys):
    # before: the silent sequence scored BC 0 and the headline was the mean of 0 and ~0.9, exit 0
    root = tmp_path / "two"
    silent, spoken = two_sequences(mini_beat2, root)
    wav = root / AUDIO_DIR / f"{silent}.wav"
    write_wav(wav, np.zeros_like(load_audio(wav)))
    results = api.evaluate(
        *sandbox.overrides,
        *overrides(root, tmp_path, *BC),
        model="ground_truth",
        config_dir=CONF,
    )
    printed = capsys.readouterr().out
    rows = {r["sequence_id"]: r for r in results["per_sequence"]}
    assert rows[silent].get("bc") is None and rows[spoken]["bc"] > 0.5
    assert results["metrics"]["bc"] == pytest.approx(rows[spoken]["bc"], rel=1e-12)
    caveat = results["caveats"]["bc"]
    assert f"{wav}: no speech (level -inf dBFS, below the -60 dBFS of speech)" in caveat
    assert f"(caveat: {caveat})" in printed and "bc" not in results["skipped"]


def test_bc_skips_a_segment_without_speech_onsets_saying_so():
    """BC's own guard, for audio that passes the dataset's level check yet has no onset: the
    sequence is not scored (undefined, not 0), and the values say how many were left out."""
    metric = BeatConsistency(mean_speed=[0.03] * 55)
    rng = np.random.default_rng(0)
    joints = torch.from_numpy(np.cumsum(rng.normal(0, 0.01, (200, 55, 3)), axis=0))
    quiet = np.zeros(200 * 16000 // 30, dtype=np.float32)
    speech = rng.normal(0, 0.1, quiet.shape).astype(np.float32)
    speech[:: 16000 // 4] *= 50  # clicks: onsets
    metric.update(body_pair(0, joints, joints, audio=quiet))
    assert metric.skip_reason() == (
        "1 sequence without a speech onset in the scored segment not scored (bc is undefined"
        " without one, not 0)"
    )
    metric.update(body_pair(1, joints, joints, audio=np.clip(speech, -1, 1)))
    assert metric.compute()["bc"] is not None and set(metric.per_sequence()) == {1}
    assert "1 sequence without a speech onset" in metric.caveat()


@pytest.mark.slow  # a launch.py process
def test_a_reference_past_the_bounds_exits_2_in_one_line(mini_beat2, tmp_path):
    root = tmp_path / "two"
    first, _ = two_sequences(mini_beat2, root)
    path = shifted(root / MOTION_DIR / f"{first}.npz", "poses")
    done = launch(*overrides(root, tmp_path, *MJD), encoders=False)
    assert refusal(done.returncode, done.stderr) is None
    assert str(path) in error_line(done)


@pytest.mark.parametrize(
    ("matrix", "refused"),
    [
        (np.eye(3) * HUGE, True),  # scipy reads it as the identity
        (-np.eye(3), True),  # a reflection
        (np.full((3, 3), 0.5), True),
        (np.eye(3) + 1e-3, False),  # a network's near-orthonormal output
    ],
)
def test_a_rotation_matrix_that_is_no_rotation_is_refused(tmp_path, matrix, refused):
    """Result files with 3×3 rotation matrices: a matrix far from a rotation (max |RᵀR − I| >
    0.1, or det ≤ 0) is one line naming the file, not read as the nearest rotation."""

    reference = zero_motion(8)
    path = tmp_path / "seq.npz"
    np.savez(path, poses=np.broadcast_to(matrix.reshape(9), (8, 55, 9)), trans=np.zeros((8, 3)))
    if refused:
        with pytest.raises(DataError, match=r"holds no rotation matrix at frame 0, joint 0"):
            read_result(path, reference)
    else:
        motion, _ = read_result(path, reference)
        assert np.abs(motion.poses).max() < 0.01
