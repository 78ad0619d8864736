"""The annotation record of docs/annotation.md and the answer an annotator returns, as pydantic
models.

`GestureAnswer` is what a backend must produce (an LLM's JSON answer is parsed into it);
`AnnotationRecord` is one line of the JSONL store. Both spell the class field ``class`` on the wire
(`gesture_class` in Python).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from gesturebench.data.gesture_classes import GestureClass

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class GestureAnswer(BaseModel):
    """An annotator's answer for one event (extra keys an LLM adds are ignored, missing or wrong
    ones are not)."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    word: str
    gesture_description: str
    contextual_meaning: str
    gesture_class: GestureClass = Field(alias="class")
    confidence: float = Field(ge=0.0, le=1.0)

    @field_validator("gesture_class", mode="before")
    @classmethod
    def _unknown_is_uncertain(cls, value):
        """The paper's prompt answers "unknown" where ours says "uncertain": the same class."""
        return UNKNOWN_AS if value == "unknown" else value


#: The class an answer of "unknown" (the paper's prompt) is stored as.
UNKNOWN_AS = "uncertain"


def answer_json_schema() -> dict:
    """The JSON schema of the answer (sent to LLMs that support constrained JSON output); its class
    enum admits "unknown" too, for the paper's prompt."""
    out = GestureAnswer.model_json_schema(by_alias=True)
    out["properties"]["class"]["enum"].append("unknown")
    return out


class InvalidAnswer(ValueError):
    """An answer that is not JSON or does not fit `GestureAnswer`; carries the raw text."""

    def __init__(self, raw: str, problem: str):
        super().__init__(problem)
        self.raw = raw


def parse_answer(raw: str) -> GestureAnswer:
    """Parse an LLM's text answer (a bare JSON object, optionally inside one ```json fence);
    `InvalidAnswer` if not."""
    match = _FENCE.match(raw or "")
    text = match.group(1) if match else (raw or "")
    try:
        return GestureAnswer.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise InvalidAnswer(raw, f"not JSON ({exc.msg} at position {exc.pos})") from None
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in exc.errors()
        )
        raise InvalidAnswer(raw, f"does not fit the answer schema ({problems})") from None


#: An annotation record's outcome: a valid answer, an answer that failed validation, or no answer.
RecordStatus = Literal["ok", "invalid", "error"]


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class AnnotationRecord(BaseModel):
    """One line of `annotations/<source>/<annotator>.jsonl` (docs/annotation.md,
    "Annotation record and store").

    Beside the annotation record's fields (docs/annotation.md): `raw` (the answer text of an
    invalid record) and `motion_sha256` (hash of the annotated motion window, so a changed model
    output is annotated again rather than matched to a stale record).
    """

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    event_id: str
    sequence_id: str
    start: float
    end: float
    source: str
    word: str | None = None
    gesture_description: str | None = None
    contextual_meaning: str | None = None
    gesture_class: GestureClass | None = Field(default=None, alias="class")
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    annotator: str
    annotator_model: str
    prompt_sha256: str
    created_at: str = Field(default_factory=now_iso)
    status: RecordStatus
    error: str | None = None
    raw: str | None = None
    motion_sha256: str | None = None

    @model_validator(mode="after")
    def _status_consistent(self) -> AnnotationRecord:
        if self.status == "ok" and (self.gesture_class is None or self.error is not None):
            raise ValueError("an 'ok' record needs a class and no error")
        if self.status != "ok" and (self.gesture_class is not None or not self.error):
            raise ValueError(
                f"a '{self.status}' record has no class and says what went wrong in 'error'"
            )
        return self

    def to_json(self) -> str:
        return json.dumps(self.model_dump(by_alias=True, mode="json"), ensure_ascii=False)
