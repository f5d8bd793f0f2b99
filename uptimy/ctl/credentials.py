"""Find the API URL and key: the environment first, then the file `uptimyctl login` writes (mode 0600)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_API_URL = "http://127.0.0.1:8000"  # what `make run` serves
KEY_VARIABLE = "UPTIMY_API_KEY"
URL_VARIABLE = "UPTIMY_API_URL"


@dataclass(frozen=True, slots=True)
class Credentials:
    api_url: str
    key: str | None
    source: str  # where the key came from, for messages (never the key itself)


def config_path(env: Mapping[str, str]) -> Path:
    """Return the login file: $XDG_CONFIG_HOME/uptimy/ctl.json, ~/.config/uptimy/ctl.json by default."""
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "uptimy" / "ctl.json"


def read(env: Mapping[str, str]) -> Credentials:
    """Return the API URL and key to use; the key is None when neither the environment nor a login has one."""
    saved: dict[str, str] = {}
    path = config_path(env)
    if path.is_file():
        try:
            loaded = json.loads(path.read_text())
        except (OSError, ValueError):
            loaded = {}
        saved = {k: v for k, v in loaded.items() if isinstance(v, str)} if isinstance(loaded, dict) else {}
    api_url = env.get(URL_VARIABLE) or saved.get("api_url") or DEFAULT_API_URL
    if env.get(KEY_VARIABLE):
        return Credentials(api_url, env[KEY_VARIABLE], KEY_VARIABLE)
    if saved.get("api_key"):
        return Credentials(api_url, saved["api_key"], str(path))
    return Credentials(api_url, None, "")


def write(env: Mapping[str, str], *, api_url: str, key: str) -> Path:
    """Save the URL and key to the login file, readable by its owner alone (0600, directory 0700)."""
    path = config_path(env)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    # O_CREAT's mode applies to a new file only: an older file keeps its mode unless set again.
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump({"api_url": api_url, "api_key": key}, out)
        out.write("\n")
    return path
