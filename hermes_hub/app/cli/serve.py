"""``hermes-hub serve``: the hub over streamable HTTP (default) or stdio."""

from __future__ import annotations

import atexit
import importlib.util
import logging
import shlex
import sys
from typing import TYPE_CHECKING

import anyio
import click

from hermes_hub.app.cli.command import fail, setup_logging
from hermes_hub.infra.errors import ConfigError

if TYPE_CHECKING:
    from hermes_hub.infra.config import HubConfig

log = logging.getLogger("hermes_hub")
_HAS_UVLOOP = importlib.util.find_spec("uvloop") is not None  # optional; measured ~15% less CPU per call


@click.command()
@click.option("--config", default="hub.json", show_default=True)
@click.option("--stdio", is_flag=True, help="serve over stdin/stdout (for hosts that spawn the hub)")
@click.option("--toolset", help="with --stdio: serve this toolset (hub.json 'toolsets') instead of the whole catalog")
@click.option("--host", help="HTTP address (default hub.host, 127.0.0.1)")
@click.option("--port", type=int, help="HTTP port (default hub.port, 8600)")
@click.option("-q", "--quiet", is_flag=True, help="log warnings only")
def serve(config: str, stdio: bool, toolset: str | None, host: str | None, port: int | None, quiet: bool) -> None:
    """Serve the hub over streamable HTTP (default) or stdio."""
    from hermes_hub.app.hub import Hub
    from hermes_hub.infra.telemetry.tracing import configure

    setup_logging(not quiet)
    # Spans over OTLP only when OTEL_* say where (docs/telemetry.md); decided before the hub is built, whose
    # servers keep the SDK's own request spans only then. ``stop_tracing`` flushes what is still batched.
    if (stop_tracing := configure()) is not None:
        atexit.register(stop_tracing)
    try:
        hub = Hub.from_file(config)  # reloads the file on SIGHUP and whenever it changes
    except ConfigError as e:
        fail(str(e), 2)
    cfg = hub.config
    if toolset is not None and toolset not in cfg.toolsets:
        fail(f"no toolset '{toolset}' in {config}; toolsets: {', '.join(cfg.toolsets) or 'none'}", 2)
    from hermes_hub.app.serving.presence import announce

    if stdio:
        from hermes_hub.app.serving.stdio import serve_stdio

        with announce(cfg, config, None):  # `restore` refuses to swap the store under a serving hub
            code = anyio.run(serve_stdio, hub, toolset, backend_options={"use_uvloop": _HAS_UVLOOP})
        sys.exit(code)
    if toolset is not None:
        fail(f"--toolset is for --stdio; over HTTP every toolset is served at /mcp/<name> "
              f"(here /mcp/{toolset})", 2)
    from hermes_hub.app.serving.app import build_app
    from hermes_hub.protocol.upstream import listener
    from hermes_hub.protocol.upstream.exposure import Exposure
    from hermes_hub.protocol.upstream.http11 import BoundedHead

    host = host or cfg.hub.host
    port = cfg.hub.port if port is None else port
    exposure = Exposure.decide(cfg, host, anyio.run(_has_tokens, cfg))  # once: it never changes while serving
    if (refusal := exposure.refusal()) is not None:
        fail(refusal.replace("hub.json", config), 2)
    try:  # bound before we say we serve: a taken port is one sentence naming --port and hub.port
        sock, port = listener.bind(host, port, config)
    except listener.CannotListen as e:
        fail(str(e), 2)
    base = (cfg.hub.public_url or f"http://{_reachable(host)}:{port}").rstrip("/")
    log.info("serving %d servers at %s/mcp; %s", len(cfg.enabled()), base, exposure.summary())
    log.info("status page: %s/status", base)  # the next steps, in the log's first lines
    log.info("add the hub to a host: hermes-hub install claude-code --config %s "
             "(or claude-desktop, cursor, vscode, gemini, qwen, windsurf, opencode, codex)", shlex.quote(config))
    # X-Forwarded-For is believed only from hub.trusted_proxies (uvicorn trusts 127.0.0.1 by default).
    proxies = list(exposure.trusted_proxies)
    with announce(cfg, config, f"http://{_reachable(host)}:{port}/mcp", token_required=exposure.required):  # commands find the hub serving this store (presence.py)
        listener.run(build_app(hub, exposure), sock, http=BoundedHead,
                     proxy_headers=bool(proxies), forwarded_allow_ips=proxies or None,
                     log_level="warning" if quiet else "info", loop="uvloop" if _HAS_UVLOOP else "asyncio")


async def _has_tokens(cfg: HubConfig) -> bool:
    from hermes_hub.services.identity import Authenticator, StaticToken
    from hermes_hub.infra.storage import open_store

    async with open_store(cfg.storage.url, base_dir=cfg.base_dir) as store:
        return await Authenticator(store, [StaticToken(t.token, t.user, t.role) for t in cfg.auth.tokens]).enabled()


def _reachable(host: str) -> str:
    """The address a browser on this machine uses for ``host`` (a wildcard bind answers on loopback)."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    return f"[{host}]" if ":" in host else host
