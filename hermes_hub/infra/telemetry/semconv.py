"""Attribute names of the OpenTelemetry semantic conventions for MCP and GenAI that the hub's spans use.

The MCP SDK names its own spans the same way: the host's request (``tools/call NAME``, kind SERVER,
continuing the ``traceparent`` a host sends in ``_meta``) and each request to a downstream server
(``MCP send tools/call NAME``, kind CLIENT, passing the current ``traceparent`` on in that request's
``_meta``). The hub adds the spans between them: the tool call through the pipeline, the agent run,
each model request.
"""

MCP_METHOD_NAME = "mcp.method.name"
MCP_SESSION_ID = "mcp.session.id"
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"  # execute_tool, invoke_agent, chat
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
ERROR_TYPE = "error.type"
# the hub's own, under its namespace
HERMES_SERVER = "hermes.server"
HERMES_RUN_ID = "hermes.run.id"
HERMES_USER_ID = "enduser.id"
