"""`OutputsSource` (``model/source=outputs``, ``model=precomputed``): result files the model's own
code already wrote, one per sequence in a folder. Since they exist before scoring, every one is
checked first (`output_problems`), so that a bad last file does not waste a run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from typing_extensions import Unpack

from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.models.formats import find_result
from gesturebench.models.sources.base import ResultSource, SharedOptions
from gesturebench.runtime.errors import CheckpointError, GestureBenchError


class OutputsSource(ResultSource):
    """The result files in `dir` (``{id}.npz``, ``res_{id}.npz``, … or `file_pattern`);
    `availability` is added to the missing-outputs message (e.g. that a model releases no code)."""

    kind = "outputs"

    def __init__(
        self,
        name: str,
        availability: str = "",
        dir: str | None = None,
        **shared: Unpack[SharedOptions],
    ):
        super().__init__(name, {"dir": dir}, **shared)
        self.dir = Path(dir) if dir else None
        #: what the model's authors released and which protocol their numbers use, or where the
        #: formats are documented (for messages)
        self.availability = (
            f" ({availability})" if availability else " (formats: docs/bring_your_model.md)"
        )
        if self.dir is None or not self.dir.is_dir() or not any(self.dir.glob("*.npz")):
            where = (
                f"model.dir is not set. Put {self.title}'s result files in a folder"
                if self.dir is None
                else f"no outputs found in {self.dir} ({self._why_none()}). Put {self.title}'s "
                f"result files there"
            )
            raise CheckpointError(
                f"model={name}: {where}, one per sequence named {self.file_names()}, or set "
                f"model.dir=/folder/with/them{self.availability}"
            )

    def _why_none(self) -> str:
        """Why `dir` holds no result file: absent, empty, .npz files only in a subfolder (where
        EMAGE-style test scripts write them), or other files only."""
        assert self.dir is not None
        if not self.dir.is_dir():
            return "the folder does not exist"
        if not any(self.dir.iterdir()):
            return "the folder is empty"
        nested = next(self.dir.rglob("*.npz"), None)
        if nested is not None:
            return f"its .npz files are in a subfolder: set model.dir={nested.parent}"
        return "the folder holds no .npz file"

    def generate(self, record: SequenceRecord) -> Motion:
        assert self.dir is not None  # checked at construction
        path = find_result(self.dir, record.id, self.patterns)
        if path is None:
            raise CheckpointError(self.missing_message([record.id], [record.id]))
        return self.read(path, record)

    def output_problems(
        self, dataset: Sequence[SequenceRecord], check: Callable[[Motion, SequenceRecord], None]
    ) -> list[str]:
        """Every sequence's result file read and `check`ed: the missing ones as one line, then one
        line per unusable file."""
        assert self.dir is not None
        ids: list[str] = []
        missing: list[str] = []
        problems: list[str] = []
        for i in range(len(dataset)):
            record = dataset[i]
            ids.append(record.id)
            path = find_result(self.dir, record.id, self.patterns)
            if path is None:
                missing.append(record.id)
                continue
            try:
                check(self.read(path, record), record)
            except GestureBenchError as err:
                problems.append(str(err))
        if missing:
            problems.insert(0, self.missing_message(missing, ids))
        return problems

    def missing_message(self, missing: list[str], ids: list[str]) -> str:
        """One line for the sequences of `ids` whose result file is not in `dir`: the first
        expected file, how many, what the folder holds and the file_pattern its names suggest."""
        assert self.dir is not None
        others = sorted(p.name for p in self.dir.glob("*.npz"))
        held = (
            f"the folder holds {len(others)} other .npz files, e.g. {', '.join(others[:3])}"
            if others
            else "the folder holds no .npz file"
        )
        more = f" and {len(missing) - 1} more of {len(ids)}" if len(missing) > 1 else ""
        expected = self.dir / self.patterns[0].format(id=missing[0])
        return (
            f"{expected}: missing result for sequence {missing[0]}{more} of model={self.name} "
            f"(looked for {', '.join(p.format(id=missing[0]) for p in self.patterns)} in "
            f"{self.dir}; {held}){self._pattern_hint(others, ids)}. Put {self.title}'s result for "
            f"every evaluated sequence there{self.availability}"
        )

    def _pattern_hint(self, names: list[str], ids: list[str]) -> str:
        """What the folder's file names suggest: a `file_pattern` around the sequence ids they
        hold, or, for ``res_*.npz`` without them, what EMAGE-style test scripts write."""
        for name in names:
            for sequence_id in sorted(ids, key=len, reverse=True):
                pattern = name.replace(sequence_id, "{id}")
                if sequence_id in name and pattern not in self.patterns:
                    return f"; the names look like model.file_pattern='{pattern}': set it"
        if any(name.startswith("res_") for name in names):
            return (
                "; res_*.npz is what EMAGE-style test scripts write, one res_{sequence_id}.npz per "
                "sequence (model=emage, semtalk or gesturelsm read them): these names hold no "
                "evaluated sequence id, so they are another split's or dataset's results, or set "
                "model.file_pattern to their naming"
            )
        return ""

    def where(self) -> dict[str, Any]:
        return {"dir": str(self.dir)}
