"""The hub's own tools and resources, served as one more source in the catalog (prefix ``hermes``)."""

from hermes_hub.core.aggregation.filters import NameFilter
from hermes_hub.core.aggregation.namespace import Namespace
from hermes_hub.core.builtins.source import BuiltinResource, Builtins, BuiltinTemplate, BuiltinTool

# The own tools tools/list names by default (``hub.own_tools`` "core"), by their names before the prefix:
# what a person's agent reaches for every day. The rest are listed with "all" or a toolset naming ``hermes``.
CORE = ("memory_remember", "memory_recall", "agent_run", "session_search")


def own_listed(own_tools: str | list[str], ns: Namespace) -> NameFilter:
    """``hub.own_tools`` as a filter over public names: "all", "core", or a list of "core" and globs."""
    if own_tools == "all":
        return NameFilter()
    globs = [own_tools] if isinstance(own_tools, str) else own_tools
    return NameFilter.of([ns.name(t) for g in globs if g == "core" for t in CORE] + [g for g in globs if g != "core"])


__all__ = ["CORE", "own_listed", "BuiltinResource", "BuiltinTemplate", "BuiltinTool", "Builtins"]
