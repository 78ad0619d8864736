"""Audio left out for disagreeing with its motion's length (`dataset.audio_mismatch=skip`): the
audio metrics say which file and why, as their skip reason when no sequence has usable audio, else
as the caveat of the values scored without it; across processes too."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from gesturebench import api
from gesturebench.data.audio import load_audio, write_wav
from gesturebench.data.beat2 import AUDIO_DIR, MOTION_DIR, SPLIT_FILE, read_split_table
from gesturebench.metrics.bc import BeatConsistency
from tests.distributed import run_distributed
from tests.helpers import CONF, body_pair

BC = ("metrics=none", "+metrics.bc._target_=gesturebench.metrics.bc.BeatConsistency")


def two_sequences(mini_beat2: Path, root: Path, cut: tuple[int, ...]) -> list[Path]:
    """A BEAT2 folder at `root` holding mini-BEAT2's first two test sequences, the wav of each
    sequence in `cut` shortened to 0.1 s; returns the two wav paths."""
    table = read_split_table(mini_beat2 / SPLIT_FILE)
    ids = list(table.loc[table["type"] == "test", "id"][:2])
    (root / MOTION_DIR).mkdir(parents=True)
    (root / AUDIO_DIR).mkdir()
    table[table["id"].isin(ids)].to_csv(root / SPLIT_FILE, index=False)
    wavs = []
    for i, sid in enumerate(ids):
        (root / MOTION_DIR / f"{sid}.npz").symlink_to(mini_beat2 / MOTION_DIR / f"{sid}.npz")
        wav, source = (folder / AUDIO_DIR / f"{sid}.wav" for folder in (root, mini_beat2))
        if i in cut:
            write_wav(wav, load_audio(source)[:1600])
        else:
            shutil.copy(source, wav)
        wavs.append(wav)
    return wavs


def evaluate(root: Path, sandbox, tmp_path: Path, capsys) -> tuple[dict, str]:
    """Ground truth scored by BC alone (unit mean speeds) on the BEAT2 folder `root`, its audio
    left out where it disagrees with the motion; the results and the table printed."""
    results = api.evaluate(
        *sandbox.overrides,
        *BC,
        f"+metrics.bc.mean_speed=[{','.join(['1.0'] * 55)}]",
        "dataset=beat2",
        f"dataset.root={root}",
        "dataset.audio_mismatch=skip",
        f"hydra.run.dir={tmp_path / 'run'}",
        "task.render_clips=0",
        "stats.bootstrap=0",
        model="ground_truth",
        logger="none",
        config_dir=CONF,
    )
    return results, capsys.readouterr().out


def test_bc_is_scored_over_the_sequence_with_audio_and_names_the_one_left_out(
    mini_beat2, sandbox, tmp_path, capsys
):
    root = tmp_path / "two"
    short, kept = two_sequences(mini_beat2, root, cut=(0,))
    results, printed = evaluate(root, sandbox, tmp_path, capsys)
    rows = {r["sequence_id"]: r for r in results["per_sequence"]}
    assert rows[short.stem].get("bc") is None and rows[kept.stem]["bc"] is not None
    assert results["metrics"]["bc"] == pytest.approx(rows[kept.stem]["bc"], rel=1e-12)
    caveat = results["caveats"]["bc"]
    assert caveat.startswith(f"scored without 1 sequence whose audio was left out: {short}:")
    assert "audio is 0.10 s long" in caveat and "max_length_gap=1.0" in caveat
    assert results["caveats"]["bc_ref"] == caveat and "bc" not in results["skipped"]
    assert f"(caveat: {caveat})" in printed


def test_bc_without_any_usable_audio_is_skipped_naming_the_file(
    mini_beat2, sandbox, tmp_path, capsys
):
    root = tmp_path / "two"
    first, _ = two_sequences(mini_beat2, root, cut=(0, 1))
    results, printed = evaluate(root, sandbox, tmp_path, capsys)
    assert results["metrics"]["bc"] is None and "bc" not in results["caveats"]
    reason = results["skipped"]["bc"]
    assert reason.startswith(f"audio left out of 2 sequences: {first}: audio is 0.10 s long")
    assert reason.endswith("(dataset.audio_mismatch=skip) (and 1 more)")
    assert reason in printed


def _bc_skip_reason(rank: int, world: int) -> str | None:
    """BC's skip reason for three sequences without audio split across `world` processes: the
    dataset left out that of sequence 1 (rank 1's of two; rank 0 then leaves none out), the others
    had no audio file."""
    metric = BeatConsistency(mean_speed=[1.0] * 55)
    joints = torch.zeros(10, 55, 3)
    for i in range(rank, 3, world):
        left_out = {"audio": f"/data/{i}.wav: audio is 0.10 s long"} if i == 1 else {}
        metric.update(body_pair(i, joints, joints, left_out=left_out))
    with metric.sync_context():
        return metric.skip_reason()


@pytest.mark.slow  # two processes of the DDP pool (tests/distributed.py)
def test_the_files_left_out_are_gathered_across_processes():
    expected = (
        "audio left out of 1 sequence: /data/1.wav: audio is 0.10 s long; 2 sequences had no audio"
    )
    assert _bc_skip_reason(0, 1) == expected
    assert run_distributed(_bc_skip_reason) == expected
