"""`GestureLSMSource` (``model=gesturelsm model/source=native``, the default): a released
GestureLSM generator (``model.variant``) run inside gesturebench as its test path runs it: the
sequence's 16 kHz speech, the TextGrid's words as rows of BEAT2's ``vocab.pkl``, the reference's
first 16 frames as the seed latents, and the reference's jaw, expressions and translation copied
into the result. Noise is drawn from ``model.seed``, so a run is reproducible."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from typing_extensions import Unpack

from gesturebench.assets.table import GESTURELSM_VOCAB_TAG, Need, Table, gesturelsm_tag
from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.models.gesturelsm.config import (
    PART_WIDTHS,
    SAMPLINGS,
    CodecConfig,
    GeneratorConfig,
    Variant,
)
from gesturebench.models.gesturelsm.features import UNK, Vocab
from gesturebench.models.gesturelsm.pipeline import GestureLSM
from gesturebench.models.gesturelsm.weights import (
    GENERATOR_FILES,
    MEAN_STD_FILES,
    UNRELEASED,
    release_files,
)
from gesturebench.models.sources.base import SharedOptions
from gesturebench.models.sources.native import NativeSource
from gesturebench.runtime.atomic import atomic_path
from gesturebench.runtime.errors import CheckpointError, ConfigError, DataError
from gesturebench.runtime.weights import HubFiles, sha256_file

if TYPE_CHECKING:
    from gesturebench.metrics.context import MetricContext

#: what GestureLSM takes from the reference (results.json ``model_info``)
FROM_REFERENCE = {
    "seed_frames": "the first 16 frames (4 latents) of poses and trans seed the first window",
    "jaw": "copied (its test path sets the generated jaw to the reference's)",
    "expressions": "copied (the released generators make no face)",
    "trans": "copied (the generated translation is not used by its test path)",
    "betas": "reference (body shape is not generated)",
}
SPLITS = ("train", "val", "test")
PAPER_GENERATOR = GeneratorConfig()


def build_vocab(words: set[str], path: Path) -> Vocab:
    """A ``vocab.pkl``-format table of `words` (rows after PAD, SOS, EOS, UNK, in sorted order;
    zero embeddings: the generator's own word table is in its weights), written to `path`."""
    index = {word: UNK + 1 + i for i, word in enumerate(sorted(words))}
    vocab = Vocab(index, np.zeros((UNK + 1 + len(index), 300), np.float32))
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        vocab.save(tmp)
    return vocab


class GestureLSMSource(NativeSource):
    """GestureLSM's `variant` (its weights: `weights.release_files`; sampled as `SAMPLINGS` says),
    the normalisation files of its repository's ``mean_std/`` in `mean_std`, BEAT2's word table
    `vocab` (for a generated dataset, built from its words there when missing), noise from
    `seed`. Network sizes of releases smaller than the paper's: `generator` (`GeneratorConfig`),
    the RVQ-VAEs' `codec_codes` per codebook and `codec_width` (`CodecConfig`). A variant whose
    checkpoint is not released is one `ConfigError` line."""

    stochastic = True
    #: the release drops up to 118 frames: to a multiple of 8, then the part of a 112-frame window
    length_shortfall = 118 / 30

    def __init__(
        self,
        name: str,
        mean_std: str,
        vocab: str,
        variant: Variant = Variant.shortcut_reflow,
        seed: int = 0,
        generator: GeneratorConfig = PAPER_GENERATOR,
        codec_codes: int = 1024,
        codec_width: int = 512,
        checkpoints_dir: str = "checkpoints",
        weights: str | None = None,
        progress: bool = True,
        **shared: Unpack[SharedOptions],
    ):
        variant = Variant(variant)
        if variant in UNRELEASED:
            raise ConfigError(f"model.variant={variant.value}: {UNRELEASED[variant]}")
        self.variant = variant
        self.mean_std, self.vocab_path = Path(mean_std), Path(vocab)
        norm_sha = {}
        for name_ in MEAN_STD_FILES.values():
            path = self.mean_std / name_
            if not path.is_file():
                raise DataError(
                    path,
                    "GestureLSM normalisation file not found (copy mean_std/ from "
                    "github.com/andypinxinliu/GestureLSM there, or set model.mean_std)",
                )
            norm_sha[name_] = sha256_file(path)
        self.generator_cfg = generator
        self.codec_cfgs = {
            part: CodecConfig(width, codes=codec_codes, width=codec_width)
            for part, width in PART_WIDTHS.items()
        }
        identity = {
            "variant": variant.value,
            "seed": seed,
            "mean_std_sha256": norm_sha,
            "generator": asdict(generator),
            "codecs": [codec_codes, codec_width],
        }
        super().__init__(name, checkpoints_dir, weights, progress, identity, **shared)
        self.seed = seed
        self.vocab_sha = ""
        self.vocab_built = False

    @classmethod
    def public_assets(cls, options: Mapping[str, Any], table: Table, beat2: bool) -> list[Need]:
        """The released files of the variant (unless `weights` points at the user's own), the
        ``mean_std/`` files in `mean_std`, and on BEAT2 its ``weights/vocab.pkl`` (at `vocab`)."""
        variant = Variant(options.get("variant") or Variant.shortcut_reflow).value
        needs: list[Need] = []
        for asset in table.needed_by(gesturelsm_tag(variant)):
            if asset.key.startswith("gesturelsm/mean_std/"):
                needs.append((asset, Path(str(options["mean_std"])) / Path(asset.dest).name))
            elif not options.get("weights"):
                needs.append((asset, None))
        if beat2:
            vocab = options.get("vocab")
            needs += [
                (a, Path(str(vocab)) if vocab else None)
                for a in table.needed_by(GESTURELSM_VOCAB_TAG)
            ]
        return needs

    @property
    def files(self) -> HubFiles:  # type: ignore[override]
        """The released files of `variant`."""
        return release_files(self.variant)

    def prepare(self, context: MetricContext) -> None:
        """Find the word table (building it from a generated dataset's words when missing)."""
        super().prepare(context)
        if not self.vocab_path.is_file() and context.auto_train:
            records = [r for split in SPLITS for r in context.split(split)]
            build_vocab({w.word for r in records for w in r.words or []}, self.vocab_path)
            self.vocab_built = True
        if not self.vocab_path.is_file():
            raise DataError(
                self.vocab_path,
                "vocab.pkl not found (it is in BEAT2's weights/ folder; set model.vocab)",
            )
        self.vocab_sha = sha256_file(self.vocab_path)

    def cache_key(self, record: SequenceRecord) -> str:
        return hashlib.sha256((super().cache_key(record) + self.vocab_sha).encode()).hexdigest()

    def load(self) -> GestureLSM:
        folder = self.weights.path(GENERATOR_FILES[self.variant]).parent  # the Hub cache's too
        model = GestureLSM.load(
            folder,
            self.mean_std,
            self.vocab_path,
            self.generator_cfg,
            self.codec_cfgs,
            self.variant,
        )
        rows = self.generator_cfg.vocab_size
        if max(model.vocab.word2index.values(), default=0) >= rows:
            raise CheckpointError(
                f"{self.vocab_path}: word ids reach {max(model.vocab.word2index.values())}, "
                f"past the {rows} rows of the generator's word table"
            )
        return model.to(self.run_device)

    def produce(self, record: SequenceRecord, work: Path) -> None:
        wave = self.needs_audio(record)
        if record.words is None:
            raise DataError(
                f"sequence {record.id}",
                f"has no TextGrid (textgrid/{record.id}.TextGrid), whose words {self.title} needs",
            )
        model = self.nets()
        reference = record.motion
        with self.bar(record) as on_window:
            out = model(wave, record.words, reference.poses, reference.trans, self.seed, on_window)
        frames = len(out["poses"])
        motion = Motion(
            poses=out["poses"],
            trans=reference.trans[:frames],
            betas=reference.betas,
            expressions=reference.expressions[:frames],
        )
        self.save(motion, record, work)

    def where(self) -> dict[str, Any]:
        vocab = "built from the dataset's words" if self.vocab_built else "configured"
        return {
            **super().where(),
            "variant": self.variant.value,
            "sampling": asdict(SAMPLINGS[self.variant]),
            "seed": self.seed,
            "mean_std": str(self.mean_std),
            "vocab": str(self.vocab_path),
            "vocab_source": vocab,
            "from_reference": FROM_REFERENCE,
        }
