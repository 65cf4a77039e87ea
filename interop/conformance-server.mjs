#!/usr/bin/env node
// hermes-hub's target server for the MCP conformance suite's SERVER scenarios
// (@modelcontextprotocol/conformance 0.1.16). The npm package does not ship a
// reference server, and @modelcontextprotocol/server-everything lacks the
// fixtures the scenarios call (test_* tools, test:// resources, test_* prompts),
// so this file implements exactly those fixtures, written from the requirement
// text each scenario prints (`conformance server --scenario X` on failure).
//
//   node interop/conformance-server.mjs [--port N]     (default 0 = pick a free port)
//
// Streamable HTTP at http://127.0.0.1:PORT/mcp, bound to 127.0.0.1 only, with
// sessions, resumability (event store + retry), DNS-rebinding protection.
// Prints one line "READY http://127.0.0.1:PORT/mcp" on stdout once listening.
// Runs on Node 20 or 22. Uses only @modelcontextprotocol/sdk from interop/node_modules.
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import {
  CallToolRequestSchema, ListToolsRequestSchema,
  ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ReadResourceRequestSchema,
  SubscribeRequestSchema, UnsubscribeRequestSchema,
  ListPromptsRequestSchema, GetPromptRequestSchema,
  CompleteRequestSchema, SetLevelRequestSchema,
  CreateMessageResultSchema, ElicitResultSchema,
  McpError, ErrorCode, isInitializeRequest,
} from "@modelcontextprotocol/sdk/types.js";

// ------------------------------------------------------------------ fixtures
// 1x1 red pixel PNG
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
// 8 kHz mono 16-bit PCM WAV, 8 silent samples
function tinyWav() {
  const samples = 8, dataLen = samples * 2, b = Buffer.alloc(44 + dataLen);
  b.write("RIFF", 0); b.writeUInt32LE(36 + dataLen, 4); b.write("WAVE", 8);
  b.write("fmt ", 12); b.writeUInt32LE(16, 16); b.writeUInt16LE(1, 20); b.writeUInt16LE(1, 22);
  b.writeUInt32LE(8000, 24); b.writeUInt32LE(16000, 28); b.writeUInt16LE(2, 32); b.writeUInt16LE(16, 34);
  b.write("data", 36); b.writeUInt32LE(dataLen, 40);
  return b.toString("base64");
}
const WAV = tinyWav();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t) => ({ type: "text", text: t });
const noArgs = { type: "object", properties: {} };

const TOOLS = [
  { name: "test_simple_text", description: "Returns simple text content", inputSchema: noArgs },
  { name: "test_image_content", description: "Returns image content", inputSchema: noArgs },
  { name: "test_audio_content", description: "Returns audio content", inputSchema: noArgs },
  { name: "test_embedded_resource", description: "Returns an embedded resource", inputSchema: noArgs },
  { name: "test_multiple_content_types", description: "Returns text, image and resource content", inputSchema: noArgs },
  { name: "test_tool_with_logging", description: "Sends 3 info log notifications while running", inputSchema: noArgs },
  { name: "test_error_handling", description: "Always fails with isError: true", inputSchema: noArgs },
  { name: "test_tool_with_progress", description: "Reports progress 0/50/100 of 100", inputSchema: noArgs },
  { name: "test_sampling", description: "Asks the client for LLM sampling",
    inputSchema: { type: "object", properties: { prompt: { type: "string", description: "The prompt to send to the LLM" } }, required: ["prompt"] } },
  { name: "test_elicitation", description: "Asks the client for user input",
    inputSchema: { type: "object", properties: { message: { type: "string", description: "The message to show the user" } }, required: ["message"] } },
  { name: "test_elicitation_sep1034_defaults", description: "Elicitation with defaults for all primitive types", inputSchema: noArgs },
  { name: "test_elicitation_sep1330_enums", description: "Elicitation with all enum schema variants", inputSchema: noArgs },
  { name: "test_reconnection", description: "Closes its SSE stream mid-call; the result arrives after the client reconnects", inputSchema: noArgs },
  { name: "json_schema_2020_12_tool", description: "Tool with JSON Schema 2020-12 features",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    } },
];

const RESOURCES = [
  { uri: "test://static-text", name: "static-text", description: "Static text resource", mimeType: "text/plain" },
  { uri: "test://static-binary", name: "static-binary", description: "Static binary resource (PNG)", mimeType: "image/png" },
  { uri: "test://watched-resource", name: "watched-resource", description: "Resource that can be subscribed to", mimeType: "text/plain" },
];
const TEMPLATES = [
  { uriTemplate: "test://template/{id}/data", name: "template-data", description: "Templated JSON resource", mimeType: "application/json" },
];
const PROMPTS = [
  { name: "test_simple_prompt", description: "A prompt without arguments" },
  { name: "test_prompt_with_arguments", description: "A prompt with two required arguments",
    arguments: [{ name: "arg1", description: "First test argument", required: true }, { name: "arg2", description: "Second test argument", required: true }] },
  { name: "test_prompt_with_embedded_resource", description: "A prompt embedding a resource",
    arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }] },
  { name: "test_prompt_with_image", description: "A prompt with image content" },
];
const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

