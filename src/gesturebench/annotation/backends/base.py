"""`Annotator`: the interface of every backend, and the errors through which backends talk to the
runner.

A backend answers one `EventClip` at a time (`ask`): with a `GestureAnswer`, or with the raw text of
an LLM's answer (parsed and validated by the runner). Failures are classified so the runner knows
what to do: `TransientError` (rate limit, server error, timeout: retried with back-off),
`RequestError` (this event failed: stored with status "error") and `AnnotatorUnavailable` (missing
key, refused credentials: the run stops).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from gesturebench.annotation.clip import EventClip
from gesturebench.annotation.events import CONTEXT_SECONDS
from gesturebench.annotation.schema import GestureAnswer
from gesturebench.annotation.validity import Validation
from gesturebench.render.clips import Camera
from gesturebench.runtime.errors import ConfigError, GestureBenchError


class TransientError(Exception):
    """A failure worth retrying after a pause (HTTP 408/429/5xx, timeouts, dropped connections)."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class RequestError(Exception):
    """This event's request failed for good (e.g. HTTP 400): stored as an `error` record."""


class AnnotatorUnavailable(GestureBenchError):
    """The backend cannot work at all (missing API key, credentials refused): the run stops with
    this message."""


def redact(text: str, secret: str | None) -> str:
    """`text` with `secret` masked, for any message that may echo a credential."""
    return text.replace(secret, "***") if secret else text


def api_key(variable: str | None, backend: str) -> str | None:
    """The API key from environment variable `variable` (never from the config); None when
    `variable` is None."""
    if variable is None:
        return None
    key = os.environ.get(variable, "").strip()
    if not key:
        raise AnnotatorUnavailable(
            f"annotator={backend} needs an API key in the environment variable {variable} "
            f"(keys are never read from the config); export {variable}=..."
        )
    return key


def transient_status(code: int | None) -> bool:
    """HTTP statuses worth retrying: timeouts, conflicts, rate limits and server errors."""
    return code is not None and (code in (408, 409, 429) or code >= 500)


def retry_after_seconds(headers) -> float | None:
    """A response's Retry-After header in seconds (the delta-seconds form), if any."""
    try:
        return max(0.0, float(headers.get("retry-after")))
    except (AttributeError, TypeError, ValueError):
        return None


def transport_errors() -> tuple[type[Exception], ...]:
    """Connection and timeout errors of the HTTP clients the SDKs use (httpx and its successor
    httpx2)."""
    out = []
    for module in ("httpx", "httpx2"):
        try:
            out.append(importlib.import_module(module).TransportError)
        except (ImportError, AttributeError):
            continue
    return tuple(out)


class Annotator:
    """Base class. `name` names the store file; `offline` backends cost nothing (SGP may run them on
    the fly).

    `context` (seconds shown around an event) and `camera` (how clips are rendered) belong to the
    annotator, so the annotate task and the SGP metric show it the same clips.
    """

    offline: bool = False
    #: whether the runner may append this backend's answers to a store (replay only reads one)
    writes_store: bool = True

    def __init__(self, name: str, context: float = CONTEXT_SECONDS, camera: dict | None = None):
        if not name or "/" in name:
            raise ConfigError(f"annotator.name={name!r} must be a plain file name")
        self.name = name
        self.context = float(context)
        self.camera = Camera(**(camera or {}))

    @property
    def model_name(self) -> str:
        """What answers (e.g. "gemini-2.5-pro"); stored as `annotator_model`."""
        raise NotImplementedError

    def fingerprint(self) -> str | None:
        """The `prompt_sha256` of this backend's records (None: accept any, for replay)."""
        raise NotImplementedError

    def prepare(self, context: Any, store_root: Path) -> None:
        """Load or fit what the backend needs before the first event (default: nothing)."""

    def validated_on(self) -> tuple[Validation, ...]:
        """The datasets this annotator has been validated on (`annotation.validity`); default:
        none, so SGP gives no value with it unless forced."""
        return ()

    def validation(self, kind: str) -> Validation | None:
        """Its validation on dataset kind `kind`, None where it has none."""
        return next((v for v in self.validated_on() if v.dataset == kind), None)

    def provenance(self) -> dict:
        """The file of a fitted model and its SHA-256 (results.json `encoders`); default: none."""
        return {}

    def ask(self, clip: EventClip) -> GestureAnswer | str:
        """Annotate one clip: a validated answer, or raw answer text for the runner to parse."""
        raise NotImplementedError

    def describe(self) -> dict:
        """The backend's options as written to results (never a secret)."""
        return {
            "name": self.name,
            "model": self.model_name,
            "prompt_sha256": self.fingerprint(),
            "context": self.context,
            "camera": vars(self.camera),
        }
