"""`GeminiAnnotator`: Google's Gemini through the `google-genai` SDK — the clip as an inline MP4
part (with its audio track), the prompt, and the answer constrained to the JSON schema of
`GestureAnswer`.

The key comes only from the environment (`api_key_env`, default GEMINI_API_KEY). `base_url` points
the SDK at another endpoint (a proxy, or a local fake server in the tests). The SDK's own retries
are switched off: the runner retries, so that every request counts against the budget.
"""

from __future__ import annotations

from typing import Any

from gesturebench.annotation.backends.base import RequestError, transport_errors
from gesturebench.annotation.backends.remote import RemoteAnnotator
from gesturebench.annotation.clip import EventClip
from gesturebench.annotation.schema import answer_json_schema
from gesturebench.runtime.errors import ConfigError


class GeminiAnnotator(RemoteAnnotator):
    """Gemini (default gemini-2.5-pro) via google-genai; sees the rendered clip at `video_fps`
    frames per second."""

    backend = "gemini"
    sdk_module = "google.genai.types"
    sdk_package = "google-genai"

    def __init__(
        self,
        name: str = "gemini",
        model: str = "gemini-2.5-pro",
        api_key_env: str = "GEMINI_API_KEY",
        video_fps: float = 10.0,
        audio: bool = True,
        **remote: Any,
    ):
        super().__init__(name, model, api_key_env, **remote)
        if not 0 < video_fps <= 24:
            raise ConfigError(
                f"annotator.video_fps={video_fps}: Gemini accepts (0, 24] frames per second"
            )
        self.video_fps = float(video_fps)
        self.audio = bool(audio)

    def describe(self) -> dict:
        return {**super().describe(), "video_fps": self.video_fps, "audio": self.audio}

    def connect(self, key: str | None):
        from google import genai
        from google.genai import types

        options = types.HttpOptions(
            base_url=self.base_url,
            timeout=int(self.timeout_s * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        return genai.Client(api_key=key, http_options=options)

    def ask(self, clip: EventClip) -> str:
        from google.genai import errors, types

        client = self.client()
        video = types.Part(
            inline_data=types.Blob(data=clip.video(self.audio).read_bytes(), mime_type="video/mp4"),
            video_metadata=types.VideoMetadata(fps=self.video_fps),
        )
        config = types.GenerateContentConfig(
            response_mime_type="application/json",
            response_json_schema=answer_json_schema(),
            temperature=self.temperature,
        )
        try:
            response = client.models.generate_content(
                model=self.model,
                contents=[
                    types.Content(
                        role="user", parts=[video, types.Part(text=clip.prompt(self.prompt))]
                    )
                ],
                config=config,
            )
        except errors.APIError as exc:
            raise self.http_error(
                exc.code,
                f"Gemini HTTP {exc.code}: {exc.message or exc.status or ''}",
                getattr(exc.response, "headers", None),
            ) from None
        except transport_errors() as exc:
            raise self.connection_error(exc) from None
        text = response.text
        if text is None:
            reason = (
                response.candidates[0].finish_reason if response.candidates else "no candidates"
            )
            raise RequestError(f"Gemini returned no text (finish reason: {reason})")
        return text
