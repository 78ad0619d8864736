"""GestureLSM's native module against the official code: key layout of the released checkpoints,
and the official test path's outputs on seeded weights, inputs and noise (tests/fixtures, made
outside the repository by running GestureLSM's classes on `gesturelsm_support` weights)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from gesturebench.data.records import Word
from gesturebench.encoders.representation import rotation_6d
from gesturebench.models.emage.codecs import JAW
from gesturebench.models.gesturelsm.config import (
    PART_WIDTHS,
    SAMPLINGS,
    CodecConfig,
    GeneratorConfig,
    Variant,
)
from gesturebench.models.gesturelsm.features import (
    Vocab,
    amplitude_envelope,
    onset_amplitude,
    word_ids,
)
from gesturebench.models.gesturelsm.generator import UNUSED_PREFIXES, GestureLSMGenerator
from gesturebench.models.gesturelsm.inference import generate
from gesturebench.models.gesturelsm.pipeline import GestureLSM
from gesturebench.models.gesturelsm.rvqvae import RVQVAE
from gesturebench.models.gesturelsm.samplers import sample_window
from gesturebench.models.gesturelsm.weights import (
    CODEC_FILES,
    MEAN_STD_FILES,
    load_codecs,
    load_generator,
    load_normalisation,
)
from gesturebench.runtime.errors import CheckpointError, DataError
from tests.gesturelsm_support import (
    FRAMES,
    SMALL_CODECS,
    SMALL_GENERATOR,
    seeded_inputs,
    small_models,
    window_inputs,
)

FIXTURES = Path(__file__).parent / "fixtures"
OFFICIAL = json.loads((FIXTURES / "gesturelsm_parity.json").read_text())
VARIANTS = json.loads((FIXTURES / "gesturelsm_variants.json").read_text())


def _shapes(module: torch.nn.Module) -> dict[str, list[int]]:
    return {k: list(v.shape) for k, v in module.state_dict().items()}


def test_full_size_keys_and_shapes_are_the_released_ones():
    official = json.loads((FIXTURES / "gesturelsm_keys.json").read_text())
    with torch.device("meta"):
        generator = GestureLSMGenerator(GeneratorConfig())
        assert _shapes(generator) == official["generator"]
        for part, width in PART_WIDTHS.items():
            assert _shapes(RVQVAE(CodecConfig(width))) == official["rvqvae"][part]
    assert len(official["generator"]) == 334
    assert sum(p.numel() for p in generator.parameters()) == 37_785_124
    assert sum(k.startswith(UNUSED_PREFIXES) for k in official["generator"]) == 6


@pytest.fixture(scope="module")
def ours() -> dict[str, np.ndarray]:
    generator, codecs = small_models()
    x = seeded_inputs()
    out = generate(
        generator, codecs, x["norm"], x["audio"], x["words"], x["poses"], x["trans"], x["noise"]
    )
    six_d = rotation_6d(out["poses"][0].reshape(-1, 55, 3)).reshape(-1, 330)
    return {"rec_pose_6d": six_d.numpy(), "latents": out["latents"][0].numpy()}


def test_latents_match_the_official_sampling(ours):
    """Window 0's 32 latent frames; of window 1 the 28 kept (its first 4 overlap the seed)."""
    windows = np.array(OFFICIAL["latents"])  # (windows, frames 0, 4, …, 28, channels ::8)
    np.testing.assert_allclose(ours["latents"][:32:4, ::8], windows[0], atol=1e-5)
    np.testing.assert_allclose(ours["latents"][32::4, ::8], windows[1, 1:], atol=1e-5)


def test_generation_matches_the_official_test_path(ours):
    poses = ours["rec_pose_6d"]
    assert poses.shape == (OFFICIAL["frames"], 330) == (240, 330)
    np.testing.assert_allclose(poses[OFFICIAL["sample_frames"]], OFFICIAL["rec_pose_6d"], atol=1e-5)
    assert poses.sum() == pytest.approx(OFFICIAL["sums"]["rec_pose_6d"], rel=1e-7)
    assert np.abs(poses).sum() == pytest.approx(OFFICIAL["sums"]["abs_rec_pose_6d"], rel=1e-7)


