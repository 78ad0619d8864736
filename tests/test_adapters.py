"""Model sources: result-file formats, the three sources against `precomputed`, copied fields and
their skip notes, failing commands, the cache's run folders and locks, the benchmark configs'
messages, the examples of docs/bring_your_model.md, and sweeps as `launch.py -m` runs them.

A fake "official" model (tests/fake_official_model) generates the same deterministic motion as a
script (any result format), as a LightningModule with a checkpoint and as plain functions;
in-process evaluations use short windows of mini-BEAT2's test sequences.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf, open_dict
from scipy.spatial.transform import Rotation

from gesturebench.data.beat2 import write_motion_npz
from gesturebench.data.records import FPS, SAMPLE_RATE, Motion
from gesturebench.models import formats
from gesturebench.models.batch import record_batch
from gesturebench.models.sources.base import ModelCommandError, ResultSource
from gesturebench.models.sources.command import CommandSource
from gesturebench.models.sources.module import ModuleSource
from gesturebench.models.sources.outputs import OutputsSource
from gesturebench.run.config import build_model
from gesturebench.runtime.errors import CheckpointError, ConfigError, DataError
from gesturebench.tasks import common, evaluate
from gesturebench.tasks.common import make_body_model, open_dataset
from gesturebench.tasks.job import Job
from gesturebench.tasks.run import Run
from tests.fake_official_model import fake_model
from tests.fake_official_model import module as fake_module
from tests.fake_official_model.fake_model import FORMATS, fake_gesture, write_result
from tests.helpers import REPO, composed

BRING_YOUR_MODEL = REPO / "docs" / "bring_your_model.md"
SCRIPT = Path(fake_model.__file__)
WINDOW = (
    60  # frames per evaluated window (2 s): enough for the fast metrics, cheap for the body model
)
METRICS = ("mjd", "pck", "diversity", "diversity_ref")


class Records(list):
    """A list of records with the `ids` the evaluate task reads."""

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self]


def window(record, index: int):
    seconds = WINDOW / FPS
    return replace(
        record,
        motion=record.motion.frames(0, WINDOW),
        audio=record.audio[: int(seconds * SAMPLE_RATE)],
        words=[w for w in record.words if w.end <= seconds],
        sem=[s for s in record.sem if s.end <= seconds],
        index=index,
    )


@pytest.fixture(scope="module")
def test_split():
    return open_dataset(composed().dataset)


@pytest.fixture(scope="module")
def records(test_split):
    return Records(window(test_split[i], i) for i in range(2))


@pytest.fixture(scope="module")
def body_model():
    return make_body_model(composed().body_model, "cpu")


def expected(record) -> Motion:
    """The fake model's motion for a record, as every source must deliver it."""
    return Motion(**fake_gesture(record_batch(record)))


def model_cfg(tmp_path, *overrides: str):
    return composed(
        "metrics=fast",
        "logger=none",
        "task.render_clips=0",
        "trainer.enable_progress_bar=false",
        f"paths.cache={tmp_path / 'cache'}",
        f"paths.checkpoints={tmp_path / 'ckpt'}",
        *overrides,
    )


def score(cfg, records, out, body_model, monkeypatch) -> dict:
    """The evaluate task's `score` on `records`, with metrics mjd, pck and diversity (body model
    built once)."""
    monkeypatch.setattr(common, "make_body_model", lambda node, device: body_model)
    with open_dict(cfg):
        cfg.metrics.diversity = {
            "_target_": "gesturebench.metrics.diversity.Diversity",
            "name": "diversity",
        }
    config = OmegaConf.to_container(cfg, resolve=True)
    return evaluate.score(Run.of(cfg, Job()), records, out, config, "test")


def assert_same_metrics(res: dict, ref: dict) -> None:
    for key in METRICS:
        assert res["metrics"][key] == pytest.approx(ref["metrics"][key], rel=1e-5, abs=1e-7), key
    for row, ref_row in zip(res["per_sequence"], ref["per_sequence"], strict=True):
        assert row["sequence_id"] == ref_row["sequence_id"]
        assert row["mjd"] == pytest.approx(ref_row["mjd"], rel=1e-5, abs=1e-7)


