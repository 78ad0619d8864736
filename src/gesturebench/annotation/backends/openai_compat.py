"""`OpenAICompatAnnotator`: any OpenAI-compatible chat-completions endpoint that accepts images
(OpenAI, or a local server such as vLLM via `base_url`). The clip goes as JPEG frames sampled at
`frames_per_second` (at most `max_frames`), each preceded by its time in the clip, then the prompt;
the answer is requested as a JSON object.

The key comes only from the environment (`api_key_env`, default OPENAI_API_KEY; `null` for a local
server without authentication). The SDK's own retries are off: the runner retries and counts every
request.
"""

from __future__ import annotations

import base64
from typing import Any

import imageio.v3 as iio
import numpy as np

from gesturebench.annotation.backends.base import RequestError
from gesturebench.annotation.backends.remote import RemoteAnnotator
from gesturebench.annotation.clip import EventClip
from gesturebench.runtime.errors import ConfigError


def sample_frames(n_frames: int, fps: int, per_second: float, max_frames: int) -> np.ndarray:
    """Indices of about `per_second` evenly spaced frames per second of `n_frames`, at most
    `max_frames`."""
    count = int(np.clip(round(n_frames / fps * per_second), 1, max_frames))
    return np.unique(np.linspace(0, n_frames - 1, count).round().astype(int))


class OpenAICompatAnnotator(RemoteAnnotator):
    """A vision chat model behind an OpenAI-compatible API."""

    backend = "openai"
    sdk_module = "openai"
    sdk_package = "openai"

    def __init__(
        self,
        name: str = "openai",
        model: str = "gpt-4o",
        api_key_env: str | None = "OPENAI_API_KEY",
        frames_per_second: float = 4.0,
        max_frames: int = 16,
        **remote: Any,
    ):
        super().__init__(name, model, api_key_env, **remote)
        if frames_per_second <= 0 or max_frames < 1:
            raise ConfigError(
                "annotator.frames_per_second must be > 0 and annotator.max_frames >= 1"
            )
        self.frames_per_second = float(frames_per_second)
        self.max_frames = int(max_frames)

    def describe(self) -> dict:
        return {
            **super().describe(),
            "frames_per_second": self.frames_per_second,
            "max_frames": self.max_frames,
        }

    def connect(self, key: str | None):
        import openai

        return openai.OpenAI(
            api_key=key or "none", base_url=self.base_url, max_retries=0, timeout=self.timeout_s
        )

    def messages(self, clip: EventClip) -> list[dict]:
        picked = sample_frames(clip.f1 - clip.f0, clip.fps, self.frames_per_second, self.max_frames)
        content: list[dict] = []
        for i, frame in zip(picked, clip.frames(picked), strict=True):
            jpeg = base64.b64encode(iio.imwrite("<bytes>", frame, extension=".jpeg")).decode()
            content.append({"type": "text", "text": f"frame at {i / clip.fps:.2f} s"})
            content.append(
                {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{jpeg}"}}
            )
        content.append({"type": "text", "text": clip.prompt(self.prompt)})
        return [{"role": "user", "content": content}]

    def ask(self, clip: EventClip) -> str:
        import openai

        client = self.client()
        try:
            response = client.chat.completions.create(
                model=self.model,
                messages=self.messages(clip),
                response_format={"type": "json_object"},
                temperature=self.temperature,
            )
        except openai.APIStatusError as exc:
            raise self.http_error(
                exc.status_code, f"HTTP {exc.status_code}: {exc.message}", exc.response.headers
            ) from None
        except openai.APIConnectionError as exc:  # includes timeouts
            raise self.connection_error(exc) from None
        if not response.choices or response.choices[0].message.content is None:
            raise RequestError("the endpoint returned no message content")
        return response.choices[0].message.content
