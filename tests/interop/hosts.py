"""The MCP hosts tests/interop/test_hosts_live.py runs headless, from interop/hosts (pinned in its
package.json; ``make interop/hosts/.installed``), each in a HOME of its own and watched for the internet.

    host = HOSTS["gemini"](tmp_path)           # a fresh HOME (and XDG folders) under tmp_path
    host.attach(model_base)                    # its config: the scripted model, the switches
    await host.install(hub_url)                # `hermes-hub install gemini --url hub_url`
    run = await host.run(host.prompt("..."))    # under strace: fails if it tried to reach past loopback

Every host gets the switches its documentation gives for telemetry, update checks and other traffic;
what is left is caught by ``strace -f``: every connect, sendto, sendmsg and sendmmsg of the host and its
children (Node, Bun and Rust binaries alike; DNS lookups included) to an address outside loopback fails the
test, naming the address.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.interop.conftest import NODE22, Run, require, run
from tests.support import PROJECT

HOSTS_DIR = PROJECT / "interop" / "hosts"
BIN = HOSTS_DIR / "node_modules" / ".bin"
INSTALL = "run `make interop/hosts/.installed` (`make test` does it)"
TIMEOUT = 90  # seconds for one host command; each takes 1 to 5 s here
# an address in strace's rendering of a socket call: inet_addr("1.2.3.4") or inet_pton(AF_INET6, "::1", ...)
ADDRESS = re.compile(r'sin6?_port=htons\((\d+)\), (?:sin_addr=inet_addr\("([^"]+)"\)|'
                     r'sin6_flowinfo=[^,]+, inet_pton\(AF_INET6, "([^"]+)")')


def outbound(trace: str) -> list[str]:
    """The non-loopback addresses (``addr:port``) in an ``strace -e trace=connect,sendto,...`` log."""
    found = []
    for port, v4, v6 in ADDRESS.findall(trace):
        address = v4 or v6
        if not (address.startswith("127.") or address in ("::1", "::") or address.startswith("::ffff:127.")):
            found.append(f"{address}:{port}")
    return sorted(set(found))


def require_hosts() -> None:
    if shutil.which("strace") is None:
        pytest.fail("strace is not installed: `apt-get install strace` (.ci/run does it)", pytrace=False)
    missing = [name for name in ("claude", "gemini", "qwen", "codex", "opencode") if not (BIN / name).exists()]
    if missing:
        pytest.fail(f"the host CLIs are not installed (missing {', '.join(missing)} in {BIN}): {INSTALL}",
                    pytrace=False)


@dataclass
class Host:
    """One host CLI in a HOME of its own."""

    root: Path
    name: ClassVar[str]
    installs_as: ClassVar[str]  # its name to `hermes-hub install`
    prefix: ClassVar[str]  # what the host puts before the hub's tool names when it offers them to its model
    wire: ClassVar[str]  # the wire format it speaks to its model (tests/interop/models.py)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.work = self.root / "work"  # the folder it runs in, a project of nothing
        for folder in (self.home, self.work):
            folder.mkdir(parents=True, exist_ok=True)
        self.extra: dict[str, str] = {}

    def env(self) -> dict[str, str]:
        """A clean environment: nothing of the machine's but PATH's system folders."""
        h = self.home
        return {"HOME": str(h), "XDG_CONFIG_HOME": str(h / ".config"), "XDG_DATA_HOME": str(h / ".local/share"),
                "XDG_CACHE_HOME": str(h / ".cache"), "XDG_STATE_HOME": str(h / ".local/state"),
                "PATH": f"{Path(sys.executable).parent}:{BIN}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                "NO_COLOR": "1", "TERM": "dumb", "NO_PROXY": "127.0.0.1,localhost", **self.extra}

    def attach(self, model: str) -> None:
        """Write the host's config: its model at ``model``, its switches for telemetry and updates."""
        raise NotImplementedError

    async def install(self, hub: str) -> None:
        """Add the hub served at ``hub`` as ``hermes-hub install HOST --url`` writes it."""
        done = await run([sys.executable, "-m", "hermes_hub", "install", self.installs_as, "--url", hub], 60, self.env())
        assert done.code == 0, f"install {self.installs_as} --url {hub}: {done.err}"

    def listing(self) -> list[str]:
        return [str(BIN / self.name), "mcp", "list"]

    def logs(self) -> str:
        """The host's own log, where it keeps one (shown when a check fails)."""
        return ""

    def connected(self, out: str) -> bool:
        """Does ``mcp list`` say the hub is connected?"""
        return bool(re.search(r"hermes\b.*(connected|Connected)", out))

    def prompt(self, text: str) -> list[str]:
        raise NotImplementedError

    async def run(self, argv: list[str]) -> Run:
        """``argv`` under ``strace -f`` in the host's folder; fails on a non-zero exit or on any socket call
        to an address outside loopback, by the host or any child of it."""
        trace = self.root / f"strace-{len(list(self.root.glob('strace-*')))}.log"
        wrapped = ["strace", "-f", "-qq", "-tt", "-o", str(trace), "-e", "trace=connect,sendto,sendmsg,sendmmsg", *argv]
        done = await run(["sh", "-c", 'cd "$0" && exec "$@"', str(self.work), *wrapped], TIMEOUT, self.env())
        assert done.code == 0, f"{self.name} exited {done.code}: {argv}\n{done.out[-3000:]}\n{done.err[-3000:]}\n{self.logs()}"
        reached = outbound(trace.read_text(errors="replace"))
        assert not reached, f"{self.name} tried to reach the internet ({', '.join(reached)}): {argv}"
        return done


