"""A protocol preset's pinned split and speakers (`metrics.protocol`, docs/protocols.md): matched,
refused with one line naming the preset's dataset (exit 2), scored anyway with `strict=false`
(results.json `protocol_mismatch`), and not applicable on mini-BEAT2."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from gesturebench.data.lengths import align_lengths
from gesturebench.data.records import Motion
from gesturebench.metrics.functional.div_k import pose_variance
from gesturebench.run.protocol import STATEMENTS, protocol_check, read_pin
from gesturebench.runtime.errors import ConfigError
from gesturebench.tasks.common import dataset_source
from tests.helpers import composed
from tests.launch import error_line, results, stopped
from tests.support.beat2_copy import SEQ, beat2_copy
from tests.support.requires import REPO

REAL = "dataset.root=/data/BEAT2"

#: each protocol preset → (dataset option it pins, its speakers)
PINS = {
    "emage2024": ("beat2_speaker2", [2]),
    "emage2025": ("beat2_speaker2", [2]),
    "genea": ("beat2", None),
    "paper": ("beat2", None),
}


def check(preset: str, *overrides: str) -> dict | None:
    cfg = composed(f"metrics={preset}", *overrides)
    return protocol_check(read_pin(cfg.metrics), dataset_source(cfg.dataset), preset)


@pytest.mark.parametrize(("preset", "pin"), PINS.items())
def test_each_preset_pins_its_published_split_and_matches_there(preset, pin):
    dataset, speakers = pin
    record = check(preset, f"dataset={dataset}", REAL)
    assert record is not None
    assert (record["dataset"], record["split"], record["speakers"]) == (dataset, "test", speakers)
    assert (record["status"], record["differences"]) == ("matched", [])


def test_a_differing_real_split_is_refused_naming_the_presets_dataset():
    with pytest.raises(ConfigError) as err:
        check("emage2024", "dataset=beat2", REAL)
    message = str(err.value)
    assert "\n" not in message
    assert "metrics=emage2024 was published on dataset=beat2_speaker2" in message
    assert "speakers all (pinned: 2)" in message and "metrics.protocol.strict=false" in message
    with pytest.raises(ConfigError, match=r"split val \(pinned: test\)"):
        check("paper", "dataset=beat2", REAL, "dataset.split=val")
    with pytest.raises(ConfigError, match=r"max_sequences=3 \(pinned: the whole split\)"):
        check("genea", "dataset=beat2", REAL, "dataset.max_sequences=3")


def test_strict_false_scores_anyway_and_records_the_differences():
    record = check("emage2025", "dataset=beat2", REAL, "metrics.protocol.strict=false")
    assert record is not None and record["status"] == "mismatch"
    assert record["differences"] == ["speakers all (pinned: 2)"]


def test_the_pin_does_not_apply_to_mini_beat2():
    record = check("emage2024", "dataset.max_sequences=2")  # mini_beat2, all speakers, a subset
    assert record is not None
    assert (record["status"], record["differences"]) == ("not applicable", [])


def test_presets_without_a_pin_and_a_bad_pin():
    assert check("fast", "dataset=beat2", REAL, "dataset.max_sequences=1") is None
    with pytest.raises(ConfigError, match=r"^metrics\.protocol: .*speakerz"):
        check("paper", "+metrics.protocol.speakerz=[2]")


def test_launch_refuses_with_one_line_and_exit_2(beat2_sample, tmp_path, in_process, capsys):
    beat2_copy(beat2_sample, tmp_path / "data")
    refused = stopped(
        capsys,
        "dataset=beat2",
        f"dataset.root={tmp_path / 'data'}",
        "metrics=emage2025",
        "logger=none",
        f"hydra.run.dir={tmp_path / 'run'}",
    )
    assert "metrics=emage2025 was published on dataset=beat2_speaker2" in error_line(refused)
    assert not (tmp_path / "run" / "results.json").exists()


def test_launch_with_strict_false_records_protocol_mismatch(beat2_sample, tmp_path, in_process):
    """`metrics=fast` with a pin added: the sample's one sequence (speaker 2) read as dataset=beat2
    over all speakers."""
    beat2_copy(beat2_sample, tmp_path / "data")
    in_process(
        "dataset=beat2",
        f"dataset.root={tmp_path / 'data'}",
        "metrics=fast",
        "+metrics.protocol={dataset: beat2_speaker2, speakers: [2], strict: false}",
        "logger=none",
        "task.render_clips=0",
        f"hydra.run.dir={tmp_path / 'run'}",
        encoders=False,
    )
    res = results(tmp_path / "run")
    assert res["protocol"]["status"] == "mismatch"
    assert res["protocol_mismatch"] == ["speakers all (pinned: 2)"]
    assert res["per_sequence"][0]["sequence_id"] == SEQ


def test_each_presets_statement_is_in_docs_protocols_word_for_word():
    """The protocol statements (run/protocol.STATEMENTS, the LaTeX tables' captions) are the ones
    docs/protocols.md lists, one line each; every shipped metrics preset has one, and each preset
    that follows official code names it and its commit in its statement."""
    docs = (REPO / "docs" / "protocols.md").read_text().splitlines()
    fixtures = " ".join(p.read_text() for p in (REPO / "tests" / "fixtures").glob("*.json"))
    pinned = set(re.findall(r'"commit": "([0-9a-f]{40})"', fixtures))
    for preset, said in STATEMENTS.items():
        assert f"- `{preset}`: {said.text}." in docs, preset
        if said.code is not None:  # the commit its fixtures were made at
            assert said.commit is not None and said.commit in said.text
            assert any(c.startswith(said.commit) for c in pinned), (preset, said.commit)
    presets = {p.stem for p in (REPO / "conf" / "metrics").glob("*.yaml")}
    assert presets == set(STATEMENTS)
    assert {p for p, s in STATEMENTS.items() if s.code} == {"emage2024", "emage2025", "genea"}


@pytest.mark.parametrize(("generated_frames", "equal"), [(270, True), (300, True), (330, False)])
def test_div_k_differs_from_the_leaderboards_only_when_the_generated_motion_is_longer(
    generated_frames, equal
):
    """docs/protocols.md, GENEA "Lengths": the Leaderboard's var_k reads the whole generated file
    alone (numpy's variance over its frames, averaged over the pose values: its
    `evaluation_a2p`, written out here); gesturebench scores Div_k on the generated motion cut
    to the shorter of the two (`align_lengths`), so the two agree unless the generated motion is
    the longer."""
    rng = np.random.default_rng(7)

    def motion(n: int) -> Motion:
        return Motion(rng.normal(size=(n, 165)), np.zeros((n, 3)), np.zeros(10), np.zeros((n, 100)))

    generated, reference = motion(generated_frames), motion(300)
    scored, _, _ = align_lengths(generated, reference, "s")
    ours = float(pose_variance(torch.from_numpy(scored.poses)))
    official = float(np.var(generated.poses.reshape(generated_frames, -1), axis=0).mean())
    assert (abs(ours - official) <= 1e-6 * official) == equal
