"""Bad input: one line naming the file, exit 2, no traceback, earlier results intact. The runs go
through `run_task` in the test process, as `launch.py` runs them; two real `launch.py` processes
show the line and the exit status as a user sees them, and the traceback `HYDRA_FULL_ERROR=1`
asks for. metrics=fast needs no trained encoder: none is trained."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from tests.launch import error_line, launch, results, stopped
from tests.support.beat2_copy import SEQ, beat2_copy

pytestmark = pytest.mark.slow


def overrides(root, run_dir, *extra, logger="none"):
    """The evaluate run of the one-sequence copy at `root` (metrics=fast, no clips)."""
    return (
        "dataset=beat2",
        f"dataset.root={root}",
        "metrics=fast",
        f"logger={logger}",
        "task.render_clips=0",
        f"hydra.run.dir={run_dir}",
        *extra,
    )


def failed(capsys, *args):
    """How the run `overrides(*args)`, which must stop, stopped."""
    return stopped(capsys, *overrides(*args))


def assert_clear_error(stop, path, *words):
    line = error_line(stop)
    assert str(path) in line
    for word in words:
        assert word in line, line


# the known harmless messages of Lightning, torch and wandb (gesturebench.runtime.quiet)
NOISE = ("litlogger", "LeafSpec", "transfer_batch_to_device", "anonymous")


def test_real_sample_evaluates(beat2_sample, tmp_path, in_process, capsys, caplog, recwarn):
    """A good run (W&B offline): its headline table on stdout, none of the known noise on stderr,
    in the log or among the warnings."""
    beat2_copy(beat2_sample, tmp_path / "data")
    in_process(*overrides(tmp_path / "data", tmp_path / "run", logger="wandb"), encoders=False)
    assert results(tmp_path / "run")["metrics"]["mjd"] == 0.0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    start = lines.index("ground_truth on beat2:")
    table = {line.split()[0]: line.split()[1:] for line in lines[start + 1 : start + 3]}
    assert list(table) == ["mjd", "pck"]  # metrics=fast: its two metrics, no other rows
    # each value with its bootstrap interval (the reference against itself: no spread)
    assert table["mjd"] == ["↓", "0", "[0,", "0]"] and table["pck"] == ["↑", "1", "[1,", "1]"]
    assert lines[start + 3].startswith("  seconds per stage (sum ")
    shown = [err, caplog.text, *(str(w.message) for w in recwarn)]
    assert not [word for word in NOISE for text in shown if word in text], shown


def test_nan_poses_through_launch(beat2_sample, tmp_path):
    """The process as a user sees it: exit 2, one `error:` line on stderr, no traceback."""
    poses = np.load(beat2_sample / f"{SEQ}.npz")["poses"][:300].copy()
    poses[17, 4] = np.nan
    path = beat2_copy(beat2_sample, tmp_path / "data", poses=poses)
    proc = launch(*overrides(tmp_path / "data", tmp_path / "run"), encoders=False)
    assert_clear_error(proc, path, "NaN")


def test_truncated_npz(beat2_sample, tmp_path, in_process, capsys):
    path = beat2_copy(beat2_sample, tmp_path / "data")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    assert_clear_error(failed(capsys, tmp_path / "data", tmp_path / "run"), path)


def test_wrong_frame_rate(beat2_sample, tmp_path, in_process, capsys):
    path = beat2_copy(
        beat2_sample, tmp_path / "data", mocap_frame_rate=np.array(25, dtype=np.int32)
    )
    error = failed(capsys, tmp_path / "data", tmp_path / "run")
    assert_clear_error(error, path, "25 fps")


def test_failed_job_keeps_earlier_results(beat2_sample, tmp_path, in_process, capsys):
    """The same configuration run again into its folder (`resume=false`) fails on a reference
    damaged since: the earlier results stay. (Another configuration is refused before any work:
    test_run_folders.)"""
    data = beat2_copy(beat2_sample, tmp_path / "data")
    run = tmp_path / "run"
    in_process(*overrides(tmp_path / "data", run), encoders=False)
    before = (run / "results.json").read_bytes()
    data.write_bytes(b"not an npz")
    error = failed(capsys, tmp_path / "data", run, "resume=false")
    assert_clear_error(error, data)
    assert (run / "results.json").read_bytes() == before


def test_precomputed_missing_file_names_it(beat2_sample, tmp_path, in_process, capsys):
    data = beat2_copy(beat2_sample, tmp_path / "data")
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    shutil.copy(data, outputs / "2_scott_0_2_2.npz")  # another sequence's result, not this one's
    error = failed(
        capsys,
        tmp_path / "data",
        tmp_path / "run",
        "model=precomputed",
        f"model.dir={outputs}",
    )
    assert_clear_error(error, outputs / f"{SEQ}.npz", "missing")


def test_full_error_shows_traceback(beat2_sample, tmp_path):
    poses = np.load(beat2_sample / f"{SEQ}.npz")["poses"][:300].copy()
    poses[3, 3] = np.inf
    beat2_copy(beat2_sample, tmp_path / "data", poses=poses)
    proc = launch(
        "dataset=beat2",
        f"dataset.root={tmp_path / 'data'}",
        "metrics=fast",
        "logger=none",
        f"hydra.run.dir={tmp_path / 'run'}",
        env={"HYDRA_FULL_ERROR": "1"},
        encoders=False,
    )
    assert proc.returncode != 0 and "Traceback" in proc.stderr


def test_precomputed_without_dir_is_one_line(beat2_sample, tmp_path, in_process, capsys):
    beat2_copy(beat2_sample, tmp_path / "data")
    error = failed(capsys, tmp_path / "data", tmp_path / "run", "model=precomputed")
    assert_clear_error(error, "model=precomputed", "model.dir is not set")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_gpu_without_cuda_is_one_line(beat2_sample, tmp_path, in_process, capsys):
    beat2_copy(beat2_sample, tmp_path / "data")
    error = failed(capsys, tmp_path / "data", tmp_path / "run", "trainer=gpu")
    assert_clear_error(error, "trainer.accelerator=gpu", "no CUDA GPU", "trainer=cpu")


def test_negative_perturbation_level_is_one_line(beat2_sample, tmp_path, in_process, capsys):
    beat2_copy(beat2_sample, tmp_path / "data")
    error = failed(
        capsys,
        tmp_path / "data",
        tmp_path / "run",
        "model=perturbed",
        "model.level=-1",
    )
    assert_clear_error(error, "model.level=-1", "must be ≥ 0")


def test_emage_fgd_weights_offline_is_one_line(beat2_sample, tmp_path, in_process, capsys):
    """On real BEAT2 FGD uses EMAGE's encoder; absent from checkpoints/ and the Hugging Face cache,
    the run stops before any work naming the file where it must lie, its key in the table of
    public files and the `task=fetch` command that gets it (with the run's own options)."""
    beat2_copy(beat2_sample, tmp_path / "data")
    checkpoints = tmp_path / "checkpoints"
    error = failed(
        capsys,
        tmp_path / "data",
        tmp_path / "run",
        "+metrics.fgd._target_=gesturebench.metrics.fgd.FGD",
        "+metrics.fgd.encoder=${dataset.feature_encoder}",  # as the paper preset takes it
        f"paths.checkpoints={checkpoints}",
    )
    assert_clear_error(
        error,
        "1 public file this run needs is missing",
        str(checkpoints / "emage_eval" / "EMAGE/test_sequences/weights/AESKConv_240_100.bin"),
        "(emage_eval/AESKConv_240_100.bin, for metrics: FGD encoder=emage)",
        "get it: python launch.py task=fetch",
        f"paths.checkpoints={checkpoints}",
    )
