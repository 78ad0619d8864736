"""gesturebench entry point: `python launch.py [task=...] [group=option ...] [-m]` (see README)."""

import sys

import hydra
from omegaconf import DictConfig

from gesturebench import status
from gesturebench.cli import run_task
from gesturebench.config import register_configs

register_configs()


@hydra.main(config_path="conf", config_name="config", version_base="1.3")
def main(cfg: DictConfig):
    return run_task(cfg)


if __name__ == "__main__":
    main()
    sys.exit(status.exit_code())
