"""A terminal chat with a hub's agent: each line you type is one ``hermes_agent_run`` in one session.

    hermes-hub chat                          # spawns `hermes-hub serve --stdio --config hub.json`
    hermes-hub chat --url http://127.0.0.1:8600/mcp --token $HERMES_TOKEN --profile planner
    hermes-hub chat --session ses_… --once "what did we decide?"   # one task, the answer, exit

The chat is an ordinary MCP host: it lists the agent profiles (the hub's ``hermes_agent_<profile>``
prompts; ``default`` when it has none), calls ``hermes_agent_run(task, profile, session_id)`` with a
progress token and shows each round, answers the hub's confirmation questions (elicitation) on the
terminal, and keeps the session across turns. Ctrl-C cancels the run in progress (the SDK sends
``notifications/cancelled``; the hub stops the model and the tool call) and keeps the chat.
"""

from __future__ import annotations

import json
import signal
import sys
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
import mcp.types as types
from mcp import Client, MCPError

from hermes_hub.chat.connection import ChatError, Endpoint, chat_log, connect
from hermes_hub.chat.terminal import Console

BUSY_GRACE = 10.0  # after a cancelled run, the hub may hold the session a moment longer while it writes
HELP = """commands:
  /session         the current session's id (resume it later with --session ID)
  /session ID      continue session ID          /new   start a new session
  /profile         list the agent profiles      /profile NAME   switch to profile NAME
  /quit            leave (so does Ctrl-D); Ctrl-C cancels the run in progress"""


@dataclass
class Surface:
    """The hub's tools and prompts the chat needs, under whatever prefix the hub gives its own tools."""

    run_tool: str
    prefix: str  # e.g. "hermes_"
    profiles: list[str] = field(default_factory=lambda: ["default"])
    profiles_listed: bool = False  # False: the hub has no profile prompts, so names are not checked here
    tools: set[str] = field(default_factory=set)
    own: bool = False  # a hermes hub's: its own tools are there by name though most are not listed (own_tools)

    def tool(self, name: str) -> str | None:
        return self.prefix + name if self.own or self.prefix + name in self.tools else None


async def discover(client: Client) -> Surface:
    tools, cursor = [], None
    while True:  # every page: the run tool may be on any of them
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        if (cursor := page.next_cursor) is None:
            break
    names = {t.name for t in tools}
    ours = [t.name for t in tools if t.name.endswith("agent_run")
            and ((t.meta or {}).get("hermes-hub/origin") or {}).get("server") == "hermes"]
    run_tool = "hermes_agent_run" if "hermes_agent_run" in names else (ours[0] if ours else None)
    if run_tool is None:
        raise ChatError("this MCP server is not a hermes hub with an agent: it has no hermes_agent_run tool")
    surface = Surface(run_tool, run_tool.removesuffix("agent_run"), tools=names, own=run_tool in ours)
    caps = client.server_capabilities
    if caps is not None and caps.prompts is not None:
        stem = surface.prefix + "agent_"
        prompts, cursor = [], None
        while True:
            page = await client.list_prompts(cursor=cursor)
            prompts += [p.name.removeprefix(stem) for p in page.prompts if p.name.startswith(stem)]
            if (cursor := page.next_cursor) is None:
                break
        if prompts:
            surface.profiles, surface.profiles_listed = sorted(prompts), True
    return surface


