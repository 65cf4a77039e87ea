"""Timezones by IANA name, and the machine's own.

    zone("Asia/Shanghai")       # ZoneInfo('Asia/Shanghai'); ValueError naming what to write if unknown
    machine_zone()              # the machine's zone: $TZ, else /etc/localtime's name, else its fixed offset

``zoneinfo`` reads the system's tz database (Linux, macOS) or the ``tzdata`` package (Windows).
"""

from __future__ import annotations

import os
import zoneinfo
from datetime import datetime, tzinfo
from pathlib import Path

from hermes_hub.infra.config.sections import known_zone


def zone(name: str | None) -> tzinfo:
    """The zone ``name`` names; None: the machine's. A ValueError says which names work."""
    if name is None:
        return machine_zone()
    return zoneinfo.ZoneInfo(known_zone(name))


def machine_zone() -> tzinfo:
    for name in (os.environ.get("TZ", "").removeprefix(":"), _localtime_name()):
        if name:
            try:
                return zoneinfo.ZoneInfo(name)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                continue
    return datetime.now().astimezone().tzinfo or zoneinfo.ZoneInfo("UTC")


def zone_name(tz: tzinfo) -> str:
    """``Asia/Shanghai`` for a ZoneInfo; a fixed offset's own name (``UTC``, ``CET``) otherwise."""
    return getattr(tz, "key", None) or tz.tzname(None) or "UTC"


def _localtime_name() -> str | None:
    """``Europe/Berlin`` from the /etc/localtime link most Unix systems have."""
    try:
        target = str(Path("/etc/localtime").resolve())
    except OSError:
        return None
    _, found, name = target.partition("zoneinfo/")
    return name if found else None
