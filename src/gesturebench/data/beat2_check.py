"""A downloaded BEAT2 folder checked file by file with the reader's own validation (`read_npz`,
`validate_motion_arrays`, `load_audio`): layout, sequences per split and speaker, motion frame
rates, audio sample rates and channels, NaN; every problem listed, none stopping the check
(`task=prepare_beat2` writes the result as beat2_report.md and .json)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import soundfile as sf

from gesturebench.data.audio import load_audio
from gesturebench.data.beat2 import (
    AUDIO_DIR,
    MOTION_DIR,
    SEM_DIR,
    SPLIT_FILE,
    TEXTGRID_DIR,
    read_npz,
    read_split_table,
    sequence_paths,
    speaker_of,
)
from gesturebench.data.motion import validate_motion_arrays
from gesturebench.data.records import SAMPLE_RATE
from gesturebench.runtime.errors import GestureBenchError


@dataclass
class Beat2Check:
    """What the check found in `root`. `unusable` says why an evaluation on `split` cannot run
    (None when it can); `problems` are (split, sequence or file, problem), `notes` what is
    optional or converted on the fly."""

    root: str
    split: str
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    frame_rates: dict[str, int] = field(default_factory=dict)
    audio_rates: dict[str, int] = field(default_factory=dict)
    audio_channels: dict[str, int] = field(default_factory=dict)
    missing_optional: dict[str, int] = field(default_factory=dict)
    problems: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unusable: str | None = None

    def add(self, split: str, item: str, problem: str) -> None:
        self.problems.append({"split": split, "item": item, "problem": problem})

    def document(self) -> dict:
        return dict(vars(self))


def check_beat2(root: str | Path, split: str = "test", audio: bool = True) -> Beat2Check:
    """Check every sequence listed in `root`'s split file (its motion, and with `audio` its speech);
    `split` is the one an evaluation reads (a problem there makes the folder unusable)."""
    root = Path(root)
    report = Beat2Check(str(root), split)
    if not root.is_dir():
        report.unusable = f"{root}: folder not found"
        return report
    for folder in (MOTION_DIR, AUDIO_DIR):
        if not (root / folder).is_dir():
            report.add("", f"{folder}/", "folder missing")
    for folder in (TEXTGRID_DIR, SEM_DIR):
        if not (root / folder).is_dir():
            report.notes.append(f"{folder}/ missing (optional)")
    try:
        table = read_split_table(root / SPLIT_FILE)
    except GestureBenchError as exc:
        report.unusable = str(exc)
        return report
    counts: dict[str, Counter] = {}
    fps: Counter = Counter()
    rates: Counter = Counter()
    channels: Counter = Counter()
    optional: Counter = Counter()
    broken: set[str] = set()
    for sid, kind in zip(table["id"], table["type"], strict=True):
        try:
            speaker = str(speaker_of(sid))
        except ValueError as exc:
            report.add(kind, sid, str(exc))
            speaker = "?"
        counts.setdefault(kind, Counter())[speaker] += 1
        paths = sequence_paths(root, sid)
        try:
            arrays = read_npz(paths.motion)
            if "mocap_frame_rate" in arrays and arrays["mocap_frame_rate"].size == 1:
                fps[f"{float(arrays['mocap_frame_rate'].reshape(())):g}"] += 1
            else:
                fps["unstated (read as 30)"] += 1
            validate_motion_arrays(paths.motion, arrays)
        except GestureBenchError as exc:
            report.add(kind, sid, str(exc))
            if kind == split:
                broken.add(sid)
        if audio:
            if paths.audio.is_file():
                try:
                    info = sf.info(paths.audio)
                    rates[str(info.samplerate)] += 1
                    channels[str(info.channels)] += 1
                    load_audio(paths.audio)
                except (GestureBenchError, RuntimeError) as exc:
                    report.add(kind, sid, str(exc))
            else:
                report.add(kind, sid, f"{paths.audio}: audio file not found")
        for name, path in (("textgrid", paths.textgrid), ("sem", paths.sem)):
            optional[name] += not path.is_file()
    report.counts = {k: dict(sorted(c.items())) for k, c in counts.items()}
    report.frame_rates, report.audio_rates = dict(fps), dict(rates)
    report.audio_channels = dict(sorted(channels.items()))
    report.missing_optional = dict(optional)
    off_rate = sum(n for r, n in rates.items() if r != str(SAMPLE_RATE))
    if off_rate:
        report.notes.append(
            f"{off_rate} audio file(s) are not {SAMPLE_RATE} Hz: they are resampled when read"
        )
    not_mono = sum(n for c, n in channels.items() if c != "1")
    if not_mono:
        report.notes.append(
            f"{not_mono} audio file(s) have more than one channel: averaged to mono when read"
        )
    for name, n in optional.items():
        if n:
            report.notes.append(f"{n} sequence(s) without {name} (metrics needing it skip them)")
    if split not in counts:
        report.unusable = f"{root / SPLIT_FILE}: no sequence of split '{split}'"
    elif broken:
        report.unusable = (
            f"{len(broken)} of {sum(counts[split].values())} sequence(s) of split '{split}' have "
            f"no usable motion (first: {sorted(broken)[0]})"
        )
    return report
