"""`task=fetch`: every public file the composed configuration (its model, metrics, dataset)
needs, fetched from the Hugging Face Hub and GitHub, verified against the pinned table
(`gesturebench.assets.table`) and installed where the resolvers read them; or written into one
offline bundle (`task.bundle`), or installed from one (`task.from_bundle`).

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

from gesturebench.assets.fetch import (
    UNPINNED,
    Fetcher,
    Lock,
    Placed,
    install_bundle,
    place,
    refuse,
    writable,
    write_bundle,
)
from gesturebench.assets.table import GITHUB, HUB, Asset, Need, Table, load_table
from gesturebench.reporting.results import write_json
from gesturebench.run.config import register_configs
from gesturebench.runtime.errors import CheckpointError, ConfigError
from gesturebench.runtime.weights import sha256_file
from gesturebench.tasks.job import Job

log = logging.getLogger(__name__)

SMPLX_SITE = "https://smpl-x.is.tue.mpg.de"
#: SHA-256 of the official SMPL-X model files. None are published where this could read them
#: (the files are licence-gated downloads); a supplied file's hash is recorded, not verified.
SMPLX_SHA256: dict[str, str] = {}
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


def assets_for(
    scope: AssetScope,
    table: Table | None = None,
    models: Sequence[Mapping] | None = None,
    everything: bool = False,
) -> list[Placed]:
    """Every public file a run of `scope` needs, where it must lie: what its model's class and
    its metrics' classes declare (`public_assets`: the native EMAGE and GestureLSM sources'
    released files unless `model.weights` points elsewhere, GestureLSM's `model.mean_std` files
    and, on BEAT2, `model.vocab`; EMAGE's FGD encoder where a metric reads `encoder: emage`
    without `weights`, BC's EMAGE speed normaliser) — or, with `models` (model config nodes),
    those models' files instead of the run's model's; with `everything`, the whole table. A
    dataset file is left out when the dataset is not BEAT2."""
    table = table or Table()
    chosen: list[Need]
    if everything:
        chosen = [(a, None) for a in table.assets]
    else:
        model = scope.model
        nodes = list(models) if models else [model] if model is not None else []
        chosen = [need for node in nodes for need in _declared(node, table, scope.beat2)]
        chosen += [need for node in scope.metrics for need in _declared(node, table)]
    placed: dict[Path, Placed] = {}
    for asset, path in chosen:
        default = place(asset, scope.checkpoints, scope.dataset_root)
        where = Placed(asset, path) if path is not None else default
        if where is not None:
            placed.setdefault(where.path, where)
    return list(placed.values())


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


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


# --- the task -----------------------------------------------------------------------------------


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{n} B"


def _table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)


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
        if self.from_bundle:
            return self._install(scope, table, job)
        models = named_models(self.models, job.overrides) if self.models else None
        needed = assets_for(scope, table, models, self.all)
        if self.with_dataset:
            self._dataset(scope.dataset_root)
        document = self.fetch(needed, scope.checkpoints, job)
        self._body_model(scope.body_model_path)
        return document

    def _dataset(self, root: Path | None) -> None:
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

    def fetch(self, needed: list[Placed], checkpoints: Path, job: Job) -> dict:
        """Print the plan and its total size, fetch what is missing, verify all, print where each
        file is (and write fetch.json into the run folder)."""
        if not needed:
            log.info("nothing to fetch: this configuration needs no public files")
            return {"files": []}
        writable(checkpoints, "paths.checkpoints")
        for root in {p.path.parents[len(Path(p.asset.dest).parts) - 1] for p in needed}:
            writable(root, "paths.checkpoints" if root == checkpoints else "dataset.root")
        lock = Lock(checkpoints)
        todo = [p for p in needed if not p.path.is_file()]
        if todo and not self.dry_run and _offline():
            raise ConfigError(
                f"HF_HUB_OFFLINE is set but {len(todo)} files are to be fetched (the first "
                f"{todo[0].asset.key}): unset it on a connected machine, or install a bundle "
                "with task.from_bundle=assets.tar (docs/cluster.md)"
            )
        sizes = {
            p.asset.key: self.fetcher.size(p.asset) if not self.dry_run else p.asset.size
            for p in todo
        }
        known = [s for s in sizes.values() if s is not None]
        rows = [("file", "from", "size", "SHA-256")]
        for p in todo:
            sha = p.asset.sha256[:12] + "…" if p.asset.sha256 else UNPINNED
            rows.append(
                (
                    p.asset.key,
                    p.asset.source(self.hub_endpoint, self.github_endpoint),
                    _size(sizes[p.asset.key]),
                    sha,
                )
            )
        total = _size(sum(known)) + ("" if len(known) == len(todo) else " + files of unknown size")
        log.info(
            "%d of %d files to fetch (%s), %d already there:\n%s",
            len(todo),
            len(needed),
            total,
            len(needed) - len(todo),
            _table(rows) if todo else "",
        )
        if self.dry_run:
            return {"files": [], "to_fetch": [p.asset.key for p in todo]}
        result: list[dict[str, Any]] = []
        for p in needed:
            source = p.asset.source(self.hub_endpoint, self.github_endpoint)
            expected = lock.expected(p.asset)
            if p.path.is_file():
                sha = sha256_file(p.path)
                if expected is not None and sha != expected:
                    raise refuse(p.asset, str(p.path), sha, expected, "already installed")
                status, revision = "present", lock.entries.get(p.asset.key, {}).get("revision")
            else:
                if expected is None:
                    log.info("%s: %s", p.asset.key, UNPINNED)
                sha, revision = self.fetcher.fetch(p, expected)
                status = "fetched" if p.asset.pinned else "fetched, hash recorded"
            if p.asset.key not in lock.entries or lock.entries[p.asset.key]["sha256"] != sha:
                lock.record(p, sha, revision, source)
            result.append(
                {
                    "key": p.asset.key,
                    "path": str(p.path),
                    "sha256": sha,
                    "status": status,
                    "revision": revision,
                    "source": source,
                    "pinned": p.asset.pinned,
                }
            )
        done = [("file", "where", "SHA-256", "status")]
        done += [(r["key"], r["path"], r["sha256"][:12] + "…", r["status"]) for r in result]
        log.info("where each file is:\n%s", _table(done))
        document = {"files": result, "lock": str(lock.path)}
        if self.bundle:
            bundle = Path(self.bundle).expanduser()
            manifest = write_bundle(bundle, needed, lock, {r["key"]: r["source"] for r in result})
            log.info("bundle: %s (%d files with manifest.json)", bundle, len(manifest["files"]))
            document["bundle"] = str(bundle)
        write_json(job.run_dir / "fetch.json", document)
        return document

    def _install(self, scope: AssetScope, table: Table, job: Job) -> dict:
        bundle = Path(str(self.from_bundle)).expanduser()
        if not bundle.is_file():
            raise ConfigError(f"task.from_bundle={bundle}: not found")
        writable(scope.checkpoints, "paths.checkpoints")
        installed = install_bundle(bundle, table, scope.checkpoints, scope.dataset_root)
        rows = [("file", "where", "SHA-256")]
        rows += [(p.asset.key, str(p.path), sha[:12] + "…") for p, sha in installed]
        log.info(
            "installed %d files from %s, every hash verified:\n%s",
            len(installed),
            bundle,
            _table(rows),
        )
        document = {
            "bundle": str(bundle),
            "files": [
                {"key": p.asset.key, "path": str(p.path), "sha256": sha} for p, sha in installed
            ],
        }
        write_json(job.run_dir / "fetch.json", document)
        return document

    def _body_model(self, file: Path | None) -> None:
        """SMPL-X is licence-gated: say where to get it, and check a supplied `file`."""
        if file is None:
            log.info(
                "SMPL-X is not fetched (its licence needs a registration): register at %s, "
                "download SMPL-X (SMPLX_NEUTRAL_2020.npz) and set body_model.model_path=/path/to/"
                "SMPLX_NEUTRAL_2020.npz (docs/cluster.md)",
                SMPLX_SITE,
            )
            return
        if not file.is_file():
            raise ConfigError(f"body_model.model_path={file}: not found (from {SMPLX_SITE})")
        sha = sha256_file(file)
        if sha in SMPLX_SHA256.values():
            log.info(
                "SMPL-X: %s is the official %s",
                file,
                next(k for k, v in SMPLX_SHA256.items() if v == sha),
            )
        else:
            log.info(
                "SMPL-X: %s SHA-256 %s; no official SHA-256 of the SMPL-X releases is published "
                "where this could read it: recorded, not verified",
                file,
                sha,
            )
