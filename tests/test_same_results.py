"""benchmarks/same_results.py's flattening and comparison on small synthetic results (no run)."""

from __future__ import annotations

import importlib.util
import math

import pytest

from tests.helpers import REPO

spec = importlib.util.spec_from_file_location("same_results", REPO / "benchmarks/same_results.py")
assert spec is not None and spec.loader is not None
same_results = importlib.util.module_from_spec(spec)
spec.loader.exec_module(same_results)

WORK = "/tmp/same_results-abc"
DOC = {
    "metrics": {"fgd": 0.1 + 0.2, "pck": 1.0, "sc": None, "n": 3},
    "intervals": {"fgd": [0.25, 0.375]},
    "per_sequence": [
        {"sequence_id": "2_scott_0_1_1", "index": 0, "mjd": 0.5},
        {"sequence_id": "2_scott_0_2_2", "index": 1, "mjd": -0.0},
    ],
    "skipped": {"sgp": f"no sem folder in {WORK}/data/sample"},
    "caveats": {},
    "model": "perturbed_rotation_noise_0.1",
    "timings": {"model": 1.25},
    "versions": {"torch": "2.13.0"},
    "config": {"threads": 1, "paths": {"root": WORK}},
}


@pytest.fixture
def record(tmp_path, monkeypatch):
    """`record(old, new)`: main's exit code and output comparing `old` (recorded, through the
    file) with `new` (the new run's numbers)."""

    def compare(old: dict, new: dict, capsys) -> tuple[int, str]:
        file = tmp_path / "record.json"
        monkeypatch.setattr(same_results, "run_cases", lambda names, threads: old)
        assert same_results.main(["record", str(file)]) == 0
        monkeypatch.setattr(same_results, "run_cases", lambda names, threads: new)
        code = same_results.main(["compare", str(file)])
        return code, capsys.readouterr().out

    return compare


def test_numbers_flatten_results_without_run_specific_fields():
    flat = same_results.numbers(DOC, WORK)
    assert flat["metrics.fgd"] == 0.1 + 0.2 and flat["metrics.sc"] is None
    assert flat["intervals.fgd.1"] == 0.375
    assert flat["per_sequence.2_scott_0_2_2.mjd"] == -0.0
    assert flat["skipped.sgp"] == "no sem folder in <work>/data/sample"
    assert not [k for k in flat if k.split(".")[0] in ("timings", "versions", "config", "model")]


def test_identical_results_exit_0(record, capsys):
    case = same_results.numbers(DOC, WORK)
    code, out = record({"mini-paper-default": case}, {"mini-paper-default": dict(case)}, capsys)
    assert code == 0
    assert "mini-paper-default  identical (" in out


def test_a_float_differing_in_its_last_bit_is_reported(record, capsys):
    old = same_results.numbers(DOC, WORK)
    new = {**old, "metrics.fgd": math.nextafter(old["metrics.fgd"], 1.0)}
    code, out = record({"case": old}, {"case": new}, capsys)
    assert code == 1
    assert "1 of" in out
    assert f"metrics.fgd: {old['metrics.fgd']!r} -> {new['metrics.fgd']!r}" in out


def test_signed_zero_and_int_float_differ():
    assert same_results.differences({"a": 0.0, "b": 1}, {"a": -0.0, "b": 1.0}) == [
        "a: 0.0 -> -0.0",
        "b: 1 -> 1.0",
    ]


def test_a_missing_key_and_a_missing_case_are_reported(record, capsys):
    old = same_results.numbers(DOC, WORK)
    new = {k: v for k, v in old.items() if k != "per_sequence.2_scott_0_1_1.mjd"}
    code, out = record({"a": old}, {"a": new, "b": old}, capsys)
    assert code == 1
    assert "per_sequence.2_scott_0_1_1.mjd: 0.5 -> absent" in out
    assert "b  not in the record" in out


def test_without_the_real_sample_its_cases_are_skipped_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(same_results, "SAMPLE", tmp_path / "absent")
    kept = same_results.available(list(same_results.CASES))
    assert kept == ["mini-paper-default", "mini-paper-perturbed"]
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and str(tmp_path / "absent") in lines[0]
