"""`task=render` on the synthetic study (stimuli and manifest) and `task.render_clips=N` of
`task=evaluate` (N clips, reference | generated, with audio), as `launch.py` runs them, in the
test process."""

from __future__ import annotations

import hashlib
import subprocess

import imageio.v2 as imageio
import imageio_ffmpeg
import pandas as pd
import pytest

from gesturebench.study.schema import MANIFEST_COLUMNS
from gesturebench.study.window_records import window_records
from gesturebench.study.windows import configured_windows, window_plan
from gesturebench.tasks.common import dataset_source
from tests.conftest import RENDERED_WINDOWS

pytestmark = pytest.mark.slow


def streams(path) -> list[str]:
    """The stream lines ffmpeg prints for `path` (video, audio)."""
    proc = subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-i", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    return [line.strip() for line in proc.stderr.splitlines() if "Stream #" in line]


def test_render_task_writes_the_synthetic_studys_stimuli_and_manifest(rendered_stimuli, config):
    """Every window of the synthetic study (the session's render: 4 windows of 2 s) × its 5
    sources × muted and audio = 40 stimuli at 48 px, each file as the manifest says."""
    cfg = config("study=synthetic", *RENDERED_WINDOWS)
    plan = window_plan(cfg.study.windows)
    splits = dataset_source(cfg.dataset).splits(plan.splits)
    windows = configured_windows(plan, splits)
    records = window_records(plan, splits, windows)
    expected = {(r.id, w.start, w.end) for w, r in zip(windows, records, strict=True)}
    sources = set(cfg.study.sources)
    assert len(expected) == 4 and len(sources) == 5
    folder = rendered_stimuli.parent
    manifest = pd.read_csv(rendered_stimuli, dtype={"sequence_id": str})
    assert tuple(manifest.columns) == MANIFEST_COLUMNS
    assert len(manifest) == len(expected) * len(sources) * 2 == 40
    assert manifest["stimulus_id"].is_unique and manifest["file"].is_unique
    for (source, condition), rows in manifest.groupby(["source", "condition"]):
        assert source in sources and condition in ("muted", "audio")
        assert set(zip(rows["sequence_id"], rows["start"], rows["end"], strict=True)) == expected
    for row in manifest.itertuples():
        path = folder / row.file
        assert path.parent.name == row.condition
        assert hashlib.sha256(path.read_bytes()).hexdigest() == row.sha256
        assert row.source not in row.file and row.sequence_id not in row.file  # blind names
        kinds = streams(path)
        assert any("Video:" in s and "48x48" in s for s in kinds)
        assert any("Audio:" in s for s in kinds) == (row.condition == "audio")
        assert imageio.get_reader(path).count_frames() == 60  # 2 s at 30 fps
    # the five sources differ on every window
    muted = manifest[manifest["condition"] == "muted"]
    assert (muted.groupby("sequence_id")["sha256"].nunique() == len(sources)).all()


def test_evaluate_renders_n_side_by_side_clips_with_audio(tmp_path, in_process):
    out = tmp_path / "run"
    in_process(
        "model=perturbed",
        "model.level=0.2",
        "metrics=fast",
        "dataset.max_sequences=2",
        "task.render_clips=2",
        "task.render_seconds=1",
        "task.camera.size=32",
        "threads=1",
        "logger=wandb",
        f"hydra.run.dir={out}",
    )
    clips = sorted((out / "clips").glob("*.mp4"))
    assert len(clips) == 2
    for clip in clips:
        kinds = streams(clip)
        assert any("Video:" in s and "64x46" in s for s in kinds)  # 2 panels + label strip
        assert any("Audio:" in s for s in kinds)
        frame = imageio.get_reader(clip).get_data(0)
        assert (frame[14:, :32] < 200).any() and (frame[14:, 32:] < 200).any()  # both bodies
    media = list((out / "wandb").glob("offline-run-*/files/media/videos/clips/*"))
    assert len(media) == 2


def test_a_window_without_audio_is_refused_before_any_of_its_clips(config, tmp_path):
    """A stimulus with speech needs the window's audio: without it, one line naming the dataset,
    and no clip of that window written (not even its muted one)."""
    import dataclasses

    from gesturebench.body.model import BodyModel
    from gesturebench.models.cache import MotionCache
    from gesturebench.models.reference import GroundTruth
    from gesturebench.render.clips import Camera
    from gesturebench.runtime.errors import DataError
    from gesturebench.study.stimuli import StimulusRenderer
    from gesturebench.study.window_records import StudyWindows

    cfg = config("study.windows.n=1", "study.windows.seconds=2")
    source = dataset_source(cfg.dataset)
    plan = window_plan(cfg.study.windows)
    splits = source.splits(plan.splits)
    windows = configured_windows(plan, splits)
    records = window_records(plan, splits, windows)
    silent = StudyWindows([dataclasses.replace(records[0], audio=None)])
    camera = Camera(size=32, style="skeleton")
    folder = tmp_path / "stimuli"
    renderer = StimulusRenderer(
        BodyModel(), MotionCache(tmp_path / "cache"), camera, ["muted", "audio"], folder, "ROOT"
    )
    with pytest.raises(DataError, match=f"ROOT: {records[0].id} has no audio"):
        renderer.source(GroundTruth(), "ground_truth", windows, silent)
    assert not folder.exists()
    muted = dataclasses.replace(renderer, conditions=["muted"])
    (row,) = muted.source(GroundTruth(), "ground_truth", windows, silent)
    assert (folder / row["file"]).is_file() and row["condition"] == "muted"
