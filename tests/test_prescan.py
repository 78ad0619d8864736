"""The pre-scan of existing model outputs (every sequence checked before scoring, all problems in
one message, nothing scored) and the messages of the outputs source on folders and files that are
almost right."""

from __future__ import annotations

import re

import numpy as np
import pytest

from gesturebench.data.beat2 import write_motion_npz
from gesturebench.data.records import SAMPLE_RATE, SequenceRecord
from gesturebench.encoders.checkpoint import motion_ae_path, train_command
from gesturebench.models import formats
from gesturebench.models.prescan import SHOWN, OutputsError, prescan
from gesturebench.models.sources.outputs import OutputsSource
from gesturebench.runtime.errors import CheckpointError, DataError
from gesturebench.tasks import common, evaluate
from gesturebench.tasks.job import Job
from gesturebench.tasks.run import Run
from tests.helpers import composed, zero_motion

N = 60  # frames per sequence: 2 s


class Records(list):
    """A list of records with the `ids` the evaluate task reads."""

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self]


def records(n: int) -> Records:
    """`n` sequences of 2 s of zero motion and silence."""
    return Records(
        SequenceRecord(
            id=f"2_scott_0_{i}_{i}",
            speaker=2,
            motion=zero_motion(N),
            audio=np.zeros(2 * SAMPLE_RATE, dtype=np.float32),
            index=i,
        )
        for i in range(n)
    )


def outputs(folder, recs, name="{id}.npz") -> OutputsSource:
    """Good result files for `recs` in `folder` and the source reading them."""
    for r in recs:
        write_motion_npz(folder / name.format(id=r.id), r.motion)
    return OutputsSource(name="mine", dir=str(folder))


def scan(model, recs, max_gap=1.0) -> str:
    with pytest.raises(OutputsError) as err:
        prescan(model, recs, "truncate", max_gap)
    return str(err.value)


def test_good_outputs_pass(tmp_path):
    recs = records(3)
    prescan(outputs(tmp_path, recs), recs, "truncate", 1.0)


def test_every_problem_is_reported_together(tmp_path):
    recs = records(5)
    model = outputs(tmp_path, recs)
    (tmp_path / f"{recs[1].id}.npz").unlink()
    (tmp_path / f"{recs[3].id}.npz").unlink()
    nan = zero_motion(N)
    nan.poses[7, 4] = np.nan
    write_motion_npz(tmp_path / f"{recs[0].id}.npz", nan)
    np.savez(tmp_path / f"{recs[2].id}.npz", poses=np.zeros((N, 100)))
    long = zero_motion(3 * N)  # 6 s for 2 s of speech
    np.savez(tmp_path / f"{recs[4].id}.npz", poses=long.poses, trans=long.trans)
    lines = scan(model, recs).splitlines()
    assert lines[0] == (
        "model=mine: 4 problem(s) in its outputs for 5 sequences; nothing was scored:"
    )
    assert lines[1].startswith(f"  {tmp_path / recs[1].id}.npz: missing result for sequence")
    assert "and 1 more of 5 of model=mine" in lines[1]
    assert lines[2] == f"  {tmp_path / recs[0].id}.npz: 'poses' has NaN at frame 7"
    assert lines[3].startswith(f"  {tmp_path / recs[2].id}.npz: 'poses' has shape (60, 100)")
    assert lines[4].startswith(f"  sequence {recs[4].id}: generated motion has 180 frames")
    assert len(lines) == 5


def test_only_the_first_problems_are_listed_then_counted(tmp_path):
    recs = records(SHOWN + 5)
    model = outputs(tmp_path, recs)
    for r in recs:
        np.savez(tmp_path / f"{r.id}.npz", poses=np.full((N, 165), np.inf))
    lines = scan(model, recs).splitlines()
    assert lines[0].startswith(f"model=mine: {SHOWN + 5} problem(s)")
    assert len(lines) == 1 + SHOWN + 1 and lines[-1] == "  ... and 5 more"


def test_one_problem_is_one_line(tmp_path):
    recs = records(2)
    model = outputs(tmp_path, recs)
    (tmp_path / f"{recs[1].id}.npz").unlink()
    text = scan(model, recs)
    assert "\n" not in text and text.endswith("(model=mine: nothing was scored)")
    assert text.startswith(f"{tmp_path / recs[1].id}.npz: missing result for sequence {recs[1].id}")


