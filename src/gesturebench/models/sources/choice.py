"""``model.source``: the class a model YAML offering every source builds, through the `gb_source`
resolver (``_target_: ${gb_source:${.source}}``, or ``${gb_source:${.source},${.native}}`` for a
model gesturebench also runs itself: ``source: native`` then builds the class its ``native`` option
names).

Kept free of imports so that registering the resolver loads no model code.
"""

from __future__ import annotations

#: model.source → the class that obtains motion that way.
SOURCES = {
    "outputs": "gesturebench.models.sources.outputs:OutputsSource",
    "command": "gesturebench.models.sources.command:CommandSource",
    "module": "gesturebench.models.sources.module:ModuleSource",
}
BASE = "gesturebench.models.sources.base:ResultSource"


NATIVE = "native"


def source_target(source: str, native: str | None = None) -> str:
    """The `_target_` for ``model.source=source``: its class's `offered` (for ``native``, that of
    the model's own class `native`, "package.module.Name"). An unknown source gets the base's, which
    names the valid ones: a resolver that raised would end the run in a traceback instead of a
    one-line error."""
    if source == NATIVE and native:
        return f"{native}.offered"
    return SOURCES.get(source, BASE).replace(":", ".") + ".offered"
