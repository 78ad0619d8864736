"""GestureLSM for one recording from what a native source has: the 16 kHz waveform, the
TextGrid's words, the reference motion and a seed — features, noise and generation in one call."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from gesturebench.data.records import Word
from gesturebench.models.gesturelsm.config import (
    PARTS,
    SAMPLINGS,
    CodecConfig,
    GeneratorConfig,
    SamplingConfig,
    Variant,
)
from gesturebench.models.gesturelsm.features import Vocab, onset_amplitude, word_ids
from gesturebench.models.gesturelsm.generator import GestureLSMGenerator
from gesturebench.models.gesturelsm.inference import (
    Normalisation,
    draw_noise,
    generate,
    window_count,
)
from gesturebench.models.gesturelsm.rvqvae import RVQVAE
from gesturebench.models.gesturelsm.weights import (
    GENERATOR_FILES,
    load_codecs,
    load_generator,
    load_normalisation,
)


@dataclass
class GestureLSM:
    """The networks, normalisation and word table of one GestureLSM variant, and its sampling."""

    generator: GestureLSMGenerator
    codecs: dict[str, RVQVAE]
    norm: Normalisation
    vocab: Vocab
    sampling: SamplingConfig

    @classmethod
    def load(
        cls,
        weights: Path,
        mean_std: Path,
        vocab: Path,
        generator_cfg: GeneratorConfig | None = None,
        codec_cfgs: Mapping[str, CodecConfig] | None = None,
        variant: Variant = Variant.shortcut_reflow,
    ) -> GestureLSM:
        """From a folder of `weights.release_files(variant)`, the ``mean_std`` folder and BEAT2's
        ``vocab.pkl``; full size unless configs are given."""
        generator = load_generator(weights / GENERATOR_FILES[variant], generator_cfg)
        return cls(
            generator,
            load_codecs(weights, codec_cfgs),
            load_normalisation(mean_std),
            Vocab.load(vocab),
            SAMPLINGS[variant],
        )

    def to(self, device: torch.device | str, dtype: torch.dtype = torch.float32) -> GestureLSM:
        self.generator.to(device, dtype)
        for part in PARTS:
            self.codecs[part].to(device, dtype)
        return self

    def __call__(
        self,
        wave: np.ndarray,
        words: Sequence[Word],
        poses: np.ndarray,
        trans: np.ndarray,
        seed: int,
        on_window: Callable[[int, int], None] | None = None,
    ) -> dict[str, np.ndarray]:
        """16 kHz mono `wave`, the TextGrid's `words`, reference `poses` (T, 165) and `trans`
        (T, 3) at 30 fps → ``poses`` (F, 165) with F = 16 + 112 · windows ≤ T (jaw from the
        reference; expressions and translation are the reference's, not generated), noise drawn
        from `seed`; `on_window(done, total)` follows the windows."""
        param = next(self.generator.parameters())
        device, dtype = param.device, param.dtype
        cfg = self.generator.cfg
        windows = max(window_count(len(poses), cfg), 1)
        g = torch.Generator().manual_seed(seed)
        noise = draw_noise(1, windows, cfg, g, device=device, dtype=dtype)
        audio, ref_poses, ref_trans = (
            torch.as_tensor(a, device=device, dtype=dtype)[None]
            for a in (onset_amplitude(wave), poses, trans)
        )
        ids = torch.as_tensor(word_ids(words, len(poses), self.vocab), device=device)[None]
        out = generate(
            self.generator,
            self.codecs,
            self.norm,
            audio,
            ids,
            ref_poses,
            ref_trans,
            noise,
            self.sampling,
            on_window,
        )
        return {"poses": out["poses"][0].double().cpu().numpy()}
