"""`ReplayAnnotator`: answers from an existing store of annotator `of`
(`annotations/<source>/<of>.jsonl`).

For SGP from annotations made earlier (or by hand): the answer for a clip is the store's latest
record of its event — an `ok` record gives its answer, an `invalid` one its raw text (invalid
again), an `error` one an error. A missing event is an error naming the store, never a guess. Replay
only reads: nothing is appended.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gesturebench.annotation.backends.base import Annotator, RequestError
from gesturebench.annotation.backends.remote import PAPER_PROTOCOL
from gesturebench.annotation.clip import EventClip
from gesturebench.annotation.events import CONTEXT_SECONDS
from gesturebench.annotation.prompt import prompt_sha256
from gesturebench.annotation.schema import GestureAnswer
from gesturebench.annotation.store import AnnotationStore, store_path
from gesturebench.annotation.validity import Validation
from gesturebench.runtime.errors import ConfigError, DataError


class ReplayAnnotator(Annotator):
    """Replays the stores of annotator `of` under `root` (default: the dataset's annotation
    folder)."""

    offline = True
    writes_store = False

    def __init__(
        self, of: str = "gemini", root: str | None = None, context: float = CONTEXT_SECONDS
    ):
        super().__init__(of, context)
        self.root = Path(root) if root else None
        self._stores: dict[str, AnnotationStore] = {}

    @property
    def model_name(self) -> str:
        return f"replay:{self.name}"

    def fingerprint(self) -> None:
        return None

    def prepare(self, context: Any, store_root: Path) -> None:
        self.root = self.root or Path(store_root)

    def validated_on(self) -> tuple[Validation, ...]:
        """Where the replayed answers' maker is valid: real BEAT2 when every `ok` record of the
        stores of `of` (one or more) was made with the paper's prompt (`PAPER_PROTOCOL`); else
        none."""
        paper = prompt_sha256("paper")
        stores = sorted(self.root.glob(f"*/{self.name}.jsonl")) if self.root else []
        made = {
            r.prompt_sha256
            for path in stores
            for r in AnnotationStore(path).latest().values()
            if r.status == "ok"
        }
        return (PAPER_PROTOCOL,) if made == {paper} else ()

    def store(self, source: str) -> AnnotationStore:
        if self.root is None:
            raise ConfigError("annotator=replay: no store root (set annotator.root)")
        if source not in self._stores:
            self._stores[source] = AnnotationStore(store_path(self.root, source, self.name))
        return self._stores[source]

    def ask(self, clip: EventClip) -> GestureAnswer | str:
        store = self.store(clip.source)
        record = store.latest().get(clip.event.id)
        if record is None:
            raise DataError(
                store.path,
                f"no annotation of event {clip.event.id} ({clip.event.sequence_id} "
                f"{clip.event.start:.2f}-{clip.event.end:.2f} s) to replay",
            )
        if record.status == "ok":
            return GestureAnswer.model_validate(
                record.model_dump(include=set(GestureAnswer.model_fields))
            )
        if record.status == "invalid":
            return record.raw or ""
        raise RequestError(f"replayed error: {record.error}")
