"""@modelcontextprotocol/server-everything (npm) as a downstream of the hub, over stdio and over HTTP.

Hosts are SDK clients talking to a served hub over HTTP, in both protocol eras where it matters.
server-everything declares no sampling/elicitation tools here: the hub declares no such client
capabilities downstream (relaying them is a later feature).
"""

from __future__ import annotations

import anyio
import mcp.types as types
import pytest
from mcp import Client, MCPError

from tests.interop.conftest import everything_http_argv, everything_stdio, served_by
from tests.support import free_port, process, served_hub, wait_port

# Subscriptions and logging are handshake-era features the SDK warns about; they are what is tested here.
pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

TOOLS = {
    "echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
    "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource", "toggle-simulated-logging",
    "toggle-subscriber-updates", "trigger-long-running-operation", "simulate-research-query",
    # offered because the hub's client declares sampling and elicitation (it relays them to the host)
    "trigger-elicitation-request", "trigger-sampling-request", "trigger-url-elicitation",
}
DOCS = ("architecture", "extension", "features", "how-it-works", "instructions", "startup", "structure")
PROMPTS = {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"}
FEATURES = "demo://everything/resource/static/document/features.md"
TEXT_TEMPLATE = "demo://everything/resource/dynamic/text/{resourceId}"


@pytest.fixture(scope="module")
async def over_stdio(tmp_path_factory):
    """A served hub whose downstream is server-everything as a stdio child."""
    tmp = tmp_path_factory.mktemp("everything-stdio")
    async with served_hub({"mcpServers": {"everything": everything_stdio()}}, tmp) as url:
        yield url


@pytest.fixture(scope="module")
async def over_http(tmp_path_factory):
    """A served hub whose downstream is server-everything over streamable HTTP on 127.0.0.1."""
    tmp = tmp_path_factory.mktemp("everything-http")
    port, log = free_port(), tmp / "everything.log"
    with process(everything_http_argv(), log, env={"PORT": str(port)}) as everything:
        with anyio.fail_after(30):
            await wait_port(port, everything, log)
        remote = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}
        async with served_hub({"mcpServers": {"everything": remote}}, tmp) as url:
            yield url


@pytest.fixture(params=["stdio", "http"])
def hub(request) -> str:
    """The hub's URL, with server-everything behind it over each transport."""
    return request.getfixturevalue(f"over_{request.param}")


async def test_its_tools_resources_templates_and_prompts_appear_under_the_everything_prefix(hub):
    with anyio.fail_after(30):
        async with Client(hub) as host:
            listed = (await host.list_tools()).tools
            resources = [r.uri for r in served_by((await host.list_resources()).resources, "everything")]
            templates = (await host.list_resource_templates()).resource_templates
            prompts = {p.name for p in served_by((await host.list_prompts()).prompts, "everything")}
    tools = {t.name: t for t in served_by(listed, "everything")}
    assert set(tools) == {f"everything_{name}" for name in TOOLS}
    assert tools["everything_get-structured-content"].output_schema["required"] == [
        "temperature", "conditions", "humidity"]
    assert tools["everything_echo"].meta["hermes-hub/origin"] == {"server": "everything", "name": "echo"}
    assert sorted(resources) == [f"demo://everything/resource/static/document/{d}.md" for d in DOCS]
    assert [t.uri_template for t in served_by(templates, "everything")] == [
        TEXT_TEMPLATE, "demo://everything/resource/dynamic/blob/{resourceId}"]
    assert prompts == {f"everything_{name}" for name in PROMPTS}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tools_called_through_the_hub_return_text_image_and_structured_content(hub, mode):
    with anyio.fail_after(30):
        async with Client(hub, mode=mode) as host:
            echo = await host.call_tool("everything_echo", {"message": "hello"})
            total = await host.call_tool("everything_get-sum", {"a": 2, "b": 3})
            image = await host.call_tool("everything_get-tiny-image", {})
            weather = await host.call_tool("everything_get-structured-content", {"location": "Chicago"})
    assert echo.content[0].text == "Echo: hello"
    assert "5" in total.content[0].text and not total.is_error
    assert [(c.type, getattr(c, "mime_type", None)) for c in image.content if c.type == "image"] == [
        ("image", "image/png")]
    assert not weather.is_error
    assert set(weather.structured_content) == {"temperature", "conditions", "humidity"}


