"""SGP gives a value only with an annotator validated on the data (annotation/validity.py),
and `annotator.fit_to=beat2` fits the kinematic features to the dataset's own sem labels, its
agreement measured on the check split (annotation/fitting.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.metrics import accuracy_score, cohen_kappa_score, confusion_matrix, recall_score

from gesturebench.annotation.backends.kinematic import KinematicAnnotator
from gesturebench.annotation.clip import make_clip
from gesturebench.annotation.events import collect_events
from gesturebench.annotation.fitting import SemFit, sem_label
from gesturebench.data.annotations_io import write_sem
from gesturebench.data.beat2 import Beat2Dataset
from gesturebench.data.records import SemInterval
from gesturebench.metrics.base import annotated
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.sgp import SemanticGesturePreservation
from gesturebench.reporting.headline import headline_table
from tests.launch import results
from tests.support.sgp import pair, still_motion


@pytest.fixture(scope="module")
def mini_context(tmp_path_factory):
    """A metric context on mini-BEAT2 (the procedural body model) with a fresh cache."""
    from gesturebench.body.model import BodyModel
    from gesturebench.synthesis.mini.dataset import ensure_mini_beat2
    from tests.helpers import REPO

    torch.set_num_threads(1)
    root = ensure_mini_beat2(REPO / "data" / "mini_beat2_default")
    cache = tmp_path_factory.mktemp("fit_cache")
    return MetricContext(
        "mini_beat2",
        split=lambda name: Beat2Dataset(root, name, load_audio=False),
        cache_dir=cache,
        checkpoints_dir=cache,
        body_model=BodyModel(),
        auto_train=True,
    )


@pytest.fixture(scope="module")
def fitted(mini_context):
    annotator = KinematicAnnotator(fit_to="beat2")
    annotator.prepare(mini_context, Path(mini_context.cache_dir) / "annotations")
    return annotator


def test_fit_to_mini_labels_recovers_its_classes(fitted, mini_context):
    """Fitted on the train split's sem labels, the model classifies the val split's events as
    generated, and the annotator SGP asks answers exactly the stored check predictions."""
    fit = fitted.sem_fit
    assert fitted.model_name == "logreg-fit-to-beat2"
    assert set(fit.check_truth) == {"iconic", "metaphoric", "deictic", "beat"}
    assert fit.agreement["accuracy"] >= 0.9 and fit.agreement["kappa"] >= 0.85
    asked = []
    body = mini_context.body_model
    for record in mini_context.split("val"):
        for event in collect_events(record.id, record.sem, record.words):
            if sem_label(event) is None:
                continue

            def joints(a: int, b: int, motion=record.motion):
                return body(motion.frames(a, b), vertices=False).joints.numpy()

            clip = make_clip(event, "reference", record.motion, joints)
            assert clip is not None
            asked.append(fitted.ask(clip).gesture_class)
    assert tuple(asked) == fit.check_predicted


def test_agreement_matches_scikit_learn(fitted):
    """Accuracy, kappa, per-class recall and the confusion matrix of the stored agreement equal
    scikit-learn's on the same labels and predictions."""
    fit = fitted.sem_fit
    truth, predicted = list(fit.check_truth), list(fit.check_predicted)
    agreement = fitted.validation("mini_beat2").agreement
    labels = agreement["labels"]
    assert agreement["accuracy"] == accuracy_score(truth, predicted)
    assert agreement["kappa"] == pytest.approx(cohen_kappa_score(truth, predicted), abs=1e-12)
    recall = recall_score(truth, predicted, labels=labels, average=None, zero_division=0)
    assert [agreement["recall"][c] for c in labels] == pytest.approx(list(recall), abs=1e-12)
    assert agreement["confusion"] == confusion_matrix(truth, predicted, labels=labels).tolist()
    assert agreement["n"] == len(truth) and agreement["split"] == "val"


