"""The encoders shipped with the package (`gesturebench.encoders.ship`): used on a first run only
when their training identity (config, train and val records, the sentence encoder's files) is the
run's, verified like any cache entry, and the same bytes as a retrain with one thread (slow)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf

from gesturebench.data.records import SequenceRecord, records_digest
from gesturebench.encoders import ship, training_common
from gesturebench.encoders.motion_ae_training import MotionAEConfig
from gesturebench.encoders.text_training import TextMotionConfig
from gesturebench.encoders.training_common import SHIPPED, TRAINED_ON
from gesturebench.metrics.bc import SHIPPED_ONSETS
from gesturebench.runtime.errors import DataError

CONFIGS = {"motion_ae": MotionAEConfig(), "text_motion": TextMotionConfig()}
CONF = Path(__file__).resolve().parents[1] / "conf" / "encoder"


def shipped(name: str) -> Path:
    return SHIPPED / f"{name}-mini_beat2.pt"


def sidecar(name: str) -> dict:
    return json.loads(shipped(name).with_suffix(".json").read_text())


class Trained(Exception):
    """Raised by the stubbed training: the shipped encoder was not used."""


@pytest.fixture
def no_training(monkeypatch):
    def train(self, *args, **kwargs):
        raise Trained(self.name)

    monkeypatch.setattr(training_common.EncoderConfig, "train", train)


@pytest.mark.parametrize("name", CONFIGS)
def test_shipped_files_prove_their_bytes_and_are_small(name):
    path = shipped(name)
    meta = sidecar(name)
    assert meta["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert path.stat().st_size < 1_000_000
    assert meta["trained_with"]["threads"] == ship.THREADS
    # trained with the options of conf/encoder/<name>.yaml (what `python launch.py` uses)
    options = OmegaConf.to_container(OmegaConf.load(CONF / f"{name}.yaml"))
    options.pop("defaults")
    assert meta[TRAINED_ON]["config"] == {**dataclasses.asdict(CONFIGS[name]), **options}


@pytest.mark.parametrize("name", CONFIGS)
def test_a_first_run_copies_the_shipped_encoder_instead_of_training(
    name, mini_records, tmp_path, no_training, caplog
):
    cfg = CONFIGS[name]
    with caplog.at_level(logging.INFO, logger=training_common.__name__):
        module, info = cfg.load_or_train(tmp_path, "mini_beat2", mini_records.__getitem__, True)
    path = cfg.checkpoint_path(tmp_path, "mini_beat2")
    assert path.read_bytes() == shipped(name).read_bytes()
    assert info["sha256"] == sidecar(name)["sha256"] and info["path"] == str(path)
    assert (
        "shipped with gesturebench" in json.loads(path.with_suffix(".json").read_text())["source"]
    )
    assert "shipped with gesturebench" in caplog.text
    again, _ = cfg.load_or_train(tmp_path, "mini_beat2", mini_records.__getitem__, True)
    for a, b in zip(module.state_dict().values(), again.state_dict().values(), strict=True):
        assert torch.equal(a, b)


def changed_first_record(records: dict) -> dict:
    """The splits with one pose value of the first train record changed (a changed generator)."""
    first = records["train"][0]
    poses = first.motion.poses.copy()
    poses[0, 0] += 1e-3
    motion = dataclasses.replace(first.motion, poses=poses)
    changed = SequenceRecord(first.id, first.speaker, motion, words=first.words)
    return {**records, "train": [changed, *records["train"][1:]]}


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("change", ["data", "config"])
def test_another_generator_or_config_trains_instead(
    name, change, mini_records, tmp_path, no_training
):
    cfg, records = CONFIGS[name], mini_records
    if change == "data":
        records = changed_first_record(mini_records)
    else:
        cfg = dataclasses.replace(cfg, max_steps=cfg.max_steps - 1)
    with pytest.raises(Trained):
        cfg.load_or_train(tmp_path, "mini_beat2", records.__getitem__, True)
    assert not cfg.checkpoint_path(tmp_path, "mini_beat2").exists()


def test_another_sentence_encoder_trains_the_text_model_instead(
    mini_records, tmp_path, no_training, monkeypatch
):
    identity = TextMotionConfig.identity

    def other_weights(self, train, val, checkpoints_dir):
        fields = identity(self, train, val, checkpoints_dir)
        return {**fields, "text_model": {"model.safetensors": "0" * 64}}

    monkeypatch.setattr(TextMotionConfig, "identity", other_weights)
    with pytest.raises(Trained):
        TextMotionConfig().load_or_train(tmp_path, "mini_beat2", mini_records.__getitem__, True)


def test_a_checkpoint_trained_on_other_data_is_set_aside(mini_records, tmp_path, no_training):
    """A checkpoint of the same name from another mini-BEAT2 (another size, an older generator)
    is not scored with: set aside, the shipped one used."""
    cfg = MotionAEConfig()
    path = cfg.checkpoint_path(tmp_path, "mini_beat2")
    cfg.load_or_train(tmp_path, "mini_beat2", mini_records.__getitem__, True)
    meta = json.loads(path.with_suffix(".json").read_text())
    meta[TRAINED_ON]["train"] = "0" * 64
    path.with_suffix(".json").write_text(json.dumps(meta))
    cfg.load_or_train(tmp_path, "mini_beat2", mini_records.__getitem__, True)
    assert path.with_name(path.name + ".corrupt").is_file()
    assert path.read_bytes() == shipped("motion_ae").read_bytes()


def test_a_damaged_shipped_encoder_is_not_used(mini_records, tmp_path, monkeypatch, no_training):
    folder = tmp_path / "shipped"
    shutil.copytree(SHIPPED, folder)
    data = bytearray((folder / "motion_ae-mini_beat2.pt").read_bytes())
    data[-100] ^= 1
    (folder / "motion_ae-mini_beat2.pt").write_bytes(bytes(data))
    monkeypatch.setattr(training_common, "SHIPPED", folder)
    with pytest.raises(Trained):
        MotionAEConfig().load_or_train(tmp_path, "mini_beat2", mini_records.__getitem__, True)


def test_the_records_digest_sees_every_trained_on_part(mini_records):
    records = mini_records["train"][:2]
    base = records_digest(records)
    first = records[0]
    words = [dataclasses.replace(first.words[0], word="other"), *first.words[1:]]
    trans = first.motion.trans + np.float32(1e-6)
    variants = [
        [dataclasses.replace(first, words=words), records[1]],
        [
            dataclasses.replace(first, motion=dataclasses.replace(first.motion, trans=trans)),
            records[1],
        ],
        [dataclasses.replace(first, id="other"), records[1]],
        records[::-1],
        records[:1],
    ]
    digests = {base, *(records_digest(v) for v in variants)}
    assert len(digests) == len(variants) + 1
    assert records_digest(list(records)) == base


@pytest.mark.slow
def test_a_retrain_gives_the_shipped_bytes(mini_beat2, tmp_path):
    """`python -m gesturebench.encoders.ship` on a freshly generated mini-BEAT2, into a temporary
    folder: the same checkpoints, byte for byte, and the same training identity (one torch thread,
    this torch build)."""
    ship.main(["--data", str(mini_beat2), "--out", str(tmp_path)])
    for name in CONFIGS:
        path = tmp_path / shipped(name).name
        assert path.read_bytes() == shipped(name).read_bytes(), name
        meta = json.loads(path.with_suffix(".json").read_text())
        assert meta[TRAINED_ON] == sidecar(name)[TRAINED_ON]


def test_shipping_from_a_folder_without_mini_beat2_is_one_line(tmp_path):
    with pytest.raises(DataError, match=f"{tmp_path}: no mini-BEAT2 here.*task=make_data"):
        ship.main(["--data", str(tmp_path), "--out", str(tmp_path / "out")])


@pytest.mark.slow
def test_the_wheel_holds_the_shipped_encoders(tmp_path):
    """setup.py's package data: the checkpoints, the speech onsets and their sidecars are in the
    wheel, the same bytes."""
    repo = Path(__file__).resolve().parents[1]
    source, dist = tmp_path / "source", tmp_path / "dist"
    for name in ("src", "conf"):  # a copy: building writes into the source folder
        shutil.copytree(repo / name, source / name, ignore=shutil.ignore_patterns("*.egg-info"))
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(repo / name, source / name)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PIP_NO_INDEX": "1"}
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "wheel"]
    subprocess.run(
        [*command, "--no-deps", "--no-build-isolation", "-w", str(dist), str(source)],
        check=True,
        env=env,
        cwd=tmp_path,
    )
    package = Path(training_common.__file__).resolve().parents[1]
    with zipfile.ZipFile(next(dist.glob("gesturebench-*.whl"))) as wheel:
        for folder in (SHIPPED, SHIPPED_ONSETS):
            for path in sorted(folder.iterdir()):
                name = path.relative_to(package.parent).as_posix()
                assert wheel.read(name) == path.read_bytes()
