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

Lightning's routine INFO lines, "Seed set to 0", "GPU available: …" and "TPU available: …", say what
the config (and results.json) already says: they are logged at DEBUG instead, shown only where that
logger is set to DEBUG (e.g. `hydra.verbose=pytorch_lightning`).
"""

from __future__ import annotations

import logging
import re
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytorch_lightning.loggers import Logger

#: the loggers Lightning's `rank_zero_info` writes through (which one depends on import order)
_RANK_ZERO_LOGGERS = (
    "pytorch_lightning.utilities.rank_zero",
    "lightning_fabric.utilities.rank_zero",
)
#: where `seed_everything` logs "Seed set to …"
_SEED_LOGGER = "lightning_fabric.utilities.seed"
#: Lightning's routine lines, logged at DEBUG instead of INFO
_ROUTINE = re.compile(r"(\[rank: \d+\] )?(Seed set to |GPU available: |TPU available: )")


def _not_litlogger_tip(record: logging.LogRecord) -> bool:
    return "litlogger" not in record.getMessage()


def _routine_at_debug(record: logging.LogRecord) -> bool:
    """A routine line becomes a DEBUG record, kept only where its logger shows DEBUG."""
    if record.levelno != logging.INFO or not _ROUTINE.match(record.getMessage()):
        return True
    record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
    return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def silence_known_noise() -> None:
    """Install the filters (idempotent: a filter added twice is kept once)."""
    for name in _RANK_ZERO_LOGGERS:
        logging.getLogger(name).addFilter(_not_litlogger_tip)
    for name in (*_RANK_ZERO_LOGGERS, _SEED_LOGGER):
        logging.getLogger(name).addFilter(_routine_at_debug)
    warnings.filterwarnings(
        "ignore",
        message=r"`isinstance\(treespec, LeafSpec\)` is deprecated",
        category=FutureWarning,
    )


def drop_anonymous(logger: Logger) -> Logger:
    """`logger` without the `anonymous=None` that Lightning's WandbLogger hands to `wandb.init`
    (wandb warns on any value of this deprecated setting); call it before the run starts."""
    from pytorch_lightning.loggers import WandbLogger  # loaded already: `logger` is Lightning's

    if isinstance(logger, WandbLogger):
        logger._wandb_init.pop("anonymous", None)
    return logger
