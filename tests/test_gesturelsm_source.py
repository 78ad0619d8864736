"""`model=gesturelsm` run natively (`GestureLSMSource`): tiny seeded weights in the released layout
(`gesturelsm_support.write_release`, never downloaded) generate what the module generates from the
same files and seed, copied fields are reported, a generated dataset gets a word table, results
are cached, and each missing input is one line that caches nothing."""

from __future__ import annotations

import re
import shutil
from dataclasses import asdict, replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from gesturebench.data.records import SAMPLE_RATE
from gesturebench.models.gesturelsm.config import SAMPLINGS, Variant
from gesturebench.models.gesturelsm.features import UNK, Vocab
from gesturebench.models.gesturelsm.inference import window_count
from gesturebench.models.gesturelsm.pipeline import GestureLSM
from gesturebench.models.gesturelsm.source import GestureLSMSource
from gesturebench.models.gesturelsm.weights import GENERATOR_FILES
from gesturebench.run.config import build_model
from gesturebench.runtime.errors import CheckpointError, ConfigError, DataError
from gesturebench.tasks.common import open_dataset
from tests import emage_support
from tests.gesturelsm_support import RELEASE_GENERATOR, SMALL_CODECS, write_release
from tests.helpers import composed
from tests.launch import results

SECONDS = 8  # 240 frames: two whole windows (16 + 2 · 112)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gesturelsm_release")
    return folder, write_release(folder)


@pytest.fixture(scope="module")
def dataset():
    return open_dataset(composed().dataset)


@pytest.fixture(scope="module")
def record(dataset):
    full = dataset[0]
    frames = SECONDS * 30
    return replace(
        full, motion=full.motion.frames(0, frames), audio=full.audio[: SECONDS * SAMPLE_RATE]
    )


def context(tmp_path, dataset, auto_train=False):
    return SimpleNamespace(
        cache_dir=tmp_path / "cache",
        body_model=None,
        device="cpu",
        auto_train=auto_train,
        split=lambda name: list(dataset) if name == "test" else [],
    )


def native(tmp_path, dataset, release, *overrides: str, auto_train=False) -> GestureLSMSource:
    """`model=gesturelsm` from its YAML with the tiny release, prepared with a cache in
    `tmp_path`."""
    cfg = composed(
        f"paths.checkpoints={tmp_path / 'ckpt'}",
        "model=gesturelsm",
        "model.progress=false",
        *release[1],
        *overrides,
    )
    model = build_model(cfg.model)
    model.prepare(context(tmp_path, dataset, auto_train))
    return model


@pytest.fixture
def vocab(tmp_path, dataset):
    words = sorted({w.word for r in dataset for w in r.words or []})
    path = tmp_path / "vocab.pkl"
    Vocab({w: 10 + i for i, w in enumerate(words)}, np.zeros((10 + len(words), 300))).save(path)
    return path


def test_native_generation_is_the_module_with_the_reference_copied(
    release, dataset, record, vocab, tmp_path
):
    model = native(tmp_path, dataset, release, f"model.vocab={vocab}", "model.seed=7")
    assert type(model) is GestureLSMSource
    motion = model.generate(record)

    folder = release[0]
    module = GestureLSM.load(folder, folder / "mean_std", vocab, RELEASE_GENERATOR, SMALL_CODECS)
    want = module(record.audio, record.words, record.motion.poses, record.motion.trans, seed=7)
    assert motion.n_frames == 240
    np.testing.assert_allclose(motion.poses, want["poses"], atol=1e-5)
    ref = record.motion
    np.testing.assert_array_equal(motion.trans, ref.trans)
    np.testing.assert_array_equal(motion.expressions, ref.expressions)
    np.testing.assert_array_equal(motion.poses[:, 66:69], ref.poses[:, 66:69])
    assert np.abs(motion.poses - ref.poses).max() > 0.1  # the body is generated

    other = native(tmp_path, dataset, release, f"model.vocab={vocab}", "model.seed=8")
    assert np.abs(other.generate(record).poses - motion.poses).max() > 1e-3

    info = model.describe()
    assert info["source"] == "native" and info["stochastic"] and info["seed"] == 7
    assert info["weights_source"] == "configured" and len(info["sha256"]) == 4
    assert info["vocab_source"] == "configured"
    assert info["copied_fields"] == ["expressions", "jaw", "trans"]
    assert info["identical_to_reference"] == {"expressions": 1, "jaw": 1, "trans": 1}