def test_fitted_model_reloads_bit_identically(fitted, mini_context, monkeypatch):
    """A second prepare reads the cached model (no fit): the same arrays bit for bit, the same
    fingerprint and probabilities; a damaged entry is set aside and refitted to the same arrays."""
    path = fitted.sem_fit_path
    assert path.is_file() and path.with_name(path.name + ".meta.json").is_file()
    from gesturebench.annotation import fitting

    def no_fit(*args):
        raise AssertionError("refitted although cached")

    store_root = Path(mini_context.cache_dir) / "annotations"
    with monkeypatch.context() as patch:
        patch.setattr(fitting, "fit_linear", no_fit)
        again = KinematicAnnotator(fit_to="beat2")
        again.prepare(mini_context, store_root)
    before, after = fitted.sem_fit.arrays(), again.sem_fit.arrays()
    assert before.keys() == after.keys()
    for name in before:
        assert (
            before[name].dtype == after[name].dtype
            and before[name].tobytes() == after[name].tobytes()
        ), name
    assert again.fingerprint() == fitted.fingerprint()
    rows = np.random.default_rng(0).normal(1.0, 0.5, (20, 7))
    assert (again.model.predict_proba(rows) == fitted.model.predict_proba(rows)).all()
    assert SemFit.read(path).arrays()["coef"].tobytes() == before["coef"].tobytes()
    data = bytearray(path.read_bytes())
    data[-30] ^= 0xFF
    path.write_bytes(bytes(data))
    refitted = KinematicAnnotator(fit_to="beat2")
    refitted.prepare(mini_context, store_root)
    assert refitted.fingerprint() == fitted.fingerprint()
    assert path.with_name(path.name + ".corrupt").is_file()


def real_context(tmp_path: Path) -> MetricContext:
    return MetricContext("beat2", lambda name: [], tmp_path, tmp_path, None, auto_train=False)


def test_sgp_refuses_an_annotator_not_validated_on_the_data(tmp_path):
    """The rules on real data: skipped, naming the valid annotators and their overrides, no value
    and nothing annotated; forced, a value with the caveat; on generated data, a value."""
    sem = [SemInterval("iconic", 1.0, 2.0, 0.5, "round")]
    m, zeros = still_motion(90), np.zeros((90, 55, 3), np.float32)
    refused = SemanticGesturePreservation(store_root=str(tmp_path))
    refused.prepare(real_context(tmp_path))
    refused.update(annotated(pair(0, "g", m, m, zeros, zeros, sem), refused))
    assert refused.compute() == dict.fromkeys(refused.value_names)
    reason = refused.skip_reason()
    assert "not validated on real motion" in reason and "annotator=gemini" in reason
    assert "annotator=kinematic annotator.fit_to=beat2" in reason
    assert "metrics.sgp.unvalidated=true" in reason
    assert refused.extra_options()["annotator"]["validation"] is None
    forced = SemanticGesturePreservation(store_root=str(tmp_path), unvalidated=True)
    forced.prepare(real_context(tmp_path))
    forced.update(annotated(pair(0, "g", m, m, zeros, zeros, sem), forced))
    assert forced.compute()["sgp"] == 1.0 and forced.skip_reason() is None
    assert "not validated on real motion" in forced.caveat()
    assert "forced by metrics.sgp.unvalidated=true" in forced.caveat()
    valid = SemanticGesturePreservation(store_root=str(tmp_path))
    valid.prepare(MetricContext("m", lambda n: [], tmp_path, tmp_path, None, auto_train=True))
    assert valid.validation is not None and valid.caveat() is None and valid.note() is None


def test_headline_names_a_fitted_annotator():
    doc = {
        "model": "m",
        "dataset": "beat2",
        "metrics": {"sgp": 0.5},
        "options": {"sgp": {}},
        "directions": {"sgp": "higher"},
        "notes": {"sgp": "annotator kinematic (logreg-fit-to-beat2): accuracy 0.7"},
    }
    assert "sgp ↑  0.5  (annotator kinematic (logreg-fit-to-beat2): accuracy 0.7)" in (
        headline_table(doc)
    )


