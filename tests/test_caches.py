"""Damaged or poisoned cache entries (truncated or garbled files, valid files of wrong values, with
their sidecar's checksum updated or not) are set aside as `<name>.corrupt`, logged and recomputed to
the value they held; checkpoints with non-finite weights are one error naming the file. The onset
and speed caches are tested through BC too (tests/metrics/test_bc.py)."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import io
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest
import torch
from hypothesis import strategies as st

from gesturebench.body.procedural import model_entry
from gesturebench.data.records import N_JOINTS, Motion
from gesturebench.encoders.checkpoint import (
    MOTION_AE_FORMAT,
    encoder_entry,
    load_motion_ae,
    save_motion_ae,
)
from gesturebench.encoders.motion_ae import MotionAutoencoder
from gesturebench.encoders.motion_ae_training import MotionAEConfig
from gesturebench.metrics import bc
from gesturebench.metrics.coverage import Coverage
from gesturebench.metrics.density import Density
from gesturebench.metrics.fgd import FGD
from gesturebench.models.base import GestureModel
from gesturebench.models.cache import MOTION_SCHEMA, MotionCache, motion_entry
from gesturebench.runtime.caches import CORRUPT, CacheEntry
from gesturebench.runtime.errors import CheckpointError
from tests.helpers import toy_context, zero_motion
from tests.support.damage import damage
from tests.support.fuzz import tiers


class Counting(GestureModel):
    """A cacheable model whose motion is a seeded random walk; counts its generations."""

    def __init__(self):
        super().__init__("counting")
        self.calls = 0

    def generate(self, record):
        self.calls += 1
        motion = zero_motion(record.motion.n_frames)
        walk = np.random.default_rng(7).standard_normal(motion.poses.shape).cumsum(0)
        motion.poses[:] = 0.05 * walk  # plausible rotations (the motion reader checks them)
        return motion


@pytest.mark.parametrize("how", ["truncate", "garble"])
def test_a_damaged_generated_motion_is_set_aside_and_regenerated(tmp_path, how, caplog):
    from gesturebench.data.records import SequenceRecord

    record = SequenceRecord("2_scott_0_1_1", 2, zero_motion(40))
    model, cache = Counting(), MotionCache(tmp_path)
    first = cache.get(model, record)
    entry = cache.path(model, record)
    damage(entry, how)
    again = cache.get(model, record)
    assert model.calls == 2 and np.array_equal(again.poses, first.poses)
    assert entry.with_name(entry.name + ".corrupt").is_file() and str(entry) in caplog.text
    assert np.array_equal(cache.get(model, record).poses, first.poses) and model.calls == 2


def test_a_damaged_auto_trained_encoder_is_set_aside_and_retrained(tmp_path, monkeypatch, caplog):
    cfg = MotionAEConfig()

    def train(self, train, val, out_path, checkpoints_dir="checkpoints", logger=None):
        torch.manual_seed(0)
        save_motion_ae(MotionAutoencoder(**self.module_kwargs()), out_path, {}, {})

    monkeypatch.setattr(MotionAEConfig, "train", train)
    first, _ = cfg.load_or_train(tmp_path, "toy", lambda split: [], auto_train=True)
    entry = cfg.checkpoint_path(tmp_path, "toy")
    damage(entry, "truncate")
    with pytest.raises(CheckpointError, match="not a usable"):  # not a cache: the user's file
        cfg.load_or_train(tmp_path, "toy", lambda split: [], auto_train=False)
    again, _ = cfg.load_or_train(tmp_path, "toy", lambda split: [], auto_train=True)
    for a, b in zip(first.state_dict().values(), again.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert entry.with_name(entry.name + ".corrupt").is_file() and str(entry) in caplog.text


def test_the_metrics_of_one_encoder_share_one_load_per_context(tmp_path, monkeypatch):
    """FGD, Density and Coverage prepared in one context (one run) load their motion autoencoder
    once (its file read and verified once, its training data checked once) and share it; another
    context (another run) loads it again."""
    cfg = MotionAEConfig()
    save_motion_ae(
        MotionAutoencoder(**cfg.module_kwargs()), cfg.checkpoint_path(tmp_path, "toy"), {}, {}
    )
    loads = []
    load = MotionAEConfig.load_or_train
    monkeypatch.setattr(
        MotionAEConfig,
        "load_or_train",
        lambda self, *args, **kwargs: loads.append(self) or load(self, *args, **kwargs),
    )
    context = toy_context(tmp_path)
    metrics = [FGD(), Density(), Coverage()]
    for metric in metrics:
        metric.prepare(context)
    assert loads == [cfg]
    assert metrics[0].encoder is metrics[1].encoder is metrics[2].encoder is not None
    FGD().prepare(toy_context(tmp_path))
    assert len(loads) == 2


def nan_weights(path):
    """Save the motion autoencoder at `path` with one weight NaN, as its trainer would."""
    module = MotionAutoencoder(**MotionAEConfig().module_kwargs())
    with torch.no_grad():
        next(module.parameters())[0] = float("nan")
    save_motion_ae(module, path, {}, {})


def test_an_encoder_checkpoint_with_nan_weights_is_one_error_naming_the_file(tmp_path):
    """NaN weights ended in `unexpected _LinAlgError` (FGD's matrix square root), no file named."""
    path = MotionAEConfig().checkpoint_path(tmp_path, "toy")
    nan_weights(path)
    with pytest.raises(CheckpointError, match="non-finite") as err:
        MotionAEConfig().load_or_train(tmp_path, "toy", lambda split: [], auto_train=False)
    assert str(err.value).startswith(f"{path}: ") and "\n" not in str(err.value)


def test_an_auto_trained_encoder_with_nan_weights_is_set_aside_and_retrained(
    tmp_path, monkeypatch, caplog
):
    cfg = MotionAEConfig()

    def train(self, train, val, out_path, checkpoints_dir="checkpoints", logger=None):
        torch.manual_seed(0)
        save_motion_ae(MotionAutoencoder(**self.module_kwargs()), out_path, {}, {})

    monkeypatch.setattr(MotionAEConfig, "train", train)
    entry = cfg.checkpoint_path(tmp_path, "toy")
    nan_weights(entry)
    module, _ = cfg.load_or_train(tmp_path, "toy", lambda split: [], auto_train=True)
    assert all(torch.isfinite(w).all() for w in module.state_dict().values())
    assert entry.with_name(entry.name + ".corrupt").is_file() and str(entry) in caplog.text


def test_model_weights_with_nan_are_one_error_naming_the_file(tmp_path):
    from gesturebench.models.loading import load_weights

    module = torch.nn.Linear(3, 2)
    state = {k: v.clone() for k, v in module.state_dict().items()}
    state["bias"][1] = float("inf")
    path = tmp_path / "weights.pt"
    torch.save(state, path)
    with pytest.raises(CheckpointError, match=r"bias has 1 non-finite values") as err:
        load_weights(module, path, "pkg:Model")
    assert str(err.value).startswith(f"{path}: ")


# ---------- property: a damaged or poisoned entry never reads as a wrong value ----------


class Kind(NamedTuple):
    """A cache kind under test: its entry at a path, a valid value, its bytes, whether two values
    are equal, and defects that make a value invalid (each takes the value and a draw)."""

    entry: Callable[[Path], CacheEntry]
    value: Any
    encode: Callable[[Any], bytes]
    equal: Callable[[Any, Any], bool]
    defects: dict[str, Callable[[Any, Any], Any]]


def npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def npz(arrays: dict) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def torch_bytes(module: torch.nn.Module) -> bytes:
    """The bytes `save_motion_ae` writes for `module`."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.pt"
        save_motion_ae(module, path, {}, {})
        return path.read_bytes()


def with_nan(array, data):
    array = np.array(array, dtype=np.float64)
    array.flat[data.draw(st.integers(0, array.size - 1))] = data.draw(
        st.sampled_from([np.nan, np.inf, -np.inf])
    )
    return array


def motion_with(defect):
    def change(motion, data):
        name = data.draw(st.sampled_from(["poses", "trans", "betas", "expressions"]))
        return {**motion.to_npz_dict(), name: defect(getattr(motion, name), data)}

    return change


def ae_with_nan(module, data):
    module = copy.deepcopy(module)
    with torch.no_grad():
        weights = data.draw(st.sampled_from([p for p in module.parameters()]))
        weights.view(-1)[data.draw(st.integers(0, weights.numel() - 1))] = float("nan")
    return module


SPEED = np.linspace(0.05, 1.5, N_JOINTS)
ONSETS = np.array([0.12, 0.5, 1.75, 3.0])
MOTION = zero_motion(12)
AE = MotionAutoencoder(**MotionAEConfig().module_kwargs())
MODEL_ARRAYS = {"v_template": np.ones((5, 3)), "f": np.arange(6, dtype=np.int64).reshape(2, 3)}

KINDS = {
    "onsets": Kind(
        lambda p: bc.onset_entry(p, {"audio_sha256": "ab", "segment": "1"}, 4.0),
        ONSETS,
        npy,
        np.array_equal,
        {
            "non-finite": with_nan,
            "negative": lambda v, d: v - d.draw(st.floats(1.0, 1e30)),
            "past the audio": lambda v, d: v + d.draw(st.floats(4.0, 1e30)),
            "unsorted": lambda v, d: v[::-1],
            "2-D": lambda v, d: v.reshape(2, 2),
        },
    ),
    "speed statistics": Kind(
        lambda p: bc.speed_entry(p, {"dataset": "toy"}, False),
        SPEED.tolist(),
        lambda v: json.dumps({"dataset": "toy", "mean_speed": list(v)}).encode(),
        lambda a, b: list(a) == list(b),
        {
            "non-finite": lambda v, d: with_nan(v, d).tolist(),
            "zeros": lambda v, d: [0.0] * len(v),
            "negative": lambda v, d: (-np.asarray(v)).tolist(),
            "scaled up": lambda v, d: (np.asarray(v) * d.draw(st.floats(20.0, 1e6))).tolist(),
            "too few": lambda v, d: v[: d.draw(st.integers(0, len(v) - 1))],
        },
    ),
    "generated motion": Kind(
        lambda p: motion_entry(p, {"model": "m", "sequence": "s", "cache_key": "k"}),
        MOTION,
        lambda m: npz(m.to_npz_dict()) if isinstance(m, Motion) else npz(m),
        lambda a, b: all(np.array_equal(getattr(a, k), getattr(b, k)) for k in MOTION_SCHEMA),
        {
            "non-finite": motion_with(with_nan),
            "wrong shape": motion_with(lambda v, d: np.zeros((2, 2, 2))),
        },
    ),
    "encoder": Kind(
        lambda p: encoder_entry(p, MOTION_AE_FORMAT, load_motion_ae),
        AE,
        torch_bytes,
        lambda a, b: all(
            torch.equal(x, y)
            for x, y in zip(a[0].state_dict().values(), b.state_dict().values(), strict=True)
        ),
        {"non-finite": ae_with_nan},
    ),
    "body model": Kind(
        model_entry,
        MODEL_ARRAYS,
        npz,
        lambda a, b: a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a),
        {"non-finite": lambda v, d: {**v, "v_template": with_nan(v["v_template"], d)}},
    ),
}


def damage_bytes(data: bytes, draw) -> bytes:
    """Truncated, flipped or garbled bytes of a payload (possibly unchanged)."""
    how = draw(st.sampled_from(["truncate", "flip", "garble"]))
    if how == "truncate":
        return data[: draw(st.integers(0, len(data)))]
    at = draw(st.integers(0, len(data) - 1))
    if how == "flip":
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    return data[:at] + draw(st.binary(min_size=1, max_size=64)) + data[at + 1 :]


def entry_property(name, data):
    """Any change to an entry's payload (bytes damaged; a valid file of a value that breaks the
    kind's schema, with the sidecar's checksum updated to match) or to its sidecar: the read gives
    the entry's exact value or None (then set aside as .corrupt), never another value."""
    kind = KINDS[name]
    with tempfile.TemporaryDirectory() as folder:
        entry = kind.entry(Path(folder) / "entry.bin")
        entry.write(kind.encode(kind.value))
        how = data.draw(st.sampled_from(["bytes", "value", "sidecar", "no sidecar"]))
        resign = how == "value"  # re-signed damaged bytes may be another valid value
        if how == "bytes":
            entry.path.write_bytes(damage_bytes(entry.path.read_bytes(), data.draw))
        elif how == "value":
            defect = data.draw(st.sampled_from(sorted(kind.defects)))
            entry.path.write_bytes(kind.encode(kind.defects[defect](kind.value, data)))
        elif how == "sidecar":
            meta = json.loads(entry.meta_path.read_text())
            field = data.draw(st.sampled_from(["producer", "key", "schema", "sha256"]))
            meta[field] = data.draw(st.sampled_from([None, "x", 0, {"other": 1}]))
            entry.meta_path.write_text(json.dumps(meta))
        else:
            entry.meta_path.unlink()
        if resign:
            meta = json.loads(entry.meta_path.read_text())
            meta["sha256"] = hashlib.sha256(entry.path.read_bytes()).hexdigest()
            entry.meta_path.write_text(json.dumps(meta))
        value = entry.read()
        if value is None:
            assert entry.path.with_name(entry.path.name + CORRUPT).is_file()
            assert not entry.path.exists()
        else:
            assert kind.equal(value, kind.value)


