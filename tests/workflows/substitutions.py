"""The substitution table: the only changes a workflow test makes to a documented command.

A documented command runs as written, in a fresh working folder (`shell.Shell`), after these and
nothing else: placeholders and the user's own paths become folders the test made
(`SUBSTITUTIONS`), sizes are appended to keep it fast (`SIZES`), and the environment keeps W&B
offline (`ENVIRONMENT`). Setup lines (`SETUP`) are not run: CI has made the virtual environment and
installed the package before the suite. Commands that are no workflow a test can run are listed
with the reason (`NOT_WORKFLOWS`); docs/design.md ("Tests") describes the table."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Substitution:
    """`text`, as the docs write it, becomes `value` (`{name}` fields filled from the workflow's
    values); `why` says what the test puts there."""

    text: str
    value: str
    why: str


SUBSTITUTIONS = (
    Substitution(
        "/data/BEAT2/beat_english_v2.0.0",
        "{beat2_root}",
        "the user's BEAT2 folder: a folder in BEAT2's layout holding the real sample"
        " (../shared/data/beat2-sample)",
    ),
    Substitution("dataset.root=...", "dataset.root={beat2_root}", "the same, where elided"),
    Substitution("/home/me/gb_conf", "{conf_dir}", "the user's config folder: one the test wrote"),
    Substitution(
        "/data/my_model/test_outputs", "{my_model_dir}", "my_model.yaml's result files: the test's"
    ),
    Substitution("/data/ratings.csv", "{ratings}", "the user's ratings: a study's export"),
    Substitution("/out/mymodel", "{model_dir}", "the user's result files: a folder the test wrote"),
    Substitution(
        "task=render ...",
        "task=render {render_options}",
        "the user's study: mini-BEAT2's test windows of 3 s, rated sources, small skeleton clips",
    ),
    Substitution("<render run>", "{render_run}", "the run folder the render printed"),
    Substitution("<export run>", "{export_run}", "the run folder the export printed"),
    Substitution("<analyze run>", "{analyze_run}", "the run folder the analysis printed"),
    Substitution("<task.study>", "study", "the default `task.study`"),
    Substitution(
        "study=my_study",
        "study=csv",
        "the user's copy of conf/study/csv.yaml (which says to copy it): the preset itself",
    ),
    Substitution("model=...", "model={model}", "any model: one of the built-in ones"),
    Substitution("task.host=0.0.0.0", "task.host=127.0.0.1", "loopback: no port on the network"),
    Substitution("task.port=8000", "task.port={port}", "a free port of this machine"),
    Substitution(" [task.port=8001 ...]", " task.port={port}", "a free port of this machine"),
)

#: appended to `python launch.py` commands of the task (after any `-m` sweep's options), except
#: on `dataset=beat2` (the sample: one sequence) and where the command sets that key itself
SIZES = {
    "evaluate": ("dataset.max_sequences=2", "task.render_clips=0"),
    "annotate": ("dataset.max_sequences=2",),
    "render": (
        "study.windows.n=5",
        "study.windows.seconds=4",
        "task.camera.size=48",
        "task.camera.style=skeleton",
    ),
    "analyze": (
        "study.windows.n=5",
        "study.windows.seconds=4",
        "study.analysis.bootstrap=100",
        "study.analysis.permutations=9",
    ),
    # the pairwise study has no windows or permutations: its analysis evaluates nothing
    "analyze study=pairwise": ("study.analysis.bootstrap=100",),
}

#: the environment of every command besides the test's own: W&B offline and quiet
ENVIRONMENT = {"WANDB_MODE": "offline", "WANDB_SILENT": "true"}

#: setup, done by CI before the suite (the virtual environment, the package and its extras)
SETUP = re.compile(r"^(python3 -m venv |\. \.venv/bin/activate$|pip install )")

_GEMINI = "calls Google's Gemini API: needs GEMINI_API_KEY and the network"
_HUB = "needs EMAGE's, GestureLSM's or SemTalk's released weights or code from the network"

#: documented commands that no workflow test runs, with the reason
NOT_WORKFLOWS = {
    "python -m pytest -q": "the test suite itself",
    "python launch.py task=annotate annotator=gemini dataset=beat2 dataset.root=..."
    " task.dry_run=true": _GEMINI,
    "python launch.py task=annotate task.windows=study task.source=study annotator=gemini": _GEMINI,
    "python launch.py task=review annotator=gemini $B task.compare=kinematic": _GEMINI,
    "python launch.py task=review annotator=gemini $B task.filled=<run>/review/review.csv": _GEMINI,
    "export GEMINI_API_KEY=...": _GEMINI,
    'B="dataset=beat2 dataset.root=/data/BEAT2/beat_english_v2.0.0"': _GEMINI,
    "python launch.py task=annotate annotator=gemini $B task.dry_run=true": _GEMINI,
    "python launch.py task=annotate annotator=gemini $B task.max_requests=500": _GEMINI,
    "python launch.py annotator=gemini $B model=precomputed model.dir=/out/mymodel": _GEMINI,
    "python launch.py task=analyze annotator=replay annotator.of=gemini": _GEMINI,
    "python launch.py -m model=emage,gesturelsm,semtalk": _HUB,
    "python launch.py model=emage model/source=outputs model.dir=/runs/emage/test_outputs": _HUB,
    "python launch.py -m hydra/launcher=slurm hydra.launcher.partition=gpu"
    " hydra.launcher.gpus_per_node=4 trainer=gpu trainer.devices=4 trainer.strategy=ddp"
    " dataset=beat2 dataset.root=/data/BEAT2/beat_english_v2.0.0"
    " model=emage,gesturelsm,semtalk,semconflow": "a SLURM cluster with GPUs",
    "python launch.py task=prepare_beat2 dataset=beat2 dataset.root=/data/BEAT2/beat_english_v2.0.0"
    " task.download=true": "downloads BEAT2 from the Hugging Face Hub",
    "python launch.py dataset=beat2 dataset.root=/data/BEAT2/beat_english_v2.0.0 model=emage": _HUB,
    "python launch.py dataset=beat2 dataset.root=... model=emage trainer=gpu": _HUB + ", and a GPU",
    "python launch.py model=emage model.weights=/models/emage_audio": _HUB,
    "git clone https://github.com/andypinxinliu/GestureLSM /tmp/GestureLSM": _HUB,
    "python launch.py dataset=beat2 dataset.root=/data/BEAT2/beat_english_v2.0.0 model=gesturelsm"
    " model.mean_std=/tmp/GestureLSM/mean_std": _HUB,
    "python launch.py -m dataset=beat2 dataset.root=... model=emage,gesturelsm": _HUB,
    "python launch.py task=render study=my_study study.windows.file=windows.csv"
    ' "task.sources=[ground_truth,emage]"': _HUB,
    "python launch.py dataset=beat2 dataset.root=... model=semtalk model/source=command"
    " model.command_scope=split model.timeout=36000 model.command='cd /path/to/SemTalk && conda run"
    " -n semtalk python train.py --config configs/semtalk_sparse.yaml --test_state && cp"
    ' "$(ls -td outputs/custom/*/*/ | head -1)"res_*.npz {out}/\'': _HUB + " and a conda env",
    "python launch.py dataset=beat2 dataset.root=… model=precomputed model.dir=… metrics=genea"
    " body_model.model_path=/path/to/SMPLX_NEUTRAL_2020.npz": "needs the licence-gated SMPL-X file",
    "find \"$(python -c 'import librosa, os; print(os.path.dirname(librosa.__file__))')\""
    " -name '*.nb[ci]' -delete": "a repair of a broken environment: deletes librosa's caches",
}

#: python blocks that show signatures or a class to write, not a program to run
NOT_PROGRAMS = {
    "docs/bring_your_model.md": "a class skeleton to fill in (its methods are `...`)",
    "docs/models.md": "call signatures, not a program",
}


def fill(text: str, values: dict[str, str]) -> str:
    """`text` (a command, or a documented YAML file) with `SUBSTITUTIONS` applied, their fields
    from `values`."""
    for sub in SUBSTITUTIONS:
        if sub.text in text:
            text = text.replace(sub.text, sub.value.format(**values))
    return text


def substitute(command: str, values: dict[str, str]) -> str:
    """`command` with `SUBSTITUTIONS` applied (their fields from `values`) and `SIZES` appended;
    an error if a placeholder is left."""
    command = fill(command, values)
    found = re.search(r"(?<![\w.])task=(\w+)", command)
    task = found.group(1) if found else "evaluate"
    if "study=pairwise" in command:
        task += " study=pairwise"
    sized = command.startswith("python launch.py") and "dataset=beat2" not in command
    if sized:  # the BEAT2 sample is one sequence already (and a preset pins BEAT2's whole split)
        own = {word.split("=")[0] for word in command.split() if "=" in word}
        sizes = [s for s in SIZES.get(task, ()) if s.split("=")[0] not in own]
        command = " ".join((command, *sizes))
    left = re.search(r"<[\w. ]+>|(?<![.\w])\.\.\.(?![.\w])|…", command)
    if left:
        raise ValueError(f"{command!r}: {left.group(0)!r} has no substitution")
    return command