// ------------------------------------------------------------------ one MCP server per session
function createServer() {
  const server = new Server(
    { name: "hermes-conformance-target", version: "1.0.0" },
    { capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true },
                      prompts: { listChanged: true }, logging: {}, completions: {} } },
  );
  let minLevel = "info";
  const subscriptions = new Set();

  server.setRequestHandler(SetLevelRequestSchema, async (req) => { minLevel = req.params.level; return {}; });
  const log = (extra, level, data) => LEVELS.indexOf(level) >= LEVELS.indexOf(minLevel)
    ? extra.sendNotification({ method: "notifications/message", params: { level, logger: "conformance-target", data } })
    : Promise.resolve();
  const elicit = (extra, params) => extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const args = req.params.arguments ?? {};
    switch (req.params.name) {
      case "test_simple_text":
        return { content: [text("This is a simple text response for testing.")] };
      case "test_image_content":
        return { content: [{ type: "image", data: PNG, mimeType: "image/png" }] };
      case "test_audio_content":
        return { content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] };
      case "test_embedded_resource":
        return { content: [{ type: "resource", resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." } }] };
      case "test_multiple_content_types":
        return { content: [text("Multiple content types test:"), { type: "image", data: PNG, mimeType: "image/png" },
          { type: "resource", resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: JSON.stringify({ test: "data", value: 123 }) } }] };
      case "test_tool_with_logging":
        await log(extra, "info", "Tool execution started"); await sleep(50);
        await log(extra, "info", "Tool processing data"); await sleep(50);
        await log(extra, "info", "Tool execution completed");
        return { content: [text("Tool with logging executed successfully")] };
      case "test_error_handling":
        return { isError: true, content: [text("This tool intentionally returns an error for testing")] };
      case "test_tool_with_progress": {
        const token = req.params._meta?.progressToken;
        for (const [i, p] of [0, 50, 100].entries()) {
          if (i) await sleep(50);
          if (token !== undefined) await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: p, total: 100 } });
        }
        return { content: [text("Tool with progress executed successfully")] };
      }
      case "test_sampling": {
        if (!server.getClientCapabilities()?.sampling) throw new McpError(ErrorCode.InvalidRequest, "Client does not support sampling");
        const r = await extra.sendRequest({ method: "sampling/createMessage", params: {
          messages: [{ role: "user", content: text(String(args.prompt ?? "")) }], maxTokens: 100 } }, CreateMessageResultSchema);
        return { content: [text(`LLM response: ${r.content?.type === "text" ? r.content.text : JSON.stringify(r.content)}`)] };
      }
      case "test_elicitation": {
        if (!server.getClientCapabilities()?.elicitation) throw new McpError(ErrorCode.InvalidRequest, "Client does not support elicitation");
        const r = await elicit(extra, { message: String(args.message ?? ""), requestedSchema: { type: "object",
          properties: { username: { type: "string", description: "User's response" }, email: { type: "string", description: "User's email address" } },
          required: ["username", "email"] } });
        return { content: [text(`User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`)] };
      }
      case "test_elicitation_sep1034_defaults": {
        const r = await elicit(extra, { message: "Please review and update the form fields with defaults", requestedSchema: { type: "object", properties: {
          name: { type: "string", description: "User name", default: "John Doe" },
          age: { type: "integer", description: "User age", default: 30 },
          score: { type: "number", description: "User score", default: 95.5 },
          status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
          verified: { type: "boolean", description: "Verification status", default: true },
        }, required: [] } });
        return { content: [text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`)] };
      }
      case "test_elicitation_sep1330_enums": {
        const r = await elicit(extra, { message: "Please select options from the enum fields", requestedSchema: { type: "object", properties: {
          untitledSingle: { type: "string", description: "Untitled single-select", enum: ["option1", "option2", "option3"] },
          titledSingle: { type: "string", description: "Titled single-select", oneOf: [
            { const: "value1", title: "First Option" }, { const: "value2", title: "Second Option" }, { const: "value3", title: "Third Option" }] },
          legacyEnum: { type: "string", description: "Legacy titled enum", enum: ["opt1", "opt2", "opt3"], enumNames: ["Option One", "Option Two", "Option Three"] },
          untitledMulti: { type: "array", description: "Untitled multi-select", items: { type: "string", enum: ["option1", "option2", "option3"] } },
          titledMulti: { type: "array", description: "Titled multi-select", items: { anyOf: [
            { const: "value1", title: "First Choice" }, { const: "value2", title: "Second Choice" }, { const: "value3", title: "Third Choice" }] } },
        }, required: [] } });
        return { content: [text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`)] };
      }
      case "test_reconnection":
        // Let the priming event go out, drop the POST stream, answer later:
        // the response is stored and replayed when the client GETs with Last-Event-ID.
        await sleep(50);
        extra.closeSSEStream?.();
        await sleep(200);
        return { content: [text("Reconnection test completed successfully")] };
      case "json_schema_2020_12_tool":
        return { content: [text(`Received: ${JSON.stringify(args)}`)] };
      default:
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const uri = req.params.uri;
    if (uri === "test://static-text") return { contents: [{ uri, mimeType: "text/plain", text: "This is the content of the static text resource." }] };
    if (uri === "test://static-binary") return { contents: [{ uri, mimeType: "image/png", blob: PNG }] };
    if (uri === "test://watched-resource") return { contents: [{ uri, mimeType: "text/plain", text: "Watched resource content." }] };
    const m = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
    if (m) return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify({ id: m[1], templateTest: true, data: `Data for ID: ${m[1]}` }) }] };
    throw new McpError(-32002, `Resource not found: ${uri}`);
  });
  server.setRequestHandler(SubscribeRequestSchema, async (req) => { subscriptions.add(req.params.uri); return {}; });
  server.setRequestHandler(UnsubscribeRequestSchema, async (req) => { subscriptions.delete(req.params.uri); return {}; });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS }));
  server.setRequestHandler(GetPromptRequestSchema, async (req) => {
    const a = req.params.arguments ?? {};
    switch (req.params.name) {
      case "test_simple_prompt":
        return { messages: [{ role: "user", content: text("This is a simple prompt for testing.") }] };
      case "test_prompt_with_arguments":
        return { messages: [{ role: "user", content: text(`Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'`) }] };
      case "test_prompt_with_embedded_resource":
        return { messages: [
          { role: "user", content: { type: "resource", resource: { uri: a.resourceUri ?? "test://example-resource", mimeType: "text/plain", text: "Embedded resource content for testing." } } },
          { role: "user", content: text("Please process the embedded resource above.") }] };
      case "test_prompt_with_image":
        return { messages: [{ role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
          { role: "user", content: text("Please analyze the image above.") }] };
      default:
        throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${req.params.name}`);
    }
  });
  server.setRequestHandler(CompleteRequestSchema, async (req) => {
    const pool = { arg1: ["paris", "park", "party", "test", "testing"], arg2: ["world", "work", "wonder"] }[req.params.argument.name] ?? [];
    const values = pool.filter((v) => v.startsWith(req.params.argument.value ?? ""));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  return server;
}

// ------------------------------------------------------------------ transport
class MemoryEventStore {
  events = new Map(); // eventId -> {streamId, message}
  async storeEvent(streamId, message) {
    const id = `${streamId}_${Date.now()}_${randomUUID().slice(0, 8)}`;
    this.events.set(id, { streamId, message });
    return id;
  }
  async getStreamIdForEventId(eventId) { return this.events.get(eventId)?.streamId; }
  async replayEventsAfter(lastEventId, { send }) {
    const streamId = this.events.get(lastEventId)?.streamId;
    if (!streamId) return "";
    let after = false;
    for (const [id, ev] of this.events) {
      if (id === lastEventId) { after = true; continue; }
      if (after && ev.streamId === streamId && Object.keys(ev.message).length) await send(id, ev.message);
    }
    return streamId;
  }
}

const argPort = process.argv.indexOf("--port");
const PORT = Number(argPort > 0 ? process.argv[argPort + 1] : (process.env.PORT ?? 0));
const HOST = "127.0.0.1";
const app = createMcpExpressApp({ host: HOST }); // rejects non-localhost Host headers (403)
const transports = new Map();

app.post("/mcp", async (req, res) => {
  const sid = req.headers["mcp-session-id"];
  try {
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport) {
      if (sid || !isInitializeRequest(req.body)) {
        res.status(sid ? 404 : 400).json({ jsonrpc: "2.0", error: { code: -32000, message: sid ? "Session not found" : "Bad Request: no valid session ID" }, id: null });
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new MemoryEventStore(),
        retryInterval: 500,
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => { if (transport.sessionId) transports.delete(transport.sessionId); };
      await createServer().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
  } catch (e) {
    if (!res.headersSent) res.status(500).json({ jsonrpc: "2.0", error: { code: -32603, message: String(e) }, id: null });
  }
});
const bySession = async (req, res) => {
  const transport = transports.get(req.headers["mcp-session-id"]);
  if (!transport) { res.status(req.headers["mcp-session-id"] ? 404 : 400).send("Invalid or missing session ID"); return; }
  await transport.handleRequest(req, res);
};
app.get("/mcp", bySession);
app.delete("/mcp", bySession);

const httpServer = app.listen(PORT, HOST, () => {
  console.log(`READY http://${HOST}:${httpServer.address().port}/mcp`);
});
httpServer.on("error", (e) => { console.error(e.message); process.exit(1); });
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => { httpServer.close(); process.exit(0); });
