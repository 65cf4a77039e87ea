"""Check tool arguments against the tool's JSON Schema before they leave the hub."""

from __future__ import annotations

import json
import logging
from typing import Any

from jsonschema import FormatChecker
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from hermes_hub.core.aggregation.patterns import linear_patterns

log = logging.getLogger("hermes_hub.catalog")
_FORMATS = FormatChecker()
QUOTE_CHARS = 60  # of a bad value, quoted back to the model; the rest is summarised by its size
PROBLEM_CHARS = 300  # one problem line, whatever the schema and the value


class ArgumentCheck:
    """Compiled once per tool; ``problems(args)`` lists what a model must change, empty if fine."""

    def __init__(self, tool_name: str, schema: dict[str, Any]) -> None:
        self._validator: Validator | None = None
        try:
            cls = validator_for(schema)
            cls.check_schema(schema)
            self._validator = linear_patterns(cls, schema)(schema, format_checker=_FORMATS)
        except SchemaError as e:  # the downstream's problem; forward unchecked rather than refuse
            log.warning("tool %s has an invalid inputSchema (%s); its arguments are not checked", tool_name, e.message)

    def problems(self, arguments: dict[str, Any], limit: int = 5) -> list[str]:
        if self._validator is None:
            return []
        errors = sorted(self._validator.iter_errors(arguments), key=lambda e: list(map(str, e.absolute_path)))
        return [_describe(e) for e in errors[:limit]]


def _describe(error: Any) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    where = f"'{path}'" if path else "the arguments"
    if error.validator == "required":
        return f"{where}: {error.message}"
    expected = error.schema.get("description")
    hint = f" (expected: {expected})" if isinstance(expected, str) and len(expected) < 120 else ""
    # jsonschema's message embeds repr(value): a 1 MB argument would come back (and be audited) whole.
    message = error.message
    whole = repr(error.instance)
    if len(whole) > QUOTE_CHARS and whole in message:
        message = message.replace(whole, quote(error.instance))
    if len(message) > PROBLEM_CHARS:
        message = f"{message[:PROBLEM_CHARS]}… ({len(message) - PROBLEM_CHARS:,} more characters)"
    return f"{where}: {message}{hint}"


def quote(value: Any) -> str:
    """``value`` as Python would show it, cut to a readable head followed by its size when long."""
    whole = repr(value)
    if len(whole) <= QUOTE_CHARS:
        return whole
    if isinstance(value, str):
        size = f"{len(value):,} characters"
    else:
        size = f"{len(json.dumps(value, ensure_ascii=False, default=str)):,} characters of JSON"
    return f"{whole[:QUOTE_CHARS]}… ({size} in all)"