def test_a_generated_dataset_gets_a_vocab_pkl_of_its_words(release, dataset, record, tmp_path):
    path = tmp_path / "data" / "weights" / "vocab.pkl"
    model = native(tmp_path, dataset, release, f"model.vocab={path}", auto_train=True)
    words = {w.word for r in dataset for w in r.words or []}

    table = Vocab.load(path)
    assert set(table.word2index) == words
    assert sorted(table.word2index.values()) == list(range(UNK + 1, UNK + 1 + len(words)))
    assert table.embeddings.shape == (UNK + 1 + len(words), 300)
    assert model.describe()["vocab_source"] == "built from the dataset's words"
    assert model.generate(record).n_frames == 240


def test_a_cached_sequence_never_loads_gesturelsm_again(
    release, dataset, record, vocab, tmp_path, monkeypatch
):
    first = native(tmp_path, dataset, release, f"model.vocab={vocab}").generate(record)

    def refuse(*args):
        raise AssertionError("GestureLSM loaded for a cached sequence")

    monkeypatch.setattr(GestureLSMSource, "load", refuse)
    again = native(tmp_path, dataset, release, f"model.vocab={vocab}").generate(record)
    np.testing.assert_array_equal(again.poses, first.poses)


def test_a_typo_in_the_config_is_refused():
    with pytest.raises(ConfigCompositionException, match="sed"):
        composed("model=gesturelsm", "model.sed=1")
    with pytest.raises(ConfigCompositionException, match="seed"):
        composed("model=gesturelsm", "model.seed=one")
    with pytest.raises(ConfigCompositionException, match="shortcut_reflw"):
        composed("model=gesturelsm", "model.variant=shortcut_reflw")


def test_the_default_variant_and_an_unreleased_one(release, dataset, vocab, tmp_path):
    assert composed("model=gesturelsm").model.variant == Variant.shortcut_reflow
    with pytest.raises(ConfigError) as err:
        native(tmp_path, dataset, release, f"model.vocab={vocab}", "model.variant=shortcut")
    assert str(err.value) == (
        "model.variant=shortcut: the shortcut model without reflow (20 steps; new_540_shortcut.bin "
        "in the legacy configs/shortcut_rvqvae_128.yaml) is not among the checkpoints GestureLSM's "
        "README lists for pliu23/GestureLSM"
    )


@pytest.mark.parametrize(
    "variant", [pytest.param(Variant.diffusion, marks=pytest.mark.slow), Variant.meanflow]
)
def test_a_variant_runs_its_own_file_with_its_sampler(
    variant, release, dataset, record, vocab, tmp_path
):
    folder = tmp_path / "release"
    shutil.copytree(release[0], folder)
    (folder / GENERATOR_FILES[Variant.shortcut_reflow]).rename(folder / GENERATOR_FILES[variant])
    overrides = [o for o in release[1] if not o.startswith("model.weights=")]
    model = native(
        tmp_path,
        dataset,
        (folder, [f"model.weights={folder}", *overrides]),
        f"model.vocab={vocab}",
        f"model.variant={variant.value}",
        "model.seed=7",
    )
    motion = model.generate(record)

    module = GestureLSM.load(
        folder, release[0] / "mean_std", vocab, RELEASE_GENERATOR, SMALL_CODECS, variant
    )
    assert module.sampling == SAMPLINGS[variant]
    want = module(record.audio, record.words, record.motion.poses, record.motion.trans, seed=7)
    np.testing.assert_allclose(motion.poses, want["poses"], atol=1e-5)
    reflow = native(tmp_path, dataset, release, f"model.vocab={vocab}", "model.seed=7")
    assert np.abs(reflow.generate(record).poses - motion.poses).max() > 1e-3
    info = model.describe()
    assert info["variant"] == variant.value
    assert info["sampling"]["method"] == SAMPLINGS[variant].method
    assert GENERATOR_FILES[variant] in info["sha256"]


def nothing_cached(tmp_path):
    cached = tmp_path / "cache" / "generated" / "gesturelsm"
    return not list(cached.glob("*/out")) if cached.exists() else True


def test_missing_vocab_pkl_is_one_line(release, dataset, tmp_path):
    path = tmp_path / "beat2" / "weights" / "vocab.pkl"
    with pytest.raises(DataError) as err:
        native(tmp_path, dataset, release, f"model.vocab={path}")
    assert str(err.value) == (
        f"{path}: vocab.pkl not found (it is in BEAT2's weights/ folder; set model.vocab)"
    )


def test_missing_textgrid_is_one_line_and_caches_nothing(release, dataset, record, vocab, tmp_path):
    model = native(tmp_path, dataset, release, f"model.vocab={vocab}")
    with pytest.raises(DataError) as err:
        model.generate(replace(record, words=None))
    assert str(err.value) == (
        f"sequence {record.id}: has no TextGrid (textgrid/{record.id}.TextGrid), whose words "
        "GestureLSM needs"
    )
    assert nothing_cached(tmp_path)


