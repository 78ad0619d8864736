"""The study's design (`task.design`) and each participant's block: which clips, in which order,
with the attention checks where the design places them.

Participants are numbered in arrival order (0, 1, …) and alternate over the conditions present in
the manifest (number n → condition n mod C, index n div C within it): different participants per
condition, as the analysis requires. Within a condition the items (clips in rating mode, same-window
source pairs in pairwise mode) are laid out once in a seeded order that interleaves the sources
(pairs) round robin; participant i takes the `block_size` items after position i·block_size of that
cyclic order, so every item gets about the same number of raters and every block about the same
number of each source; the block is then shuffled by a generator seeded with (seed, condition, i).
Everything is deterministic from `seed` and the arrival order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Literal

import numpy as np

from gesturebench.runtime.errors import ConfigError
from gesturebench.study.schema import CONDITIONS, DIMENSIONS, SCALE
from gesturebench.study.server.manifest import Stimulus

#: Answer of a pairwise question: the first clip, the second, or no difference.
CHOICES = ("a", "b", "tie")
#: What a participant id from a URL may look like (a recruitment platform's ids do).
PARTICIPANT_ID = re.compile(r"[A-Za-z0-9_.@-]{1,200}")


@dataclass(frozen=True)
class AttentionChecks:
    """A check after `after[k]` rated items of the block (those beyond the block are dropped): one
    of the block's clips again, with `instruction` on screen; `{answer}` is the answer asked for,
    drawn per check (a rating in rating mode, a clip in pairwise mode)."""

    after: list[int] = field(default_factory=lambda: [5, 12, 20])
    instruction: str = "Attention check: please answer {answer} to every question on this page."


@dataclass(frozen=True)
class EntryLimit:
    """Entries of one kind that nothing vouches for (links without an id, given an id `anon-…`;
    unsigned ids from links): off unless `allowed`; then at most `limit` ids of that kind in all and
    `per_minute` new ones a minute (over every visitor: behind a proxy the server cannot tell
    visitors apart)."""

    allowed: bool = False
    limit: int = 100
    per_minute: int = 10


#: `task.design.mode`: rating (1–7 per dimension) or pairwise (which of two clips); checked when the
#: config is composed or the saved server.yaml is read
Mode = Literal["rating", "pairwise"]


@dataclass(frozen=True)
class StudyDesign:
    """What participants see and answer: the mode (rating: 1–7 per dimension; pairwise: which of two
    clips of one window is more …), block size, practice clip, attention checks, the wording."""

    mode: Mode = "rating"
    seed: int = 0
    title: str = "Gesture study"
    block_size: int = 25
    # rating mode: the practice clip's stimulus_id per condition (absent: the condition's first
    # item, also in pairwise mode)
    practice: dict[str, str] = field(default_factory=dict)
    attention: AttentionChecks = field(default_factory=AttentionChecks)
    consent: str = (
        "You will watch short animations of a virtual speaker and rate them. It takes about 20 "
        "minutes. Your answers are stored with your participant id only and used for research. "
        "You can stop at any time by closing this page."
    )
    instructions: str = (
        "Each page shows a clip. Watch it to the end: the questions unlock when it has finished. "
        "Then answer every question. A practice clip comes first; its answers are not kept."
    )
    # rating mode: the question asked on the 1–7 scale for each dimension
    questions: dict[str, str] = field(
        default_factory=lambda: {
            "hl": "How human-like does the motion look?",
            "md": "How varied is the motion?",
            "ae": "How free of animation errors (jitter, glitches, impossible poses) is it?",
            "st": "How well is the motion timed with the speech?",
            "cm": "How well does the motion match what is said?",
        }
    )
    # pairwise mode: the question asked for each dimension compared
    comparisons: dict[str, str] = field(
        default_factory=lambda: {
            "hl": "Which motion looks more human-like?",
            "st": "Which motion is better timed with the speech?",
        }
    )
    scale_labels: list[str] = field(default_factory=lambda: ["very poor", "excellent"])
    # shown on the last page: one code for everybody (e.g. a recruitment platform's), or null for
    # a random code per participant
    completion_code: str | None = None
    # the URL parameter that carries a participant id (e.g. PROLIFIC_PID)
    id_parameter: str = "participant_id"
    # links without an id (off by default)
    anonymous: EntryLimit = field(default_factory=EntryLimit)
    # a file of the participant ids let in without a signed link (one a line; `#` starts a comment)
    ids_file: str | None = None
    # ids from links that are neither signed nor in `ids_file` (off by default)
    unsigned: EntryLimit = field(default_factory=EntryLimit)
    # failed attention checks from which the progress view counts a participant as excluded
    exclude_at: int = 2

    def __post_init__(self):
        if self.block_size < 1:
            raise ConfigError("task.design.block_size must be at least 1")
        wording = self.questions if self.mode == "rating" else self.comparisons
        unknown = [d for d in wording if d not in DIMENSIONS]
        if unknown:
            raise ConfigError(
                f"task.design: unknown dimension(s) {unknown} (known: {list(DIMENSIONS)})"
            )

    def dimensions(self, condition: str) -> list[str]:
        """The dimensions a participant of `condition` answers, in the paper's order."""
        wording = self.questions if self.mode == "rating" else self.comparisons
        return [d for d in CONDITIONS[condition] if d in wording]  # type: ignore[index]

    def wording(self, dimension: str) -> str:
        return (self.questions if self.mode == "rating" else self.comparisons)[dimension]


