"""Linear-time ``pattern`` and ``patternProperties`` for argument checks.

A tool's schema comes from its server, the string checked against it from the caller: jsonschema
runs both through Python's backtracking ``re``, where a pattern like ``^(a+)+$`` takes exponential
time in the argument's length, on the event loop. These keywords use RE2 (``google-re2``) instead,
which matches in linear time. A pattern RE2 cannot compile (a lookahead, a back-reference) is not
checked by the hub, and neither is anything when RE2 is not installed: the server still checks its
own arguments, so the hub forwards them rather than run an unbounded match.

    validator_class = linear_patterns(validator_for(schema), schema)
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterator
from typing import Any

from jsonschema.exceptions import ValidationError
from jsonschema.validators import extend

log = logging.getLogger("hermes_hub.catalog")

try:
    import re2
except ImportError:  # no wheel for this platform: patterns go unchecked, never through backtracking
    re2 = None


@functools.lru_cache(maxsize=4096)
def compiled(pattern: str) -> Any:
    """The RE2 program of ``pattern``, or None when RE2 cannot take it (then it is not checked)."""
    if re2 is None or not isinstance(pattern, str):
        return None
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error:
        log.warning("a tool's schema pattern %r is not checked by the hub (no linear-time match for it)",
                    pattern[:200])
        return None


def _matches(pattern: str, text: str) -> bool | None:
    program = compiled(pattern)
    return None if program is None else program.search(text) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and _matches(pattern, instance) is False:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in properties.items():
        for key, value in instance.items():
            if _matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    known, patterns = schema.get("properties", {}), list(schema.get("patternProperties", {}))
    # A key a pattern cannot be checked against counts as matched: not refused for want of a check.
    extras = sorted((k for k in instance if k not in known and not any(_matches(p, k) is not False for p in patterns)),
                    key=str)
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif allowed is False and extras:
        listed = ", ".join(repr(e) for e in extras)
        yield ValidationError(f"Additional properties are not allowed ({listed} {'was' if len(extras) == 1 else 'were'} "
                              "unexpected)")


def _unchecked(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    return iter(())


def linear_patterns(cls: Any, schema: dict[str, Any]) -> Any:
    """``cls`` (a jsonschema validator class) with the keywords above. In a schema that has
    ``patternProperties``, ``unevaluatedProperties`` (which would match them with ``re`` again) is
    left to the server."""
    keywords = {"pattern": _pattern, "patternProperties": _pattern_properties,
                "additionalProperties": _additional_properties}
    if "patternProperties" in json.dumps(schema):
        keywords["unevaluatedProperties"] = _unchecked
    return extend(cls, keywords)