async def test_a_static_and_a_templated_resource_are_read_through_their_public_uris(hub):
    with anyio.fail_after(30):
        async with Client(hub) as host:
            doc = await host.read_resource(FEATURES)
            text = await host.read_resource("demo://everything/resource/dynamic/text/5")
            blob = await host.read_resource("demo://everything/resource/dynamic/blob/2")
    assert doc.contents[0].uri == FEATURES and doc.contents[0].mime_type == "text/markdown"
    assert doc.contents[0].text.strip()
    assert text.contents[0].uri == "demo://everything/resource/dynamic/text/5"
    assert text.contents[0].text.startswith("Resource 5:")
    assert blob.contents[0].uri == "demo://everything/resource/dynamic/blob/2" and blob.contents[0].blob


async def test_a_prompt_with_arguments_and_argument_completions_pass_through(hub):
    prompt = types.PromptReference(type="ref/prompt", name="everything_completable-prompt")
    template = types.ResourceTemplateReference(type="ref/resource", uri=TEXT_TEMPLATE)
    with anyio.fail_after(30):
        async with Client(hub) as host:
            weather = await host.get_prompt("everything_args-prompt", {"city": "Paris", "state": "TX"})
            department = await host.complete(prompt, {"name": "department", "value": "E"})
            name = await host.complete(prompt, {"name": "name", "value": ""}, {"department": "Engineering"})
            resource_id = await host.complete(template, {"name": "resourceId", "value": "7"})
    assert weather.messages[0].content.text == "What's weather in Paris, TX?"
    assert department.completion.values == ["Engineering"]
    assert name.completion.values == ["Alice", "Bob", "Charlie"]
    assert resource_id.completion.values == ["7"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_progress_of_a_long_running_operation_reaches_a_client_calling_through_the_hub(hub, mode):
    updates: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total))

    with anyio.fail_after(30):
        async with Client(hub, mode=mode) as host:
            result = await host.call_tool("everything_trigger-long-running-operation", {"duration": 0.3, "steps": 3},
                                          progress_callback=on_progress)
    assert result.content[0].text.startswith("Long running operation completed")
    assert updates == [(1, 3), (2, 3), (3, 3)]


async def test_a_resource_subscription_through_the_hub_delivers_the_servers_update_notifications(hub):
    updated: list[str] = []
    arrived = anyio.Event()

    async def on_message(msg) -> None:
        if isinstance(msg, types.ResourceUpdatedNotification):
            updated.append(msg.params.uri)
            arrived.set()

    # resources/subscribe is a handshake-era method; server-everything sends an update every 5 s.
    with anyio.fail_after(30):
        async with Client(hub, mode="legacy", message_handler=on_message) as host:
            assert host.server_capabilities.resources.subscribe
            await host.subscribe_resource(FEATURES)
            await host.call_tool("everything_toggle-subscriber-updates", {})
            try:
                await arrived.wait()
                await host.unsubscribe_resource(FEATURES)
            finally:
                await host.call_tool("everything_toggle-subscriber-updates", {})  # stop its timer
    assert updated[0] == FEATURES