def read_ids(path: str) -> frozenset[str]:
    """The participant ids of `ids_file` (one a line; blank lines and `#` comments skipped);
    `ConfigError` naming the file and line of an unreadable file or a malformed id."""
    try:
        lines = Path(path).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"task.design.ids_file: cannot read {path} ({err})") from None
    ids = set()
    for number, line in enumerate(lines, 1):
        given = line.split("#", 1)[0].strip()
        if given and not PARTICIPANT_ID.fullmatch(given):
            raise ConfigError(
                f"{path}, line {number}: {given[:50]!r} is no participant id "
                "(1–200 letters, digits or _ . @ -)"
            )
        if given:
            ids.add(given)
    return frozenset(ids)


def conditions(stimuli: dict[str, Stimulus], design: StudyDesign) -> list[str]:
    """The conditions of the manifest that have something to answer, in the schema's order."""
    present = {s.condition for s in stimuli.values()}
    out: list[str] = [c for c in CONDITIONS if c in present and design.dimensions(c)]
    if not out:
        raise ConfigError("task.design asks no question about any condition of the manifest")
    return out


def _interleaved(groups: dict[str, list], rng: np.random.Generator) -> list:
    """The groups' items, each group shuffled, taken round robin over the groups (in a shuffled
    order)."""
    shuffled = [[g[i] for i in rng.permutation(len(g))] for g in groups.values()]
    shuffled = [shuffled[i] for i in rng.permutation(len(shuffled))]
    out: list = []
    for k in range(max(len(g) for g in shuffled)):
        out.extend(g[k] for g in shuffled if k < len(g))
    return out


def layout(stimuli: dict[str, Stimulus], design: StudyDesign, condition: str) -> list[dict]:
    """The condition's items in their seeded cyclic order (see the module docstring)."""
    clips = [s for s in stimuli.values() if s.condition == condition]
    rng = np.random.default_rng([design.seed, list[str](CONDITIONS).index(condition)])
    if design.mode == "rating":
        by_source: dict[str, list] = {}
        for s in clips:
            by_source.setdefault(s.source, []).append({"kind": "rating", "a": s.stimulus_id})
        return _interleaved(by_source, rng)
    windows: dict[tuple, list[Stimulus]] = {}
    for s in clips:
        windows.setdefault((s.sequence_id, s.start, s.end), []).append(s)
    by_pair: dict[str, list] = {}
    for group in windows.values():
        for x, y in combinations(sorted(group, key=lambda s: s.source), 2):
            by_pair.setdefault(f"{x.source}|{y.source}", []).append(
                {"kind": "pair", "a": x.stimulus_id, "b": y.stimulus_id}
            )
    if not by_pair:
        raise ConfigError(
            f"pairwise mode: no window of condition {condition} has clips of two sources"
        )
    return _interleaved(by_pair, rng)


def block(layout_: list[dict], design: StudyDesign, condition: str, index: int) -> list[dict]:
    """The block of the `index`-th participant of `condition`: its items shuffled (pairs' sides
    too), with the attention checks inserted."""
    k = min(design.block_size, len(layout_))
    items = [dict(layout_[(index * k + j) % len(layout_)]) for j in range(k)]
    rng = np.random.default_rng([design.seed, list[str](CONDITIONS).index(condition), index])
    items = [items[i] for i in rng.permutation(k)]
    for item in items:
        if item["kind"] == "pair" and rng.random() < 0.5:
            item["a"], item["b"] = item["b"], item["a"]
    for after in sorted((a for a in design.attention.after if 0 < a <= k), reverse=True):
        check = dict(items[int(rng.integers(k))], kind="attention")
        if design.mode == "rating":
            check["answer"] = int(rng.integers(SCALE[0], SCALE[1] + 1))
        else:
            check["answer"] = str(rng.choice(CHOICES[:2]))
        items.insert(after, check)
    return items
