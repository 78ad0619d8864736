"""Annotation pipeline: answer/record schema, events, the JSONL store, the runner (budget, resume),
features, clips, review sheets, the kinematic model fit, beat_collapse, and `task=annotate` run
in-process."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import imageio_ffmpeg
import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf
from pydantic import ValidationError

from gesturebench.annotation.backends.base import Annotator
from gesturebench.annotation.backends.kinematic import (
    THRESHOLDS,
    KinematicAnnotator,
    classify,
)
from gesturebench.annotation.clip import EventClip, make_clip
from gesturebench.annotation.events import collect_events
from gesturebench.annotation.features import FEATURES, motion_features
from gesturebench.annotation.review import (
    class_agreement,
    read_review_sheet,
    review_scores,
    sheet_rows,
    write_review_sheet,
)
from gesturebench.annotation.runner import AnnotationRunner, RequestBudget
from gesturebench.annotation.schema import (
    AnnotationRecord,
    GestureAnswer,
    InvalidAnswer,
    parse_answer,
)
from gesturebench.annotation.store import AnnotationStore, store_path
from gesturebench.data.records import SemInterval, SequenceRecord, Word
from gesturebench.render.clips import Camera, clip_frames, write_clip
from gesturebench.render.skeleton import render_frames
from gesturebench.runtime.errors import ConfigError, DataError
from gesturebench.tasks.common import build
from gesturebench.tasks.job import Job

ANSWER = {
    "word": "big",
    "gesture_description": "both hands",
    "contextual_meaning": "size",
    "class": "iconic",
    "confidence": 0.7,
}


# ------------------------------------------------------------------------------------------ schema


def test_parse_answer_accepts_json_and_one_fence_and_refuses_the_rest():
    assert parse_answer(json.dumps(ANSWER)).gesture_class == "iconic"
    assert (
        parse_answer("```json\n" + json.dumps({**ANSWER, "extra": 1}) + "\n```").confidence == 0.7
    )
    for raw, problem in [
        ("{'word': 1}", "not JSON"),
        ("Sure! " + json.dumps(ANSWER), "not JSON"),
        (json.dumps({**ANSWER, "class": "emblem"}), "class"),
        (json.dumps({**ANSWER, "confidence": 1.5}), "confidence"),
        (json.dumps({k: v for k, v in ANSWER.items() if k != "word"}), "word"),
    ]:
        with pytest.raises(InvalidAnswer, match=problem) as err:
            parse_answer(raw)
        assert err.value.raw == raw


def record(event_id="e1", status="ok", **kw) -> AnnotationRecord:
    fields = {
        "event_id": event_id,
        "sequence_id": "s",
        "start": 1.0,
        "end": 2.0,
        "source": "reference",
        "annotator": "a",
        "annotator_model": "m",
        "prompt_sha256": "p",
        "status": status,
    }
    if status == "ok":
        fields.update(
            word="w",
            gesture_description="d",
            contextual_meaning="c",
            gesture_class="beat",
            confidence=0.5,
        )
    else:
        fields.update(error="went wrong")
    return AnnotationRecord(**{**fields, **kw})


def test_record_wire_format_and_status_rules():
    line = json.loads(record().to_json())
    assert line["class"] == "beat" and "gesture_class" not in line
    assert {
        "event_id",
        "sequence_id",
        "start",
        "end",
        "source",
        "word",
        "gesture_description",
        "contextual_meaning",
        "class",
        "confidence",
        "annotator",
        "annotator_model",
        "prompt_sha256",
        "created_at",
        "status",
        "error",
    } <= set(line)
    assert AnnotationRecord.model_validate_json(record().to_json()) == record(
        created_at=line["created_at"]
    )
    with pytest.raises(ValidationError):
        record(gesture_class=None)  # ok needs a class
    with pytest.raises(ValidationError):
        record(status="invalid", gesture_class="beat")  # invalid carries none
    with pytest.raises(ValidationError):
        record(status="error", error=None)


# ------------------------------------------------------------------------------------------ events


def test_event_ids_are_stable_content_hashes_and_targets_come_from_keywords_or_words():
    sem = [
        SemInterval("05_iconic_h", 1.0, 2.0, 0.9, "round", "iconic"),
        SemInterval("01_beat_align", 3.0, 4.0, 0.3),
    ]
    words = [
        Word("so", 0.5, 0.9),
        Word("really", 2.9, 3.3),
        Word("never", 3.5, 3.9),
        Word("after", 4.0, 4.5),
    ]
    a, b = collect_events("seq", sem, words), collect_events("seq", sem, words)
    assert [e.id for e in a] == [e.id for e in b] and a[0].id != a[1].id
    assert (
        collect_events("seq", [SemInterval("05_iconic_h", 1.0, 2.01, 0.9, "round")])[0].id
        != a[0].id
    )
    assert [e.target for e in a] == ["round", "really never"]
    assert a[0].window(n_frames=100, fps=30) == (15, 75)
    assert a[1].window(n_frames=100, fps=30) == (75, 100)  # clipped to the motion
    assert collect_events("seq", None) == []


# ------------------------------------------------------------------------------------------ store


def test_store_appends_durably_ignores_a_torn_last_line_and_cuts_it_before_appending(tmp_path):
    store = AnnotationStore(store_path(tmp_path, "reference", "k"))
    for i in range(3):
        store.append(record(f"e{i}"))
    with open(store.path, "ab") as f:
        f.write(b'{"event_id": "e3", "sequ')  # a writer killed mid-line
    fresh = AnnotationStore(store.path)
    assert [r.event_id for r in fresh.records()] == ["e0", "e1", "e2"]
    fresh.append(record("e3"))
    lines = store.path.read_text().splitlines()
    assert len(lines) == 4 and [json.loads(x)["event_id"] for x in lines] == [
        "e0",
        "e1",
        "e2",
        "e3",
    ]


@pytest.mark.parametrize("damaged", ['{"event_id": "e1"}', record("e1").to_json()[:40] + "x"])
def test_store_sets_a_damaged_line_aside_and_its_event_is_annotated_again(
    tmp_path, damaged, caplog
):
    path = tmp_path / "s.jsonl"
    good = [record("e0").to_json(), record("e2").to_json()]
    path.write_text(f"{good[0]}\n{damaged}\n{good[1]}\n")
    store = AnnotationStore(path)
    assert [r.event_id for r in store.records()] == ["e0", "e2"] and store.find("e1") is None
    assert path.read_text().splitlines() == good
    assert (tmp_path / "s.jsonl.corrupt").read_text() == damaged + "\n"
    assert f"{path}: damaged line(s) 2" in caplog.text
    store.append(record("e1"))  # annotated again
    assert [r.event_id for r in AnnotationStore(path).records()] == ["e0", "e2", "e1"]


def test_store_find_matches_fields_and_latest_wins(tmp_path):
    store = AnnotationStore(tmp_path / "s.jsonl")
    store.append(record("e", status="error"))
    assert store.find("e", final_only=True) is None and store.find("e").status == "error"
    store.append(record("e", motion_sha256="m1"))
    store.append(record("e", motion_sha256="m2", confidence=0.9))
    assert store.find("e", motion_sha256="m1").confidence == 0.5
    assert store.find("e").confidence == 0.9 and store.find("e", prompt_sha256="other") is None


# ------------------------------------------------------------------------------------------ runner


class Counting(Annotator):
    """Answers every clip with ANSWER and counts the calls."""

    def __init__(self):
        super().__init__("counting")
        self.calls = 0

    @property
    def model_name(self):
        return "count-1"

    def fingerprint(self):
        return "f" * 64

    def ask(self, clip):
        self.calls += 1
        return GestureAnswer.model_validate(ANSWER)


def clips(n: int, motion_hash: str = "m" * 64) -> list[EventClip]:
    events = collect_events(
        "seq", [SemInterval("x", 2.0 * i, 2.0 * i + 1, 0.5, f"w{i}") for i in range(n)]
    )
    return [
        EventClip(e, "reference", 0, 10, 30, motion_hash, lambda: np.zeros((10, 55, 3)))
        for e in events
    ]


def test_runner_budget_then_resume_annotates_each_event_once(tmp_path):
    store = AnnotationStore(tmp_path / "s.jsonl")
    annotator = Counting()
    first = AnnotationRunner(annotator, store, concurrency=3, budget=RequestBudget(2)).run(
        clips(5), total=5
    )
    assert first.as_dict() == {"ok": 2, "invalid": 0, "error": 0, "skipped": 0, "unattempted": 3}
    second = AnnotationRunner(annotator, AnnotationStore(store.path), concurrency=3).run(
        clips(5), total=5
    )
    assert second.as_dict() == {"ok": 3, "invalid": 0, "error": 0, "skipped": 2, "unattempted": 0}
    ids = [r.event_id for r in AnnotationStore(store.path).records()]
    assert (
        annotator.calls == 5
        and sorted(ids) == sorted(c.event.id for c in clips(5))
        and len(set(ids)) == 5
    )
    assert set(second.records) == set(ids)
    changed = AnnotationRunner(annotator, AnnotationStore(store.path)).run(
        clips(5, "n" * 64), total=5
    )
    assert changed.counts["ok"] == 5  # another motion (a retrained model) is annotated again


# ------------------------------------------------------------------------------------------
# features


def test_motion_features_of_a_hand_made_skeleton():
    t = 31
    j = np.zeros((t, 55, 3))
    j[:, 16], j[:, 17] = [0.2, 0.35, 0.0], [-0.2, 0.35, 0.0]  # shoulder width 0.4
    j[:, 9], j[:, 12] = [0.0, 0.3, 0.0], [0.0, 0.5, 0.0]  # spine3, neck; pelvis at the origin
    j[:, 20] = np.stack(
        [np.full(t, 0.3), np.full(t, 0.4), np.linspace(0.1, 0.5, t)], axis=1
    )  # left wrist: 0.4 m
    j[:, 21] = [-0.3, 0.1, 0.0]
    j[:, 25:40] = (
        j[:, [20]] + np.linspace(0.02, 0.1, 15)[None, :, None]
    )  # left hand moves rigidly with the wrist
    j[:, 40:55] = j[:, [21]] + np.linspace(0.02, 0.1, 15)[None, :, None]
    f = motion_features(j, fps=30)
    between = np.linalg.norm(j[:, 20] - j[:, 21], axis=1) / 0.4
    assert list(f) == list(FEATURES)
    assert f["path_length"] == pytest.approx(1.0) and f["extent"] == pytest.approx(1.0)
    assert f["height"] == pytest.approx(0.8) and f["strokes"] == 0 and f["hold_time"] == 0
    assert f["finger_change"] == pytest.approx(0.0, abs=1e-12)
    assert f["hand_distance_change"] == pytest.approx(between.max() - between.min())
    j[:, 20] = j[0, 20]  # now held still, raised: the whole window is a hold
    j[:, 25:40] = j[:, [20]] + np.linspace(0.02, 0.1, 15)[None, :, None]
    assert motion_features(j, fps=30)["hold_time"] == pytest.approx(30 / 30)


def test_rules_follow_their_documented_thresholds():
    base = {
        "path_length": 2.0,
        "extent": 1.0,
        "height": 0.5,
        "strokes": 3,
        "hold_time": 0.0,
        "finger_change": 0.02,
        "hand_distance_change": 0.3,
    }
    assert classify(base)[0] == "beat"
    assert classify({**base, "finger_change": THRESHOLDS["deictic_finger_change"]})[0] == "deictic"
    assert classify({**base, "height": 0.8, "path_length": 3.4})[0] == "iconic"
    assert classify({**base, "height": 0.8})[0] == "beat"  # raised but no traced path
    assert classify({**base, "hand_distance_change": 0.8})[0] == "metaphoric"
    assert classify({**base, "path_length": 0.2})[0] == "none"
    assert all(
        0.5 <= classify({**base, "finger_change": x})[1] <= 1.0 for x in (0.0, 0.1, 0.2, 1.0)
    )


def test_kinematic_fit_to_another_annotator(tmp_path):
    rng = np.random.default_rng(0)
    beat = rng.normal([2.5, 1.1, 0.55, 4, 0.05, 0.03, 0.4], 0.05, (20, 7))
    iconic = rng.normal([4.0, 1.7, 0.85, 4, 0.2, 0.06, 1.1], 0.05, (20, 7))
    annotator = KinematicAnnotator(fit_to="gemini")
    rules = annotator.fingerprint()
    annotator.fit(np.vstack([beat, iconic]), ["beat"] * 20 + ["iconic"] * 20)
    assert annotator.model_name == "logreg-fit-to-gemini" and annotator.fingerprint() != rules
    test = np.array([[2.4, 1.0, 0.5, 4, 0.0, 0.03, 0.45], [4.1, 1.8, 0.9, 4, 0.2, 0.07, 1.0]])
    assert annotator.model.predict(test) == ["beat", "iconic"]
    with pytest.raises(ConfigError, match="at least 10"):
        KinematicAnnotator(fit_to="gemini").fit(beat[:5], ["beat"] * 5)
    with pytest.raises(ConfigError, match="task=annotate annotator=gemini"):
        KinematicAnnotator(fit_to="gemini").prepare(None, tmp_path)


# ------------------------------------------------------------------------------------------ clips


def test_camera_frames_a_clip_the_same_wherever_the_speaker_stands_and_faces():
    rng = np.random.default_rng(1)
    j = rng.normal(0, 0.15, (4, 55, 3))
    j[:, 16], j[:, 17] = [0.2, 0.3, 0.0], [-0.2, 0.3, 0.0]
    turn = np.deg2rad(40)
    rot = np.array([[np.cos(turn), 0, np.sin(turn)], [0, 1, 0], [-np.sin(turn), 0, np.cos(turn)]])
    moved = j @ rot.T + np.array([1.0, 0.2, -2.0])
    camera = Camera(size=96)
    a, b = clip_frames(j, camera), clip_frames(moved, camera)
    assert a.shape == (4, 96, 96, 3) and (a != 255).any()
    assert np.abs(a.astype(int) - b.astype(int)).mean() < 1.0  # identical up to anti-aliasing


def test_render_frames_anchors_its_box_on_centre():
    rng = np.random.default_rng(2)
    j = rng.normal(0, 0.3, (3, 55, 3))
    centre = np.array([0.4, -0.3])
    shifted = j[:1].copy()
    shifted[0, 0, :2] = centre  # a first frame with its pelvis at `centre` sets the same box
    got = render_frames(j, size=64, centre=centre)
    assert got.shape == (3, 64, 64, 3) and (got != 255).any()
    np.testing.assert_array_equal(got, render_frames(np.concatenate([shifted, j]), size=64)[1:])
    np.testing.assert_array_equal(
        render_frames(j, size=64), render_frames(j, size=64, centre=j[0, 0])
    )
    assert not np.array_equal(got, render_frames(j, size=64))


def test_clip_with_audio_track(tmp_path):
    frames = np.full((15, 64, 64, 3), 200, np.uint8)
    audio = np.sin(np.linspace(0, 2000, 8000)).astype(np.float32)  # 0.5 s at 16 kHz
    path = write_clip(tmp_path / "clip.mp4", frames, 30, audio)
    probe = subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-i", str(path)],
        capture_output=True,
        text=True,
        check=False,
    ).stderr
    assert "Video: h264" in probe and "Audio: aac" in probe
    assert not list(tmp_path.glob(".*tmp*"))
    silent = write_clip(tmp_path / "silent.mp4", frames, 30)
    assert (
        "Audio:"
        not in subprocess.run(
            [imageio_ffmpeg.get_ffmpeg_exe(), "-i", str(silent)],
            capture_output=True,
            text=True,
            check=False,
        ).stderr
    )


# ------------------------------------------------------------------------------------------ review


def test_review_sheet_ingestion_and_kappa_by_hand(tmp_path):
    recs = [
        record(f"e{i}", gesture_class=c)
        for i, c in enumerate(["iconic", "beat", "beat", "deictic"])
    ]
    csv_path, html_path = write_review_sheet(
        tmp_path, sheet_rows(recs, [f"clips/e{i}.mp4" for i in range(4)]), "t"
    )
    assert "<video" in html_path.read_text() and html_path.read_text().count("clips/e") == 4
    table = pd.read_csv(csv_path, dtype=str, keep_default_na=False)
    table["correct_handedness"] = ["1", "yes", "0", ""]
    table["correct_class"] = ["correct", "1", "incorrect", "0"]
    table["reviewer_class"] = ["iconic", "beat", "iconic", "metaphoric"]
    table.to_csv(csv_path, index=False)
    scores = review_scores(read_review_sheet(csv_path))
    assert scores["judgements"] == 7 and scores["percent_correct"] == pytest.approx(100 * 4 / 7)
    assert scores["percent_correct_per_component"]["handedness"] == pytest.approx(100 * 2 / 3)
    assert scores["percent_correct_per_component"]["class"] == 50.0
    assert scores["percent_correct_per_component"]["meaning"] is None
    assert scores["percent_fully_correct"] == 50.0  # e0, e1
    agree = class_agreement(
        ["iconic", "beat", "beat", "deictic"], ["iconic", "beat", "iconic", "metaphoric"]
    )
    # p_o = 2/4; p_e = Σ_c p_a(c)·p_b(c) = (1/4·2/4) + (2/4·1/4) + 0 + 0 = 1/4 → κ = (1/2 − 1/4)/(1
    # − 1/4) = 1/3
    assert agree["kappa"] == pytest.approx(1 / 3) and agree["percent_agreement"] == 50.0
    assert agree["labels"] == ["iconic", "metaphoric", "deictic", "beat"]
    assert agree["confusion"] == [[1, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 1]]
    table["correct_meaning"] = ["maybe", "", "", ""]
    table.to_csv(csv_path, index=False)
    with pytest.raises(DataError, match="row 2, column correct_meaning"):
        read_review_sheet(csv_path)


# ------------------------------------------------------------------------------------------
# beat_collapse


@pytest.fixture(scope="module")
def mini_record(mini_beat2) -> SequenceRecord:
    from gesturebench.data.beat2 import Beat2Dataset

    return Beat2Dataset(mini_beat2, "test", load_audio=False)[1]


def _changed_spans(record, motion):
    diff = np.abs(motion.poses - record.motion.poses).max(axis=1) > 0
    return [iv for iv in record.sem if diff[int(iv.start * 30) : int(iv.end * 30)].any()], diff


@pytest.mark.parametrize("level", [0.0, 0.5, 1.0])
def test_beat_collapse_replaces_round_f_n_semantic_intervals_and_nothing_else(mini_record, level):
    from gesturebench.models.perturbed import BeatCollapse, Perturbed

    model = Perturbed(BeatCollapse(), level=level)
    motion = model.generate(mini_record)
    semantic = [iv for iv in mini_record.sem if iv.label != "beat"]
    changed, diff = _changed_spans(mini_record, motion)
    assert len(changed) == round(level * len(semantic)) and all(
        iv.label != "beat" for iv in changed
    )
    spans = np.zeros_like(diff)
    for iv in changed:
        spans[
            max(0, int(np.floor((iv.start - 0.6) * 30))) : int(np.ceil((iv.end + 0.6) * 30)) + 1
        ] = True
    assert not diff[~spans].any()
    assert np.array_equal(motion.trans, mini_record.motion.trans)
    assert np.array_equal(model.generate(mini_record).poses, motion.poses)  # seeded


# ------------------------------------------------------------------------------------------
# task=annotate


@pytest.fixture
def annotate_cfg(config, tmp_path):
    """The config of `task=annotate` (or another `task=...` first in `overrides`) on one mini-BEAT2
    sequence (store under `tmp_path`) with `overrides`."""
    return lambda *overrides: config(
        *(() if overrides and overrides[0].startswith("task=") else ("task=annotate",)),
        "logger=none",
        "trainer.enable_progress_bar=false",
        "dataset.max_sequences=1",
        f"task.store_root={tmp_path / 'store'}",
        *overrides,
    )


def test_every_annotator_config_composes(annotate_cfg):
    for name in ("kinematic", "gemini", "openai", "replay"):
        cfg = annotate_cfg(f"annotator={name}")
        options = OmegaConf.to_container(cfg.annotator, resolve=True)
        assert not any(
            "key" in k and k != "api_key_env" for k in options
        )  # keys only come from the environment
        assert build(cfg.annotator).name == options.get("name", options.get("of"))


def run(cfg):
    """`task=annotate` as the CLI runs it: the task built from its `_target_`, called on `cfg`."""
    return build(cfg.task)(cfg, Job.of_hydra())


def test_task_annotate_then_resume_then_model_source(annotate_cfg, tmp_path, monkeypatch):

    monkeypatch.chdir(tmp_path)
    first = run(annotate_cfg())
    store = AnnotationStore(tmp_path / "store" / "reference" / "kinematic.jsonl")
    assert first["events"] == first["ok"] == len(store.records()) == 6
    assert json.loads((tmp_path / "annotate.json").read_text())["ok"] == 6
    again = run(annotate_cfg())
    assert (
        again["skipped"] == 6
        and again["ok"] == 0
        and len(AnnotationStore(store.path).records()) == 6
    )
    dry = run(annotate_cfg("task.dry_run=true"))
    assert dry["to_annotate"] == 0
    collapsed = run(
        annotate_cfg(
            "task.source=model",
            "model=perturbed",
            "model/perturbation=beat_collapse",
            "model.level=1.0",
        )
    )
    assert collapsed["ok"] == 6
    records = AnnotationStore(
        tmp_path / "store" / "perturbed_beat_collapse_1.0" / "kinematic.jsonl"
    ).records()
    assert {r.gesture_class for r in records} == {"beat"} and {r.source for r in records} == {
        "perturbed_beat_collapse_1.0"
    }
    with pytest.raises(ConfigError, match="only reads stores"):
        run(annotate_cfg("annotator=replay"))


@pytest.mark.slow
def test_task_review_writes_a_sheet_and_ingests_it(annotate_cfg, tmp_path, monkeypatch):

    monkeypatch.chdir(tmp_path)
    run(annotate_cfg())
    other = AnnotationStore(tmp_path / "store" / "reference" / "person.jsonl")
    for r in AnnotationStore(tmp_path / "store" / "reference" / "kinematic.jsonl").records():
        other.append(r.model_copy(update={"annotator": "person", "gesture_class": "iconic"}))
    out = run(
        annotate_cfg(
            "task=review",
            "task.n=2",
            "annotator.camera.size=64",
            "task.compare=person",
        )
    )
    sheet = Path(out["sheet"]["csv"])
    table = pd.read_csv(sheet, dtype=str, keep_default_na=False)
    assert len(table) == 2 and all((sheet.parent / c).is_file() for c in table["clip"])
    assert out["agreement"]["n"] == 6 and out["agreement"]["confusion"]
    table["correct_class"] = ["1", "0"]
    table.to_csv(sheet, index=False)
    ingested = run(annotate_cfg("task=review", f"task.filled={sheet}"))
    assert ingested["review"]["percent_correct"] == 50.0
    assert (tmp_path / "review_results.json").is_file()
    shutil.rmtree(sheet.parent)
    with pytest.raises(ConfigError, match=r"task\.compare=nobody: no annotations at"):
        run(annotate_cfg("task=review", "task.n=2", "task.compare=nobody"))
    assert not sheet.parent.exists()  # refused before its sheet is written


def test_beat_collapse_on_real_beat2_motion_strikes_on_the_words(beat2_sample):
    """On real SMPL-X motion (the BEAT2 sample has no sem file: one interval is made up here) the
    collapsed span holds strokes that end on the word onsets (a wrist-speed peak in the 0.2 s
    before, near-stillness on the onset), its features are finite, and the motion outside the
    collapsed span is untouched."""
    from gesturebench.body.model import BodyModel
    from gesturebench.data.beat2 import read_motion_npz
    from gesturebench.models.perturbed import BeatCollapse, Perturbed

    motion = read_motion_npz(beat2_sample / "2_scott_0_1_1.npz").frames(0, 600)
    sem = [SemInterval("05_iconic_h", 10.0, 11.2, 0.9, "round", "iconic")]
    words = [Word("so", 10.1, 10.3), Word("round", 10.7, 11.0)]
    collapsed = Perturbed(BeatCollapse(), level=1.0).generate(
        SequenceRecord("2_scott_0_1_1", 2, motion, words=words, sem=sem)
    )
    (event,) = collect_events("2_scott_0_1_1", sem, words)
    clip = make_clip(
        event,
        "collapsed",
        collapsed,
        lambda a, b: BodyModel()(collapsed.frames(a, b), vertices=False).joints.numpy(),
    )
    assert all(np.isfinite(v) for v in motion_features(clip.joints, 30).values())
    wrists = clip.joints[:, [20, 21]] - clip.joints[:, [9]]
    speed = (
        np.linalg.norm(np.diff(wrists, axis=0), axis=-1) * 30
    )  # speed[k]: frames k → k+1 of the clip
    for word in words:
        onset = round(word.start * 30) - clip.f0
        before = speed[onset - 6 : onset].max(axis=0)
        assert (speed[onset] < 0.3 * before).any(), (word, before, speed[onset])
    outside = np.ones(motion.n_frames, bool)
    outside[int(np.floor(9.4 * 30)) : int(np.ceil(11.8 * 30)) + 1] = False
    assert np.array_equal(collapsed.poses[outside], motion.poses[outside])
    assert not np.array_equal(collapsed.poses[300:336], motion.poses[300:336])


@pytest.mark.parametrize("seconds", [1.5, 2.0, 2.5])
def test_clip_keeps_every_frame_whatever_its_audio_length(tmp_path, seconds):
    """Audio shorter or longer than the frames is cut or padded with silence to their duration:
    the clip has all 60 frames and an audio track of 2 s."""
    import imageio.v2 as imageio

    frames = np.full((60, 32, 32, 3), 200, np.uint8)
    audio = np.sin(np.linspace(0, 2000, int(16000 * seconds))).astype(np.float32)
    path = write_clip(tmp_path / "clip.mp4", frames, 30, audio)
    assert imageio.get_reader(path).count_frames() == 60
    probe = subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-i", str(path)], capture_output=True, text=True
    ).stderr
    assert "Audio: aac" in probe and "Duration: 00:00:02.0" in probe