async def test_subscribing_to_a_resource_whose_server_cannot_report_updates_fails_with_the_reason(over_stdio):
    with anyio.fail_after(30):
        async with Client(over_stdio, mode="legacy") as host:
            with pytest.raises(MCPError) as err:
                await host.subscribe_resource("hub://hermes/status")
    assert err.value.code == types.INVALID_PARAMS
    assert "cannot be subscribed to; read them again" in err.value.message


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_log_message_a_stdio_server_sends_during_a_call_reaches_the_calling_host(over_stdio, mode):
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    # toggle-simulated-logging logs once, at a random level, before it answers; then every 5 s.
    with anyio.fail_after(30):
        async with Client(over_stdio, mode=mode, logging_callback=on_log, log_level="debug") as host:
            if mode == "legacy":
                await host.set_logging_level("debug")
            try:
                await host.call_tool("everything_toggle-simulated-logging", {})
            finally:
                await host.call_tool("everything_toggle-simulated-logging", {})  # stop its timer
    assert logs, "no log message reached the host"
    assert logs[0].logger == "everything"
    assert logs[0].data.lower().startswith(logs[0].level)  # e.g. "Debug-level message" at level debug


async def test_sampling_and_elicitation_requests_reach_a_handshake_era_host_and_its_answers_go_back(hub):
    asked: list[str] = []

    async def sample(ctx, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append(f"sample: {params.messages[0].content.text}")
        return types.CreateMessageResult(role="assistant", model="host-model",
                                         content=types.TextContent(type="text", text="sampled by the host"))

    async def elicit(ctx, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(f"elicit: {params.message[:40]}")
        return types.ElicitResult(action="accept", content={"name": "Ada", "check": True})

    with anyio.fail_after(30):
        async with Client(hub, mode="legacy", sampling_callback=sample, elicitation_callback=elicit) as host:
            sampled = await host.call_tool("everything_trigger-sampling-request", {"prompt": "hi", "maxTokens": 5})
            elicited = await host.call_tool("everything_trigger-elicitation-request", {})
    assert "sampled by the host" in sampled.content[0].text
    assert "User provided the requested information" in elicited.content[0].text
    assert asked == ["sample: Resource trigger-sampling-request context: hi",
                     "elicit: Please provide inputs for the following "]


async def test_a_2026_host_answers_the_servers_pushed_sampling_request_through_the_bridge(hub):
    async def sample(ctx, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", model="host-model",
                                         content=types.TextContent(type="text", text="sampled via input-required"))

    with anyio.fail_after(30):
        async with Client(hub, sampling_callback=sample) as host:
            era = host.protocol_version
            result = await host.call_tool("everything_trigger-sampling-request", {"prompt": "hi", "maxTokens": 5})
    assert era == "2026-07-28"
    assert not result.is_error and "sampled via input-required" in result.content[0].text


async def test_a_host_that_cannot_sample_gets_a_clear_error_instead_of_a_hang(hub):
    with anyio.fail_after(30):
        async with Client(hub, mode="legacy") as host:  # declares no sampling capability
            result = await host.call_tool("everything_trigger-sampling-request", {"prompt": "hi", "maxTokens": 5})
    assert result.is_error
    assert "hermes-hub cannot relay sampling from server 'everything': the calling host does not support it" in \
        result.content[0].text


async def test_a_subscription_is_renewed_after_the_server_restarts(tmp_path):
    import os
    import signal

    from hermes_hub import Hub
    from hermes_hub.infra.config import parse_config

    updated = anyio.Event()

    async def on_message(msg) -> None:
        if isinstance(msg, types.ResourceUpdatedNotification):
            updated.set()

    entry = {**everything_stdio(), "backoff_initial": 0.1}
    async with Hub(parse_config({"mcpServers": {"everything": entry}})) as hub:
        conn = hub.pool.connections["everything"]
        with anyio.fail_after(60):
            await hub.wait_settled(30)
            async with hub.client(mode="legacy", message_handler=on_message) as host:
                await host.subscribe_resource(FEATURES)
                first_pid = conn.link.pid
                os.kill(first_pid, signal.SIGKILL)
                await hub.pool.wait_for(lambda: conn.ready and conn.link.pid != first_pid)
                # The new process knows nothing of the subscription unless the hub renewed it.
                await host.call_tool("everything_toggle-subscriber-updates", {})
                await updated.wait()
                await host.call_tool("everything_toggle-subscriber-updates", {})
    assert conn.restarts == 1
