// Preload (node --require ./interop/loopback-only.cjs ...; the ./ is required) that forces every TCP
// server which would listen on all interfaces to bind 127.0.0.1 instead.
// Used for @modelcontextprotocol/server-everything's streamableHttp mode,
// whose app.listen(PORT) has no host option. Override with LISTEN_HOST.
"use strict";
const net = require("node:net");
const host = process.env.LISTEN_HOST || "127.0.0.1";
const orig = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "object" && args[0] !== null && !Array.isArray(args[0])) {
    if (args[0].port !== undefined && !args[0].host && !args[0].path) args[0] = { ...args[0], host };
  } else if ((typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0])))
             && (args.length === 1 || typeof args[1] !== "string")) {
    args.splice(1, 0, host);
  }
  return orig.apply(this, args);
};
