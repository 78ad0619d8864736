"""The LLM backends against a local fake HTTP server (no key, no internet): a valid answer,
malformed JSON, a 429 then success, a 500 storm that exhausts the retries, refused credentials; and
`task=annotate` killed mid-run and resumed, with a planted API key that must appear nowhere in the
run's files."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
import torch
from hydra.errors import ConfigCompositionException

from gesturebench.annotation.backends.base import AnnotatorUnavailable
from gesturebench.annotation.clip import EventClip
from gesturebench.annotation.events import Event, collect_events
from gesturebench.annotation.runner import AnnotationRunner, RetryPolicy
from gesturebench.annotation.store import AnnotationStore
from gesturebench.body.model import BodyModel
from gesturebench.data.records import Motion, SemInterval
from gesturebench.metrics.base import annotated
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.pair import MotionPair
from gesturebench.metrics.sgp import SemanticGesturePreservation
from gesturebench.render.clips import Camera, clip_frames
from tests.helpers import composed
from tests.launch import REPO, command
from tests.support.fake_llm import ANSWER, KEY, FakeLLM


@pytest.fixture
def server():
    fake = FakeLLM()
    yield fake
    fake.close()


@pytest.fixture(params=["gemini", "openai"])
def backend(request, server, monkeypatch, tmp_path):
    """A configured backend pointed at the fake server, with its key planted in the environment."""
    if request.param == "gemini":
        pytest.importorskip(
            "google.genai", reason="the gemini backend needs the llm extra (google-genai)"
        )
        from gesturebench.annotation.backends.gemini import GeminiAnnotator

        monkeypatch.setenv("GEMINI_API_KEY", KEY)
        annotator = GeminiAnnotator(
            base_url=server.url, timeout_s=10, camera={"size": 64}, audio=False
        )
    else:
        pytest.importorskip("openai", reason="the openai backend needs the llm extra (openai)")
        from gesturebench.annotation.backends.openai_compat import OpenAICompatAnnotator

        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        annotator = OpenAICompatAnnotator(
            base_url=f"{server.url}/v1", timeout_s=10, camera={"size": 64}, max_frames=3
        )
    return annotator


def small_clip(tmp_path: Path, camera: Camera) -> EventClip:
    rng = np.random.default_rng(0)
    joints = rng.normal(0, 0.2, (30, 55, 3))
    joints[:, 16], joints[:, 17] = [0.2, 0.3, 0], [-0.2, 0.3, 0]
    event = Event(
        "1_wayne_0_1_1", 0, 1.0, 1.2, "big", "05_iconic_l", 0.4, "iconic", transcript="it was big"
    )
    return EventClip(
        event, "reference", 15, 45, 30, "ab" * 32, lambda: joints, camera=camera, clip_dir=tmp_path
    )


def test_sampled_frames_are_the_full_clips_frames(tmp_path):
    picked = np.array([0, 7, 29])
    alone = small_clip(tmp_path, Camera(size=48)).frames(picked)
    assert np.array_equal(alone, small_clip(tmp_path, Camera(size=48)).frames()[picked])
    later = np.array([5, 20])  # the view is the first frame's, rendered or not
    assert np.array_equal(
        small_clip(tmp_path, Camera(size=48)).frames(later),
        small_clip(tmp_path, Camera(size=48)).frames()[later],
    )


def run_one(annotator, tmp_path, attempts=3, invalid_attempts=2):
    pauses: list[float] = []
    store = AnnotationStore(tmp_path / "store.jsonl")
    runner = AnnotationRunner(
        annotator,
        store,
        concurrency=1,
        sleep=pauses.append,
        retry=RetryPolicy(
            attempts=attempts, initial_delay=0.5, max_delay=4.0, invalid_attempts=invalid_attempts
        ),
    )
    summary = runner.run([small_clip(tmp_path, annotator.camera)], total=1)
    return summary, store, pauses


def test_valid_answer(backend, server, tmp_path):
    _, store, pauses = run_one(backend, tmp_path)
    (record,) = store.records()
    assert record.status == "ok" and record.gesture_class == "iconic" and record.confidence == 0.8
    assert record.annotator == backend.name and record.prompt_sha256 == backend.fingerprint()
    assert len(server.requests) == 1 and pauses == []
    request = server.requests[0]
    text = json.dumps(request["body"])
    # the paper's prompt by default: its scope, classes, "unknown", the transcript and the target
    for part in (
        "hands, arms, head and upper body",
        "unknown",
        "it was big",
        "from 0.50 s to 0.70 s",
    ):
        assert part in text, part
    assert "05_iconic_l" not in text  # BEAT2's class is not shown
    if backend.name == "gemini":
        assert request["path"].endswith("models/gemini-2.5-pro:generateContent")
        assert request["headers"]["x-goog-api-key"] == KEY
        assert (
            "video/mp4" in text
            and request["body"]["generationConfig"]["responseMimeType"] == "application/json"
        )
    else:
        assert request["path"] == "/v1/chat/completions"
        assert request["headers"]["authorization"] == f"Bearer {KEY}"
        assert (
            text.count("data:image/jpeg;base64,") == 3
        )  # 1 s at 4 frames/s, capped at max_frames=3


def test_the_earlier_prompt_is_selectable_and_hashed_apart(server, monkeypatch, tmp_path):
    pytest.importorskip("openai", reason="the openai backend needs the llm extra (openai)")
    from gesturebench.annotation.backends.openai_compat import OpenAICompatAnnotator
    from gesturebench.annotation.prompt import prompt_sha256, template

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    records = {}
    for prompt in ("hands_v1", "paper"):
        annotator = OpenAICompatAnnotator(
            base_url=f"{server.url}/v1", camera={"size": 64}, max_frames=1, prompt=prompt
        )
        (records[prompt],) = run_one(annotator, tmp_path / prompt)[1].records()
    assert "Annotate ONLY the target interval" in json.dumps(server.requests[0]["body"])
    for prompt, record in records.items():
        assert record.prompt_sha256 == hashlib.sha256(template(prompt).encode()).hexdigest()
        assert record.prompt_sha256 == prompt_sha256(prompt)
    assert records["paper"].prompt_sha256 != records["hands_v1"].prompt_sha256
    with pytest.raises(ConfigCompositionException, match=r"annotator\.prompt=mine"):
        composed("annotator=openai", "annotator.prompt=mine")


def test_unknown_is_stored_as_uncertain(backend, server, tmp_path):
    server.script = [(200, json.dumps({**ANSWER, "class": "unknown"}))]
    (record,) = run_one(backend, tmp_path)[1].records()
    assert record.status == "ok" and record.gesture_class == "uncertain"


def test_malformed_json_is_asked_again_then_stored_invalid(backend, server, tmp_path):
    server.script = [(200, '{"word": "big", "class": "iconic"')]
    summary, store, _ = run_one(backend, tmp_path, invalid_attempts=2)
    (record,) = store.records()
    assert record.status == "invalid" and record.gesture_class is None
    assert record.raw == '{"word": "big", "class": "iconic"' and "not JSON" in record.error
    assert len(server.requests) == 2 and summary.counts["invalid"] == 1


def test_answer_outside_the_schema_is_invalid(backend, server, tmp_path):
    server.script = [(200, json.dumps({**ANSWER, "class": "emblem"}))]
    _, store, _ = run_one(backend, tmp_path, invalid_attempts=1)
    (record,) = store.records()
    assert record.status == "invalid" and "class" in record.error and len(server.requests) == 1


def test_rate_limit_then_success(backend, server, tmp_path):
    server.script = [(429, ""), (200, json.dumps(ANSWER))]
    _, store, pauses = run_one(backend, tmp_path)
    assert [r.status for r in store.records()] == ["ok"]
    assert len(server.requests) == 2
    assert (
        len(pauses) == 1 and 0.25 <= pauses[0] <= 0.5
    )  # first back-off: uniform in [d/2, d], d = 0.5 s


def test_server_error_storm_exhausts_the_retries(backend, server, tmp_path):
    server.script = [(500, "")]
    summary, store, pauses = run_one(backend, tmp_path, attempts=4)
    (record,) = store.records()
    assert (
        record.status == "error"
        and "gave up after 4 attempts" in record.error
        and "500" in record.error
    )
    assert len(server.requests) == 4 and summary.counts["error"] == 1
    assert len(pauses) == 3 and all(
        d / 2 <= p <= d for p, d in zip(pauses, (0.5, 1.0, 2.0), strict=True)
    )
    assert KEY not in record.error
    server.script = [(200, json.dumps(ANSWER))]  # an error is not final: the next run asks again
    summary, store, _ = run_one(backend, tmp_path)
    assert summary.counts["ok"] == 1 and store.latest()[record.event_id].status == "ok"


def test_refused_credentials_stop_the_run(backend, server, tmp_path):
    server.script = [(401, "")]
    with pytest.raises(AnnotatorUnavailable, match="credentials refused"):
        run_one(backend, tmp_path)
    assert len(server.requests) == 1


def test_missing_key_names_the_variable(backend, monkeypatch, tmp_path):
    monkeypatch.delenv(backend.api_key_env)
    with pytest.raises(AnnotatorUnavailable, match=backend.api_key_env):
        run_one(backend, tmp_path)


# ------------------------------------------------------------------------------------------
# task=annotate


def _launch(*overrides: str, env: dict) -> subprocess.Popen:
    """`launch.py` started in the background (in a session of its own, to be killed whole)."""
    cmd, run_env = command(*overrides, env=env)
    return subprocess.Popen(
        cmd,
        cwd=REPO,
        env=run_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.slow
def test_killed_annotate_run_resumes_without_duplicates_and_leaks_no_key(
    tmp_path, in_process, capsys, caplog, monkeypatch
):
    """The first run is a process killed with SIGKILL mid-run; the resumed run runs as
    `launch.py` runs it, in the test process."""
    pytest.importorskip(
        "google.genai", reason="the gemini backend needs the llm extra (google-genai)"
    )
    fake = FakeLLM(delay=0.3)
    try:
        store_root = tmp_path / "store"
        common = (
            "task=annotate",
            "annotator=gemini",
            f"annotator.base_url={fake.url}",
            "annotator.camera.size=32",
            "dataset.max_sequences=1",
            "task.concurrency=1",
            f"task.store_root={store_root}",
        )
        store = store_root / "reference" / "gemini.jsonl"
        first = _launch(*common, f"hydra.run.dir={tmp_path / 'run1'}", env={"GEMINI_API_KEY": KEY})
        deadline = time.time() + 240
        while len(_lines(store)) < 2 and first.poll() is None and time.time() < deadline:
            time.sleep(0.2)
        assert first.poll() is None, (
            f"the run ended before it could be killed: {first.communicate()[0][-2000:]}"
        )
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        killed = _lines(store)
        assert 2 <= len(killed) < 6

        monkeypatch.setenv("GEMINI_API_KEY", KEY)
        in_process(*common, f"hydra.run.dir={tmp_path / 'run2'}", encoders=False)
        out, err = capsys.readouterr()
        output = out + err + caplog.text
        records = _lines(store)
        ids = [r["event_id"] for r in records]
        assert len(ids) == len(set(ids)) == 6  # the sequence's 6 events, each exactly once
        assert records[: len(killed)] == killed and {r["status"] for r in records} == {"ok"}
        summary = json.loads((tmp_path / "run2" / "annotate.json").read_text())
        assert summary["skipped"] == len(killed) and summary["ok"] == 6 - len(killed)
        assert len(fake.requests) == 6 and all(
            r["headers"]["x-goog-api-key"] == KEY for r in fake.requests
        )
        assert list((tmp_path / "run2" / "wandb").glob("offline-run-*"))
        leaks = [p for p in tmp_path.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
        assert leaks == [] and KEY not in output
    finally:
        fake.close()


# ------------------------------------------------------------------------------------------
# SGP with mesh clips: the metric path renders the body surface the evaluator computed


class CountingBody:
    """A body model that counts its forwards (the metric must reuse the evaluator's vertices)."""

    def __init__(self, body):
        self.body, self.faces, self.calls = body, body.faces, 0

    def __call__(self, motion, vertices: bool = True):
        self.calls += 1
        return self.body(motion, vertices=vertices)


def test_sgp_metric_sends_mesh_clips_of_the_evaluators_vertices(server, sandbox, tmp_path):
    """`annotator.camera.style=mesh` in the SGP metric: SGP from the fake server's answers (a beat
    for one of the two valid events), and the frames sent are the shaded surface of the generated
    motion, from the evaluator's vertices (no second forward) or, where it computed none, from a
    forward of the clip's window; the same frames either way."""
    pytest.importorskip("openai", reason="the openai backend needs the llm extra (openai)")
    from gesturebench.annotation.backends.openai_compat import OpenAICompatAnnotator

    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    n = 90
    poses = rng.normal(0, 0.15, (n, 165))
    reference = Motion(poses, np.tile([0.0, 1.0, 0.0], (n, 1)), np.zeros(10), np.zeros((n, 100)))
    generated = Motion(
        poses + rng.normal(0, 0.2, (n, 165)), reference.trans, np.zeros(10), reference.expressions
    )
    sem = [
        SemInterval("iconic", 0.5, 1.0, 0.5, "the big one"),
        SemInterval("deictic", 1.5, 2.0, 0.5, "over there"),
        SemInterval("beat", 2.2, 2.5, 0.5, "so"),  # not a valid event: never asked
    ]
    server.answer = lambda body: json.dumps(
        {
            **ANSWER,
            "class": "beat"
            if '"the big one"' in body["messages"][0]["content"][-1]["text"]
            else "iconic",
        }
    )
    body = BodyModel(checkpoints_dir=sandbox.checkpoints)
    camera = {"size": 64, "style": "mesh"}
    sent = {}
    for with_vertices in (True, False):
        counting = CountingBody(body)
        ctx = MetricContext("test", lambda name: [], tmp_path, tmp_path, counting)
        annotator = OpenAICompatAnnotator(
            base_url=f"{server.url}/v1", api_key_env=None, camera=camera, max_frames=2
        )
        metric = SemanticGesturePreservation(
            annotator=annotator, store_root=str(tmp_path / str(with_vertices)), concurrency=1
        )
        metric.prepare(ctx)
        gen_body, ref_body = (
            body(generated, vertices=with_vertices),
            body(reference, vertices=with_vertices),
        )
        before = len(server.requests)
        pair = MotionPair(
            0, "seq", generated, reference, gen_body, ref_body, sem=sem, model_name="m"
        )
        metric.update(annotated(pair, metric))
        out = metric.compute()
        assert out["sgp"] == pytest.approx(0.5) and out["sgp_invalid"] == 0
        assert out["sgp_events"] == 2
        assert counting.calls == (0 if with_vertices else 2)  # one window forward per clip
        requests = server.requests[before:]
        assert len(requests) == 2
        sent[with_vertices] = [
            iio.imread(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))
            for r in requests
            for part in r["body"]["messages"][0]["content"]
            if part["type"] == "image_url"
        ]
    # independently: the first sampled frame of the first event's clip, from a forward of the window
    event = collect_events("seq", sem)[0]
    f0, f1 = event.window(n, 30, annotator.context)
    window = body(generated.frames(f0, f1))
    first = window.joints.numpy()[:1]
    mesh = clip_frames(first, annotator.camera, lambda: (window.vertices[:1], body.faces))[0]
    skeleton = clip_frames(first, Camera(size=64))[0]

    def jpeg(frame: np.ndarray) -> np.ndarray:  # as the backend encodes it
        return iio.imread(iio.imwrite("<bytes>", frame, extension=".jpeg")).astype(float)

    for frames in sent.values():
        assert len(frames) == 4 and frames[0].shape == (64, 64, 3)
        error = np.abs(frames[0] - jpeg(mesh)).mean()
        assert error < 0.5, error
        assert np.abs(frames[0] - jpeg(skeleton)).mean() > 10 * max(error, 0.5)
