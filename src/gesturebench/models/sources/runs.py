"""`RunSource`: the base of the sources that produce their result files themselves (a command or a
module), once per sequence, into run folders of the generated-motion cache (`models.cache`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.metrics.context import MetricContext
from gesturebench.models.cache import retire, run_once
from gesturebench.models.formats import find_result
from gesturebench.models.sources.base import ModelCommandError, ResultSource
from gesturebench.runtime.errors import ConfigError, DataError


class RunSource(ResultSource):
    """Runs the model for a sequence (`produce`) unless its cached run folder exists; reads the
    result from the folder's ``out/``."""

    work_root: Path | None = None

    def prepare(self, context: MetricContext) -> None:
        self.work_root = Path(context.cache_dir) / "generated" / self.name

    def cache_key(self, record: SequenceRecord) -> str:
        """The base key (options, id, reference motion) plus the inputs a model reads: audio and
        words."""
        h = hashlib.sha256(super().cache_key(record).encode())
        if record.audio is not None:
            h.update(np.ascontiguousarray(record.audio).tobytes())
        h.update(json.dumps([(w.word, w.start, w.end) for w in record.words or []]).encode())
        return h.hexdigest()

    def run_root(self) -> Path:
        if self.work_root is None:
            raise ConfigError(f"model={self.name}: prepare(context) must run before generate()")
        return self.work_root

    def generate(self, record: SequenceRecord) -> Motion:
        final = self.run_root() / f"{record.id}-{self.cache_key(record)[:16]}"
        what = f"sequence {record.id}"
        return run_once(
            final,
            lambda work: self.produce(record, work),
            lambda folder: self.read_run(folder, record, what),
        )

    def produce(self, record: SequenceRecord, work: Path) -> None:
        """Run the model for `record`, its result file into ``work/out``."""
        raise NotImplementedError

    def read_run(self, folder: Path, record: SequenceRecord, what: str) -> Motion:
        """Read the record's result from a run folder; a missing or unusable file takes the folder
        out of the cache (so the next run regenerates it) and raises one `ModelCommandError`."""
        path = find_result(folder / "out", record.id, self.patterns)
        try:
            if path is None:
                wrote = sorted(p.name for p in (folder / "out").iterdir())[:5]
                raise DataError(
                    folder / "out",
                    f"no result for sequence {record.id} (looked for {self.looked_for(record)}; "
                    f"found: {', '.join(wrote) or 'nothing'})",
                )
            return self.read(path, record)
        except DataError as err:
            raise self.unusable(err, retire(folder), record, what) from err

    def unusable(
        self, err: DataError, folder: Path, record: SequenceRecord, what: str
    ) -> ModelCommandError:
        """The error for a run (for `what`) whose result for `record` does not read; its folder is
        now `folder`."""
        raise NotImplementedError
