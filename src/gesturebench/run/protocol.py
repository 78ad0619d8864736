"""A protocol preset's pin (`metrics.protocol`): the BEAT2 split and speakers its published numbers
were computed on (docs/protocols.md, "Pinned split and speakers").

On real BEAT2 a run whose split, speakers or sequence limit differ is refused, unless
`metrics.protocol.strict=false`, when results.json records the differences (`protocol_mismatch`).
On a generated dataset (mini-BEAT2) the pin does not apply and is recorded as such.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from gesturebench.runtime.atomic import one_line
from gesturebench.runtime.errors import ConfigError

if TYPE_CHECKING:
    from gesturebench.run.datamodule import Beat2Source

#: the key of `metrics` that holds the pin (every other key is a metric)
PROTOCOL_KEY = "protocol"


@dataclass
class Protocol:
    """The schema of `metrics.protocol`: the `dataset` option the numbers were published on, its
    `split` and `speakers` (None: all); `strict=false` scores a differing run anyway."""

    dataset: str
    split: str = "test"
    speakers: list[int] | None = None
    strict: bool = True


def metric_nodes(metrics: Any) -> dict[str, Any]:
    """The metric configs of a `metrics` node: every key but the pin."""
    return {name: node for name, node in metrics.items() if name != PROTOCOL_KEY}


def _speakers(speakers: Any) -> str:
    return "all" if not speakers else ",".join(str(s) for s in sorted(speakers))


def read_pin(metrics: Any) -> Protocol | None:
    """The pin of a `metrics` node (`cfg.metrics`), checked against its schema; None without one."""
    node = metrics.get(PROTOCOL_KEY) if metrics else None
    if node is None:
        return None
    try:
        # the node as plain values: a key added with `+` must meet the schema here too
        plain = OmegaConf.to_container(node) if OmegaConf.is_config(node) else node
        pin = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(Protocol), plain))
    except OmegaConfBaseException as err:
        raise ConfigError(f"metrics.protocol: {one_line(err)}") from None
    assert isinstance(pin, Protocol)  # to_object builds the schema's dataclass
    return pin


def protocol_check(pin: Protocol | None, dataset: Beat2Source, preset: str) -> dict | None:
    """`pin` (`read_pin`) checked against `dataset`: None without a pin, else the pin with `status`
    (matched | mismatch | not applicable) and `differences`. A mismatch under `strict` is a
    ConfigError naming the dataset the preset `preset` was published on."""
    if pin is None:
        return None
    record: dict[str, Any] = {**asdict(pin), "differences": []}
    if dataset.generate:
        return {**record, "status": "not applicable"}
    differences = []
    if dataset.split != pin.split:
        differences.append(f"split {dataset.split} (pinned: {pin.split})")
    if _speakers(dataset.speakers) != _speakers(pin.speakers):
        differences.append(
            f"speakers {_speakers(dataset.speakers)} (pinned: {_speakers(pin.speakers)})"
        )
    if dataset.max_sequences is not None:
        differences.append(f"max_sequences={dataset.max_sequences} (pinned: the whole split)")
    if differences and pin.strict:
        raise ConfigError(
            f"metrics={preset} was published on dataset={pin.dataset} (split {pin.split}, speakers "
            f"{_speakers(pin.speakers)}); this run has {'; '.join(differences)}: use "
            f"dataset={pin.dataset}, or add metrics.protocol.strict=false to score it anyway "
            "(results.json then records protocol_mismatch)"
        )
    return {
        **record,
        "status": "mismatch" if differences else "matched",
        "differences": differences,
    }


@dataclass(frozen=True)
class Statement:
    """What a metrics preset computes, in one clause that is exactly true (`text`), and, for a
    preset that follows another project's official code, that code (`code`: its repository and
    the files read) and the commit its conventions were read and its fixtures made at."""

    text: str
    code: str | None = None
    commit: str | None = None


#: Each shipped metrics preset's protocol statement: the one source of the LaTeX tables' captions
#: (`reporting/latex.py`) and of docs/protocols.md's "Protocol statements" (a test checks each is
#: there verbatim). The commits are those of the fixtures in tests/fixtures (`commit`).
STATEMENTS: dict[str, Statement] = {
    "paper": Statement(
        "this benchmark's own metrics with the defaults of docs/metrics.md, "
        "and Div_sample with several samples per input (no other project's code)"
    ),
    "emage2024": Statement(
        "EMAGE's 2024 evaluation: FGD, BC and L1div with the conventions of PantoMatrix "
        "scripts/EMAGE_2024 (emage_trainer.py test(), utils/metric.py) at commit 3a7c079, "
        "and Div_sample with several samples per input",
        "PantoMatrix scripts/EMAGE_2024",
        "3a7c079",
    ),
    "emage2025": Statement(
        "EMAGE's 2025 evaluation tools: FGD, BC and L1div with the conventions of PantoMatrix "
        "emage_evaltools (mertic.py as train_*_audio.py's evaluation_fn calls it) at commit "
        "0bbb03d, and Div_sample with several samples per input",
        "PantoMatrix emage_evaltools",
        "0bbb03d",
    ),
    "genea": Statement(
        "the GENEA Leaderboard's objective metrics (FGD, FD_g, FD_k, BA_a2m, BA_m2a, SRGR, "
        "Div_pose, Div_k; Div_sample with several samples per input) with the conventions of "
        "GENEALeaderboard/objective_metric (exp_eval_metrics.py) at commit 49aab47",
        "GENEALeaderboard/objective_metric",
        "49aab47",
    ),
    "emage_parity": Statement(
        "this benchmark's own metrics with BC averaged over audio onsets, kept for older runs, "
        "and Div_sample with several samples per input (not EMAGE's computation; no other "
        "project's code)"
    ),
    "fast": Statement(
        "this benchmark's cheap joint-based metrics MJD and PCK, and Div_sample with several "
        "samples per input (no other project's code)"
    ),
    "study": Statement(
        "this benchmark's 13 composite predictors scored per clip, and Div_sample with several "
        "samples per input (no other project's code)"
    ),
    "composite": Statement(
        "perceptual ratings predicted by composites fitted with task=analyze "
        "(no other project's code)"
    ),
    "none": Statement("no metrics (motion generated and cached only)"),
}


def statement(preset: str) -> Statement:
    """The protocol statement of metrics preset `preset` (`STATEMENTS`); a preset without one (a
    user's own, or a list of presets) is said to be that, its options being in results.json."""
    unknown = "a metrics preset without a protocol statement (its options are in results.json)"
    return STATEMENTS.get(preset, Statement(unknown))