# ------------------------------------------------------------------------------- real sample runs

SEM_NAMES = ("07_iconic_h", "05_metaphoric_l", "03_deictic_m", "01_beat_align", "00_nogesture")
#: the vertex, EMAGE-weight and text-encoder metrics of the paper preset, not under test here
LEFT_OUT = tuple(
    f"~metrics.{m}" for m in ("fgd", "density", "coverage", "sc", "chamfer", "hausdorff", "dice")
)


def real_folder(sample: Path, root: Path) -> Path:
    """BEAT2's layout around the real sample: one test, two train and one val sequence (copies
    of its motion and audio), each with a sem file of 22 intervals written here."""
    splits = {"2_scott_0_1_1": "test", "2_scott_0_2_2": "train", "2_scott_0_3_3": "train"}
    splits["2_scott_0_4_4"] = "val"
    for sub in ("smplxflame_30", "wave16k", "sem"):
        (root / sub).mkdir(parents=True)
    for k, sid in enumerate(splits):
        shutil.copy(sample / "2_scott_0_1_1.npz", root / "smplxflame_30" / f"{sid}.npz")
        shutil.copy(sample / "2_scott_0_1_1.wav", root / "wave16k" / f"{sid}.wav")
        intervals = [
            SemInterval(SEM_NAMES[(i + k) % 5], 1.0 + 2.7 * i, 2.2 + 2.7 * i, 0.5, f"w{i}")
            for i in range(22)
        ]
        write_sem(root / "sem" / f"{sid}.txt", intervals)
    rows = "".join(f"{sid},{split}\n" for sid, split in splits.items())
    (root / "train_test_split.csv").write_text("id,type\n" + rows)
    return root


@pytest.mark.slow
def test_real_sample_refuses_the_rules_and_scores_the_fitted_annotator(
    beat2_sample, tmp_path, in_process, capsys
):
    """`metrics=paper` on real motion with sem files: SGP skipped with the reason and the command
    under the default rules; with `annotator.fit_to=beat2` a value whose results.json entry
    carries the agreement measured on the val split, and the headline names the annotator."""
    folder = real_folder(beat2_sample, tmp_path / "beat2")
    common = ("dataset=beat2", f"dataset.root={folder}", "model=perturbed", "metrics=paper")
    runs = {}
    for name, extra in (("rules", ()), ("fitted", ("annotator.fit_to=beat2",))):
        run_dir = tmp_path / name
        in_process(*common, *LEFT_OUT, *extra, "logger=none", f"hydra.run.dir={run_dir}")
        runs[name] = (results(run_dir), capsys.readouterr().out)
    doc, printed = runs["rules"]
    assert doc["metrics"]["sgp"] is None and "sgp" not in doc["caveats"]
    line = next(x for x in printed.splitlines() if x.strip().startswith("sgp ↑"))
    assert "not validated on real motion" in line
    assert "annotator=kinematic annotator.fit_to=beat2" in line
    doc, printed = runs["fitted"]
    assert doc["metrics"]["sgp"] is not None
    validation = doc["options"]["sgp"]["annotator"]["validation"]
    assert validation["dataset"] == "beat2" and validation["agreement"]["split"] == "val"
    assert validation["agreement"]["n"] == 22 and "kappa" in validation["agreement"]
    assert doc["encoders"]["sgp_annotator"]["sha256"]
    assert "logreg-fit-to-beat2" in doc["notes"]["sgp"]
    line = next(x for x in printed.splitlines() if x.strip().startswith("sgp ↑"))
    assert "logreg-fit-to-beat2" in line and "Cohen's kappa" in line
    assert json.dumps(validation["agreement"]["confusion"])
