"""Restart a study server in seconds: `python -m gesturebench.study.server <study folder>
[key=value ...]` serves the study of `<study folder>` (`outputs/study_server/<task.study>`) with the
config it was started with (`.hydra/config.yaml`; dotted overrides, e.g. `task.port=8001`, on top).

`python launch.py task=study_server` composes the config, which registers every task's schema and
so imports torch, Lightning and scikit-learn (about 35 s on a loaded machine before `/healthz`
answers); the server needs none of them. This entry imports only the server (a few seconds).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from hydra.utils import instantiate
from omegaconf import OmegaConf

from gesturebench.runtime.errors import GestureBenchError


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    saved = Path(argv[0]) / ".hydra" / "config.yaml"
    if not saved.is_file():
        print(
            f"error: {saved}: not found (start the study once with task=study_server)",
            file=sys.stderr,
        )
        return 2
    cfg = OmegaConf.merge(OmegaConf.load(saved), OmegaConf.from_dotlist(argv[1:]))
    logging.basicConfig(
        level=logging.INFO, format="[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"
    )
    try:
        instantiate(cfg.task, _convert_="all")(cfg)
    except GestureBenchError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
