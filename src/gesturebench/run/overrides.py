"""What is wrong with a command line's config, as one line: a group option that does not exist, a
mistyped key (with the closest keys of its node), a value of the wrong type, a user's YAML file that
does not load (a `!!python/...` tag, a syntax error). Hydra's own messages are many lines long and
advise `+key=` for a mistyped key, which would add a key that nothing reads."""

from __future__ import annotations

import difflib
from argparse import Namespace
from pathlib import Path

from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra._internal.config_repository import ConfigRepository
from hydra._internal.utils import create_config_search_path, get_args_parser
from hydra.core.config_search_path import ConfigSearchPath
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import ConfigCompositionException, HydraException, OverrideParseException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException
from yaml import MarkedYAMLError

from gesturebench.runtime.atomic import one_line
from gesturebench.runtime.errors import exception_chain


def unknown_option(config_path: str, args: list[str]) -> str | None:
    """The one-line reason when a `group=option` of the command line `args` names no option of its
    group (with the closest options), or a `group.sub=option` sets a config group as a key (the old
    ``model.source=outputs`` for ``model/source=outputs``), else None. Hydra's own message is many
    lines long."""
    try:
        overrides = _parse(args)
    except HydraException:
        return None  # a syntax error: `config_problem` says where
    repository = ConfigRepository(_search_path(config_path, args, overrides))
    for override in overrides:
        group = override.key_or_group
        as_group = group.replace(".", "/")
        if "." in group and not override.is_delete() and repository.group_exists(as_group):
            # a config group (e.g. model/source) given as a key: say how to choose its option
            chosen = override.get_value_element_as_str()
            return (
                f"{group}={chosen}: {as_group} is a config group, "
                f"choose its option with {as_group}={chosen}"
            )
        if override.is_delete() or group.startswith("hydra") or not repository.group_exists(group):
            continue
        value = override.value()
        choices = (
            list(override.sweep_string_iterator()) if override.is_sweep_override() else [value]
        )
        offered = repository.get_group_options(group)
        for choice in choices:
            if isinstance(choice, str) and choice not in offered:
                close = difflib.get_close_matches(choice, offered, n=3, cutoff=0.5)
                hint = f" (did you mean {' or '.join(close)}?)" if close else ""
                listed = ", ".join(offered)
                return f"{group}={choice} is not an option of {group}{hint}; options: {listed}"
    return None


def config_problem(err: BaseException, config_path: str, args: list[str]) -> str | None:
    """One line for an error Hydra raised composing the config of `args` (a mistyped key, a bad
    value or override, a config file that does not load), None for any other error."""
    for link in exception_chain(err):
        if isinstance(link, MarkedYAMLError):
            return _yaml_problem(link)
    if isinstance(err, ConfigCompositionException) and isinstance(
        err.__cause__, ConfigAttributeError | ConfigKeyError
    ):
        mistyped = _mistyped_key(err.__cause__.full_key or "", config_path, args)
        if mistyped:
            return mistyped
    if isinstance(err, OverrideParseException):
        return _unparsable(args, err)
    if isinstance(err, HydraException):
        cause = err.__cause__
        detail = (
            f": {str(cause).splitlines()[0]}" if isinstance(cause, OmegaConfBaseException) else ""
        )
        return f"{one_line(err)}{detail}"
    return None


def _unparsable(args: list[str], err: OverrideParseException) -> str:
    """`override: Hydra's reason` for the first override of `args` that does not parse."""
    parser = OverridesParser.create()
    for arg in _parsed(args).overrides:
        try:
            parser.parse_override(arg)
        except HydraException:
            break
    else:
        arg = "the command line"
    return f"{arg}: {str(err).splitlines()[0]} (overrides: key=value, see Hydra's override grammar)"


def _yaml_problem(err: MarkedYAMLError) -> str:
    """`file, line N: problem` of a YAML file that does not load; a tag is refused, not run."""
    mark = err.problem_mark or err.context_mark
    where = f"{mark.name}, line {mark.line + 1}" if mark else "a config file"
    problem = " ".join(p for p in (err.context, err.problem) if p)
    if "constructor for the tag" in problem:
        problem += " (a config is plain YAML: tags are refused, not run)"
    return f"{where}: {problem}"


def _mistyped_key(full_key: str, config_path: str, args: list[str]) -> str | None:
    """`key=value: NODE has no key K (did you mean ...?); its keys: ...` for the override of `args`
    whose key `full_key` (or a parent of it) does not exist; None where that cannot be said."""
    parent, _, missing = full_key.rpartition(".")
    overrides = _parse(args)
    typed = next((o for o in overrides if f"{o.key_or_group}.".startswith(f"{full_key}.")), None)
    if typed is None:
        return None
    try:
        cfg = _compose(config_path, args, [o for o in overrides if o is not typed])
    except Exception:  # the rest of the command line does not compose either: Hydra's message
        return None
    found = OmegaConf.select(cfg, parent) if parent else cfg
    if not isinstance(found, DictConfig):
        return None
    keys = [str(k) for k in found if not (k == "hydra" and not parent)]
    close = difflib.get_close_matches(missing, keys, n=3, cutoff=0.5)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    node = parent or "the config"
    return f"{typed.input_line}: {node} has no key {missing}{hint}; its keys: {', '.join(keys)}"


def _parse(args: list[str]) -> list[Override]:
    """The overrides of the command line `args`, parsed."""
    return OverridesParser.create().parse_overrides(_parsed(args).overrides)


def _parsed(args: list[str]) -> Namespace:
    """Hydra's own reading of the command line (flags, `--config-name`, overrides)."""
    return get_args_parser().parse_known_args(args)[0]


def _compose(config_path: str, args: list[str], overrides: list[Override]) -> DictConfig:
    """The config of `args` with `overrides` (Hydra's own loader and search path)."""
    parsed = _parsed(args)
    loader = ConfigLoaderImpl(config_search_path=_search_path(config_path, args, overrides))
    return loader.load_configuration(
        parsed.config_name or "config",
        [o.input_line or "" for o in overrides],
        run_mode=RunMode.MULTIRUN if parsed.multirun else RunMode.RUN,
    )


def _search_path(config_path: str, args: list[str], overrides: list[Override]) -> ConfigSearchPath:
    """Hydra's config search path for `args`: the primary configs, then `--config-dir` and
    `hydra.searchpath=[...]` folders (a user's own model configs live there)."""
    search_path = create_config_search_path(config_path)
    config_dir = _parsed(args).config_dir
    if config_dir:
        search_path.append("command-line", f"file://{Path(config_dir).resolve()}")
    for override in overrides:
        folders = override.value()
        if override.key_or_group == "hydra.searchpath" and isinstance(folders, list):
            for folder in folders:
                search_path.append("command-line", str(folder))
    return search_path
