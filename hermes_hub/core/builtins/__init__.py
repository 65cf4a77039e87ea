"""The hub's own tools and resources, served as one more source in the catalog (prefix ``hermes``)."""

from hermes_hub.core.builtins.source import BuiltinResource, Builtins, BuiltinTemplate, BuiltinTool

__all__ = ["BuiltinResource", "BuiltinTemplate", "BuiltinTool", "Builtins"]
