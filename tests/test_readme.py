"""The README is the front door: its examples run, its configs parse, every hub.json key is documented."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_hub.config import (
    AgentProfile,
    AgentSection,
    AuthSection,
    HubSection,
    MemorySection,
    ServerConfig,
    StorageSection,
    TokenEntry,
    ToolFilter,
    ToolsetConfig,
    parse_config,
)
from tests.support import PROJECT

README = (PROJECT / "README.md").read_text()


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_every_hub_json_key_is_documented_in_the_reference_tables():
    sections = (ServerConfig, ToolFilter, HubSection, StorageSection, AuthSection, TokenEntry, MemorySection,
                AgentSection, AgentProfile, ToolsetConfig)
    keys = {key for section in sections for key in section.model_fields}
    missing = [k for k in sorted(keys) if f"| `{k}` |" not in README]
    assert missing == []


@pytest.mark.parametrize("block", blocks("json"))
def test_every_json_example_is_a_valid_hub_config(block):
    import json

    parse_config(json.loads(block), env={})


def test_the_two_setup_commands_are_on_the_first_screen():
    first_screen = "\n".join(README.splitlines()[:25])
    assert "make serve" in first_screen and "make test" in first_screen


def matches(expected: list[str], actual: list[str]) -> bool:
    """``...`` alone skips any lines; a line ending in ``...`` matches by prefix; others exactly."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    if not actual:
        return False
    line = actual[0].rstrip()
    ok = line.startswith(head[:-3]) if head.endswith("...") else line == head.rstrip()
    return ok and matches(rest, actual[1:])


def console_examples() -> list[tuple[str, list[str]]]:
    out = []
    for block in blocks("console"):
        for chunk in block.split("$ ")[1:]:
            command, *expected = chunk.rstrip("\n").split("\n")
            out.append((command, expected))
    return out


@pytest.mark.parametrize("command, expected", console_examples(), ids=[c for c, _ in console_examples()])
def test_console_example_prints_what_the_readme_shows(command, expected, tmp_path: Path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "HERMES_DEMO_DATA": str(tmp_path), "COLUMNS": "200"}
    run = subprocess.run(command, shell=True, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120)
    actual = (run.stdout + run.stderr).splitlines()
    assert matches(expected, actual), f"$ {command}\n--- README\n" + "\n".join(expected) + \
        "\n--- actual\n" + "\n".join(actual)
