"""``hermes_agent_run``: the agent loop as a tool any MCP host can call (see ``hermes_hub.core.agent.loop``);
``hermes_trace_list`` / ``hermes_trace_get`` / ``hub://hermes/traces/{run_id}``: what each of your runs did;
``hermes_feedback``: rate a run. Another user's run id answers "not found", like one that never existed."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp.types as types

from hermes_hub.core.agent.loop import Agent
from hermes_hub.core.agent.profiles import resolve
from hermes_hub.core.agent.runs import run_summary, run_trace
from hermes_hub.infra.bridge import Bridge
from hermes_hub.core.builtins.source import BuiltinPrompt, BuiltinPrompts, BuiltinTemplate, BuiltinTool, json_result
from hermes_hub.infra.call import CallContext
from hermes_hub.infra.config import HubConfig
from hermes_hub.infra.errors import HubError
from hermes_hub.services.evaluation.feedback import keep_case
from hermes_hub.infra.storage import Store

RUN_ID = {"type": "string", "description": "a run id (run_…) from hermes_agent_run or hermes_trace_list"}

SCHEMA = {
    "type": "object",
    "properties": {
        "task": {"type": "string", "minLength": 1, "maxLength": 20000,
                 "description": "what to do, as you would ask a person"},
        "profile": {"type": "string", "description": "an agent profile of hub.json's 'agents' (default: default)"},
        "session_id": {"type": "string", "description": "continue this session (default: a new one)"},
    },
    "required": ["task"],
    "additionalProperties": False,
}


def agent_items(get_agent: Callable[[], Agent], get_config: Callable[[], HubConfig],
                get_store: Callable[[], Awaitable[Store]], bridge: Bridge,
                ) -> list[BuiltinTool | BuiltinTemplate | BuiltinPrompts]:
    return [_run_tool(get_agent, get_config, bridge), *_trace_items(get_store),
            BuiltinPrompts(lambda: profile_prompts(get_config()))]


def _run_tool(get_agent: Callable[[], Agent], get_config: Callable[[], HubConfig], bridge: Bridge) -> BuiltinTool:
    """``agent_run``: the hub's agent on a task, parked behind the bridge for hosts in input-required rounds."""
    async def run(args: dict[str, Any], ctx: CallContext) -> Any:
        # A 2026-07-28 host cannot be sent a request mid-call; the bridge parks the run and turns each
        # question (a confirmation, a sampling request) into an input-required round the host's retry answers.
        if ctx.rounds is not None and (bridge.owns(ctx.rounds) or ctx.host.in_rounds):
            return await bridge.call(ctx, lambda parked: run_now(args, parked))
        return await run_now(args, ctx)

    async def run_now(args: dict[str, Any], ctx: CallContext) -> types.CallToolResult:
        try:
            profile = resolve(get_config(), args.get("profile", "default"))
            result = await get_agent().run(args["task"], profile, ctx, session_id=args.get("session_id"))
        except HubError as e:  # no model, unknown profile or session, session busy: the caller can act on these
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(e))], is_error=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=result.answer)],
                                    structured_content=result.structured(),
                                    is_error=result.stop_reason == "model_error")

    tool = types.Tool(
        name="agent_run",
        description=("Give a task to the hub's agent: a model that works through your tools, memories and the "
                     "session's history, and answers. Returns the answer, rounds, tool calls and stop_reason "
                     "(answered, max_rounds, repeated_results, declined, cancelled, model_error)."),
        input_schema=SCHEMA,
        annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True),
        execution=types.ToolExecution(task_support="optional"),  # a host that speaks tasks gets one (tasks.py)
    )
    return BuiltinTool(tool, run)


def _guarded(body: Callable[[dict[str, Any], CallContext], Awaitable[Any]]) -> Any:
    async def handler(args: dict[str, Any], ctx: CallContext) -> types.CallToolResult:
        try:
            return json_result(await body(args, ctx))
        except HubError as e:
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(e))], is_error=True)
    return handler


