"""`RemoteAnnotator`: what the LLM backends behind an HTTP API share — the model, the environment
variable that holds the key, the endpoint, temperature and timeout; the SDK client made on first use
(so a missing package or key fails only a run that asks); and the mapping of HTTP failures onto the
runner's errors, key redacted.
"""

from __future__ import annotations

import importlib
from typing import Any

from gesturebench.annotation.backends.base import (
    Annotator,
    AnnotatorUnavailable,
    RequestError,
    TransientError,
    api_key,
    redact,
    retry_after_seconds,
    transient_status,
)
from gesturebench.annotation.prompt import Prompt, prompt_sha256
from gesturebench.annotation.validity import Validation

#: the paper's protocol on real BEAT2 motion: its prompt, the clip of the study's avatar
PAPER_PROTOCOL = Validation(
    "beat2",
    "the paper's protocol (its prompt; Gemini 2.5 Pro's annotations of BEAT2 judged correct in 75% "
    "of the paper's manual check); check another model with task=review",
)


class RemoteAnnotator(Annotator):
    """Base class of the API backends; subclasses set the class attributes and implement `connect`
    and `ask`. A subclass's constructor takes its own options and passes the shared ones
    (`base_url`, `temperature`, `timeout_s`, `prompt`, and `Annotator`'s `context`, `camera`) on
    as `**remote`; its config schema lists them all. `prompt` names the template
    (`annotation.prompt.Prompt`); its hash is every record's `prompt_sha256`."""

    #: the backend's name in messages (`annotator=<backend>`)
    backend: str
    #: the module its SDK is imported from, and the package that provides it
    sdk_module: str
    sdk_package: str

    def __init__(
        self,
        name: str,
        model: str,
        api_key_env: str | None,
        base_url: str | None = None,
        temperature: float = 0.0,
        timeout_s: float = 120.0,
        prompt: Prompt = "paper",
        **annotator: Any,
    ):
        super().__init__(name, **annotator)
        self.prompt = prompt
        self.model = model
        self.api_key_env = api_key_env
        self.base_url = base_url
        self.temperature = float(temperature)
        self.timeout_s = float(timeout_s)
        self._client = None
        self._key: str | None = None

    def validated_on(self) -> tuple[Validation, ...]:
        """Real BEAT2 motion, with the paper's prompt (`PAPER_PROTOCOL`)."""
        return (PAPER_PROTOCOL,) if self.prompt == "paper" else ()

    @property
    def model_name(self) -> str:
        return self.model

    def fingerprint(self) -> str:
        return prompt_sha256(self.prompt)

    def describe(self) -> dict:
        return {**super().describe(), "base_url": self.base_url, "prompt": self.prompt}

    def connect(self, key: str | None):
        """A new SDK client that uses `key` (None: no authentication)."""
        raise NotImplementedError

    def client(self):
        """The SDK client, made on first use: the SDK must be installed and the key set in the
        environment."""
        if self._client is None:
            try:
                importlib.import_module(self.sdk_module)
            except ImportError as exc:
                raise AnnotatorUnavailable(
                    f"annotator={self.backend} needs the {self.sdk_package} package: "
                    "pip install 'gesturebench[llm]'"
                ) from exc
            self._key = api_key(self.api_key_env, self.backend)
            self._client = self.connect(self._key)
        return self._client

    def http_error(self, code: int | None, message: str, headers) -> Exception:
        """The error for an HTTP failure: refused credentials stop the run, transient statuses are
        retried (after the response's Retry-After, if any), anything else fails this event."""
        message = redact(message, self._key)
        if code in (401, 403):
            return AnnotatorUnavailable(
                f"annotator={self.backend}: credentials refused ({message}); "
                f"check {self.api_key_env}"
            )
        if transient_status(code):
            return TransientError(message, retry_after_seconds(headers))
        return RequestError(message)

    def connection_error(self, exc: Exception) -> TransientError:
        """The (retried) error for a dropped connection or a timeout."""
        return TransientError(redact(f"{type(exc).__name__}: {exc}", self._key))
