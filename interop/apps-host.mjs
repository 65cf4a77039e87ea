// A headless MCP Apps host: @modelcontextprotocol/ext-apps's own host side (AppBridge) and view side
// (App), joined by an in-memory transport instead of an iframe, over a real MCP client.
//
//   node interop/apps-host.mjs '{"url": "http://127.0.0.1:PORT/mcp"} | {"command": ..., "args": [...]}'
//                              '{"mode": "legacy" | "2026-07-28", "calls": [{"name": ..., "arguments": {}}]}'
//
// Prints one JSON object: the tools listed, for each tool with a UI its resourceUri and what reading
// that URI returned, and what the view (the app's own code path) got for each call and each read
// of its UI. Used by tests/apps/test_examples.py to compare a server behind the hub with the same
// server reached directly.
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { App } from "@modelcontextprotocol/ext-apps";
import { AppBridge } from "@modelcontextprotocol/ext-apps/app-bridge";

const [target, options] = process.argv.slice(2).map((a) => JSON.parse(a));
const transport = target.url
  ? new StreamableHTTPClientTransport(new URL(target.url))
  : new StdioClientTransport({ command: target.command, args: target.args, env: { ...process.env, ...(target.env || {}) },
                               cwd: target.cwd, stderr: "inherit" });
const capabilities = {
  extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
};
const mode = options.mode === "legacy" ? undefined : { pin: options.mode };
const client = new Client({ name: "apps-host", version: "1.0.0" },
                          { capabilities, ...(mode ? { versionNegotiation: { mode } } : {}) });
await client.connect(transport);

const out = { protocolVersion: client.getNegotiatedProtocolVersion?.() ?? null, tools: [], uis: {}, view: {} };
const { tools } = await client.listTools();
for (const tool of tools) {
  out.tools.push({ name: tool.name, ui: tool._meta?.ui ?? null });
  const uri = tool._meta?.ui?.resourceUri;
  if (uri && !(uri in out.uis)) {
    const read = await client.readResource({ uri });
    out.uis[uri] = read.contents.map((c) => ({ uri: c.uri, mimeType: c.mimeType, text: c.text, _meta: c._meta ?? null }));
  }
}

// The view side: what the app's own code calls, through the host's bridge.
const bridge = new AppBridge(client, { name: "apps-host", version: "1.0.0" },
                             { serverTools: {}, serverResources: {}, openLinks: {}, logging: {} });
const [viewSide, hostSide] = InMemoryTransport.createLinkedPair();
await bridge.connect(hostSide);
const app = new App({ name: "view", version: "1.0.0" }, {}, { autoResize: false });  // no DOM to measure
await app.connect(viewSide);
out.view.hostInfo = app.getHostVersion?.() ?? null;
out.view.calls = [];
for (const call of options.calls || []) {
  try {
    const result = await app.callServerTool({ name: call.name, arguments: call.arguments || {} });
    out.view.calls.push({ name: call.name, isError: !!result.isError,
                          content: result.content, structuredContent: result.structuredContent ?? null });
  } catch (e) {
    out.view.calls.push({ name: call.name, error: String(e?.message ?? e) });
  }
}
out.view.reads = {};
for (const uri of Object.keys(out.uis)) {
  const read = await app.readServerResource({ uri });
  out.view.reads[uri] = read.contents.map((c) => ({ uri: c.uri, mimeType: c.mimeType, length: (c.text || "").length }));
}
await app.close();
await bridge.close();
await client.close();
// Exit only once the pipe took everything (a large HTML would be cut by an early exit).
process.stdout.write(JSON.stringify(out), () => process.exit(0));