def test_missing_mean_std_is_one_line(release, dataset, vocab, tmp_path):
    with pytest.raises(DataError) as err:
        native(tmp_path, dataset, release, f"model.vocab={vocab}", f"model.mean_std={tmp_path}")
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"{tmp_path / 'beatx_2_330_mean.npy'}: ")
    assert "andypinxinliu/GestureLSM" in text and "model.mean_std" in text


def test_missing_weights_offline_is_one_line(release, dataset, vocab, tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr("gesturebench.runtime.weights._hf_cached", lambda spec: None)
    with pytest.raises(CheckpointError) as err:
        native(tmp_path, dataset, release, "model.weights=null", f"model.vocab={vocab}")
    text = str(err.value)
    assert "\n" not in text and "https://huggingface.co/pliu23/GestureLSM" in text
    assert f"into {tmp_path / 'ckpt' / 'gesturelsm'}/" in text
    # the first file and the key to set; the four files are listed in docs/models.md
    assert "gesturelsm/shortcut_reflow.bin and 3 more of its 4 files" in text
    assert "HF_HUB_OFFLINE" in text and "model.weights=" in text


def test_a_word_table_past_the_generators_rows_is_one_line(release, dataset, record, tmp_path):
    path = tmp_path / "big_vocab.pkl"
    Vocab({"hello": 300}, np.zeros((301, 300))).save(path)
    model = native(tmp_path, dataset, release, f"model.vocab={path}")
    with pytest.raises(CheckpointError, match=re.escape(f"{path}: word ids reach 300, past")):
        model.generate(record)
    assert nothing_cached(tmp_path)


@pytest.mark.slow
def test_launch_scores_native_gesturelsm(release, tmp_path, in_process):
    in_process(  # 960 frames → 912: whole windows only
        "model=gesturelsm",
        *release[1],
        "dataset.max_sequences=1",
        "task.render_clips=0",  # clips: tests/test_render_task.py, tests/test_report_html.py
        f"hydra.run.dir={tmp_path / 'run'}",
    )
    res = results(tmp_path / "run")
    info = res["model_info"]
    assert info["source"] == "native" and info["seed"] == 0
    assert info["copied_fields"] == ["expressions", "jaw", "trans"]
    notes = [note for note in res["skipped"].values() if "copies" in note]
    assert notes and all("GestureLSM copies" in note for note in notes)


def test_the_length_shortfall_bounds_every_recording_length():
    """Whole windows only: F = 16 + 112 · windows; the evaluation allows the largest T − F on top of
    max_length_gap (brute force over lengths, against `window_count`)."""
    shortfalls = [t - (16 + 112 * window_count(t, RELEASE_GENERATOR)) for t in range(128, 4000)]
    assert max(shortfalls) <= round(GestureLSMSource.length_shortfall * 30) < max(shortfalls) + 8


@pytest.mark.slow
def test_sweep_runs_emage_and_gesturelsm_natively(release, tmp_path, in_process):
    """``-m model=emage,gesturelsm`` with tiny weights for both (two model files that extend the
    benchmark ones with them) writes a two-row summary."""
    conf = tmp_path / "conf" / "model"
    # a model run natively takes its class's options from model/native/<its name>.yaml
    (conf / "native").mkdir(parents=True)
    for name in ("emage", "gesturelsm"):
        (conf / f"{name}_tiny.yaml").write_text(f"defaults:\n  - {name}\n  - _self_\n")
    conf = conf / "native"
    emage = emage_support.write_release(tmp_path / "emage_release")
    (conf / "emage_tiny.yaml").write_text(f"defaults:\n  - emage\n  - _self_\n\nweights: {emage}\n")
    folder = release[0]
    tiny = {
        "defaults": ["gesturelsm", "_self_"],
        "weights": str(folder),
        "mean_std": str(folder / "mean_std"),
        "generator": asdict(RELEASE_GENERATOR),
        "codec_codes": SMALL_CODECS["upper"].codes,
        "codec_width": SMALL_CODECS["upper"].width,
    }
    OmegaConf.save(OmegaConf.create(tiny), conf / "gesturelsm_tiny.yaml")
    models = ("model=emage_tiny,gesturelsm_tiny", f"hydra.searchpath=[file://{tmp_path / 'conf'}]")
    small = ("dataset.max_sequences=1", "metrics=fast")
    assert in_process("-m", *models, *small, f"hydra.sweep.dir={tmp_path / 'sweep'}") == 0
    table = pd.read_csv(tmp_path / "sweep" / "summary.csv")
    assert sorted(table["model"]) == ["emage", "gesturelsm"] and set(table["status"]) == {"ok"}
