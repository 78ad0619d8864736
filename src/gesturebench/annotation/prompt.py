"""The annotation prompts: versioned templates shipped in the package; the SHA-256 of the one used
goes into every record (`prompt_sha256`), so records made with another prompt are never mistaken
for this one's.

`paper` follows the paper's specification (its Sec. 3.1.5.3 and Appendix 8, in our own words): the
hands, arms, head and upper body, the four classes iconic, metaphoric, deictic and beat plus
"unknown" (stored as "uncertain"), the speech transcript of the clip and the event's annotation
metadata (target word or expression, interval). BEAT2's class of the interval is deliberately not
shown, so the classifier judges the motion rather than the label. `hands_v1` is the earlier prompt
(the hands only, the target words only, six classes).
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources
from typing import Literal

from gesturebench.annotation.events import Event

#: The prompt templates (`annotator.prompt`), the first the default of the LLM annotators.
Prompt = Literal["paper", "hands_v1"]


@cache
def template(version: Prompt) -> str:
    path = resources.files("gesturebench.annotation") / "prompts" / f"{version}.txt"
    return path.read_text("utf-8")


def prompt_sha256(version: Prompt) -> str:
    """Hash of the template text."""
    return hashlib.sha256(template(version).encode()).hexdigest()


def render_prompt(event: Event, clip_start: float, clip_seconds: float, version: Prompt) -> str:
    """The prompt for `event` shown in a clip that starts at `clip_start` seconds and lasts
    `clip_seconds`."""
    return template(version).format(
        clip_seconds=clip_seconds,
        interval_start=max(0.0, event.start - clip_start),
        interval_end=min(clip_seconds, event.end - clip_start),
        target=event.target.replace('"', "'") or "(no words)",
        transcript=event.transcript.replace('"', "'") or "(no transcript)",
    )
