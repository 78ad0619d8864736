"""The known, harmless messages of the libraries under a run, silenced in this one place, each
named, so that what is left on stderr is worth reading; any other warning still shows.

* Lightning's "💡 Tip: ... try installing litlogger" (INFO, at every Trainer): an advertisement.
* torch's FutureWarning "`isinstance(treespec, LeafSpec)` is deprecated": raised inside Lightning's
  own `utilities/_pytree.py`, nothing a user or gesturebench can change.
* Lightning's "You have overridden `transfer_batch_to_device` in `LightningModule` but have passed
  in a `LightningDataModule`": fixed at its source, the data module declares the hook
  (`GestureDataModule.transfer_batch_to_device`), not the Evaluator.
* wandb's "The anonymous setting has no effect": Lightning's WandbLogger always passes
  `anonymous=None` to `wandb.init`; `drop_anonymous` removes the key before the run starts.
"""

from __future__ import annotations

import logging
import warnings

from pytorch_lightning.loggers import Logger, WandbLogger

#: the loggers Lightning's `rank_zero_info` writes through (which one depends on import order)
_RANK_ZERO_LOGGERS = (
    "pytorch_lightning.utilities.rank_zero",
    "lightning_fabric.utilities.rank_zero",
)


def _not_litlogger_tip(record: logging.LogRecord) -> bool:
    return "litlogger" not in record.getMessage()


def silence_known_noise() -> None:
    """Install the filters (idempotent: a filter added twice is kept once)."""
    for name in _RANK_ZERO_LOGGERS:
        logging.getLogger(name).addFilter(_not_litlogger_tip)
    warnings.filterwarnings(
        "ignore",
        message=r"`isinstance\(treespec, LeafSpec\)` is deprecated",
        category=FutureWarning,
    )


def drop_anonymous(logger: Logger) -> Logger:
    """`logger` without the `anonymous=None` that Lightning's WandbLogger hands to `wandb.init`
    (wandb warns on any value of this deprecated setting); call it before the run starts."""
    if isinstance(logger, WandbLogger):
        logger._wandb_init.pop("anonymous", None)
    return logger
