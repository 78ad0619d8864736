"""`NativeSource`: the base of the models gesturebench runs itself (``model/source=native``): their
released weights resolved by `gesturebench.runtime.weights` (a configured folder, else
``<checkpoints_dir>/<folder>``, else the Hub) and named by SHA-256 in the cache key, networks loaded
on first use (a fully cached run never loads them), a progress bar over each sequence's windows
(`stages.bar`, Lightning's look), and result files kept in the generated-motion cache like a
command's."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import torch
from typing_extensions import Unpack

from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.models.sources.base import ModelCommandError, SharedOptions
from gesturebench.models.sources.runs import RunSource
from gesturebench.runtime.atomic import atomic_path
from gesturebench.runtime.errors import DataError
from gesturebench.runtime.stages import bar
from gesturebench.runtime.weights import HubFiles, resolve_weights

if TYPE_CHECKING:
    from gesturebench.metrics.context import MetricContext


class NativeSource(RunSource):
    """A released model run in-process: `files` are its weights (`weights`: a folder in that
    layout, else ``<checkpoints_dir>/<files.folder>/``, else downloaded there); `progress` shows a
    bar over each sequence's windows. Runs on the evaluation's device (``trainer=gpu``). A subclass
    gives `load` (its networks) and `produce` (one sequence, through `bar` and `save`)."""

    kind = "native"
    files: ClassVar[HubFiles]

    def __init__(
        self,
        name: str,
        checkpoints_dir: str = "checkpoints",
        weights: str | None = None,
        progress: bool = True,
        identity: dict[str, Any] | None = None,
        **shared: Unpack[SharedOptions],
    ):
        resolved = resolve_weights(
            self.files, weights, checkpoints_dir, owner=f"model={name}", key="model.weights"
        )
        super().__init__(name, {"weights_sha256": resolved.sha256, **(identity or {})}, **shared)
        self.weights, self.progress = resolved, progress
        self.body_model: Any = None
        self.run_device = torch.device("cpu")
        self._nets: Any = None

    def prepare(self, context: MetricContext) -> None:
        super().prepare(context)
        self.body_model, self.run_device = context.body_model, torch.device(context.device)

    def nets(self) -> Any:
        """The networks (`load`), loaded on first use."""
        if self._nets is None:
            self._nets = self.load()
        return self._nets

    def load(self) -> Any:
        """The networks from `self.weights` on `self.run_device`."""
        raise NotImplementedError

    def needs_audio(self, record: SequenceRecord) -> np.ndarray:
        """The record's 16 kHz speech; a record without is one `DataError` line."""
        if record.audio is None:
            raise DataError(
                f"sequence {record.id}", f"has no speech audio, which {self.title} needs"
            )
        return np.asarray(record.audio, np.float32)

    @contextmanager
    def bar(self, record: SequenceRecord) -> Iterator[Callable[[int, int], None]]:
        """A progress bar over `record`'s windows, as an ``on_window(done, total)`` callback; a
        `DataError` inside names the sequence."""
        with bar(f"{self.name} {record.id}", transient=True, enabled=self.progress) as update:
            try:
                yield lambda done, total: update(completed=done, total=total)
            except DataError as err:
                raise DataError(f"sequence {record.id}", err.problem) from None

    def save(self, motion: Motion, record: SequenceRecord, work: Path) -> None:
        """`motion` as the run folder's result file for `record`."""
        with atomic_path(work / "out" / f"{record.id}.npz") as tmp, open(tmp, "wb") as f:
            np.savez(f, **motion.to_npz_dict())

    def unusable(
        self, err: DataError, folder: Path, record: SequenceRecord, what: str
    ) -> ModelCommandError:
        return ModelCommandError(
            f"model={self.name}: its result for sequence {record.id} does not read: {err}"
        )

    def where(self) -> dict[str, Any]:
        return {**self.weights.info(), "stochastic": self.stochastic}
