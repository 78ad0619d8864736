"""Packages (metadata: pyproject.toml): `gesturebench` from src/, and the configs of the top-level
conf/ folder as the package data of `gesturebench.conf`, so that an installed `gesturebench`
command finds them (`pkg://gesturebench.conf`) from any folder."""

from setuptools import find_namespace_packages, setup

CONF = ["gesturebench.conf", *(f"gesturebench.conf.{p}" for p in find_namespace_packages("conf"))]

setup(
    packages=[*find_namespace_packages("src", exclude=["*__pycache__*"]), *CONF],
    package_dir={"": "src", "gesturebench.conf": "conf"},
    package_data={
        "gesturebench": [
            "**/*.txt",
            "**/*.md",
            "**/*.json",
            "encoders/shipped/*.pt",
            "metrics/shipped/onsets/*.npy",
        ],
        **{name: ["*.yaml"] for name in CONF},
    },
)
