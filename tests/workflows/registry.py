"""Which workflow test runs which documented commands. `tests/test_workflows.py` fails where a
documented command is neither run here nor listed in `substitutions.NOT_WORKFLOWS` or `SETUP`,
and where a command listed here is no longer in the docs."""

from __future__ import annotations

from functools import cache

from tests.workflows.blocks import documented

STUDY = (
    "python launch.py task=render ...",
    "export GESTUREBENCH_STUDY_TOKEN="
    '$(python -c "import secrets; print(secrets.token_urlsafe(24))")',
    "python launch.py task=study_server task.manifest=<render run>/stimuli/manifest.csv"
    " task.host=0.0.0.0 task.port=8000",
    "python launch.py task=study_export",
    "python launch.py task=analyze study=my_study study.path=<export run>/ratings.csv"
    " study.windows.file=<render run>/stimuli/windows.csv",
)

#: docs/cluster.md: the public files of a BEAT2 run with the default metrics (from a fake Hub)
FETCH_BEAT2 = (
    "python launch.py task=fetch dataset=beat2 dataset.root=/data/BEAT2/beat_english_v2.0.0"
)
#: docs/cluster.md: SC's text-motion encoder, trained on BEAT2's train split (its transcripts)
TRAIN_SC_BEAT2 = (
    "python launch.py task=train_encoder encoder=text_motion dataset=beat2"
    " dataset.root=/data/BEAT2/beat_english_v2.0.0"
)

#: test name (in tests/test_workflows.py) → the documented commands it runs, in order
WORKFLOWS = {
    "test_main_job": ("python launch.py",),
    "test_sweeps_and_leaderboard": (
        "python launch.py -m model=ground_truth,mean_pose,random_clip",
        "python launch.py -m model=perturbed model/perturbation=rotation_noise"
        " model.level=0,0.05,0.1,0.2",
        "python launch.py task=leaderboard",
    ),
    "test_your_own_models_files": (
        FETCH_BEAT2,
        TRAIN_SC_BEAT2,
        "python launch.py dataset=beat2 dataset.root=/data/BEAT2/beat_english_v2.0.0"
        " model=precomputed model.dir=/out/mymodel",
    ),
    "test_study_render_serve_export_analyze": STUDY,
    "test_study_composite_metric": (
        'python launch.py model=... "metrics=[paper,composite]"'
        " metrics.composite.path=<analyze run>/composites.json",
    ),
    "test_study_server_restart_entry": (
        "python -m gesturebench.study.server outputs/study_server/<task.study>"
        " [task.port=8001 ...]",
    ),
    "test_synthetic_study": ("python launch.py task=analyze",),
    "test_render": ("python launch.py task=render",),
    "test_annotate": ("python launch.py task=annotate",),
    "test_api": (next(c for c in documented() if c.startswith("import gesturebench\n")),),
    "test_custom_metric": (
        "python launch.py +metrics.pck_5cm._target_=gesturebench.metrics.pck.PCK"
        " +metrics.pck_5cm.name=pck_5cm +metrics.pck_5cm.threshold=0.05",
    ),
    "test_beat_collapse_sgp": (
        "python launch.py -m model=perturbed model/perturbation=beat_collapse"
        " model.level=0.25,0.5,1 metrics=none"
        " +metrics.sgp._target_=gesturebench.metrics.sgp.SemanticGesturePreservation"
        " '+metrics.sgp.annotator=${annotator}'",
    ),
    "test_prepare_beat2": (
        "python launch.py task=prepare_beat2 dataset=beat2"
        " dataset.root=/data/BEAT2/beat_english_v2.0.0",
    ),
    "test_user_config_folder": (
        "python launch.py hydra.searchpath=[file:///home/me/gb_conf] model=my_model",
    ),
    "test_pairwise_study": (
        "python launch.py task=analyze study=pairwise study.path=<export run>/pairwise.csv",
    ),
    "test_fetch_bundle_and_install_offline": (
        "python launch.py task=fetch metrics=genea 'task.models=[emage,gesturelsm]'",
        "python launch.py task=fetch dataset=beat2 dataset.root=/data/BEAT2/beat_english_v2.0.0"
        " metrics=genea 'task.models=[emage,gesturelsm]' task.bundle=assets.tar",
        "python launch.py task=fetch dataset=beat2 dataset.root=/data/BEAT2/beat_english_v2.0.0"
        " task.from_bundle=assets.tar",
    ),
    "test_study_on_beat2": (
        FETCH_BEAT2,
        TRAIN_SC_BEAT2,
        "python launch.py task=analyze study=my_study study.path=/data/ratings.csv dataset=beat2"
        " dataset.root=...",
    ),
    "test_verify_a_sweep": (
        "python launch.py -m model=ground_truth,mean_pose,random_clip",
        "python launch.py task=verify task.run=multirun/evaluate/mini_beat2",
    ),
}


@cache
def covered() -> dict[str, str]:
    """Documented command → the test that runs it."""
    return {command: test for test, commands in WORKFLOWS.items() for command in commands}


def documented_command(command: str) -> str:
    """`command`, after checking that the docs hold it verbatim."""
    if command not in documented():
        raise LookupError(f"not in README.md or docs/*.md (changed?): {command!r}")
    return command
