"""The local wheel folders pip is configured with, which uv does not read by itself."""

from __future__ import annotations

import configparser
import os
import sys
from collections.abc import Mapping
from pathlib import Path


def pip_find_links(environ: Mapping[str, str] | None = None, home: Path | None = None) -> tuple[str, ...]:
    """``find-links`` from ``PIP_FIND_LINKS``, ``UV_FIND_LINKS`` and pip's config files, in pip's order."""
    environ = os.environ if environ is None else environ
    home = Path.home() if home is None else home
    links: list[str] = []
    for path in _pip_config_files(environ, home):
        links += _find_links_in(path)
    for variable in ("PIP_FIND_LINKS", "UV_FIND_LINKS"):
        links += environ.get(variable, "").replace(",", " ").split()
    return tuple(dict.fromkeys(links))


def _pip_config_files(environ: Mapping[str, str], home: Path) -> list[Path]:
    if "PIP_CONFIG_FILE" in environ:
        return [Path(environ["PIP_CONFIG_FILE"])]
    if sys.platform == "win32":
        appdata = Path(environ.get("APPDATA", home / "AppData" / "Roaming"))
        return [Path(environ.get("PROGRAMDATA", "C:/ProgramData")) / "pip" / "pip.ini", appdata / "pip" / "pip.ini"]
    xdg_dirs = environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(os.pathsep)
    config_home = Path(environ.get("XDG_CONFIG_HOME", home / ".config"))
    files = [Path(folder) / "pip" / "pip.conf" for folder in xdg_dirs if folder]
    files += [Path("/etc/pip.conf"), home / ".pip" / "pip.conf", config_home / "pip" / "pip.conf"]
    if sys.platform == "darwin":
        files.append(home / "Library" / "Application Support" / "pip" / "pip.conf")
    return files


def _find_links_in(path: Path) -> list[str]:
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (OSError, configparser.Error, UnicodeDecodeError):
        return []
    links: list[str] = []
    for section in ("global", "install"):
        for key in ("find-links", "find_links"):
            if parser.has_option(section, key):
                links += parser.get(section, key).split()
    return links
