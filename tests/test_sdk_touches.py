"""The hub's reliance on the MCP SDK's private parts lives in ``hermes_hub/infra/sdk.py`` alone, checked
against the installed SDK's minor version: an upgrade is one file to read."""

from __future__ import annotations

import ast
from importlib.metadata import version
from pathlib import Path

import hermes_hub
from hermes_hub.infra import sdk

PACKAGE = Path(hermes_hub.__file__).parent
# The SDK objects' private members the touches use; nothing else in the hub may reach them.
PRIVATE_MEMBERS = {"_connection", "_entered", "_build_session", "_session", "_exit_stack"}


def _sdk_private_uses(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("mcp", "mcp_types"):
            found += [f"imports {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
            if any(part.startswith("_") for part in (node.module or "").split(".")):
                found.append(f"imports from {node.module}")
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_MEMBERS:
            found.append(f"uses .{node.attr} (line {node.lineno})")
        elif isinstance(node, ast.Constant) and node.value in PRIVATE_MEMBERS:
            found.append(f"names '{node.value}' (line {node.lineno})")
    return found


def test_no_module_but_sdk_py_reaches_the_sdks_private_parts():
    offenders = {str(p.relative_to(PACKAGE)): uses for p in sorted(PACKAGE.rglob("*.py"))
                 if p != PACKAGE / "infra" / "sdk.py"
                 if (uses := _sdk_private_uses(p))}
    assert offenders == {}, "move these touches into hermes_hub/infra/sdk.py, each with its docstring"


def test_the_touches_were_checked_against_the_installed_sdks_minor_version():
    installed = ".".join(version("mcp").split(".")[:2])
    assert installed == sdk.CHECKED_AGAINST, (
        f"mcp {version('mcp')} is installed; re-check each touch in hermes_hub/infra/sdk.py (its docstring names the "
        f"tests that break) and set CHECKED_AGAINST")


def test_every_touch_says_why_and_which_tests_break():
    for touch in (sdk.has_modern_envelope, sdk.enter_client, sdk.host_connection, sdk.stdio_streams,
                  sdk.session_user):
        doc = touch.__doc__ or ""
        assert "Why" in doc and "Breaks:" in doc, touch.__name__
    assert "SESSION_LOGGERS" in (sdk.__doc__ or "") and "mcp 2.3.0" in (sdk.__doc__ or "")
