"""`task=prepare_beat2`: a BEAT2 folder built from the real sample checked (counts per split and
speaker, rates, NaN, missing audio), reports written, exit 2 only when the evaluated split cannot be
read; the download goes through an injected fake (tests never use the network)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from gesturebench.data.beat2 import SPLIT_FILE, read_motion_npz, sequence_paths, write_motion_npz
from gesturebench.run.config import build
from gesturebench.runtime.errors import ConfigError, DataError
from gesturebench.tasks.job import Job
from gesturebench.tasks.prepare_beat2 import NOT_DOWNLOADED

SAMPLE_ID = "2_scott_0_1_1"
OTHER_WAV = "2_scott_0_103_103_28s.wav"  # 44.1 kHz stereo: converted when read, noted


@pytest.fixture()
def beat2_root(tmp_path, beat2_sample):
    """A BEAT2 language folder: the real sequence (test), one of speaker 4 (test) and one of speaker
    2 (train) cut from its motion, with the sample's two wav files; no TextGrid or sem."""
    root = tmp_path / "data" / "beat_english_v2.0.0"
    motion = read_motion_npz(beat2_sample / f"{SAMPLE_ID}.npz")
    real = sequence_paths(root, SAMPLE_ID)
    real.motion.parent.mkdir(parents=True)
    shutil.copy(beat2_sample / f"{SAMPLE_ID}.npz", real.motion)
    real.audio.parent.mkdir(parents=True)
    for sid, frames, wav in (
        (SAMPLE_ID, None, f"{SAMPLE_ID}.wav"),
        ("4_lawrence_0_1_1", (0, 60), f"{SAMPLE_ID}.wav"),
        ("2_scott_0_2_2", (60, 90), OTHER_WAV),
    ):
        if frames:
            write_motion_npz(sequence_paths(root, sid).motion, motion.frames(*frames))
        shutil.copy(beat2_sample / wav, sequence_paths(root, sid).audio)
    (root / SPLIT_FILE).write_text(
        f"id,type\n{SAMPLE_ID},test\n4_lawrence_0_1_1,test\n2_scott_0_2_2,train\n"
    )
    return root


@pytest.fixture()
def prepare(config, tmp_path, monkeypatch):
    """Run the task of `config("task=prepare_beat2", ...)` on `root` in a run folder of its own."""
    out = tmp_path / "run"
    out.mkdir()
    monkeypatch.chdir(out)  # outside Hydra the run folder is the working folder

    def run(root, *overrides, downloader=None):
        cfg = config("task=prepare_beat2", "dataset=beat2", f"dataset.root={root}", *overrides)
        return build(cfg.task)(cfg, Job(), downloader=downloader)

    return run, out


def with_nan(path):
    with np.load(path) as z:
        arrays = dict(z)
    arrays["poses"][5, 7] = np.nan
    np.savez(path, **arrays)


def test_a_complete_folder_is_counted_per_split_and_speaker(beat2_root, prepare):
    run, out = prepare
    report = run(beat2_root)
    assert report["unusable"] is None and report["problems"] == []
    assert report["counts"] == {"test": {"2": 1, "4": 1}, "train": {"2": 1}}
    assert report["frame_rates"] == {"30": 3}
    assert report["audio_rates"] == {"16000": 2, "44100": 1}
    assert report["audio_channels"] == {"1": 2, "2": 1}
    assert (
        "1 audio file(s) have more than one channel: averaged to mono when read" in report["notes"]
    )
    assert report["missing_optional"] == {"textgrid": 3, "sem": 3}
    assert any("1 audio file(s) are not 16000 Hz" in n for n in report["notes"])
    assert json.loads((out / "beat2_report.json").read_text()) == report
    md = (out / "beat2_report.md").read_text()
    assert (
        "Usable for split 'test'" in md and "| test | 4 | 1 |" in md and "| test | all | 2 |" in md
    )
    assert "## Problems (0)" in md and "- textgrid/ missing (optional)" in md
    assert "- audio 2 channel(s): 1 file(s)" in md


def test_a_broken_copy_lists_every_problem_and_stops_only_when_unusable(beat2_root, prepare):
    run, out = prepare
    sequence_paths(beat2_root, "4_lawrence_0_1_1").audio.unlink()
    with_nan(sequence_paths(beat2_root, "2_scott_0_2_2").motion)
    report = run(beat2_root)  # the test split still reads: usable, problems listed
    problems = {(p["split"], p["problem"].split(": ", 1)[-1]) for p in report["problems"]}
    assert ("test", "audio file not found") in problems
    assert ("train", "'poses' has NaN at frame 5") in problems
    assert report["unusable"] is None
    with_nan(sequence_paths(beat2_root, SAMPLE_ID).motion)
    with pytest.raises(DataError, match="1 of 2 sequence\\(s\\) of split 'test' have no usable"):
        run(beat2_root)
    md = (out / "beat2_report.md").read_text()
    assert md.count("has NaN at frame 5") == 2 and "**Unusable**" in md
    shutil.rmtree(beat2_root / "smplxflame_30")
    (beat2_root / SPLIT_FILE).unlink()
    with pytest.raises(DataError, match="split file not found"):
        run(beat2_root)


def test_download_fetches_the_language_folder_only_never_the_body_model(beat2_root, prepare):
    run, _ = prepare
    calls = []

    def fake(**kwargs):  # huggingface_hub.snapshot_download's signature
        calls.append(kwargs)
        return kwargs["local_dir"]

    report = run(beat2_root, "task.download=true", downloader=fake)
    assert report["unusable"] is None
    (call,) = calls
    assert call["repo_id"] == "H-Liu1997/BEAT2" and call["repo_type"] == "dataset"
    assert call["allow_patterns"] == ["beat_english_v2.0.0/*"]
    assert call["ignore_patterns"] == list(NOT_DOWNLOADED)
    assert call["local_dir"] == str(beat2_root.parent)
    with pytest.raises(ConfigError, match=r"must end in beat_english_v2\.0\.0/"):
        run(beat2_root.parent, "task.download=true", downloader=fake)
    with pytest.raises(ConfigError, match="HF_HUB_OFFLINE"):  # the test session is offline
        run(beat2_root, "task.download=true")

    def failing(**kwargs):
        raise OSError("no network")

    with pytest.raises(DataError, match=r"download of https://huggingface\.co/datasets/"):
        run(beat2_root, "task.download=true", downloader=failing)


def test_launch_writes_the_report_and_exits_2_on_an_unreadable_test_split(
    beat2_root, tmp_path, in_process, capsys
):
    """The run as `launch.py` runs it (in the test process): the report, then exit 2 with one
    error line."""
    from tests.launch import error_line, stopped

    with_nan(sequence_paths(beat2_root, SAMPLE_ID).motion)
    run = tmp_path / "launched"
    stop = stopped(
        capsys,
        "task=prepare_beat2",
        "dataset=beat2",
        f"dataset.root={beat2_root}",
        "logger=none",
        f"hydra.run.dir={run}",
    )
    assert "not usable: 1 of 2 sequence(s) of split 'test'" in error_line(stop)
    report = json.loads((run / "beat2_report.json").read_text())
    assert report["counts"] == {"test": {"2": 1, "4": 1}, "train": {"2": 1}}
    assert "has NaN at frame 5" in (run / "beat2_report.md").read_text()