def test_nothing_is_scored(tmp_path, monkeypatch):
    """The evaluate task refuses before the body model, the metrics or the evaluator are built."""
    recs = records(2)
    outputs(tmp_path / "out", recs)
    (tmp_path / "out" / f"{recs[0].id}.npz").unlink()

    def never(*args, **kwargs):
        raise AssertionError("scoring started")

    monkeypatch.setattr(common, "make_body_model", lambda node, device: None)
    monkeypatch.setattr(evaluate, "Evaluator", never)
    cfg = composed(
        "model=precomputed",
        f"model.dir={tmp_path / 'out'}",
        "metrics.fgd._target_=tests.test_prescan.never",
        f"paths.cache={tmp_path / 'cache'}",
    )
    with pytest.raises(OutputsError, match="nothing was scored"):
        evaluate.score(Run.of(cfg, Job()), recs, tmp_path / "run", {}, "hash")


def never(*args, **kwargs):
    raise AssertionError("a metric was built")


def test_a_60_fps_file_without_its_rate_is_named(tmp_path):
    recs = records(1)
    model = outputs(tmp_path, recs)
    fast = zero_motion(2 * N)  # 2 s at 60 fps, written without mocap_frame_rate
    np.savez(tmp_path / f"{recs[0].id}.npz", poses=fast.poses, trans=fast.trans)
    assert re.search(
        r"its length fits 60 fps for the 2\.0 s of speech: a 60 fps file without "
        r"mocap_frame_rate\? Resample it to 30 fps",
        scan(model, recs),
    )
    # within max_length_gap it is scored as it is, with no guess
    prescan(model, recs, "truncate", 2.5)


def test_an_extra_pickled_key_is_ignored_but_a_pickled_pose_is_named(tmp_path):
    ref = zero_motion(N)
    path = tmp_path / "extra.npz"
    meta = np.array({"model": "mine", "epoch": 3}, dtype=object)
    np.savez(path, poses=ref.poses, trans=ref.trans, meta=meta)
    motion, _ = formats.read_result(path, ref)
    np.testing.assert_array_equal(motion.poses, ref.poses)
    np.savez(path, poses=np.array([ref.poses], dtype=object), trans=ref.trans)
    pickled = "'poses' is not numeric (dtype object, a pickled"
    with pytest.raises(DataError, match=re.escape(pickled)):
        formats.read_result(path, ref)


def test_folder_messages_say_what_is_wrong(tmp_path):
    def refusal(folder) -> str:
        with pytest.raises(CheckpointError) as err:
            OutputsSource(name="precomputed", dir=str(folder))
        return str(err.value)

    assert "(the folder does not exist)" in refusal(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    assert f"no outputs found in {tmp_path / 'empty'} (the folder is empty)" in refusal(
        tmp_path / "empty"
    )
    nested = tmp_path / "emage" / "custom" / "run1" / "epoch_0"
    write_motion_npz(nested / "res_2_scott_0_1_1.npz", zero_motion(N))
    assert f"set model.dir={nested}" in refusal(tmp_path / "emage")


def test_missing_files_hint_at_the_file_pattern(tmp_path):
    recs = records(2)
    model = outputs(tmp_path / "gen", recs, name="gen_{id}_smplx.npz")
    assert "model.file_pattern='gen_{id}_smplx.npz': set it" in scan(model, recs)
    OutputsSource(name="m", dir=str(tmp_path / "gen"), file_pattern="gen_{id}_smplx.npz")
    numbered = tmp_path / "numbered"
    for i in range(2):
        write_motion_npz(numbered / f"res_{i}.npz", zero_motion(N))
    text = scan(OutputsSource(name="precomputed", dir=str(numbered)), recs)
    assert "res_*.npz is what EMAGE-style test scripts write" in text
    assert "model=emage" in text


def test_train_command_carries_the_data_and_paths_overrides(tmp_path):
    from hydra import compose, initialize_config_dir

    from tests.helpers import CONF

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(
            config_name="config",
            overrides=["dataset=beat2", "dataset.root=/data/my beat2", "paths.checkpoints=/c"],
            return_hydra_config=True,
        )
    overrides = cfg.hydra.overrides.task
    command = train_command(motion_ae_path("/c", "beat2"), "motion_ae", overrides)
    assert command == (
        "python launch.py task=train_encoder encoder=motion_ae dataset=beat2 "
        "'dataset.root=/data/my beat2' paths.checkpoints=/c"
    )