class ClaudeCode(Host):
    name, installs_as, prefix = "claude", "claude-code", "mcp__hermes__"
    wire = "anthropic"

    def env(self) -> dict[str, str]:
        return {**super().env(), "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
                "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "ENABLE_TOOL_SEARCH": "false",  # offer MCP tools to the model up front, not behind its tool search
                "MCP_CONNECTION_NONBLOCKING": "0",  # -p waits for its MCP servers (a stdio hub takes ~2 s)
                "ANTHROPIC_API_KEY": "sk-ant-scripted", **self.extra}

    def attach(self, model: str) -> None:
        self.extra["ANTHROPIC_BASE_URL"] = model

    def prompt(self, text: str) -> list[str]:
        return [str(BIN / "claude"), "-p", text, "--output-format", "json", "--allowedTools", "mcp__hermes"]


class GeminiCli(Host):
    name, installs_as, prefix = "gemini", "gemini", "mcp_hermes_"
    wire = "gemini"

    def attach(self, model: str) -> None:
        self.extra.update(GEMINI_API_KEY="scripted", GOOGLE_GEMINI_BASE_URL=model)
        _write(self.home / ".gemini" / "settings.json", {
            "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}})

    def prompt(self, text: str) -> list[str]:
        # a named model: "auto" would first ask a classifier model to route the prompt
        return [str(BIN / "gemini"), "-m", "gemini-2.5-flash", "-p", text, "--output-format", "json", "--yolo"]


class QwenCode(Host):
    name, installs_as, prefix = "qwen", "qwen", "mcp__hermes__"
    wire = "chat"

    def env(self) -> dict[str, str]:  # Qwen Code asks for Node 22 (its engines); the interop tools have it
        env = super().env()
        return {**env, "PATH": f"{NODE22.parent}:{env['PATH']}"}

    def attach(self, model: str) -> None:
        require(NODE22)
        self.extra.update(OPENAI_API_KEY="scripted", OPENAI_BASE_URL=f"{model}/v1", OPENAI_MODEL="qwen-scripted")
        _write(self.home / ".qwen" / "settings.json", {
            "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
            "general": {"enableAutoUpdate": False},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}})

    async def install(self, hub: str) -> None:
        await super().install(hub)
        path = self.home / ".qwen" / "settings.json"  # the hub's tools up front, not behind its tool_search bridge
        doc = json.loads(path.read_text())
        doc["mcpServers"]["hermes"]["alwaysLoadTools"] = True
        _write(path, doc)

    def listing(self) -> list[str]:
        return [str(NODE22), str(BIN / "qwen"), "mcp", "list"]

    def prompt(self, text: str) -> list[str]:
        return [str(NODE22), str(BIN / "qwen"), "-p", text, "--output-format", "json", "--yolo"]


class Codex(Host):
    name, installs_as, prefix = "codex", "codex", "mcp__hermes__"
    wire = "responses"

    def env(self) -> dict[str, str]:
        return {**super().env(), "CODEX_HOME": str(self.home / ".codex"), "SCRIPTED_API_KEY": "scripted"}

    def attach(self, model: str) -> None:
        path = self.home / ".codex" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'''model = "scripted"
model_provider = "scripted"
check_for_update_on_startup = false

[model_providers.scripted]
name = "scripted"
base_url = "{model}/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"

[features]
plugins = false  # else it syncs the curated plugins from github.com at start

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
''')

    def connected(self, out: str) -> bool:
        # `codex mcp list` shows the configuration (it connects to nothing): the hub's tools offered to the model
        # are what prove the connection (test_the_model_is_offered_the_hubs_tools...)
        return bool(re.search(r"^hermes\s+http://\S+/mcp\s.*\benabled\b", out, re.M))

    def prompt(self, text: str) -> list[str]:
        return [str(BIN / "codex"), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                "--json", text]


class Opencode(Host):
    name, installs_as, prefix = "opencode", "opencode", "hermes_"
    wire = "chat"

    def env(self) -> dict[str, str]:
        return {**super().env(), "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
                "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
                "OPENCODE_DISABLE_SHARE": "1"}

    def attach(self, model: str) -> None:
        config = self.home / ".config" / "opencode"
        _write(config / "opencode.json", {
            "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "Scripted",  # bundled in opencode
                                      "options": {"baseURL": f"{model}/v1", "apiKey": "scripted"},
                                      "models": {"scripted": {"name": "Scripted", "tool_call": True}}}},
            "model": "scripted/scripted", "small_model": "scripted/scripted", "autoupdate": False,
            "share": "disabled"})
        # opencode npm-installs its plugin SDK into each config folder at start unless that folder has a
        # node_modules and a lock naming it; no plugin is used here, so say it is there
        (config / "node_modules").mkdir(exist_ok=True)
        _write(config / "package-lock.json", {"packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}})

    async def install(self, hub: str) -> None:
        await super().install(hub)
        path = self.home / ".config" / "opencode" / "opencode.json"  # 30 s for the hub's answers, not 5, on a
        doc = json.loads(path.read_text())                              # machine busy with other tests
        doc["mcp"]["hermes"]["timeout"] = 30_000
        _write(path, doc)

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-3000:]
                         for p in (self.home / ".local/share/opencode/log").glob("*.log"))

    def prompt(self, text: str) -> list[str]:
        return [str(BIN / "opencode"), "run", "--format", "json", text]


HOSTS: dict[str, type[Host]] = {h.name: h for h in (ClaudeCode, GeminiCli, QwenCode, Codex, Opencode)}


def _write(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2))
