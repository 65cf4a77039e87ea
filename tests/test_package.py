"""The package's public names, and a command line that starts without importing the whole hub."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import hermes_hub
from tests.support import PROJECT


def test_the_public_names_are_pinned_and_each_resolves():
    assert hermes_hub.__all__ == ["ConfigError", "Hub", "HubConfig", "HubError", "__version__", "load_config"]
    from hermes_hub.infra.config import HubConfig, load_config
    from hermes_hub.infra.errors import ConfigError, HubError
    from hermes_hub.app.hub import VERSION, Hub

    assert [getattr(hermes_hub, n) for n in hermes_hub.__all__] == [ConfigError, Hub, HubConfig, HubError, VERSION,
                                                                     load_config]
    assert set(hermes_hub.__all__) <= set(dir(hermes_hub))


def test_an_unknown_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="module 'hermes_hub' has no attribute 'Hubb'"):
        hermes_hub.Hubb  # noqa: B018


def test_loading_the_command_line_imports_neither_the_hub_nor_the_sdk():
    probe = ("import json, sys; import hermes_hub.app.cli; "
             "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'pydantic', 'httpx2', "
             "'starlette', 'uvicorn') or m in ('hermes_hub.app.hub', 'hermes_hub.infra.config', 'hermes_hub.app.cli.target'))))")
    run = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == []


def test_help_lists_every_command_and_a_command_still_loads_what_it_needs():
    help_run = subprocess.run([sys.executable, "-m", "hermes_hub", "--help"], cwd=PROJECT, capture_output=True,
                              text=True, timeout=60)
    version = subprocess.run([sys.executable, "-m", "hermes_hub", "--version"], cwd=PROJECT, capture_output=True,
                             text=True, timeout=60)
    assert help_run.returncode == 0 and version.returncode == 0
    commands = help_run.stdout.split("Commands:")[1].split()
    for command in ("audit", "call", "chat", "check", "prompt", "prompts", "read", "resources", "servers", "serve", "token",
                    "tools"):
        assert command in commands
    assert version.stdout.strip().endswith(hermes_hub.__version__)
