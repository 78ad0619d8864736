"""`GestureModel`: the base LightningModule of every motion source; subclasses implement only
`generate`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pytorch_lightning as pl

from gesturebench.assets.table import Need, Table
from gesturebench.data.records import Motion, SequenceRecord

if TYPE_CHECKING:
    from gesturebench.metrics.base import GestureMetric
    from gesturebench.metrics.context import MetricContext


class GestureModel(pl.LightningModule):
    """Produces generated motion for a sequence, in BEAT2's SMPL-X format at 30 fps.

    `prepare(context)` runs once before generation (fit a baseline, load weights);
    `generate(record)` must return a `Motion` for the record. Outputs are cached by `cache_key`
    unless `cacheable` is False.
    """

    #: whether generated motion is worth caching (False for sources that are cheaper than the cache)
    cacheable: bool = True
    #: seconds a model's motion falls short of the reference by design (it generates whole windows
    #: only), allowed on top of max_length_gap
    length_shortfall: float = 0.0
    #: whether `generate` draws random numbers, from `seed` (only then may model.samples exceed 1)
    stochastic: bool = False
    #: the seed a stochastic model draws from (its `seed` option)
    seed: int = 0
    #: samples scored per input (model.samples; set by `models.sampling.with_samples`)
    samples: int = 1

    def __init__(self, name: str, **hparams: Any):
        super().__init__()
        self.name = name
        self.options = dict(hparams)

    @classmethod
    def public_assets(cls, options: Mapping[str, Any], table: Table, beat2: bool) -> list[Need]:
        """The public files of `table` (`task=fetch`) a model configured with `options` (its
        config node's values) needs, on a BEAT2 dataset if `beat2`, each with the path its options
        put it at (None: the table's place); default: none."""
        return []

    def prepare(self, context: MetricContext) -> None:
        """Fit or load what the model needs (default: nothing)."""

    def generate(self, record: SequenceRecord) -> Motion:
        raise NotImplementedError

    def output_problems(
        self, dataset: Sequence[SequenceRecord], check: Callable[[Motion, SequenceRecord], None]
    ) -> list[str]:
        """One line per problem of the outputs that exist before scoring (result files the model's
        own code wrote), each read and passed to `check`; default: none, the outputs are made while
        scoring."""
        return []

    def describe(self) -> dict:
        """results.json `model_info` for this motion source (e.g. which fields it copies from the
        reference)."""
        return {}

    def skip_notes(self, metrics: Iterable[GestureMetric]) -> dict[str, str]:
        """Notes on the values of `metrics` that this source makes partly meaningless, by value name
        (merged into results.json `skipped`)."""
        return {}

    def reseed(self, seed: int) -> None:
        """Draw from `seed` from now on (sample k of a stochastic model: model.seed + k); the seed
        is an option, so it is part of the cache key."""
        self.seed = seed
        self.options["seed"] = seed

    def predict_step(self, batch: SequenceRecord, batch_idx: int = 0) -> Motion:
        return self.generate(batch)

    def identity(self) -> dict:
        """What determines this model's output besides the input sequence (part of the cache
        key)."""
        return {"class": f"{type(self).__module__}.{type(self).__qualname__}", **self.options}

    def cache_key(self, record: SequenceRecord) -> str:
        h = hashlib.sha256(json.dumps(self.identity(), sort_keys=True, default=str).encode())
        h.update(record.id.encode())
        h.update(record.motion.content_hash().encode())
        return h.hexdigest()

    def transfer_batch_to_device(self, batch, device, dataloader_idx):
        return batch  # records hold numpy arrays; the body model moves what it needs
