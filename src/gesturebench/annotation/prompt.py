"""The annotation prompt: a versioned template shipped in the package; its SHA-256 goes into every
record."""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources

from gesturebench.annotation.events import Event

PROMPT_VERSION = "gesture_v1"


@cache
def template(version: str = PROMPT_VERSION) -> str:
    path = resources.files("gesturebench.annotation") / "prompts" / f"{version}.txt"
    return path.read_text("utf-8")


def prompt_sha256(version: str = PROMPT_VERSION) -> str:
    """Hash of the template text: records made with another prompt are never mistaken for this
    one's."""
    return hashlib.sha256(template(version).encode()).hexdigest()


def render_prompt(
    event: Event, clip_start: float, clip_seconds: float, version: str = PROMPT_VERSION
) -> str:
    """The prompt for `event` shown in a clip that starts at `clip_start` seconds and lasts
    `clip_seconds`."""
    return template(version).format(
        clip_seconds=clip_seconds,
        interval_start=max(0.0, event.start - clip_start),
        interval_end=min(clip_seconds, event.end - clip_start),
        target=event.target.replace('"', "'") or "(no words)",
    )