def source(cls: type[ResultSource], tmp_path, **options) -> ResultSource:
    """A model source named "fake", prepared with a cache under `tmp_path`."""
    model = cls(name=options.pop("name", "fake"), title="Fake", **options)
    model.prepare(SimpleNamespace(cache_dir=tmp_path / "cache"))
    return model


class FakeMetric:
    """A metric as a model source sees it: its value names and the ones a motion field enters."""

    def __init__(self, reads: dict[str, tuple[str, ...]]):
        self.reads = reads
        self.value_names = tuple(dict.fromkeys(n for names in reads.values() for n in names))

    def values_reading(self, field: str) -> list[str]:
        return list(self.reads.get(field, ()))


#: fake metrics reading what chamfer, fgd, foot contact, mjd and pck read
FAKE_METRICS = (
    FakeMetric({"expressions": ("chamfer",), "jaw": ("chamfer",), "eyes": ("chamfer",)}),
    FakeMetric({"jaw": ("fgd",), "eyes": ("fgd",), "trans": ("fgd",)}),
    FakeMetric({"trans": ("foot_contact", "contact_rate_gen")}),
    FakeMetric({"poses": ("mjd",)}),
    FakeMetric({}),
)


def command(*args: str) -> str:
    return f"{sys.executable} {SCRIPT} " + " ".join(args)


def assert_motion_close(got: Motion, want: Motion, atol: float = 0.0) -> None:
    for key in ("poses", "trans", "expressions", "betas"):
        np.testing.assert_allclose(
            getattr(got, key), getattr(want, key), atol=atol, rtol=0, err_msg=key
        )


# ---------------------------------------------------------------- formats


def test_rotation_conversions_match_scipy():
    rot = Rotation.random(200, random_state=0)
    mats = rot.as_matrix()
    d6 = mats[:, :2, :].reshape(200, 6) * np.array(
        [2.0] * 3 + [0.5] * 3
    )  # unnormalised rows, as networks emit
    np.testing.assert_allclose(formats.rotation_6d_to_matrix(d6), mats, atol=1e-12)
    rotvec = rot.as_rotvec().reshape(40, 5, 3)
    np.testing.assert_allclose(formats.to_axis_angle(d6.reshape(40, 5, 6)), rotvec, atol=1e-10)
    np.testing.assert_allclose(formats.to_axis_angle(mats.reshape(40, 5, 9)), rotvec, atol=1e-10)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_result_format_reads_as_the_same_motion(fmt, records, tmp_path):
    record = records[0]
    batch = record_batch(record)
    reference = {k: batch[k] for k in ("poses", "trans", "expressions", "betas")}
    path = write_result(tmp_path, record.id, fake_gesture(batch), reference, fmt)
    assert (
        formats.find_result(tmp_path, record.id) == path
    )  # never gt_{id}.npz, which emage_test writes beside
    motion, filled = formats.read_result(path, record.motion)
    want = expected(record)
    if fmt == "joints52":  # no jaw, eyes or face in the file: the reference's
        poses = want.poses.copy()
        poses[:, 66:75] = record.motion.poses[:, 66:75]
        want = replace(want, poses=poses, expressions=record.motion.expressions)
    assert filled == (["expressions", "eyes", "jaw"] if fmt == "joints52" else [])
    assert_motion_close(motion, want, atol=2e-6 if fmt == "rot6d" else 0.0)
    assert motion.fps == FPS


def test_reader_refuses_unusable_files_naming_them(records, tmp_path):
    ref = records[0].motion
    n = ref.n_frames
    cases = {
        "truncated.npz": (b"PK\x03\x04 half a zip", "not a readable npz archive"),
        "gt_only.npz": (
            {"tar_pose": ref.poses},
            "holds the reference motion but no generated pose",
        ),
        "width.npz": ({"poses": np.zeros((n, 100))}, "expected (T, J·C) or (T, J, C)"),
        "fps.npz": ({"poses": ref.poses, "mocap_frame_rate": np.array(15)}, "resample it first"),
        "degenerate6d.npz": ({"rec_pose": np.zeros((n, 330))}, "'poses' has NaN at frame 0"),
        "short_trans.npz": ({"poses": ref.poses, "trans": ref.trans[:-5]}, "'trans' has shape"),
    }
    for name, (content, message) in cases.items():
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            np.savez(path, **content)
        with pytest.raises(DataError, match=re.escape(message)) as err:
            formats.read_result(path, ref)
        assert str(path) in str(err.value)


