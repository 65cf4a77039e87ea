"""``hermes_token_create``, ``hermes_token_list`` and ``hermes_token_revoke``: bearer tokens and OAuth sign-ins,
for admins only, so ``hermes-hub token … --url`` manages a hub on another machine. Never listed by default
(``hub.own_tools``). A new token's secret is in the result of its call, once: the audit keeps the call's
arguments (user, role, label) and the result's size, never the result; only its hash is stored."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import mcp.types as types

from hermes_hub.core.builtins.source import BuiltinTool, json_result
from hermes_hub.infra.call import CallContext
from hermes_hub.infra.errors import HubError
from hermes_hub.infra.storage import Store
from hermes_hub.services.identity import ADMIN, USER, create_token

ID = {"type": "string", "minLength": 1, "maxLength": 64, "description": "tok_… or oag_…, as token_list gives"}


async def token_rows(store: Store) -> list[dict[str, Any]]:
    """Every token and OAuth sign-in, without secrets (what ``hermes-hub token list`` prints)."""
    rows = [{"id": r.id, "user": r.user_id, "role": r.role, "name": r.name, "created_at": r.created_at.isoformat(),
             "revoked_at": r.revoked_at and r.revoked_at.isoformat()} for r in await store.list_tokens()]
    rows += [{"id": g.id, "user": g.user_id, "role": g.role, "name": f"OAuth: {g.client_name} ({g.resource})",
              "kind": "oauth", "client_id": g.client_id, "resource": g.resource, "scopes": g.scopes,
              "created_at": g.created_at.isoformat(), "revoked_at": g.revoked_at and g.revoked_at.isoformat()}
             for g in await store.list_oauth_grants()]
    return rows


async def live_tokens(store: Store) -> int:
    return sum(t.revoked_at is None for t in await store.list_tokens())


async def revoke(store: Store, token_id: str) -> dict[str, Any]:
    """Revoke a token or an OAuth sign-in, on every replica; ``left``: live tokens after it."""
    if token_id.startswith("oag_"):  # an OAuth grant: its access and refresh tokens end with it
        if not await store.revoke_oauth_grant(token_id, at=datetime.now(UTC)):
            raise HubError(f"no live OAuth sign-in with id {token_id!r}; see `hermes-hub token list`")
        return {"revoked": token_id, "kind": "oauth", "left": await live_tokens(store)}
    if not await store.revoke_token(token_id, at=datetime.now(UTC)):
        raise HubError(f"no live token with id {token_id!r}; see `hermes-hub token list`")
    return {"revoked": token_id, "kind": "token", "left": await live_tokens(store)}


def _answered(run: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]) -> Callable[..., Any]:
    async def handler(args: dict[str, Any], ctx: CallContext) -> types.CallToolResult:
        try:
            return json_result(await run(args))
        except HubError as e:  # no such token, an empty user name: said as the tool's error
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(e))], is_error=True)
    return handler


def token_items(get_store: Callable[[], Awaitable[Store]], configured: Callable[[], bool]) -> list[BuiltinTool]:
    """``configured()``: whether hub.json has tokens of its own (``auth.tokens``), so a new one is not the first."""
    async def create(args: dict[str, Any]) -> dict[str, Any]:
        store = await get_store()
        first = not configured() and not await live_tokens(store)
        secret, record = await create_token(store, args["user"], args.get("role", USER), args.get("name", ""))
        return {"token": secret, "id": record.id, "user": record.user_id, "role": record.role, "first": first}

    async def listing(args: dict[str, Any]) -> dict[str, Any]:
        return {"tokens": await token_rows(await get_store())}

    async def revoking(args: dict[str, Any]) -> dict[str, Any]:
        return await revoke(await get_store(), args["token_id"])

    def tool(name: str, description: str, properties: dict[str, Any], required: list[str],
             annotations: types.ToolAnnotations) -> types.Tool:
        return types.Tool(name=name, description=description, annotations=annotations,
                          input_schema={"type": "object", "properties": properties, "required": required,
                                        "additionalProperties": False})

    return [
        BuiltinTool(tool("token_create", "Admins: create a bearer token for a user; its secret is in this "
                         "answer only (first: true when no other token is live).",
                         {"user": {"type": "string", "minLength": 1, "maxLength": 200},
                          "role": {"enum": [USER, ADMIN]},
                          "name": {"type": "string", "maxLength": 200, "description": "a label, e.g. the device"}},
                         ["user"], types.ToolAnnotations(read_only_hint=False, open_world_hint=False)),
                    _answered(create), admin_only=True),
        BuiltinTool(tool("token_list", "Admins: every bearer token and OAuth sign-in, never their secrets.", {}, [],
                         types.ToolAnnotations(read_only_hint=True, open_world_hint=False)), _answered(listing),
                    admin_only=True),
        BuiltinTool(tool("token_revoke", "Admins: revoke a token or OAuth sign-in, on every replica.",
                         {"token_id": ID}, ["token_id"],
                         types.ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)),
                    _answered(revoking), admin_only=True),
    ]
