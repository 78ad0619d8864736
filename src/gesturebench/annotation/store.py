"""`AnnotationStore`: the append-only JSONL file `annotations/<source>/<annotator>.jsonl`.

Each record is one line written with a single `write` on an O_APPEND descriptor and fsync'ed before
the next event, so a crash loses at most the event in flight; a torn last line (power loss
mid-write) is ignored when read and cut off before the next append. Records are never rewritten: a
later record for an event supersedes an earlier one (an `error` record is retried on the next run;
`ok` and `invalid` ones are final). A damaged line elsewhere is set aside in `<store>.corrupt` (the
store rewritten without it, the other lines unchanged) and its event annotated again.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from pydantic import ValidationError

from gesturebench.annotation.schema import AnnotationRecord
from gesturebench.runtime.atomic import write_atomic
from gesturebench.runtime.caches import CORRUPT

log = logging.getLogger(__name__)

#: Statuses that count as done: re-running skips them (an `error` is a failed request, asked again).
FINAL = ("ok", "invalid")


def store_path(root: str | Path, source: str, annotator: str) -> Path:
    return Path(root) / source / f"{annotator}.jsonl"


class AnnotationStore:
    """Read and append the records of one (source, annotator) store; safe to share between
    threads."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._loaded = False
        self._records: list[AnnotationRecord] = []
        self._by_event: dict[str, list[AnnotationRecord]] = {}

    def exists(self) -> bool:
        return self.path.is_file()

    def records(self) -> list[AnnotationRecord]:
        """Every record in file order; a malformed line other than a torn last one is set
        aside (`_set_aside`)."""
        with self._lock:
            self._load()
            return list(self._records)

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            for record in self._read():
                self._add(record)

    def _add(self, record: AnnotationRecord) -> None:
        self._records.append(record)
        self._by_event.setdefault(record.event_id, []).append(record)

    def _read(self) -> list[AnnotationRecord]:
        if not self.path.is_file():
            return []
        data = self.path.read_bytes()
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        elif lines:
            lines.pop()  # torn last line: the event in flight when the writer died
        out, kept, damaged = [], [], []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                out.append(AnnotationRecord.model_validate_json(line))
                kept.append(line)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(map(str, first["loc"])) or "record"
                damaged.append((number, line, f"{where}: {first['msg']}"))
        if damaged:
            self._set_aside(kept, damaged)
        return out

    def _set_aside(self, kept: list[bytes], damaged: list[tuple[int, bytes, str]]) -> None:
        """Append the `damaged` lines to `<store>.corrupt` and rewrite the store with the `kept`
        lines, byte for byte: the damaged records' events have no record, so the next run
        annotates them again."""
        aside = self.path.with_name(self.path.name + CORRUPT)
        with aside.open("ab") as f:
            f.write(b"".join(line + b"\n" for _, line, _ in damaged))
            f.flush()
            os.fsync(f.fileno())
        write_atomic(self.path, b"".join(line + b"\n" for line in kept))
        numbers = ", ".join(str(number) for number, _, _ in damaged)
        log.warning(
            "%s: damaged line(s) %s (%s) set aside in %s; their events are annotated again",
            self.path,
            numbers,
            damaged[0][2],
            aside.name,
        )

    def latest(self) -> dict[str, AnnotationRecord]:
        """The last record of each event id."""
        return {r.event_id: r for r in self.records()}

    def find(
        self,
        event_id: str,
        prompt_sha256: str | None = None,
        annotator_model: str | None = None,
        motion_sha256: str | None = None,
        final_only: bool = False,
    ) -> AnnotationRecord | None:
        """The last record of `event_id` matching the given fields (None matches anything)."""
        wanted = {
            "prompt_sha256": prompt_sha256,
            "annotator_model": annotator_model,
            "motion_sha256": motion_sha256,
        }
        with self._lock:
            self._load()
            candidates = list(self._by_event.get(event_id, ()))
        for record in reversed(candidates):
            if final_only and record.status not in FINAL:
                continue
            if all(v is None or getattr(record, k) == v for k, v in wanted.items()):
                return record
        return None

    def append(self, record: AnnotationRecord) -> None:
        """Append one record durably (one write, then fsync)."""
        line = (record.to_json() + "\n").encode()
        with self._lock:
            self._load()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                _cut_torn_tail(fd)
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
            self._add(record)


def _cut_torn_tail(fd: int) -> None:
    """Truncate a last line that lacks its newline (left by a crash mid-write) so the next record
    starts clean."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    chunk = min(size, 1 << 20)
    tail = os.pread(fd, chunk, size - chunk)
    cut = tail.rfind(b"\n")
    os.ftruncate(fd, size - chunk + cut + 1 if cut >= 0 else size - chunk)