def _trace_items(get_store: Callable[[], Awaitable[Store]]) -> list[BuiltinTool | BuiltinTemplate]:
    """What the caller's own agent runs did (trace_list, trace_get, the trace template) and their ratings."""
    async def trace_list(args: dict[str, Any], ctx: CallContext) -> Any:
        runs = await (await get_store()).list_runs(ctx.caller.user_id, limit=args.get("limit", 20))
        return {"runs": [run_summary(r) for r in runs]}

    async def trace_get(args: dict[str, Any], ctx: CallContext) -> Any:
        found = await (await get_store()).get_run(ctx.caller.user_id, args["run_id"])
        return run_trace(found, prompt=bool(args.get("prompt")))

    async def feedback(args: dict[str, Any], ctx: CallContext) -> Any:
        store = await get_store()
        rated = await store.rate_run(ctx.caller.user_id, args["run_id"], args["rating"], args.get("comment"))
        out = {"run_id": rated.run_id, "rating": rated.rating, "comment": rated.comment}
        if rated.rating == "down":  # issue 21: it becomes a case of the person's evaluation set
            out["eval_case"] = (await keep_case(store, ctx.caller.user_id, rated.run_id))["id"]
        return out

    async def trace_text(params: dict[str, str], ctx: CallContext) -> str:
        found = await (await get_store()).get_run(ctx.caller.user_id, params["run_id"])
        return json.dumps(run_trace(found, prompt=True), ensure_ascii=False, indent=2)

    read_only = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return [
        BuiltinTool(types.Tool(name="trace_list", description="Your recent agent runs, newest first: profile, task, "
                               "how each ended, rounds, rating.", annotations=read_only,
                               input_schema={"type": "object", "properties": {"limit": {
                                   "type": "integer", "minimum": 1, "maximum": 200}}, "additionalProperties": False}),
                    _guarded(trace_list)),
        BuiltinTool(types.Tool(name="trace_get", description="What one agent run did, round by round: every model "
                               "request (provider, tokens, seconds, finish), every tool call (server, seconds, "
                               "outcome, size; secrets masked) and the context budget; prompt: true adds what each "
                               "request contained and what the model answered.", annotations=read_only,
                               input_schema={"type": "object", "properties": {"run_id": RUN_ID, "prompt": {
                                   "type": "boolean", "description": "add each model request and answer"}},
                                             "required": ["run_id"], "additionalProperties": False}),
                    _guarded(trace_get)),
        BuiltinTool(types.Tool(name="feedback", description="Rate an agent run up or down, with an optional comment; "
                               "kept with its trace. A run rated down becomes a case of your evaluation set "
                               "(`hermes-hub eval --set mine`).",
                               input_schema={"type": "object", "properties": {
                                   "run_id": RUN_ID, "rating": {"enum": ["up", "down"]},
                                   "comment": {"type": "string", "maxLength": 2000}},
                                   "required": ["run_id", "rating"], "additionalProperties": False}),
                    _guarded(feedback)),
        BuiltinTemplate(types.ResourceTemplate(uri_template="hub://traces/{run_id}", name="agent run trace",
                                               mime_type="application/json",
                                               description="What one of your agent runs did, round by round, "
                                                           "with what each model request contained"),
                        trace_text),
    ]


def profile_prompts(config: HubConfig) -> list[BuiltinPrompt]:
    """``agent_<profile>`` for every profile (``default`` included) once a model is configured: picking one
    in a host's prompt menu asks the host's model to hand the task to that profile."""
    if config.agent.provider is None:
        return []
    run_tool = f"{config.hub.prefix}{config.hub.separator}agent_run" if config.hub.prefix else "agent_run"
    return [_profile_prompt(config, name, run_tool) for name in sorted({"default", *config.agents})]


def _profile_prompt(config: HubConfig, name: str, run_tool: str) -> BuiltinPrompt:
    instructions = resolve(config, name).instructions.strip()
    description = f"Hand a task to the hub's agent ({name} profile): {instructions.splitlines()[0]}"[:300]

    async def render(args: dict[str, str], ctx: CallContext) -> types.GetPromptResult:
        call = {"task": args["task"], "profile": name, **({"session_id": args["session_id"]}
                                                          if args.get("session_id") else {})}
        text = (f"Call the tool {run_tool} with these arguments and give me its answer; its stop_reason says "
                f"whether the task was finished:\n{json.dumps(call, ensure_ascii=False, indent=2)}")
        return types.GetPromptResult(description=description, messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))])

    return BuiltinPrompt(types.Prompt(name=f"agent_{name}", title=f"Agent: {name}", description=description, arguments=[
        types.PromptArgument(name="task", description="What the agent should do", required=True),
        types.PromptArgument(name="session_id", description="Continue this session (optional)", required=False),
    ]), render)
