"""`ModuleSource` (``model/source=module``): a network built from its `_target_` node
(``model.network``) — a LightningModule (`predict_step`) or any callable — given a batch (a dict of
numpy inputs and the `device` its parameters are on, or the `SequenceRecord`) and returning SMPL-X
parameters (a `Motion` or a dict of arrays), with weights from `checkpoint`
(``torch.load(weights_only=True)``); its results are cached like a command's."""

from __future__ import annotations

import functools
from pathlib import Path
from types import FunctionType
from typing import Any, Literal

import numpy as np
import pytorch_lightning as pl
import torch
from typing_extensions import Unpack

from gesturebench.data.records import SequenceRecord
from gesturebench.models.batch import record_batch, result_arrays
from gesturebench.models.loading import file_digest, load_weights
from gesturebench.models.sources.base import ModelCommandError, SharedOptions
from gesturebench.models.sources.runs import RunSource
from gesturebench.runtime.atomic import atomic_path, one_line
from gesturebench.runtime.errors import CheckpointError, ConfigError, DataError, GestureBenchError


def arguments(network: Any) -> dict:
    """What of the built `network` besides its class and loaded weights decides its output (part
    of the cache key, so that another argument is another model): a `_partial_` function's
    arguments, a torch module's architecture, another object's attributes."""
    if isinstance(network, functools.partial):
        return {"args": list(network.args), "keywords": dict(network.keywords)}
    if isinstance(network, torch.nn.Module):
        return {"architecture": repr(network)}
    return dict(vars(network)) if hasattr(network, "__dict__") else {}


class ModuleSource(RunSource):
    """`network` (built from its `_target_` node) called once per sequence with `input` (dict |
    record); `checkpoint`: its weights (None: the object loads its own)."""

    kind = "module"

    def __init__(
        self,
        name: str,
        network: Any,
        input: Literal["dict", "record"] = "dict",
        checkpoint: str | None = None,
        **shared: Unpack[SharedOptions],
    ):
        func = getattr(network, "func", network)  # a `_partial_` function: the function's name
        owner = func if isinstance(func, FunctionType) else type(func)
        self.target = f"{owner.__module__}.{owner.__qualname__}"
        options = {"network": self.target, "arguments": arguments(network), "input": input}
        super().__init__(name, options, **shared)
        if not callable(network):
            raise ConfigError(
                f"model={name}: model.network ({self.target}) is not callable: give a class "
                f"or, with model.network._partial_=true, a function"
            )
        self.net, self.input, self.checkpoint = network, input, checkpoint
        self.options["weights_sha256"] = self._load_weights()

    def _load_weights(self) -> str | None:
        """Load the checkpoint into the target when it is a module with parameters; return the
        checkpoint's SHA-256 (None when there are no weights to load)."""
        net = self.net
        if not (isinstance(net, torch.nn.Module) and len(net.state_dict()) and self.checkpoint):
            return None
        path = Path(self.checkpoint)
        if not path.is_file():
            raise CheckpointError(
                f"model={self.name}: no weights at {path}. Put {self.title}'s weights there "
                f"(torch.save(model.state_dict(), '{path}') or a Lightning .ckpt), or set "
                f"model.checkpoint=/path/to/weights, or model.checkpoint=null if {self.target} "
                f"loads its own"
            )
        load_weights(net, path, self.target)
        net.eval()
        return file_digest(path)

    def produce(self, record: SequenceRecord, work: Path) -> None:
        batch = (
            record if self.input == "record" else {**record_batch(record), "device": self.device}
        )
        try:
            with torch.no_grad():
                if isinstance(self.net, pl.LightningModule):
                    output = self.net.predict_step(batch, max(record.index, 0))
                else:
                    output = self.net(batch)
            arrays: dict[str, Any] = result_arrays(output)
        except GestureBenchError:
            raise
        except Exception as exc:
            raise ModelCommandError(
                f"model={self.name}: {self.target} failed on sequence {record.id}: "
                f"{type(exc).__name__}: {one_line(exc)} (HYDRA_FULL_ERROR=1 shows the traceback)"
            ) from exc
        with atomic_path(work / "out" / f"{record.id}.npz") as tmp, open(tmp, "wb") as f:
            np.savez(f, **arrays)

    def unusable(
        self, err: DataError, folder: Path, record: SequenceRecord, what: str
    ) -> ModelCommandError:
        return ModelCommandError(
            f"model={self.name}: {self.target} returned no usable SMPL-X parameters for sequence "
            f"{record.id}: {err}"
        )

    def where(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "checkpoint": self.checkpoint,
            "checkpoint_sha256": self.options["weights_sha256"],
        }