@pytest.mark.parametrize(
    "variant", [pytest.param(Variant.diffusion, marks=pytest.mark.slow), Variant.meanflow]
)
def test_a_variants_window_matches_its_official_sampler(variant):
    """One window of the diffusion (DDIM, 20 steps, guidance 1.5) and MeanFlow (1 step) variants
    against GestureDiffusion / GestureMF on the same weights, inputs and noise."""
    official = VARIANTS[variant.value]
    sampling = SAMPLINGS[variant]
    assert (sampling.steps, sampling.guidance) == tuple(official["sampling"].values())
    generator, _ = small_models()
    x = window_inputs()
    latents = sample_window(generator, x["audio"], x["words"], x["seed"], x["noise"], sampling)[0]
    np.testing.assert_allclose(latents[:, ::8].numpy(), official["latents"], atol=1e-5)
    assert latents.sum().item() == pytest.approx(official["sum"], rel=1e-6)
    assert latents.abs().sum().item() == pytest.approx(official["abs_sum"], rel=1e-7)


def test_the_jaw_is_the_reference_and_the_noise_matters():
    generator, codecs = small_models()
    x = seeded_inputs()
    args = (generator, codecs, x["norm"], x["audio"], x["words"], x["poses"], x["trans"])
    a = generate(*args, x["noise"])["poses"]
    b = generate(
        *args,
        torch.randn(
            x["noise"].shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64
        ),
    )["poses"]
    jaw = slice(3 * JAW, 3 * JAW + 3)
    torch.testing.assert_close(a[..., jaw], x["poses"][:, :240, jaw], rtol=0, atol=0)
    assert (a - b).abs().max() > 1e-3


def test_too_little_motion_or_too_few_words_is_a_data_error():
    generator, codecs = small_models()
    x = seeded_inputs()
    with pytest.raises(DataError, match="at least 128 frames"):
        generate(
            generator,
            codecs,
            x["norm"],
            x["audio"],
            x["words"],
            x["poses"][:, :127],
            x["trans"],
            x["noise"],
        )
    with pytest.raises(DataError, match="word id per frame"):
        generate(
            generator,
            codecs,
            x["norm"],
            x["audio"],
            x["words"][:, :200],
            x["poses"],
            x["trans"],
            x["noise"],
        )


def test_a_dataparallel_checkpoint_loads_strictly_and_a_foreign_key_is_named(tmp_path):
    generator, codecs = small_models()
    state = {f"module.{k}": v for k, v in generator.state_dict().items()}
    state["module.modality_encoder.audio_encoder.x"] = torch.zeros(
        1
    )  # legacy, dropped upstream too
    torch.save({"model_state_dict": state}, tmp_path / "shortcut_reflow.bin")
    loaded = load_generator(tmp_path / "shortcut_reflow.bin", SMALL_GENERATOR).state_dict()
    for key, value in generator.state_dict().items():
        torch.testing.assert_close(loaded[key], value.to(loaded[key].dtype), rtol=0, atol=0)
    state["module.denoiser.extra"] = torch.zeros(1)
    del state["module.denoiser.embed_text.bias"]
    torch.save({"model_state": state}, tmp_path / "bad.bin")
    with pytest.raises(
        CheckpointError,
        match=r"1 missing keys \['denoiser.embed_text.bias'\], "
        r"1 unexpected keys \['denoiser.extra'\]",
    ):
        load_generator(tmp_path / "bad.bin", SMALL_GENERATOR)
    for part, codec in codecs.items():
        torch.save({"net": codec.state_dict()}, tmp_path / CODEC_FILES[part])
    assert set(load_codecs(tmp_path, SMALL_CODECS)) == {"upper", "hands", "lower"}


def test_missing_normalisation_is_one_line(tmp_path):
    with pytest.raises(
        DataError, match=r"beatx_2_330_mean\.npy: GestureLSM normalisation file not found"
    ):
        load_normalisation(tmp_path)


