// The TypeScript MCP SDK's client OAuth against a served hub. Prints "AUTHORIZE <url>" and reads the
// code from stdin (the Python test fills the consent page in Chromium), then lists the tools and
// prints "TOOLS <names>". Usage: node ts_client.mjs MCP_URL CALLBACK_URL (NODE_PATH: interop/node_modules)
import { createInterface } from "node:readline";
import { createRequire } from "node:module";

const require = createRequire(process.env.NODE_PATH + "/");
const sdk = (p) => import(require.resolve("@modelcontextprotocol/sdk/" + p));
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { UnauthorizedError } = await sdk("client/auth.js");

const [url, callback] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const kept = {};
const provider = {
  get redirectUrl() { return callback; },
  get clientMetadata() {
    return { client_name: "TS Host", redirect_uris: [callback], grant_types: ["authorization_code", "refresh_token"],
             response_types: ["code"], token_endpoint_auth_method: "none" };
  },
  clientInformation: () => kept.client, saveClientInformation: (c) => { kept.client = c; },
  tokens: () => kept.tokens, saveTokens: (t) => { kept.tokens = t; },
  redirectToAuthorization: (u) => { console.log("AUTHORIZE " + u.toString()); },
  saveCodeVerifier: (v) => { kept.verifier = v; }, codeVerifier: () => kept.verifier,
};

const connect = async () => {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = new Client({ name: "ts-oauth-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
};
try {
  await connect();
  console.log("ERROR connected without signing in");
  process.exit(1);
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
}
const code = (await lines.next()).value.trim();
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
await transport.finishAuth(code);
const { client } = await connect();
const { tools } = await client.listTools();
console.log("TOOLS " + tools.map((t) => t.name).join(","));
console.log("TOKEN " + kept.tokens.access_token.slice(0, 4));
await client.close();
process.exit(0);
