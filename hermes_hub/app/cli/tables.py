"""Plain-text rendering for the command line: aligned tables and tool results."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the SDK's types take ~0.6 s to import: only commands that print results need them
    import mcp.types as types

ORIGIN = "hermes-hub/origin"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], max_width: int = 70) -> str:
    cells = [[_cell(v, max_width) for v in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.upper().ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)


def _cell(value: Any, max_width: int) -> str:
    text = "-" if value is None or value == "" else str(value)
    text = text.splitlines()[0] if text.strip() else text
    return text if len(text) <= max_width else text[: max_width - 1] + "…"


def origin(item: Any) -> str | None:
    meta = getattr(item, "meta", None) or {}
    return (meta.get(ORIGIN) or {}).get("server")


def status_tool(tools: list[Any]) -> str | None:
    """The name a hermes hub serves ``hermes_hub_status`` under, listed or not (most of its own tools are not):
    its own tools' prefix, read off any own tool it lists (``_meta`` origin server ``hermes``); None: not a hub."""
    for t in tools:
        meta = (getattr(t, "meta", None) or {}).get(ORIGIN) or {}
        original = meta.get("name")
        if meta.get("server") == "hermes" and isinstance(original, str) and original and t.name.endswith(original):
            return t.name[: len(t.name) - len(original)] + "hub_status"
    return None


def servers_table(status: dict[str, Any]) -> str:
    rows = []
    for s in status["servers"]:
        counts = f"{s.get('tools_exposed', 0)}/{s.get('tools', 0)}" if "tools" in s else "-"
        rows.append([s["name"], s["state"], s.get("transport"), counts, s.get("resources"), s.get("prompts"),
                     s.get("protocol_version"), s.get("error")])
    out = table(["server", "state", "transport", "tools", "resources", "prompts", "protocol", "error"], rows, 90)
    # An error's last words are usually the fix: when the cell cuts them off, print the error in full.
    for s in status["servers"]:
        if s.get("fix") and (s.get("error") != s["fix"] or len(s["fix"]) <= 90):
            out += f"\n{s['name']} {s['state']}: {s['fix']}"
        if len(s.get("error") or "") > 90:
            out += f"\n{s['name']} {s['state']}: {s['error']}"
    for s in status["servers"]:  # per_user servers: each user's own connection (docs/security.md)
        if s.get("per_user"):
            mine = f"; your account: {s['account']}" if s.get("account") else ""
            out += f"\n{s['name']}: one connection per user, {s['users_connected']} connected now{mine}"
    for c in status.get("collisions", []):
        out += f"\nwarning: {c['kind']} '{c['name']}' is offered by '{c['winner']}' and '{c['loser']}'; " \
               f"'{c['winner']}' wins. Fix: {c['fix']}"
    for w in status.get("name_warnings", []) + status.get("config_warnings", []):
        out += f"\nwarning: {w}"
    for d in status.get("drift", []):
        out += f"\nwarning: tool '{d['name']}' is withheld: its definition changed ({', '.join(d['changed'])}); " \
               f"see `hermes-hub tools --drift`"
    totals = status["totals"]
    listed = totals.get("tools_listed", totals["tools"])  # a hub of an older release says only the total
    out += (f"\n{totals['tools']} tools, {listed} listed (~{status['tool_list_tokens']:,} tokens of tool list; "
            f"`tools --tokens` for each)" if listed != totals["tools"] else
            f"\n{totals['tools']} tools (~{status['tool_list_tokens']:,} tokens of tool list)")
    return out


def result_text(result: types.CallToolResult | types.GetPromptResult | types.ReadResourceResult) -> str:
    """What a person wants to read of a result: its text, with binary parts summarised."""
    import mcp.types as types

    parts: list[str] = []
    if isinstance(result, types.ReadResourceResult):
        for c in result.contents:
            parts.append(c.text if isinstance(c, types.TextResourceContents) else f"[{c.mime_type} blob, {len(c.blob)} base64 chars]")
        return "\n".join(parts)
    if isinstance(result, types.GetPromptResult):
        for m in result.messages:
            parts.append(f"[{m.role}] {_block(m.content)}")
        return "\n".join(parts)
    parts = [_block(b) for b in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
    return "\n".join(parts)


def _block(block: Any) -> str:
    import mcp.types as types

    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        return f"[{block.type} {block.mime_type}, {len(block.data)} base64 chars]"
    if isinstance(block, types.EmbeddedResource):
        res = block.resource
        return getattr(res, "text", None) or f"[resource {res.uri}]"
    if isinstance(block, types.ResourceLink):
        return f"[link {block.uri}]"
    return str(block)
