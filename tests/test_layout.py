"""The package layout shows its architecture: the package root holds only the entry points, and
the imports between its subpackages run down the layers only (read from the source with `ast`, every
import counted, those inside functions and under `TYPE_CHECKING` included); the pure maths of
`metrics/functional` raises no error class of the run; nothing below the tasks reads Hydra's global
config or takes the composed config (a parameter annotated `DictConfig`), and a task takes it only
where it starts (its `__call__`, and `tasks.run.Run.of` that builds its run); nothing below the
command line reads run state from the environment (the job's folder, choices and sweep come down as
values); no test module imports from another (shared helpers live in tests/support/, shared
fixtures in conftest.py)."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

from tests.helpers import REPO

PACKAGE = REPO / "src" / "gesturebench"
#: The layers, lowest first: a package imports only packages of lower layers (never one of its own
#: layer, so the graph stays acyclic). The root modules are layers of their own, at the top.
LAYERS: list[set[str]] = [
    {"runtime"},  # errors, atomic writes, stages, weights: what every layer uses
    {"data", "stats", "assets"},  # records, readers; bootstrap; the public files table and fetcher
    {"body"},  # SMPL-X forward, the procedural body
    {"synthesis", "render", "encoders"},  # the mini-BEAT2 generator; frames; feature extractors
    {"annotation"},
    {"metrics"},
    {"models"},
    {"run"},  # config, Evaluator, DataModule, protocol pin
    {"reporting"},  # the results stage
    {"study"},
    {"tasks"},
    {"cli"},
    {"api"},
    {"ship_onsets"},  # rebuilds the shipped speech onsets through the API
    {""},  # the package's __init__
]
#: Root modules: the entry points only.
ROOT_MODULES = {"__init__.py", "api.py", "cli.py", "ship_onsets.py"}
#: The environment variables read below the command line, by module: a library's own setting or
#: the process's rank, a secret whose variable the config names, and the variable that carries a
#: multirun's id to the command line of its jobs (set by the sweep's callback); never run state.
#: Each key as written: a string literal, or the expression naming the variable.
ENVIRONMENT_READS = {
    "tasks/common.py": {"'LOCAL_RANK'"},  # this process's GPU under DDP
    "tasks/sweep_summary.py": {"SWEEP_ID_VARIABLE"},  # set for the jobs, removed at the end
    "reporting/loggers.py": {"'WANDB_SILENT'"},
    "encoders/training_common.py": {"'CUBLAS_WORKSPACE_CONFIG'"},
    "metrics/functional/nearest_kernel.py": {"'TRITON_INTERPRET'"},
    "annotation/backends/base.py": {"variable"},  # the annotator's API key
    "study/server/serve.py": {"self.admin_token_env", "self.link_secret_env"},
}


def _module(path: Path) -> str:
    parts = ["gesturebench", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The gesturebench modules (or packages) `path` imports, relative imports resolved."""
    module = _module(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *filter(None, [base])])
            # `from gesturebench import cli` imports the module gesturebench.cli
            found.update(f"{base}.{a.name}" if base == "gesturebench" else base for a in node.names)
    return {f for f in found if f.split(".")[0] == "gesturebench"}


def _unit(module: str) -> str:
    """The subpackage (or root module) a module belongs to: `""` for the package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _edges() -> set[tuple[str, str]]:
    """(importing module, imported module) across subpackages."""
    return {
        (_module(p), target)
        for p in PACKAGE.rglob("*.py")
        for target in _imports(p)
        if _unit(_module(p)) != _unit(target)
    }


def _layer(unit: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if unit in layer)


def test_the_package_root_holds_only_the_entry_points():
    assert {p.name for p in PACKAGE.glob("*.py")} == ROOT_MODULES


def test_every_subpackage_has_a_layer():
    units = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    units |= {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"} | {""}
    assert units == set().union(*LAYERS)


def test_imports_run_down_the_layers_only():
    edges = _edges()
    upward = sorted(f"{a} imports {b}" for a, b in edges if _layer(_unit(a)) <= _layer(_unit(b)))
    assert not upward, upward


def test_the_import_graph_between_subpackages_is_acyclic():
    graph: dict[str, set[str]] = {}
    for a, b in _edges():
        graph.setdefault(_unit(a), set()).add(_unit(b))
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as err:
        raise AssertionError(f"import cycle: {' → '.join(err.args[1])}") from None


def test_pure_maths_uses_no_error_class_of_the_run():
    """metrics/functional raises Python's own errors (ValueError with the shapes), never the
    CLI's."""
    functional = PACKAGE / "metrics" / "functional"
    offenders = sorted(
        f"{_module(path)} imports {target}"
        for path in functional.rglob("*.py")
        for target in _imports(path)
        if target.startswith("gesturebench.runtime.errors")
    )
    assert not offenders, offenders