class Chat:
    def __init__(self, console: Console, *, profile: str | None = None, session_id: str | None = None) -> None:
        self.console = console
        self.profile = profile or "default"
        self.session_id = session_id
        self.client: Client | None = None
        self.surface: Surface | None = None
        self.running: anyio.CancelScope | None = None  # the run in progress, for Ctrl-C
        self.asking: anyio.CancelScope | None = None  # a confirmation question being asked
        self.after_cancel = False

    async def attach(self, client: Client) -> None:
        """Learn the hub's surface; check the profile and the session to resume, before the first task."""
        self.client, self.surface = client, await discover(client)
        if self.surface.profiles_listed and self.profile not in self.surface.profiles:
            raise ChatError(f"unknown profile '{self.profile}'; the profiles are: {', '.join(self.surface.profiles)}",
                            2)
        if self.session_id is not None:
            await self.resume(self.session_id)

    async def resume(self, session_id: str) -> None:
        history = self.surface.tool("session_history") if self.surface else None
        if history is None:  # nothing to check it with: the first run says whether it exists
            self.session_id = session_id
            return
        try:
            result = await self._client.call_tool(history, {"session_id": session_id, "limit": 1,
                                                            "newest_first": True})
        except MCPError:  # not offered here (a toolset without the session tools): the first run says
            self.session_id = session_id
            return
        if result.is_error:
            raise ChatError(f"cannot resume session {session_id}: {_text(result)}; without --session the chat "
                            f"starts a new one")
        self.session_id = session_id
        last = (result.structured_content or {}).get("messages") or []
        said = f"; last message ({last[0]['role']}): {_short(last[0]['content'])}" if last else " (empty)"
        self.console.say(f"resuming session {session_id}{said}")

    @property
    def _client(self) -> Client:
        assert self.client is not None, "attach() first"
        return self.client

    # --- the conversation -------------------------------------------------------------------------

    async def loop(self) -> None:
        s = self.surface
        assert s is not None
        listed = ", ".join(s.profiles) if s.profiles_listed else "default (the hub lists no profile prompts)"
        self.console.say(f"chatting as profile {self.profile} (profiles: {listed}); "
                         f"{'session ' + self.session_id if self.session_id else 'a new session'}. /help for commands")
        while (line := await self.console.line("> ")) is not None:
            line = line.strip()
            if not line:
                continue
            if line.startswith("/"):
                if not await self.command(line):
                    return
                continue
            await self.turn(line)

    async def command(self, line: str) -> bool:
        """Run one /command; False to leave."""
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        if name in ("/quit", "/exit"):
            return False
        if name == "/help":
            self.console.say(HELP)
        elif name == "/session" and arg:
            try:
                await self.resume(arg)
            except ChatError as e:
                self.console.say(f"error: {e}")
        elif name == "/session":
            self.console.say(f"session {self.session_id}" if self.session_id else
                             "no session yet: your first message starts one")
        elif name == "/new":
            self.session_id = None
            self.console.say("the next message starts a new session")
        elif name == "/profile" and arg:
            s = self.surface
            if s is not None and s.profiles_listed and arg not in s.profiles:
                self.console.say(f"unknown profile '{arg}'; the profiles are: {', '.join(s.profiles)}")
            else:
                self.profile = arg
                self.console.say(f"profile {arg}")
        elif name == "/profile":
            s = self.surface
            names = s.profiles if s is not None else [self.profile]
            self.console.say("profiles: " + ", ".join(f"{n} (current)" if n == self.profile else n for n in names))
        else:
            self.console.say(f"unknown command {name}; /help lists them")
        return True

    async def turn(self, task: str, *, quiet: bool = False) -> types.CallToolResult | None:
        """Run ``task`` in the current session and show the answer; None when cancelled."""
        s = self.surface
        assert s is not None
        if self.session_id is None and (create := s.tool("session_create")):
            # Created first, so a run cancelled before it answers still leaves its session to come back to.
            made = await self._call(create, {"title": task[:80]})
            if made is not None and not made.is_error:
                self.session_id = (made.structured_content or {}).get("session_id")
        args = {"task": task, "profile": self.profile, **({"session_id": self.session_id} if self.session_id else {})}
        with anyio.CancelScope() as scope:
            self.running = scope
            try:
                result = await self._run(args, quiet)
            finally:
                self.running = None
        if scope.cancelled_caught:
            self.after_cancel = True
            self.console.say("(cancelled: the hub stopped the run; what it did so far is kept in the session)")
            return None
        if result is None:
            return None
        out = result.structured_content or {}
        if not quiet:
            if out:
                self.console.say(_text(result))
                self.console.say(_stop_line(out))
            else:  # refused before any run: unknown profile or session, session busy, no model
                self.console.say(f"error: {_text(result)}")
        self.session_id = out.get("session_id") or self.session_id
        return result

    async def _run(self, args: dict[str, Any], quiet: bool) -> types.CallToolResult | None:
        progress = None if quiet else self.on_progress
        deadline = anyio.current_time() + (BUSY_GRACE if self.after_cancel else 0)
        while True:
            result = await self._call(self.surface.run_tool, args, progress)  # type: ignore[union-attr]
            busy = result is not None and result.is_error and "is busy" in _text(result)
            if not busy or anyio.current_time() >= deadline:
                self.after_cancel = False
                return result
            await anyio.sleep(0.2)  # the cancelled run is still writing its last messages

    async def _call(self, tool: str, args: dict[str, Any], progress: Any = None) -> types.CallToolResult | None:
        try:
            return await self._client.call_tool(tool, args, progress_callback=progress)
        except MCPError as e:
            if e.code == types.CONNECTION_CLOSED:
                raise ChatError(f"the hub closed the connection ({e.message}); start the chat again") from None
            self.console.say(f"error: {e.message} (code {e.code})")
            return None

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.console.say(f"  {message}" if message else f"  {progress:g}/{total:g}" if total else f"  {progress:g}")

    # --- confirmations and Ctrl-C --------------------------------------------------------------------

    async def on_elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        """The hub asks the person (e.g. before a tool that needs confirmation): ask on the terminal."""
        with anyio.CancelScope() as scope:
            self.asking = scope
            try:
                return await self._ask(params)
            finally:
                self.asking = None
        return types.ElicitResult(action="cancel")  # Ctrl-C while asking (the run is cancelled too)

    async def _ask(self, params: types.ElicitRequestParams) -> types.ElicitResult:
        cancel = types.ElicitResult(action="cancel")  # the input ended: no answer is no
        if isinstance(params, types.ElicitRequestURLParams):
            self.console.say(f"? {params.message}\n  open {params.url}")
            done = await self.console.yes_no("  done?")
            return cancel if done is None else types.ElicitResult(action="accept" if done else "decline")
        schema = params.requested_schema or {}
        fields: dict[str, Any] = schema.get("properties") or {}
        if len(fields) == 1 and next(iter(fields.values())).get("type") == "boolean":  # a yes/no question
            yes = await self.console.yes_no(f"? {params.message}")
            return cancel if yes is None else types.ElicitResult(action="accept", content={next(iter(fields)): yes})
        self.console.say(f"? {params.message}")
        content: dict[str, Any] = {}
        for name, spec in fields.items():
            label = spec.get("title") or name
            if spec.get("type") == "boolean":
                value: Any = await self.console.yes_no(f"  {label}")
            else:
                self.console.say(f"  {label}" + (f" ({spec['description']})" if spec.get("description") else ""))
                value = await self.console.line("  : ")
                if value is not None and spec.get("type") in ("integer", "number"):
                    try:
                        value = int(value) if spec["type"] == "integer" else float(value)
                    except ValueError:
                        self.console.say(f"  '{value}' is not a number: declined")
                        return types.ElicitResult(action="decline")
            if value is None:
                return cancel
            if value != "" or name in (schema.get("required") or []):
                content[name] = value
        return types.ElicitResult(action="accept", content=content)

    def interrupt(self) -> None:
        if self.asking is not None:
            self.asking.cancel()
        if self.running is not None:
            self.running.cancel()
        else:
            self.console.say("\n(Ctrl-C cancels a run in progress; /quit or Ctrl-D leaves the chat)")

    async def watch_interrupts(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            task_status.started()
            async for _ in signals:
                self.interrupt()


@dataclass(frozen=True)
class Options:
    endpoint: Endpoint
    profile: str | None = None
    session_id: str | None = None
    once: str | None = None  # run this one task and exit
    as_json: bool = False  # with ``once``: print the structured result


async def main(options: Options) -> int:
    """The chat, or one task with ``once``; the exit status."""
    console = Console()
    chat = Chat(console, profile=options.profile, session_id=options.session_id)
    endpoint = options.endpoint
    if options.once is None and endpoint.url is None and not endpoint.verbose and endpoint.log is None:
        endpoint = replace(endpoint, log=chat_log())  # a person types here: the hub's log goes to a file
        print(f"(the hub's log goes to {endpoint.log})", file=sys.stderr, flush=True)
    try:
        async with connect(endpoint, elicitation_callback=chat.on_elicit) as client:
            await chat.attach(client)
            async with anyio.create_task_group() as tg:
                await tg.start(chat.watch_interrupts)
                try:
                    if options.once is None:
                        await chat.loop()
                        return 0
                    result = await chat.turn(options.once, quiet=options.as_json)
                    if result is None:  # cancelled by Ctrl-C, or a failure already reported
                        return 130 if chat.after_cancel else 1
                    if options.as_json:
                        console.say(json.dumps(result.structured_content or {"error": _text(result)},
                                               ensure_ascii=False, indent=2))
                    return 1 if result.is_error else 0
                finally:
                    tg.cancel_scope.cancel()
    except ChatError as e:
        print(f"error: {e}", file=sys.stderr, flush=True)
        return e.code


def _stop_line(out: dict[str, Any]) -> str:
    rounds, calls = out.get("rounds", 0), len(out.get("tool_calls") or [])
    return (f"[{out.get('stop_reason')} after {rounds} round{'s' * (rounds != 1)}, {calls} tool "
            f"call{'s' * (calls != 1)}; session {out.get('session_id')}]")


def _text(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent)).strip()


def _short(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
