"""`task=fetch`: every public file the composed configuration (its model, metrics, dataset)
needs, fetched from the Hugging Face Hub and GitHub, verified against the pinned table
(`gesturebench.assets.table`) and installed where the resolvers read them; or written into one
offline bundle (`task.bundle`), or installed from one (`task.from_bundle`). The task decides what
is needed and hands it, as one `Request`, to `gesturebench.assets.fetch.fetch_assets`.

`assets_for(scope)` derives what a configuration (read once into an `AssetScope`) needs and
`check_assets(scope, overrides)` names
every missing file at once (one `CheckpointError` line: the count, the first, the `task=fetch`
command that gets them all) before a run does any work."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.utils import get_class
from omegaconf import DictConfig, ListConfig

from gesturebench.assets.fetch import Fetcher, Placed, Request, fetch_assets, place_all
from gesturebench.assets.table import GITHUB, HUB, Asset, Need, Table, load_table
from gesturebench.run.config import register_configs
from gesturebench.runtime.errors import CheckpointError, ConfigError
from gesturebench.tasks.job import Job

log = logging.getLogger(__name__)

#: the override groups that decide what a run needs (kept in the `task=fetch` command shown)
RELEVANT = ("model", "metrics", "dataset", "paths", "body_model")


# --- what a configuration needs ----------------------------------------------------------------


def _nodes(node: Any) -> Iterator[Mapping]:
    """Every mapping inside `node` (itself included), skipping values that do not resolve."""
    if isinstance(node, DictConfig | Mapping):
        yield node
        keys = list(node.keys())
        for key in keys:
            try:
                value = node[key]
            except Exception:  # an interpolation this config cannot resolve: not an asset
                continue
            yield from _nodes(value)
    elif isinstance(node, ListConfig | list | tuple):
        for index in range(len(node)):
            try:
                yield from _nodes(node[index])
            except Exception:
                continue


def _get(node: Mapping, key: str) -> Any:
    try:
        value = node.get(key)
    except Exception:
        return None
    return getattr(value, "value", value)  # an enum option: its value


@dataclass(frozen=True)
class AssetScope:
    """What decides a run's public files, read once from its config (`of`): the checkpoints
    folder, the dataset (its name; its folder on BEAT2, None elsewhere), the model's and the
    metrics' config nodes (their `_target_` classes declare what they need) and the body model
    file the user supplied (SMPL-X is never fetched)."""

    checkpoints: Path
    dataset: str
    dataset_root: Path | None
    model: Mapping | None
    metrics: tuple[Mapping, ...]
    body_model_path: Path | None

    @classmethod
    def of(cls, cfg: DictConfig) -> AssetScope:
        dataset = str(_get(cfg.dataset, "name") or "")
        root = _get(cfg.dataset, "root") if _is_beat2(dataset) else None
        body = cfg.get("body_model")
        body_path = _get(body, "model_path") if body is not None else None
        return cls(
            checkpoints=Path(str(cfg.paths.checkpoints)).expanduser(),
            dataset=dataset,
            dataset_root=Path(str(root)).expanduser() if root else None,
            model=cfg.get("model"),
            metrics=tuple(n for n in _nodes(cfg.get("metrics")) if _get(n, "_target_")),
            body_model_path=Path(str(body_path)).expanduser() if body_path else None,
        )

    @property
    def beat2(self) -> bool:
        return _is_beat2(self.dataset)


def _is_beat2(dataset: str) -> bool:
    """Whether the dataset named `dataset` is BEAT2 (a preset of it, e.g. beat2_speaker2)."""
    return dataset.startswith("beat2")


def _declared(node: Mapping, *context: Any) -> list[Need]:
    """What the class `node`'s `_target_` names declares it needs (its `public_assets`, given the
    node's values and `context`); nothing for a class without the method or that does not import
    (the run itself names that)."""
    target = _get(node, "_target_")
    try:
        cls = get_class(str(target)) if target else None
    except Exception:
        return []
    declare = getattr(cls, "public_assets", None)
    if not callable(declare):
        return []
    return declare({str(key): _get(node, key) for key in node}, *context)


def needs_of(
    scope: AssetScope,
    table: Table,
    models: Sequence[Mapping] | None = None,
    everything: bool = False,
) -> list[Need]:
    """Every public file a run of `scope` needs: what its model's class and its metrics' classes
    declare (`public_assets`: the native EMAGE and GestureLSM sources' released files unless
    `model.weights` points elsewhere, GestureLSM's `model.mean_std` files and, on BEAT2,
    `model.vocab`; EMAGE's FGD encoder where a metric reads `encoder: emage` without `weights`,
    BC's EMAGE speed normaliser) — or, with `models` (model config nodes), those models' files
    instead of the run's model's; with `everything`, the whole table."""
    if everything:
        return [(a, None) for a in table.assets]
    model = scope.model
    nodes = list(models) if models else [model] if model is not None else []
    needs = [need for node in nodes for need in _declared(node, table, scope.beat2)]
    return needs + [need for node in scope.metrics for need in _declared(node, table)]


def assets_for(
    scope: AssetScope,
    table: Table | None = None,
    models: Sequence[Mapping] | None = None,
    everything: bool = False,
) -> list[Placed]:
    """The files of `needs_of`, where each must lie; a dataset file is left out when the dataset
    is not BEAT2."""
    needs = needs_of(scope, table or Table(), models, everything)
    return place_all(needs, scope.checkpoints, scope.dataset_root)


def _cached(asset: Asset) -> bool:
    """Whether the Hugging Face cache holds the file at `main` (the resolvers read it there)."""
    if asset.host != "hub":
        return False
    try:
        from huggingface_hub import try_to_load_from_cache

        hit = try_to_load_from_cache(asset.repo, asset.path, repo_type=asset.repo_type)
    except Exception:
        return False
    return isinstance(hit, str)


def missing_assets(needed: Sequence[Placed]) -> list[Placed]:
    """The files of `needed` that are neither at their path nor in the Hugging Face cache."""
    return [p for p in needed if not p.path.is_file() and not _cached(p.asset)]


def _group(override: str) -> str:
    """The config group or top-level key an override sets (``+paths.data=x`` → ``paths``)."""
    return override.lstrip("+~").split("=", 1)[0].split(".", 1)[0].split("/", 1)[0]


def named_models(names: Sequence[str], overrides: Sequence[str]) -> list[DictConfig]:
    """The `model` node of each model config of `names`, composed with the run's `overrides`
    that place files (its paths, dataset, body model), as ``model=<name>`` would compose it."""
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra

    kept = [o for o in overrides if _group(o) in RELEVANT and _group(o) != "model"]
    outside_an_app = not GlobalHydra.instance().is_initialized()
    register_configs()
    with (
        initialize_config_module("gesturebench.conf", version_base="1.3")
        if outside_an_app
        else nullcontext()
    ):
        return [compose("config", [*kept, f"model={name}"]).model for name in names]


def fetch_command(overrides: Sequence[str] | None, scope: AssetScope | None = None) -> str:
    """``python launch.py task=fetch …`` with the overrides that decide what is needed (without
    `overrides`, those naming the model and dataset of `scope`)."""
    if overrides is None and scope is not None:
        model = _get(scope.model, "name") if scope.model is not None else None
        overrides = [f"model={model}", f"dataset={scope.dataset}"]
        if scope.dataset_root is not None:
            overrides.append(f"dataset.root={scope.dataset_root}")
    kept = [o for o in overrides or () if _group(o) in RELEVANT]
    return " ".join(["python launch.py task=fetch", *kept])


def check_assets(
    scope: AssetScope, overrides: Sequence[str] | None = None, table: Table | None = None
) -> None:
    """Before any work: every public file a run of `scope` needs is there, else ONE
    `CheckpointError` line
    with how many are missing, the first, and the `task=fetch` command that gets them all
    (`overrides`: the run's command-line overrides, e.g. `job.overrides`)."""
    missing = missing_assets(assets_for(scope, table))
    if missing:
        first = missing[0]
        count = f"{len(missing)} public files" if len(missing) > 1 else "1 public file"
        raise CheckpointError(
            f"{count} this run needs {'are' if len(missing) > 1 else 'is'} missing, the first "
            f"{first.path} ({first.asset.key}, for {first.asset.needed_by[0]}); get "
            f"{'them all' if len(missing) > 1 else 'it'}: {fetch_command(overrides, scope)}"
        )


# --- the task -----------------------------------------------------------------------------------


@dataclass
class FetchTask:
    """`task=fetch` (conf/task/fetch.yaml): fetch what the composed model and metrics need (or the
    `models` named, or `all` of the table), `with_dataset` BEAT2's English folder too; `bundle`:
    also write the files into that archive; `from_bundle`: install an archive instead of fetching
    (no network); `dry_run`: print the plan only. `table`: a JSON table replacing the built-in one;
    `hub_endpoint`/`github_endpoint`: where Hub and GitHub files are fetched from."""

    name: str = "fetch"
    models: list[str] | None = None
    all: bool = False
    with_dataset: bool = False
    bundle: str | None = None
    from_bundle: str | None = None
    dry_run: bool = False
    table: str | None = None
    hub_endpoint: str = HUB
    github_endpoint: str = GITHUB
    progress: bool = True

    @property
    def fetcher(self) -> Fetcher:
        return Fetcher(self.hub_endpoint, self.github_endpoint, self.progress)

    def __call__(self, cfg: DictConfig, job: Job) -> dict:
        table = load_table(self.table)
        scope = AssetScope.of(cfg)
        if self.bundle and self.from_bundle:
            raise ConfigError("task.bundle and task.from_bundle: set one of them")
        needs: list[Need] = []
        if not self.from_bundle:  # an installed bundle brings its own list of files
            models = named_models(self.models, job.overrides) if self.models else None
            needs = needs_of(scope, table, models, self.all)
            if self.with_dataset:
                self._dataset(scope.dataset_root)
        request = Request(
            table=table,
            checkpoints=scope.checkpoints,
            dataset_root=scope.dataset_root,
            needs=needs,
            body_model=scope.body_model_path,
            bundle=Path(self.bundle).expanduser() if self.bundle else None,
            from_bundle=Path(self.from_bundle).expanduser() if self.from_bundle else None,
            dry_run=self.dry_run,
        )
        return fetch_assets(request, self.fetcher, job.run_dir / "fetch.json")

    def _dataset(self, root: Path | None) -> None:
        """Download BEAT2's English folder into `root` (`task=prepare_beat2`'s download)."""
        from gesturebench.tasks.prepare_beat2 import PrepareBeat2Task

        if root is None:
            raise ConfigError(
                "task.with_dataset=true needs dataset=beat2 dataset.root=/path/to/"
                "beat_english_v2.0.0 (the English subset is downloaded there)"
            )
        if self.dry_run:
            log.info("would download BEAT2's beat_english_v2.0.0 into %s", root)
            return
        PrepareBeat2Task(download=True).fetch(root, None)
