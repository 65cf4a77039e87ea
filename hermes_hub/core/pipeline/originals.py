"""The originals of masked results: sealed in the vault for a bounded time, opened only by an audited path.

    await seal(vault, call, result, masked, limit)        # the mask step, when it replaced something
    await seal(vault, call, None, masked, limit, arguments)   # what it found was in the arguments only
    opened = await unmask(store, vault, "9f2c...", viewer_id="ann", admin=False, keep_hours=24)

A sealed original is bound (AES-GCM's associated data, ``hermes_hub.services.vault``) to the user whose call it
was and to the call id, so it opens for that pair only. ``unmask`` is what ``hermes-hub audit --unmask
CALL_ID`` and the status page call, never an MCP tool: an admin may open any call's original, anyone
else only their own (another user's call id reads as unknown), and every attempt writes an audit row
naming who asked, whose call it was and the call id. An original older than ``keep_hours`` is deleted
rather than opened. The arguments are sealed too when the detectors found something in them (the
audit, session history and traces keep them masked): ``unmask`` is the way back to both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import mcp.types as types

from hermes_hub.infra.errors import NotFound
from hermes_hub.core.pipeline import Call
from hermes_hub.infra.storage.records import AuditRecord, utcnow
from hermes_hub.services.vault import Vault

KIND = "masked"  # the vault's kind for these values; their name is the call id
UNMASK_TOOL = "hermes-hub audit --unmask"  # what the audit row of an unmask names as its tool
_HINT = ("masked originals are kept guards.mask.keep_hours hours; `hermes-hub audit` shows the call ids "
         "of recent calls")


@dataclass(frozen=True)
class Original:
    call_id: str
    user_id: str
    tool: str
    server: str
    masked: dict[str, int]
    result: dict[str, Any]  # the CallToolResult as the server sent it (its JSON form); {} when it was not masked
    arguments: dict[str, Any] | None = None  # the arguments as the host sent them, when they were masked

    def text(self) -> str:
        """The arguments (when they were masked), then the result's text, one block a line, as a person reads it."""
        parts = [] if self.arguments is None else [
            f"arguments: {json.dumps(self.arguments, ensure_ascii=False, indent=2, default=str)}"]
        for block in self.result.get("content", []):
            if block.get("type") == "text":
                parts.append(block["text"])
            elif block.get("type") == "resource" and "text" in block.get("resource", {}):
                parts.append(block["resource"]["text"])
        if (structured := self.result.get("structuredContent")) is not None:
            parts.append(json.dumps(structured, ensure_ascii=False, indent=2))
        return "\n".join(parts)


async def seal(vault: Vault, call: Call, result: types.CallToolResult | None, masked: dict[str, int], limit: int,
               arguments: dict[str, Any] | None = None) -> None:
    payload: dict[str, Any] = {"tool": call.tool, "server": call.server, "masked": masked, "result": {} if
                               result is None else result.model_dump(mode="json", by_alias=True, exclude_none=True)}
    if arguments is not None:
        payload["arguments"] = arguments
    text = json.dumps(payload, ensure_ascii=False, default=str)
    # the arguments are bounded by the request that carried them; the result by the catalog's cut
    await vault.put(call.user_id, KIND, call.call_id, text, limit=limit + (0 if arguments is None else 4 * len(text)))


async def prune(store: Any, *, keep_hours: float) -> int:
    """Delete the originals older than ``keep_hours``; return how many went."""
    return int(await store.prune_sealed(KIND, utcnow() - timedelta(hours=keep_hours)))


async def unmask(store: Any, vault: Vault, call_id: str, *, viewer_id: str, admin: bool,
                 keep_hours: float) -> Original:
    """The original of call ``call_id``'s masked result, for ``viewer_id``; audited whatever the outcome."""
    owners = await store.sealed_owners(KIND, call_id)  # call ids are random: one owner at most
    owner = owners[0] if owners and (admin or owners[0] == viewer_id) else None
    rec = None if owner is None else await store.get_sealed(owner, KIND, call_id)
    if rec is not None and rec.updated_at < utcnow() - timedelta(hours=keep_hours):
        await vault.delete(owner, KIND, call_id)
        rec = None
    if rec is None:
        await _audit(store, viewer_id, call_id, owner, "refused", "no masked original is kept for this call")
        raise NotFound("masked call", call_id, _HINT)
    data = json.loads(vault.open(rec))
    await _audit(store, viewer_id, call_id, owner, "ok", None)
    return Original(call_id, rec.user_id, data["tool"], data["server"], data.get("masked", {}), data["result"],
                    data.get("arguments"))


async def _audit(store: Any, viewer_id: str, call_id: str, owner: str | None, outcome: str, error: str | None) -> None:
    await store.add_audit(AuditRecord(at=utcnow(), user_id=viewer_id, tool=UNMASK_TOOL, outcome=outcome,
                                      duration_ms=0.0, arguments={"call_id": call_id, "owner": owner},
                                      error=error, call_id=call_id))