def _test_imports(path: Path) -> set[str]:
    """The modules a file of tests/ or benchmarks/ imports, relative imports resolved (`from tests
    import x` counted as `tests.x`)."""
    package = list(path.relative_to(REPO).parent.parts)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *filter(None, [base])])
            found.update(f"{base}.{alias.name}" for alias in node.names)
            found.add(base)
    return found


def test_no_test_module_imports_another():
    offenders = sorted(
        f"{path.relative_to(REPO)} imports {module}"
        for folder in (REPO / "tests", REPO / "benchmarks")
        for path in folder.rglob("*.py")
        for module in _test_imports(path)
        if module.split(".")[0] == "tests"
        and any(part.startswith("test_") for part in module.split(".")[1:])
    )
    assert not offenders, offenders


def test_nothing_below_the_tasks_reads_hydras_global_config():
    """A task reads its job once (`tasks.job.Job`) and hands the values down."""
    below = [p for p in PACKAGE.rglob("*.py") if _layer(_unit(_module(p))) < _layer("tasks")]
    offenders = sorted(
        str(path.relative_to(PACKAGE))
        for path in below
        if any(
            isinstance(node, ast.ImportFrom) and node.module == "hydra.core.hydra_config"
            for node in ast.walk(ast.parse(path.read_text()))
        )
    )
    assert not offenders, offenders


def _environment_keys(path: Path) -> set[str]:
    """The keys `path` reads or writes through `os.environ` or `os.getenv` (as written; "*" for
    the whole environment)."""
    tree = ast.parse(path.read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    keys: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            continue
        if (node.value.id, node.attr) not in (("os", "environ"), ("os", "getenv")):
            continue
        use = parents[node]
        if isinstance(use, ast.Attribute) and isinstance(parents[use], ast.Call):
            use = parents[use]  # os.environ.get(...), .pop(...), .setdefault(...)
        if isinstance(use, ast.Call) and use.args:
            keys.add(ast.unparse(use.args[0]))
        elif isinstance(use, ast.Subscript):
            keys.add(ast.unparse(use.slice))
        else:
            keys.add("*")
    return keys


def test_nothing_below_the_command_line_reads_run_state_from_the_environment():
    found = {
        name: keys
        for path in PACKAGE.rglob("*.py")
        if (name := str(path.relative_to(PACKAGE))) not in {"cli.py", "api.py"}
        and (keys := _environment_keys(path))
    }
    assert found == ENVIRONMENT_READS


def _config_parameters(path: Path) -> set[str]:
    """`function(parameter)` of each parameter of `path` annotated with `DictConfig` (alone, in a
    union or inside another type)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, [a.vararg, a.kwarg])]:
                if arg.annotation is not None and "DictConfig" in ast.unparse(arg.annotation):
                    found.add(f"{node.name}({arg.arg})")
    return found


#: Where a parameter may be the composed config (a DictConfig), besides the entry points (cli.py,
#: api.py: they compose it) and the tasks' `__call__` (the task interface `task(cfg, job)`):
#: `Run.of`, which builds a task's run from it; Hydra's callback hooks (their signature is Hydra's);
#: the study server's saved server.yaml (its own file, not a run's config, read below the tasks by
#: the restart entry that must not import them); `AssetScope.of`, task=fetch's one reading of the
#: config (a fetch builds no `Run`: the dataset folder may not exist yet); and verify's
#: `rerun_task`, which runs the recorded task on its recorded config.
CONFIG_PARAMETERS = {
    "tasks/run.py": {"of(cfg)"},
    "tasks/sweep_summary.py": {"on_multirun_start(config)", "on_multirun_end(config)"},
    "study/server/serve.py": {"_writable(node)"},
    "tasks/fetch.py": {"of(cfg)"},
    "tasks/verify.py": {"rerun_task(cfg)"},  # runs the recorded task on its recorded config
}


def test_only_the_entry_points_and_the_tasks_starts_take_the_composed_config():
    """Below the tasks nothing takes the DictConfig; a task takes it in `__call__` and builds its
    `Run` (`tasks.run.Run.of`), whose parts go down."""
    found = {
        name: params - {"__call__(cfg)"}
        for path in PACKAGE.rglob("*.py")
        if (name := str(path.relative_to(PACKAGE))) not in ROOT_MODULES
        and (params := _config_parameters(path))
    }
    found = {name: params for name, params in found.items() if params}
    assert found == CONFIG_PARAMETERS
    below = {n for n in found if _layer(_unit(_module(PACKAGE / n))) < _layer("tasks")}
    assert below == {"study/server/serve.py"}
