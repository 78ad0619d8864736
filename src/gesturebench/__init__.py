"""gesturebench: perceptually grounded, semantics-aware evaluation of holistic co-speech gesture
generation.

`gesturebench.evaluate(...)` and `gesturebench.load_results(path)` are the Python API
(`gesturebench.api`), imported on first use so that importing the package stays cheap."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def evaluate(*overrides: str, **options: Any) -> dict:
    """`gesturebench.api.evaluate`: score a model as the command line does; the results dict."""
    from gesturebench.api import evaluate as run

    return run(*overrides, **options)


def load_results(path, per_sequence: bool = False):
    """`gesturebench.api.load_results`: results under `path` as a pandas DataFrame."""
    from gesturebench.api import load_results as load

    return load(path, per_sequence)