def test_identical_fields_detects_copies_only(records):
    ref = records[0].motion
    gen = expected(records[0])
    assert formats.identical_fields(gen, ref) == []
    copied = replace(gen, trans=ref.trans, expressions=ref.expressions + 5e-5)
    assert formats.identical_fields(copied, ref) == ["expressions", "trans"]
    poses = ref.poses.copy()
    poses[:, 66] += 1e-3  # a jaw 1 mrad off the reference is generated, not copied
    assert formats.identical_fields(replace(gen, poses=poses), ref) == ["eyes"]
    assert formats.identical_fields(gen.frames(0, 40), ref) == []


# ---------------------------------------------------------------- the three sources against
# precomputed


@pytest.fixture(scope="module")
def precomputed_results(records, body_model, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("precomputed")
    for record in records:
        write_motion_npz(tmp / "motion" / f"{record.id}.npz", expected(record))
    cfg = model_cfg(tmp, "model=precomputed", f"model.dir={tmp / 'motion'}")
    with pytest.MonkeyPatch.context() as mp:
        res = score(cfg, records, tmp / "run", body_model, mp)
    assert (
        res["metrics"]["mjd"] > 0.01 and res["metrics"]["pck"] < 1
    )  # the fake moves away from the reference
    return res


def test_outputs_folder_matches_precomputed(
    records, body_model, precomputed_results, tmp_path, monkeypatch
):
    for (
        record
    ) in records:  # GestureLSM-style network output: 6D rotations, a batch axis, other key names
        batch = record_batch(record)
        write_result(tmp_path / "out", record.id, fake_gesture(batch), batch, "rot6d")
    cfg = model_cfg(tmp_path, "model=semconflow", f"model.dir={tmp_path / 'out'}")
    assert_same_metrics(
        score(cfg, records, tmp_path / "run", body_model, monkeypatch), precomputed_results
    )


def test_command_matches_precomputed_and_runs_once_per_sequence(
    records, body_model, precomputed_results, tmp_path, monkeypatch
):
    counter = tmp_path / "runs.txt"
    line = command(
        "--split-dir {split_dir} --id {id} --out {out} --format emage_test", f"--counter {counter}"
    )
    cfg = model_cfg(tmp_path, "model=emage", "model/source=command")
    cfg.model.command = line
    first = score(cfg, records, tmp_path / "run1", body_model, monkeypatch)
    assert_same_metrics(first, precomputed_results)
    again = score(
        cfg, records, tmp_path / "run2", body_model, monkeypatch
    )  # re-scoring reads the cache
    assert_same_metrics(again, precomputed_results)
    assert sorted(counter.read_text().split()) == sorted(records.ids)


def test_module_with_checkpoint_matches_precomputed(
    records, body_model, precomputed_results, tmp_path, monkeypatch
):
    weights = tmp_path / "ckpt" / "semtalk" / "model.pt"
    weights.parent.mkdir(parents=True)
    torch.save({"gain": torch.tensor(0.3)}, weights)
    cfg = model_cfg(
        tmp_path,
        "model=semtalk",
        "model/source=module",
        "model.network._target_=tests.fake_official_model.module.FakeGestureModule",
    )
    assert_same_metrics(
        score(cfg, records, tmp_path / "run", body_model, monkeypatch), precomputed_results
    )


def test_a_module_networks_arguments_are_part_of_its_cache_key(records, tmp_path):
    """Two networks of one class or function but other arguments are two models: the cache of
    one is never the other's output."""
    keys = {
        source(ModuleSource, tmp_path, network=network).cache_key(records[0])
        for network in (
            functools.partial(fake_module.generate),
            functools.partial(fake_module.generate, scale=2.0),
            torch.nn.Linear(2, 3),
            torch.nn.Linear(2, 4),
        )
    }
    assert len(keys) == 4


@pytest.mark.parametrize(
    "network, input", [(fake_module.generate, "dict"), (fake_module.generate_from_record, "record")]
)
def test_module_callables_take_a_dict_or_the_record(network, input, records, tmp_path):
    model = source(ModuleSource, tmp_path, network=network, input=input)
    for record in records:
        assert_motion_close(model.generate(record), expected(record))


def test_module_checkpoint_problems_say_what_to_do(tmp_path):
    network = fake_module.FakeGestureModule()
    missing = tmp_path / "ckpt" / "model.pt"
    with pytest.raises(
        CheckpointError, match=re.escape(f"no weights at {missing}. Put Fake's weights there")
    ) as err:
        source(ModuleSource, tmp_path, network=network, checkpoint=str(missing))
    assert "torch.save(model.state_dict()" in str(err.value) and "model.checkpoint=null" in str(
        err.value
    )
    pickled = tmp_path / "pickled.pt"
    torch.save({"gain": torch.tensor(0.3), "note": SimpleNamespace(a=1)}, pickled)
    with pytest.raises(
        CheckpointError, match=re.escape("not loadable with torch.load(weights_only=True)")
    ):
        source(ModuleSource, tmp_path, network=network, checkpoint=str(pickled))
    cfg = model_cfg(
        tmp_path, "model=semtalk", "model/source=module", "model.network._target_=tests.no.Model"
    )
    with pytest.raises(ConfigError, match=r"Error locating target 'tests\.no\.Model'"):
        build_model(cfg.model)


# ---------------------------------------------------------------- copied fields


def test_copied_fields_declared_and_detected(records, tmp_path):
    for record in (
        records
    ):  # a GestureLSM-like model: body and hands only, translation copied from the reference
        batch = record_batch(record)
        motion = {**fake_gesture(batch), "trans": batch["trans"]}
        write_result(tmp_path / "out", record.id, motion, batch, "joints52")
    model = source(OutputsSource, tmp_path, dir=str(tmp_path / "out"), copied_fields=["jaw"])
    for record in records:
        model.generate(record)
    info = model.describe()
    assert info["copied_fields"] == ["expressions", "eyes", "jaw", "trans"]
    assert info["declared_copied_fields"] == ["jaw"]
    assert info["missing_in_result_files"] == {"expressions": 2, "jaw": 2, "eyes": 2}
    assert info["identical_to_reference"] == {"expressions": 2, "jaw": 2, "eyes": 2, "trans": 2}
    assert info["sequences"] == 2 and info["source"] == "outputs"
    notes = model.skip_notes(iter(FAKE_METRICS))
    assert set(notes) == {"chamfer", "fgd", "foot_contact", "contact_rate_gen"}
    assert "Fake copies expressions, eyes, jaw from the reference" in notes["chamfer"]
    assert "copies eyes, jaw, trans" in notes["fgd"] and "copies trans" in notes["foot_contact"]


def test_a_model_that_generates_everything_has_no_notes(records, tmp_path):
    for record in records:
        batch = record_batch(record)
        write_result(tmp_path / "out", record.id, fake_gesture(batch), batch, "beat2")
    model = source(OutputsSource, tmp_path, dir=str(tmp_path / "out"))
    for record in records:
        model.generate(record)
    assert model.copied_fields == [] and model.skip_notes(FAKE_METRICS) == {}


# ---------------------------------------------------------------- failing commands


@pytest.mark.parametrize(
    "fault, message",
    [
        ("fail", "exited with status 1: "),
        ("hang", "timed out after 1 s (model.timeout): "),
        ("truncate", "wrote no usable result for sequence"),
    ],
)
def test_failing_command_is_one_clear_error_and_is_not_cached(fault, message, records, tmp_path):
    counter = tmp_path / "runs.txt"
    line = command(
        "--split-dir {split_dir} --id {id} --out {out}", f"--fault {fault} --counter {counter}"
    )
    model = source(CommandSource, tmp_path, command=line, timeout=1 if fault == "hang" else 120)
    record = records[0]
    with pytest.raises(ModelCommandError, match=re.escape(message)) as err:
        model.generate(record)
    text = str(err.value)
    assert f"sequence {record.id}" in text and str(SCRIPT) in text and "\n" not in text
    if fault == "fail":
        assert "stderr: RuntimeError: CUDA out of memory (fake failure for the test)" in text
    if fault == "truncate":
        assert "not a readable npz archive" in text
    attempts = list(model.work_root.glob("*.attempt"))
    assert len(attempts) == 1 and f"(logs: {attempts[0]})" in text
    assert (attempts[0] / "stderr.txt").is_file() and (
        attempts[0] / "input" / "wave16k" / f"{record.id}.wav"
    ).is_file()
    runs = [p for p in model.work_root.iterdir() if p.suffix != ".lock"]
    assert runs == attempts  # nothing entered the cache
    with pytest.raises(ModelCommandError):
        model.generate(record)  # nothing was cached: the command runs again
    assert counter.read_text().split() == [record.id, record.id]


def test_command_placeholders_are_checked(tmp_path, records):
    with pytest.raises(
        ConfigError, match=re.escape("uses {audoi}; with command_scope=sequence it may use {audio}")
    ):
        source(CommandSource, tmp_path, command="infer --audio {audoi} --out {out}")
    with pytest.raises(ConfigError, match=re.escape("uses {audio}; with command_scope=split")):
        source(
            CommandSource,
            tmp_path,
            command="infer {audio} {out}",
            command_scope="split",
            data_root="/d",
        )
    model = source(CommandSource, tmp_path, command="infer --words {textgrid} --out {out}")
    with pytest.raises(
        DataError, match=re.escape("has no textgrid, but model=fake's command uses {textgrid}")
    ):
        model.generate(replace(records[0], words=None))


def test_split_command_runs_once_for_all_sequences(test_split, tmp_path):
    counter = tmp_path / "runs.txt"
    line = command(
        "--split-dir {split_dir} --split {split} --out {out} --format emage_audio",
        f"--counter {counter}",
    )
    model = source(
        CommandSource,
        tmp_path,
        command=line,
        command_scope="split",
        data_root=str(test_split.root),
    )
    for i in range(2):
        record = test_split[i]
        assert_motion_close(model.generate(record), expected(record))
    assert counter.read_text().split() == ["test"]


def test_processes_sharing_the_cache_run_a_sequence_once(records, tmp_path):
    """Two sources (as two processes would hold) asking for the same sequence at once: the file
    lock makes one run the command and the other read its cached result."""
    counter = tmp_path / "runs.txt"
    line = command("--split-dir {split_dir} --id {id} --out {out}", f"--counter {counter}")
    record = records[0]
    results = {}

    def generate(i: int) -> None:
        results[i] = source(CommandSource, tmp_path, command=line).generate(record)

    threads = [threading.Thread(target=generate, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter.read_text().split() == [record.id]
    for motion in results.values():
        assert_motion_close(motion, expected(record))


# ------------------------------------------------ benchmark configs and docs/bring_your_model.md
# examples


@pytest.mark.parametrize(
    "name, title",
    [
        ("emage", "EMAGE"),
        ("gesturelsm", "GestureLSM"),
        ("semtalk", "SemTalk"),
        ("semconflow", "SemConFlow"),
    ],
)
def test_benchmark_config_without_outputs_says_what_to_put_where(name, title, tmp_path):
    # semconflow has result files only: no model/source to choose
    source = () if name == "semconflow" else ("model/source=outputs",)
    cfg = model_cfg(tmp_path, f"model={name}", *source)
    with pytest.raises(CheckpointError) as err:
        build_model(cfg.model)
    text = str(err.value)
    assert text.startswith(
        f"model={name}: no outputs found in {tmp_path / 'ckpt' / name / 'outputs'} (the folder "
        f"does not exist). Put {title}'s result files there"
    )
    assert "res_{sequence_id}.npz" in text and "model.dir=" in text and "\n" not in text
    # running it is offered only where there is code to run, in the model's own YAML
    runnable = f"model/source=command or module, conf/model/{name}.yaml"
    assert (runnable in text) == (name != "semconflow")


def test_model_source_picks_the_class_and_its_own_options(tmp_path):
    """`model/source` chooses the class (its option's `_target_`) and brings that class's options
    only; an option it does not offer fails at composition, naming it."""
    options = {
        "command": {"command": command("--out {out}")},
        "module": {
            "network": {"_target_": "tests.fake_official_model.module.generate", "_partial_": True}
        },
    }
    for cls in (CommandSource, ModuleSource):
        cfg = model_cfg(tmp_path, "model=semtalk", f"model/source={cls.kind}")
        cfg.model.update(options[cls.kind])
        model = build_model(cfg.model)
        assert type(model) is cls and model.describe()["source"] == cls.kind
        others = {"dir", "availability", *(k for k in options if k != cls.kind)}
        assert not others & set(cfg.model)
    with pytest.raises(ConfigCompositionException, match="comand"):
        model_cfg(tmp_path, "model=emage", "model/source=comand")


def test_precomputed_is_the_outputs_source_with_clear_errors(records, tmp_path):
    with pytest.raises(CheckpointError, match=r"^model=precomputed: model\.dir is not set"):
        build_model(model_cfg(tmp_path, "model=precomputed").model)
    missing = tmp_path / "nowhere"
    with pytest.raises(
        CheckpointError, match=re.escape(f"model=precomputed: no outputs found in {missing}")
    ):
        build_model(model_cfg(tmp_path, "model=precomputed", f"model.dir={missing}").model)
    write_motion_npz(tmp_path / "out" / f"{records[0].id}.npz", expected(records[0]))
    out = tmp_path / "out"
    model = build_model(model_cfg(tmp_path, "model=precomputed", f"model.dir={out}").model)
    assert type(model) is OutputsSource
    assert_motion_close(model.generate(records[0]), expected(records[0]))
    with pytest.raises(CheckpointError) as err:
        model.generate(records[1])
    text = str(err.value)
    assert text.startswith(f"{tmp_path / 'out' / records[1].id}.npz: missing result for sequence")
    assert f"{records[1].id}.npz" in text and "\n" not in text


def doc_yaml_blocks() -> dict[str, str]:
    """The YAML examples of docs/bring_your_model.md, by the file name on their first line."""
    text = BRING_YOUR_MODEL.read_text()
    blocks = re.findall(r"```yaml\n# conf/model/(\S+)\.yaml\n(.*?)```", text, flags=re.DOTALL)
    return dict(blocks)


def test_bring_your_model_examples_run_from_a_searchpath_folder(records, test_split, tmp_path):
    blocks = doc_yaml_blocks()
    assert set(blocks) == {"my_model", "my_model_cmd", "my_model_module", "my_gesture_model"}
    for name, text in blocks.items():
        (tmp_path / "conf" / "model").mkdir(parents=True, exist_ok=True)
        (tmp_path / "conf" / "model" / f"{name}.yaml").write_text(text)
    for record in records:
        batch = record_batch(record)
        write_result(tmp_path / "out", record.id, fake_gesture(batch), batch, "emage_test")
    weights = tmp_path / "ckpt" / "my_model_module" / "model.pt"
    weights.parent.mkdir(parents=True)
    torch.save({"gain": torch.tensor(0.3)}, weights)
    fake = "tests.fake_official_model.module"
    overrides = {
        "my_model": [f"model.dir={tmp_path / 'out'}"],
        "my_model_cmd": [],
        "my_model_module": [f"model.network._target_={fake}.FakeGestureModule"],
        "my_gesture_model": [f"model._target_={fake}.FakeGestureModel"],
    }
    context = SimpleNamespace(cache_dir=tmp_path / "cache")
    for name, extra in overrides.items():
        cfg = model_cfg(
            tmp_path, f"hydra.searchpath=[file://{tmp_path / 'conf'}]", f"model={name}", *extra
        )
        if name == "my_model_cmd":
            assert cfg.model.command.startswith("conda run -n mymodel python")
            cfg.model.command = command("--split-dir {split_dir} --id {id} --out {out}")
        model = build_model(cfg.model)
        model.prepare(context)
        for record in records:  # float32 weights: the module's gain is 0.3 to 1e-8
            assert_motion_close(model.generate(record), expected(record), atol=1e-6)


# ---------------------------------------------------------------- sweeps, as launch.py -m runs them


def sweep_args(tmp_path, test_split, *overrides: str) -> tuple[str, ...]:
    """A small sweep on a fresh clone: `paths.root` without checkpoints, the already generated mini
    dataset."""
    return (
        "-m",
        *overrides,
        f"paths.root={tmp_path}",
        f"dataset.root={test_split.root}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
        "dataset.max_sequences=1",
        "metrics=fast",
        "logger=none",
        "task.render_clips=0",
    )


@pytest.mark.slow
def test_sweep_reports_each_failing_job_and_runs_the_rest(test_split, tmp_path, in_process, capsys):
    conf = tmp_path / "conf" / "model"
    conf.mkdir(parents=True)
    for fault in ("fail", "hang", "truncate"):
        line = command("--split-dir {split_dir} --id {id} --out {out}", f"--fault {fault}")
        (conf / f"fake_{fault}.yaml").write_text(
            "_target_: gesturebench.models.sources.command.CommandSource\n"
            f"name: fake_{fault}\ntimeout: {3 if fault == 'hang' else 120}\ncommand: '{line}'\n"
        )
    code = in_process(
        *sweep_args(
            tmp_path,
            test_split,
            f"hydra.searchpath=[file://{tmp_path / 'conf'}]",
            "model=fake_fail,fake_hang,fake_truncate,semconflow,semtalk",
        )
    )
    stderr = capsys.readouterr().err
    assert code == 2
    table = pd.read_csv(tmp_path / "sweep" / "summary.csv").set_index("model")
    assert sorted(table.index) == [
        "fake_fail",
        "fake_hang",
        "fake_truncate",
        "semconflow",
        "semtalk",
    ]
    assert set(table["status"]) == {"failed"}
    record = test_split[0]
    reasons = {
        "fake_fail": "exited with status 1",
        "fake_hang": "timed out after 3 s",
        "fake_truncate": "not a readable npz archive",
    }
    for model, reason in reasons.items():
        error = table.loc[model, "error"]
        assert (
            f"the command for sequence {record.id}" in error
            and reason in error
            and "fake_model.py" in error
        )
        assert f"error: model={model}: the command for sequence {record.id}" in stderr
    for name, title in (("semconflow", "SemConFlow"), ("semtalk", "SemTalk")):
        message = (
            f"model={name}: no outputs found in {tmp_path / 'checkpoints' / name / 'outputs'} "
            f"(the folder does not exist). Put {title}'s result files there"
        )
        assert f"error: {message}" in stderr and table.loc[name, "error"].startswith(message)


@pytest.mark.slow
def test_sweep_with_outputs_in_place_writes_the_two_row_summary(test_split, tmp_path, in_process):
    record = test_split[0]
    batch = record_batch(record)
    for name, fmt in (("semconflow", "beat2"), ("semtalk", "emage_test")):
        write_result(
            tmp_path / "checkpoints" / name / "outputs", record.id, fake_gesture(batch), batch, fmt
        )
    assert in_process(*sweep_args(tmp_path, test_split, "model=semconflow,semtalk")) == 0
    table = pd.read_csv(tmp_path / "sweep" / "summary.csv")
    assert sorted(table["model"]) == ["semconflow", "semtalk"] and set(table["status"]) == {"ok"}
    mjd = table["mjd"].tolist()
    assert mjd[0] > 0.01 and mjd[0] == pytest.approx(
        mjd[1], rel=1e-6
    )  # the same motion in two file formats