def test_amplitude_envelope_is_the_next_window_maximum():
    wave = np.random.default_rng(0).normal(size=3000)
    env = amplitude_envelope(wave, 100)
    brute = [np.abs(wave[i : i + 100]).max() for i in range(2901)]
    np.testing.assert_array_equal(env[:2901], brute)
    np.testing.assert_array_equal(env[2901:], brute[-1])


def test_onsets_are_marked_at_frame_numbers_as_sample_indices():
    """The upstream quirk: a click at 1 s (frame 31 at hop 512) is marked at sample ~31."""
    wave = np.zeros(32000)
    wave[16000:16050] = 1.0
    marks = np.flatnonzero(onset_amplitude(wave)[:, 1])
    assert marks.size and marks.max() < 32000 // 512
    assert abs(marks[0] - 16000 / 512) <= 2


def test_word_ids_follow_the_textgrid_by_frame(tmp_path):
    vocab = Vocab({"hello": 4, "world": 5}, np.zeros((6, 300), dtype=np.float32))
    vocab.save(tmp_path / "vocab.pkl")
    vocab = Vocab.load(tmp_path / "vocab.pkl")
    words = [Word("hello", 0.0, 0.1), Word("world", 0.1, 0.2), Word("hello", 0.3, 0.4)]
    # frames at 0, 1/30, …: 0.1 is both hello's end and world's start (hello, listed first);
    # 0.2 is world's end; at 0.3 hello starts after silence, which upstream finds first (UNK)
    ids = word_ids(words, 14, vocab)
    assert ids.tolist() == [4, 4, 4, 4, 5, 5, 5, 3, 3, 3, 4, 4, 4, 3]
    with pytest.raises(DataError, match=r"vocab\.pkl not found"):
        Vocab.load(tmp_path / "missing.pkl")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_gpu_run_equals_the_cpu_run(ours):
    """Same weights, inputs and (CPU-drawn) noise on the GPU: the same poses."""
    generator, codecs = small_models()
    x = seeded_inputs()
    cuda = torch.device("cuda")
    out = generate(
        generator.to(cuda),
        {p: c.to(cuda) for p, c in codecs.items()},
        x["norm"],
        *(x[k].to(cuda) for k in ("audio", "words", "poses", "trans", "noise")),
    )
    six_d = rotation_6d(out["poses"][0].cpu().reshape(-1, 55, 3)).reshape(-1, 330).numpy()
    np.testing.assert_allclose(six_d, ours["rec_pose_6d"], atol=1e-8)


def test_the_pipeline_loads_released_layouts_and_is_reproducible_per_seed(tmp_path):
    generator, codecs = small_models()
    x = seeded_inputs()
    torch.save(
        {"model_state_dict": {f"module.{k}": v for k, v in generator.state_dict().items()}},
        tmp_path / "shortcut_reflow.bin",
    )
    for part, codec in codecs.items():
        torch.save({"net": codec.state_dict()}, tmp_path / CODEC_FILES[part])
    for field, name in MEAN_STD_FILES.items():
        np.save(tmp_path / name, getattr(x["norm"], field).numpy())
    words = {f"w{i}": i for i in range(4, 50)}
    Vocab(words, np.zeros((50, 300), np.float32)).save(tmp_path / "vocab.pkl")
    model = GestureLSM.load(
        tmp_path, tmp_path, tmp_path / "vocab.pkl", SMALL_GENERATOR, SMALL_CODECS
    )
    model.to("cpu", torch.float64)
    wave = np.random.default_rng(0).normal(size=FRAMES * 16000 // 30) * 0.1
    spoken = [Word(f"w{i}", 0.2 * i, 0.2 * i + 0.15) for i in range(4, 40)]
    poses, trans = x["poses"][0].numpy(), x["trans"][0].numpy()
    a, b = (model(wave, spoken, poses, trans, seed=s)["poses"] for s in (0, 0))
    c = model(wave, spoken, poses, trans, seed=1)["poses"]
    assert a.shape == (240, 165)
    np.testing.assert_array_equal(a, b)
    assert np.abs(a - c).max() > 1e-3
