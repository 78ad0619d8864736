"""`OpenAICompatAnnotator`: any OpenAI-compatible chat-completions endpoint that accepts images (OpenAI, or a local
server such as vLLM via `base_url`). The clip goes as JPEG frames sampled at `frames_per_second` (at most
`max_frames`), each preceded by its time in the clip, then the prompt; the answer is requested as a JSON object.

The key comes only from the environment (`api_key_env`, default OPENAI_API_KEY; `null` for a local server
without authentication). The SDK's own retries are off: the runner retries and counts every request.
"""

from __future__ import annotations

import base64

import imageio.v3 as iio
import numpy as np

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
from gesturebench.annotation.clip import EventClip
from gesturebench.annotation.events import CONTEXT_SECONDS
from gesturebench.annotation.prompt import prompt_sha256
from gesturebench.errors import ConfigError


def sample_frames(n_frames: int, fps: int, per_second: float, max_frames: int) -> np.ndarray:
    """Indices of about `per_second` evenly spaced frames per second of `n_frames`, at most `max_frames`."""
    count = int(np.clip(round(n_frames / fps * per_second), 1, max_frames))
    return np.unique(np.linspace(0, n_frames - 1, count).round().astype(int))


class OpenAICompatAnnotator(Annotator):
    """A vision chat model behind an OpenAI-compatible API."""

    def __init__(self, name: str = "openai", model: str = "gpt-4o", api_key_env: str | None = "OPENAI_API_KEY",
                 base_url: str | None = None, frames_per_second: float = 4.0, max_frames: int = 16,
                 temperature: float = 0.0, timeout_s: float = 120.0, context: float = CONTEXT_SECONDS,
                 camera: dict | None = None):
        super().__init__(name, context, camera)
        if frames_per_second <= 0 or max_frames < 1:
            raise ConfigError("annotator.frames_per_second must be > 0 and annotator.max_frames >= 1")
        self.model = model
        self.api_key_env = api_key_env
        self.base_url = base_url
        self.frames_per_second = float(frames_per_second)
        self.max_frames = int(max_frames)
        self.temperature = float(temperature)
        self.timeout_s = float(timeout_s)
        self._client = None
        self._key: str | None = None

    @property
    def model_name(self) -> str:
        return self.model

    def fingerprint(self) -> str:
        return prompt_sha256()

    def describe(self) -> dict:
        return {**super().describe(), "base_url": self.base_url, "frames_per_second": self.frames_per_second,
                "max_frames": self.max_frames}

    def client(self):
        if self._client is None:
            try:
                import openai
            except ImportError as exc:
                raise AnnotatorUnavailable("annotator=openai needs the openai package: "
                                           "pip install 'gesturebench[llm]'") from exc
            self._key = api_key(self.api_key_env, "openai")
            self._client = openai.OpenAI(api_key=self._key or "none", base_url=self.base_url, max_retries=0,
                                         timeout=self.timeout_s)
        return self._client

    def messages(self, clip: EventClip) -> list[dict]:
        frames = clip.frames()
        content: list[dict] = []
        for i in sample_frames(len(frames), clip.fps, self.frames_per_second, self.max_frames):
            jpeg = base64.b64encode(iio.imwrite("<bytes>", frames[i], extension=".jpeg")).decode()
            content.append({"type": "text", "text": f"frame at {i / clip.fps:.2f} s"})
            content.append({"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{jpeg}"}})
        content.append({"type": "text", "text": clip.prompt()})
        return [{"role": "user", "content": content}]

    def ask(self, clip: EventClip) -> str:
        import openai

        client = self.client()
        try:
            response = client.chat.completions.create(model=self.model, messages=self.messages(clip),
                                                      response_format={"type": "json_object"},
                                                      temperature=self.temperature)
        except openai.APIStatusError as exc:
            message = redact(f"HTTP {exc.status_code}: {exc.message}", self._key)
            if exc.status_code in (401, 403):
                raise AnnotatorUnavailable(f"annotator=openai: credentials refused ({message}); "
                                           f"check {self.api_key_env}") from None
            if transient_status(exc.status_code):
                raise TransientError(message, retry_after_seconds(exc.response.headers)) from None
            raise RequestError(message) from None
        except openai.APIConnectionError as exc:  # includes timeouts
            raise TransientError(redact(f"{type(exc).__name__}: {exc}", self._key)) from None
        if not response.choices or response.choices[0].message.content is None:
            raise RequestError("the endpoint returned no message content")
        return response.choices[0].message.content
