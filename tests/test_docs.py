"""The README and docs/ name only what exists: every `group=option` composes from the shipped
configs (plugins' options included), every repository path they name is there, and no text cites
issue numbers or design files outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from gesturebench.run.config import register_configs
from tests.helpers import CONFIG_GROUPS, REPO

DOCS = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])
GROUPS = (*CONFIG_GROUPS, "hydra/launcher")
OPTION = re.compile(r"(?<![\w.])(" + "|".join(GROUPS) + r")=([A-Za-z_][\w]*)")
# a user's own config, named as an example of one to write
USERS_OWN = re.compile(r"^my_")
# misspelt on purpose, to show the error a typo gives
MISTYPED = {"grond_truth"}
PATH = re.compile(r"(?<![\w./-])((?:src|conf|docs|benchmarks|tests)/[\w./-]*[\w/])")
CITATION = re.compile(
    r"(?<!PantoMatrix )\b[Ii]ssues? #?\d+|\bshared/(?:spec|DESIGN)|\bDESIGN\.md|\bthe spec\b"
)


def _texts() -> list[tuple[Path, str]]:
    return [(p, p.read_text()) for p in DOCS]


@pytest.fixture(scope="module")
def options() -> dict[str, set[str]]:
    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(str(REPO / "conf"), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        return {g: set(loader.get_group_options(g)) for g in GROUPS}


def test_every_group_option_named_in_the_docs_exists(options):
    missing = sorted(
        f"{p.name}: {g}={o}"
        for p, text in _texts()
        for g, o in OPTION.findall(text)
        if o not in options[g] and o not in MISTYPED and not USERS_OWN.match(o)
    )
    assert not missing, missing


def test_every_repository_path_named_in_the_docs_exists():
    missing = sorted(
        f"{p.name}: {path}"
        for p, text in _texts()
        for path in PATH.findall(text)
        if "*" not in path and "<" not in path and "/my_" not in path and not (REPO / path).exists()
    )
    assert not missing, missing


def test_no_text_cites_issue_numbers_or_files_outside_the_repository():
    sources = [
        *DOCS,
        *(REPO / "src").rglob("*.py"),
        *(REPO / "tests").rglob("*.py"),
        *(REPO / "conf").rglob("*.yaml"),
        *(REPO / "benchmarks").glob("*"),
    ]
    cited = sorted(
        f"{p.relative_to(REPO)}: {m.group(0)}"
        for p in sources
        if p.is_file() and p.name != "test_docs.py"
        for m in CITATION.finditer(p.read_text(errors="replace"))
    )
    assert not cited, cited