(
    test_a_damaged_or_poisoned_entry_reads_as_none_or_its_exact_value,
    test_a_damaged_or_poisoned_entry_reads_as_none_or_its_exact_value_many,
) = (
    pytest.mark.parametrize("name", list(KINDS))(test)
    for test in tiers(data=st.data(), fast=12, slow=100)(entry_property)
)


def onsets_at(path: Path, key: dict, shipped: Path | None) -> CacheEntry:
    """BC's onset entry at `path`, looking in the folder `shipped` for a shipped one."""
    return dataclasses.replace(bc.onset_entry(path, key, 4.0), shipped=shipped)


@pytest.mark.parametrize("shipped_as", ["the same", "another key", "damaged"])
def test_a_shipped_entry_is_copied_in_and_used_only_where_it_proves_the_run_s_key(
    tmp_path, shipped_as, caplog
):
    key = {"audio_sha256": "ab", "segment": "1"}
    shipped = tmp_path / "shipped"
    made = onsets_at(
        shipped / "o.npy", {**key, "segment": "2"} if shipped_as == "another key" else key, None
    )
    made.write(npy(ONSETS))
    if shipped_as == "damaged":
        made.path.write_bytes(npy(ONSETS + 0.25))
    before = {p.name: p.read_bytes() for p in shipped.iterdir()}
    entry = onsets_at(tmp_path / "cache" / "o.npy", key, shipped)
    value = entry.read()
    if shipped_as == "the same":
        assert np.array_equal(value, ONSETS)
        assert entry.path.read_bytes() == before["o.npy"] and entry.meta_path.is_file()
        assert caplog.messages == []
    else:  # copied, found wrong, set aside: the caller computes it
        assert value is None
        assert (tmp_path / "cache" / ("o.npy" + CORRUPT)).is_file()
        assert "damaged cache entry" in caplog.text
    assert {p.name: p.read_bytes() for p in shipped.iterdir()} == before


def test_without_a_shipped_folder_or_entry_a_missing_entry_is_none(tmp_path):
    key = {"audio_sha256": "ab", "segment": "1"}
    for shipped in (None, tmp_path / "empty"):
        assert onsets_at(tmp_path / "cache" / "o.npy", key, shipped).read() is None
    assert not (tmp_path / "cache").exists()
