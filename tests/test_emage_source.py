"""`model=emage` run natively (`EmageSource`): the released layout loads (tiny seeded weights
written by `emage_support.write_release`, never downloaded), generation equals the module's own
on the reference's seed frames, results are cached, and each unusable input is one line."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from gesturebench.data.records import SAMPLE_RATE
from gesturebench.encoders.representation import rotation_6d
from gesturebench.models.emage.inference import generate
from gesturebench.models.emage.release import RELEASE
from gesturebench.models.emage.source import EmageSource, foot_contact
from gesturebench.run.config import build_model
from gesturebench.runtime.errors import CheckpointError, DataError
from gesturebench.runtime.weights import sha256_file
from gesturebench.tasks.common import make_body_model, open_dataset
from tests.emage_support import small_models, write_release
from tests.helpers import composed
from tests.launch import error_line, results, stopped

SECONDS = 3  # 90 frames: one full window and a final one


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    return write_release(tmp_path_factory.mktemp("emage_release"))


@pytest.fixture(scope="module")
def record():
    full = open_dataset(composed().dataset)[0]
    frames = SECONDS * 30
    return replace(
        full, motion=full.motion.frames(0, frames), audio=full.audio[: SECONDS * SAMPLE_RATE]
    )


@pytest.fixture(scope="module")
def body_model():
    return make_body_model(composed().body_model, "cpu")


def native(tmp_path, body_model, *overrides: str) -> EmageSource:
    """`model=emage` built from its YAML, prepared with a cache under `tmp_path`."""
    cfg = composed(f"paths.checkpoints={tmp_path / 'ckpt'}", "model=emage", *overrides)
    model = build_model(cfg.model)
    model.prepare(
        SimpleNamespace(cache_dir=tmp_path / "cache", body_model=body_model, device="cpu")
    )
    return model


def test_foot_contact_is_a_small_step_to_the_next_frame():
    joints = torch.zeros(3, 55, 3)
    joints[1, 7, 0] = 0.02  # left ankle moves 2 cm into frame 1 and back
    joints[2, 10, 1] = 0.005  # left foot moves 5 mm into frame 2
    assert foot_contact(joints).tolist() == [[0, 1, 1, 1], [0, 1, 1, 1], [1, 1, 1, 1]]


def test_release_files_are_the_official_layout():
    assert RELEASE.repo_id == "H-Liu1997/emage_audio" and RELEASE.folder == "emage"
    parts = ("face", "upper", "hands", "lower", "global")
    expected = {"config.json", "pytorch_model.bin"}
    expected |= {f"emage_vq/{p}/{n}" for p in parts for n in ("config.json", "pytorch_model.bin")}
    assert set(RELEASE.files) == expected


def test_native_generation_is_the_module_on_the_reference_seed(
    weights, record, body_model, tmp_path
):
    model = native(tmp_path, body_model, f"model.weights={weights}", "model.progress=false")
    assert type(model) is EmageSource
    motion = model.generate(record)

    generator, codec = small_models()
    generator, codec = generator.float(), codec.float()
    joints = body_model(record.motion.frames(0, 5), vertices=False).joints.float()
    poses = torch.as_tensor(record.motion.poses[:4])
    trans = torch.as_tensor(record.motion.trans[:4])
    seed = torch.cat([rotation_6d(poses.reshape(4, 55, 3)).reshape(4, -1), trans], -1)
    seed = torch.cat([seed, foot_contact(joints)[:4]], -1)[None]
    audio = torch.as_tensor(record.audio)[None]
    want = generate(generator, codec, audio, seed=seed, start_trans=trans[:1])
    assert motion.n_frames == want["poses"].shape[1] == 90  # 60 + 30: nothing dropped at the end
    np.testing.assert_allclose(motion.poses, want["poses"][0], atol=1e-5)
    np.testing.assert_allclose(motion.expressions, want["expressions"][0], atol=1e-5)
    np.testing.assert_allclose(motion.trans, want["trans"][0], atol=1e-5)
    np.testing.assert_allclose(motion.trans[0, [0, 2]], record.motion.trans[0, [0, 2]], atol=1e-6)
    np.testing.assert_array_equal(motion.betas, record.motion.betas)

    info = model.describe()
    assert info["source"] == "native" and info["weights_source"] == "configured"
    assert info["weights"] == str(weights)
    assert info["sha256"]["pytorch_model.bin"] == sha256_file(weights / "pytorch_model.bin")
    assert len(info["sha256"]) == 12 and "seed_frames" in info["from_reference"]
    assert info["copied_fields"] == []  # nothing is copied whole: no output equals the reference


def test_a_cached_sequence_never_loads_emage_again(
    weights, record, body_model, tmp_path, monkeypatch
):
    first = native(tmp_path, body_model, f"model.weights={weights}").generate(record)
    assert len(list((tmp_path / "cache" / "generated" / "emage").glob("*/out/*.npz"))) == 1

    def refuse(*args):
        raise AssertionError("EMAGE loaded for a cached sequence")

    monkeypatch.setattr("gesturebench.models.emage.source.load_release", refuse)
    again = native(tmp_path, body_model, f"model.weights={weights}").generate(record)
    np.testing.assert_array_equal(again.poses, first.poses)


def test_weights_from_checkpoints_folder(weights, body_model, tmp_path):
    shutil.copytree(weights, tmp_path / "ckpt" / "emage")
    model = native(tmp_path, body_model)
    assert model.describe()["weights_source"] == "checkpoints"


def test_missing_weights_offline_is_one_line(body_model, tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(CheckpointError) as err:
        native(tmp_path, body_model)
    folder = tmp_path / "ckpt" / "emage"
    assert str(err.value) == (  # the first file only: the twelve are listed in docs/emage.md
        f"model=emage: weights missing: {folder / 'config.json'} and 11 more of its 12 files"
        f" (HF_HUB_OFFLINE is set); put the files of https://huggingface.co/H-Liu1997/emage_audio"
        f" into {folder}/ or set model.weights=/path/to/them (file list: docs/emage.md;"
        " all at once: python launch.py task=fetch)"
    )


def broken(weights, tmp_path, fault: str):
    """A copy of the release with one fault."""
    folder = shutil.copytree(weights, tmp_path / f"release_{fault}")
    if fault == "truncated":
        data = (folder / "pytorch_model.bin").read_bytes()
        (folder / "pytorch_model.bin").write_bytes(data[: len(data) // 2])
    elif fault == "config":
        config = json.loads((folder / "emage_vq/lower/config.json").read_text())
        (folder / "emage_vq/lower/config.json").write_text(json.dumps({**config, "vae_layer": 3}))
    elif fault == "field":
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, "hidden_size": "768"}))
    return folder


@pytest.mark.parametrize(
    "fault, message",
    [
        ("truncated", r"pytorch_model\.bin: not loadable with torch\.load"),
        ("config", r"emage_vq/lower/pytorch_model\.bin: does not fit the lower codec its config"),
        ("field", r"config\.json: hidden_size must be an integer, got '768'"),
    ],
)
def test_unusable_release_is_one_line_and_caches_nothing(
    fault, message, weights, record, body_model, tmp_path
):
    folder = broken(weights, tmp_path, fault)
    model = native(tmp_path, body_model, f"model.weights={folder}")
    with pytest.raises(CheckpointError, match=message) as err:
        model.generate(record)
    assert "\n" not in str(err.value) and str(folder) in str(err.value)
    cached = tmp_path / "cache" / "generated" / "emage"
    assert not [p for p in cached.iterdir() if p.is_dir() and not p.name.endswith(".attempt")]


def test_audio_shorter_than_one_window_is_one_line(weights, record, body_model, tmp_path):
    short = replace(record, audio=record.audio[: SAMPLE_RATE // 4])  # 7 frames
    model = native(tmp_path, body_model, f"model.weights={weights}")
    with pytest.raises(
        DataError,
        match=re.escape(f"sequence {record.id}: 7 frames of speech are too few for EMAGE"),
    ):
        model.generate(short)
    assert not list((tmp_path / "cache" / "generated" / "emage").glob("*/out"))


@pytest.mark.slow
def test_launch_scores_native_emage_with_every_metric(weights, tmp_path, in_process):
    in_process(
        "model=emage",
        f"model.weights={weights}",
        "dataset.max_sequences=1",
        "task.render_clips=0",  # clips: tests/test_render_task.py, tests/test_report_html.py
        f"hydra.run.dir={tmp_path / 'run'}",
    )
    res = results(tmp_path / "run")
    info = res["model_info"]
    assert info["source"] == "native" and info["weights_source"] == "configured"
    assert info["sha256"]["pytorch_model.bin"] == sha256_file(weights / "pytorch_model.bin")
    assert all(v is not None for k, v in res["metrics"].items() if k not in res["skipped"])
    assert any("starts its translation" in note for note in res["skipped"].values())


@pytest.mark.slow
def test_sweep_with_ground_truth_writes_its_summary(weights, sandbox, tmp_path, in_process):
    """The weights in the sandbox's checkpoints/emage/ (a sweep's shared overrides cannot name
    model.weights: ground_truth has no such option)."""
    shutil.copytree(weights, sandbox.checkpoints / "emage")
    try:
        code = in_process(
            "-m",
            "model=emage,ground_truth",
            "dataset.max_sequences=1",
            "metrics=fast",
            f"hydra.sweep.dir={tmp_path / 'sweep'}",
            encoders=False,  # the fast metrics use no learned encoder
        )
    finally:
        shutil.rmtree(sandbox.checkpoints / "emage")
    assert code == 0
    table = pd.read_csv(tmp_path / "sweep" / "summary.csv")
    assert sorted(table["model"]) == ["emage", "ground_truth"] and set(table["status"]) == {"ok"}


@pytest.mark.slow
def test_launch_with_truncated_weights_exits_2_on_one_line(weights, tmp_path, in_process, capsys):
    folder = broken(weights, tmp_path, "truncated")
    refused = stopped(capsys, "model=emage", f"model.weights={folder}", "metrics=fast")
    assert "pytorch_model.bin: not loadable" in error_line(refused)
