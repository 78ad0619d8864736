"""`OutputsSource` (``model.source=outputs``, ``model=precomputed``): result files the model's own
code already wrote, one per sequence in a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typing_extensions import Unpack

from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.errors import CheckpointError
from gesturebench.models.formats import find_result
from gesturebench.models.sources.base import ResultSource, SharedOptions


class OutputsSource(ResultSource):
    """The result files in `dir` (``{id}.npz``, ``res_{id}.npz``, … or `file_pattern`)."""

    kind = "outputs"

    def __init__(self, name: str, dir: str | None = None, **shared: Unpack[SharedOptions]):
        super().__init__(name, {"dir": dir}, **shared)
        self.dir = Path(dir) if dir else None
        if self.dir is None or not self.dir.is_dir() or not any(self.dir.glob("*.npz")):
            where = (
                f"model.dir is not set. Put {self.title}'s result files in a folder"
                if self.dir is None
                else f"no outputs found in {self.dir}. Put {self.title}'s result files there"
            )
            raise CheckpointError(
                f"model={name}: {where}, one per sequence named {self.file_names()}, or set "
                f"model.dir=/folder/with/them; gesturebench can also run the model itself "
                f"(model.source=command or module where its YAML offers them, e.g. "
                f"conf/model/emage.yaml; docs/bring_your_model.md)"
            )

    def generate(self, record: SequenceRecord) -> Motion:
        assert self.dir is not None  # checked at construction
        path = find_result(self.dir, record.id, self.patterns)
        if path is None:
            others = sorted(p.name for p in self.dir.glob("*.npz"))
            held = (
                f"the folder holds {len(others)} other .npz files, e.g. {', '.join(others[:3])}"
                if others
                else "the folder holds no .npz file"
            )
            expected = self.dir / self.patterns[0].format(id=record.id)
            raise CheckpointError(
                f"{expected}: missing result for sequence {record.id} of model={self.name} "
                f"(looked for {self.looked_for(record)} in {self.dir}; {held}). Put "
                f"{self.title}'s result for every evaluated sequence there"
            )
        return self.read(path, record)

    def where(self) -> dict[str, Any]:
        return {"dir": str(self.dir)}
