"""The contract every metric keeps (`gesturebench.metrics.base`): direction, value names, the fields
it reads, options from the constructor, one skip decision."""

from __future__ import annotations

import pytest
import torch

from gesturebench.body.output import BodyOutput
from gesturebench.metrics.base import MOTION_FIELDS, GestureMetric, SequenceMetric
from gesturebench.metrics.bc import BeatConsistency
from gesturebench.metrics.chamfer import Chamfer
from gesturebench.metrics.composite import PerSequence
from gesturebench.metrics.fgd import FGD
from gesturebench.reporting.results import PAPER_METRICS
from gesturebench.run.protocol import metric_nodes
from gesturebench.tasks.common import build
from tests.helpers import body_pair, composed

#: Which metric values a generated field copied from the reference enters (face vertices:
#: expressions, jaw, eyes; joint rotations and root velocity: the feature spaces; trans: foot
#: contact).
FEATURES = ["fgd", "fgd_raw_pose", "density", "coverage", "sc"]
VALUES_READING = {
    "expressions": ["chamfer", "hausdorff"],
    "jaw": ["chamfer", "hausdorff", *FEATURES, "div_sample"],
    "eyes": ["chamfer", "hausdorff", *FEATURES, "div_sample"],
    "trans": ["foot_contact", "contact_rate_gen", "bc", *FEATURES],
}
PAPER_DIRECTIONS = {
    "fgd": "lower",
    "density": "higher",
    "coverage": "higher",
    "diversity": "higher",
    "chamfer": "lower",
    "hausdorff": "lower",
    "mjd": "lower",
    "pck": "higher",
    "dice": "higher",
    "foot_contact": "lower",
    "ldlj_rel": "zero",
    "bc": "higher",
    "srgr": "higher",
    "sc": "higher",
    "sgp": "higher",
    "div_sample": "higher",
}


@pytest.fixture(scope="module")
def paper() -> dict[str, GestureMetric]:
    cfg = composed("metrics=paper")
    return {name: build(node) for name, node in metric_nodes(cfg.metrics).items()}


def test_paper_metrics_read_the_fields_of_the_copied_field_table(paper):
    for field in MOTION_FIELDS:
        reading = [n for m in paper.values() for n in m.values_reading(field)]
        assert sorted(reading) == sorted(VALUES_READING[field]), field
    with pytest.raises(ValueError, match="field must be one of"):
        paper["mjd"].values_reading("betas")


def test_paper_metrics_declare_their_direction(paper):
    assert set(paper) == {*PAPER_METRICS, "div_sample"}
    assert {name: m.direction for name, m in paper.items()} == PAPER_DIRECTIONS
    for m in paper.values():
        assert m.higher_is_better == {"higher": True, "lower": False, "zero": None}[m.direction]


def test_a_metric_without_a_direction_fails_at_construction():
    class Undirected(SequenceMetric):
        default_name = "undirected"

    with pytest.raises(TypeError, match="must declare direction"):
        Undirected()


def test_a_metric_is_named_by_its_config_or_its_default_name():
    assert Chamfer().name == "chamfer" and Chamfer(name="cd").name == "cd"
    assert Chamfer(name="cd").value_names[0] == "cd"

    class Unnamed(SequenceMetric):
        direction = "lower"

    with pytest.raises(TypeError, match="Unnamed needs a name"):
        Unnamed()
    assert Unnamed(name="given").name == "given"


def test_options_are_the_constructor_arguments():
    assert Chamfer(num_points=500, seed=7).options() == {
        "method": "auto",
        "num_points": 500,
        "seed": 7,
    }
    bc = BeatConsistency(name="bc2", direction="audio_to_motion", sigma=0.5)
    assert bc.value_names == ("bc2", "bc2_ref") and bc.values_reading("trans") == ["bc2"]
    assert BeatConsistency(root_aligned=True).values_reading("trans") == []
    options = bc.options()
    assert options["direction"] == "audio_to_motion" and options["sigma"] == 0.5
    assert "mean_speed" not in options and options["mean_speed_source"] is None
    assert bc.direction == "higher"


def test_per_sequence_takes_the_wrapped_metric_contract():
    wrapped = PerSequence(FGD(encoder_config={"latent_dim": 8}))
    assert wrapped.direction == "lower" and wrapped.higher_is_better is False
    assert wrapped.value_names == ("fgd", "fgd_raw_pose")
    assert wrapped.values_reading("trans") == ["fgd", "fgd_raw_pose"]
    assert wrapped.options()["scored"] == "per sequence" and wrapped.options()["dim"] == 8


def test_compute_is_none_exactly_when_there_is_a_skip_reason():
    metric = Chamfer()
    assert metric.skip_reason() is not None
    assert metric.compute() == {"chamfer": None}
    metric.reset()
    joints = torch.zeros(4, 55, 3, dtype=torch.float64)
    vertices = torch.zeros(4, 10, 3, dtype=torch.float64)
    body = BodyOutput(joints, vertices)
    metric.update(body_pair(0, body, body))
    assert metric.skip_reason() is None and metric.compute() == {"chamfer": 0.0}


def test_display_values_divide_by_the_display_scale():
    from gesturebench.reporting.results import display_values
    from gesturebench.runtime.errors import ConfigError

    fgd, bc = FGD(display_scale=0.1), BeatConsistency()
    shown = display_values({"fgd": fgd, "bc": bc}, {"fgd": 0.55, "fgd_raw_pose": None, "bc": 0.7})
    assert shown == {
        "fgd": {"value": pytest.approx(5.5), "scale": 0.1},
        "fgd_raw_pose": {"value": None, "scale": 0.1},
    }
    with pytest.raises(ConfigError, match="display_scale must be > 0"):
        FGD(display_scale=0)
