"""What an agent run asks the person, through their host (elicitation; input-required rounds for
2026-07-28 hosts): a yes before a high-risk tool runs, and the arguments of a call the model could
not get right. A host that cannot ask gets the call refused: nothing is ever assumed for the person.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types

from hermes_hub.infra.call import CallContext
from hermes_hub.infra.masking import MASKER, Masker
from hermes_hub.infra.models import ToolCall
from hermes_hub.core.pipeline.preview import Preview, Unshowable, refusal

PRIMITIVE = {"string", "number", "integer", "boolean"}
FORM_KEYS = {"type", "title", "description", "enum", "enumNames", "minimum", "maximum", "minLength", "maxLength",
             "format", "default"}


async def confirm(ctx: CallContext, call: ToolCall, masker: Masker = MASKER) -> str | None:
    """None when the person said yes; otherwise what the model is told. The question shows every argument
    the yes covers (``pipeline.preview``: masked, each value shortened); a call it cannot show is refused."""
    if ctx.host.elicit is None:
        return (f"Refused: '{call.name}' needs the person's confirmation, and their host cannot ask "
                f"({ctx.host.why_not}). Tell the user what you wanted to do instead.")
    try:
        shown = Preview.of(masker(call.arguments) if isinstance(call.arguments, dict) else {}).text()
    except Unshowable as e:
        return refusal(call.name, e)
    question = types.ElicitRequestFormParams(
        message=f"The assistant wants to call {call.name} with {shown}. Allow it?",
        requested_schema={"type": "object", "properties": {"allow": {"type": "boolean", "title": "Allow"}},
                          "required": ["allow"]})
    try:
        answer = await ctx.host.elicit(question)
    except Exception as e:  # noqa: BLE001 - a host that fails to ask counts as no
        return f"Refused: asking the person for confirmation failed ({e}); do not retry it."
    if answer.action == "accept" and (answer.content or {}).get("allow") is True:
        return None
    return f"The person declined the call to '{call.name}'; do not retry it. Go on without it or stop."


async def ask_arguments(ctx: CallContext, call: ToolCall, tool: types.Tool, problems: list[str],
                        corrections: int) -> dict[str, Any] | str:
    """The arguments the person filled in for ``tool``, or (a string) why the run has to stop for input."""
    listing = "; ".join(problems)
    stop = (f"I need your help: after {corrections} corrections I still could not call {call.name} with valid "
            f"arguments ({listing}). Tell me the right values and ask again.")
    form = form_schema(tool.input_schema, call.arguments)
    if ctx.host.elicit is None or form is None:
        return stop
    question = types.ElicitRequestFormParams(
        message=f"The assistant could not get the arguments of {call.name} right ({listing[:400]}). "
                f"Fill them in to run it with your values, or decline to stop.",
        requested_schema=form)
    try:
        answer = await ctx.host.elicit(question)
    except Exception:  # noqa: BLE001 - a host that fails to ask: the run stops for input
        return stop
    if answer.action != "accept" or not answer.content:
        return stop
    kept = {k: v for k, v in call.arguments.items() if k not in form["properties"]}
    return {**kept, **answer.content}


def form_schema(schema: dict[str, Any], current: dict[str, Any]) -> dict[str, Any] | None:
    """``schema`` as an elicitation form (flat, primitive fields only, the model's values as defaults),
    or None when a required argument is not a primitive a form can ask for."""
    props = schema.get("properties") or {}
    required = [r for r in schema.get("required") or [] if r in props]
    fields: dict[str, Any] = {}
    for name, spec in props.items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        if kind not in PRIMITIVE:
            if name in required:
                return None
            continue
        field = {k: v for k, v in spec.items() if k in FORM_KEYS}
        value = current.get(name)
        if _fits(kind, value):
            field["default"] = value
        fields[name] = field
    if not fields:
        return None
    return {"type": "object", "properties": fields, "required": required}


def _fits(kind: str, value: Any) -> bool:
    if isinstance(value, bool):
        return kind == "boolean"
    return (kind == "string" and isinstance(value, str)) or (kind == "integer" and isinstance(value, int)) or (
        kind == "number" and isinstance(value, int | float))
