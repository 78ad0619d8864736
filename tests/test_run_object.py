"""`tasks.run.Run`: built once from the config, it holds no config object, and what costs time
or may refuse the run (device, protocol check, context, prepared metrics) is made once, also for
the runs it derives with another model (`task=analyze`'s sources)."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from omegaconf import OmegaConf

from gesturebench.tasks import run as run_module
from gesturebench.tasks.job import Job
from gesturebench.tasks.run import Run
from tests.helpers import composed

BUILT: list[str] = []


class Stub:
    """A metric that records its builds and preparations."""

    across_samples: ClassVar[bool] = False

    def __init__(self, name: str):
        self.name = name
        self.prepared: list[Any] = []
        BUILT.append(name)

    def prepare(self, context: Any) -> None:
        self.prepared.append(context)


class Across(Stub):
    across_samples: ClassVar[bool] = True


def _configs(value: Any) -> list[Any]:
    """The config objects in `value` (nested in plain containers too)."""
    if OmegaConf.is_config(value):
        return [value]
    if isinstance(value, dict):
        return [c for v in value.values() for c in _configs(v)]
    if isinstance(value, (list, tuple)):
        return [c for v in value for c in _configs(v)]
    return []


def test_the_run_holds_plain_values_and_makes_device_and_protocol_once(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(run_module, "device_for", lambda _: calls.append("device") or "cpu")
    monkeypatch.setattr(
        run_module, "protocol_check", lambda pin, dataset, preset: calls.append("protocol")
    )
    run = Run.of(composed("logger=none", "paths.root=/r"), Job(choices={"metrics": "paper"}))
    for f in dataclasses.fields(run):
        assert not _configs(getattr(run, f.name)), f.name
    assert run.config["paths"]["root"] == "/r" and run.paths.cache == "/r/.cache"
    assert (run.preset, run.length_policy, run.logger) == ("paper", "truncate", None)
    run.checked()
    other = run.with_model({"_target_": "gesturebench.models.reference.GroundTruth", "name": "x"})
    other.checked()
    assert calls == ["device", "protocol"]  # once for both runs
    assert other.made is run.made and other.model is not None and other.model["name"] == "x"
    assert run.model is not None and run.model["_target_"].endswith("GroundTruth")


def test_metric_sets_are_built_once_and_grown_for_more_samples():
    BUILT.clear()
    run = dataclasses.replace(
        Run.of(composed("logger=none"), Job()),
        metrics={
            "a": {"_target_": "tests.test_run_object.Stub", "name": "a"},
            "k": {"_target_": "tests.test_run_object.Across", "name": "k"},
        },
    )
    run.made["context"] = context = object()
    (first,), across = run.metric_sets(1)
    assert BUILT == ["a", "k"] and set(first) == {"a"} and set(across) == {"k"}
    sets, across_again = run.with_model({}).metric_sets(2)  # a second source, two samples
    assert BUILT == ["a", "k", "a"] and sets[0] is first and across_again is across
    assert sets[1]["a"] is not first["a"] and sets[1]["a"].prepared == [context]
    (again,), _ = run.metric_sets(1)
    assert again is first and BUILT == ["a", "k", "a"]
