"""Which torch wheels exist: the package index's listing plus local find-links folders.

The index listing (PEP 691 JSON, or the PEP 503 HTML page) is fetched once,
cached on disk, refreshed after a day or when a requested release is missing
from it, and used from the cache when the index cannot be reached.
"""

from __future__ import annotations

import hashlib
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

from packaging.specifiers import Specifier
from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

from . import atomicfile
from .cachedir import cache_dir

PROJECT = "torch"
MAX_AGE_SECONDS = 24 * 3600
_JSON_ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"

Fetch = Callable[[str], tuple[str, str]]
"""Fetch a URL and return (content type, body); raises OSError when it cannot."""


@dataclass(frozen=True)
class Wheel:
    filename: str
    version: Version
    tags: frozenset[Tag]
    source: str

    def fits(self, platforms: Collection[str]) -> bool:
        """Whether this wheel installs on a machine with these platform tags."""
        return any(tag.platform in platforms for tag in self.tags)


@dataclass(frozen=True)
class Listing:
    """Every torch wheel known, and how fresh that knowledge is."""

    wheels: tuple[Wheel, ...]
    known: bool = True
    """False when the index could not be read and nothing was cached: nothing can be ruled out."""
    offline: bool = False
    """True when the index could not be reached just now."""
    notes: tuple[str, ...] = field(default=())

    def wheels_for(self, version: Version) -> tuple[Wheel, ...]:
        """The wheels that ``torch==version`` may install (``2.13.0`` admits ``2.13.0+cpu``)."""
        wanted = Specifier(f"=={version}")
        return tuple(wheel for wheel in self.wheels if wanted.contains(wheel.version, prereleases=True))

    def versions(self, platforms: Collection[str] | None = None) -> list[Version]:
        """Every release with at least one wheel (for ``platforms``, when given), oldest first."""
        return sorted(
            {Version(wheel.version.public) for wheel in self.wheels if platforms is None or wheel.fits(platforms)}
        )

    def missing(self, version: Version, platforms: Collection[str] | None = None) -> str:
        """Why ``version`` is not among :meth:`versions`, naming the releases on either side in version order."""
        if platforms is not None and version in self.versions():
            return f"torch {version} has no wheel for this platform"
        known = self.versions(platforms)
        below = [release for release in known if release < version]
        above = [release for release in known if release > version]
        if below and above:
            suggestion = f"; the releases around it are {below[-1]} and {above[0]}"
        elif below:
            suggestion = f"; the newest is {below[-1]}"
        elif above:
            suggestion = f"; the oldest is {above[0]}"
        else:
            suggestion = ""
        return f"the index lists no torch {version}{suggestion}"


def listing(
    index_url: str,
    find_links: Iterable[str] = (),
    *,
    wanted: Iterable[Version] = (),
    fetch: Fetch | None = None,
    cache: Path | None = None,
    now: float | None = None,
) -> Listing:
    """Torch wheels on ``index_url`` and in ``find_links``, refreshing the cache if ``wanted`` is not in it."""
    fetch = fetch or http_fetch
    cache = cache or cache_dir() / "index"
    now = time.time() if now is None else now
    index = _index_listing(index_url, set(wanted), fetch, cache, now)
    local = [wheel for link in find_links for wheel in _find_links_wheels(link, fetch)]
    return Listing(wheels=index.wheels + tuple(local), known=index.known, offline=index.offline, notes=index.notes)


def _index_listing(index_url: str, wanted: set[Version], fetch: Fetch, cache: Path, now: float) -> Listing:
    cache_file = cache / f"{hashlib.sha256(index_url.encode()).hexdigest()[:16]}-{PROJECT}.json"
    cached = _read_cache(cache_file)
    if cached is not None:
        wheels = _wheels(cached["files"], index_url)
        fresh = now - cached["fetched_at"] < MAX_AGE_SECONDS
        have = {Version(wheel.version.public) for wheel in wheels}
        if fresh and wanted <= have:
            return Listing(wheels)
    url = f"{index_url}/{PROJECT}/"
    try:
        content_type, body = fetch(url)
        files = _parse_index_page(content_type, body)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        reason = f"cannot read {url} ({_reason(exc)})"
        if cached is None:
            return Listing((), known=False, offline=True, notes=(f"{reason}; no cached listing either",))
        age = time.strftime("%Y-%m-%d %H:%M", time.localtime(cached["fetched_at"]))
        return Listing(wheels, offline=True, notes=(f"{reason}; using the listing cached {age}",))
    atomicfile.write_json(cache_file, {"url": url, "fetched_at": now, "files": files})
    return Listing(_wheels(files, index_url))


def _reason(exc: Exception) -> str:
    if isinstance(exc, urllib.error.URLError) and not isinstance(exc, urllib.error.HTTPError):
        return str(exc.reason)
    return str(exc)


def _read_cache(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data.get("files"), list) and isinstance(data.get("fetched_at"), (int, float)):
            return data
    except (OSError, ValueError, AttributeError):
        pass
    return None


def _wheels(filenames: Iterable[str], source: str) -> tuple[Wheel, ...]:
    wheels = []
    for filename in filenames:
        try:
            name, version, _build, tags = parse_wheel_filename(filename)
        except InvalidWheelFilename:
            continue
        if name == PROJECT:
            wheels.append(Wheel(filename, version, tags, source))
    return tuple(wheels)


def _parse_index_page(content_type: str, body: str) -> list[str]:
    if "json" in content_type:
        return [entry["filename"] for entry in json.loads(body)["files"]]
    return _anchor_filenames(body)


def _find_links_wheels(link: str, fetch: Fetch) -> list[Wheel]:
    if "://" not in link or link.startswith("file://"):
        folder = Path(unquote(urlparse(link).path) if link.startswith("file://") else link)
        return list(_wheels((path.name for path in folder.glob(f"{PROJECT}-*.whl")), str(folder)))
    try:
        _content_type, body = fetch(link)
    except OSError:
        return []
    return list(_wheels(_anchor_filenames(body), link))


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def _anchor_filenames(html: str) -> list[str]:
    parser = _Anchors()
    parser.feed(html)
    return [unquote(urlparse(href).path.rsplit("/", 1)[-1]) for href in parser.hrefs]


def reachable(index_url: str, timeout: float = 10.0) -> bool:
    """Whether the index answers now (asked when an install failed, to tell a dead network from other causes)."""
    request = urllib.request.Request(f"{index_url}/{PROJECT}/", headers={"User-Agent": "torchmatrix"})
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def http_fetch(url: str) -> tuple[str, str]:
    """GET ``url`` asking for the JSON simple API; (content type, text)."""
    request = urllib.request.Request(url, headers={"Accept": _JSON_ACCEPT, "User-Agent": "torchmatrix"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.headers.get("Content-Type", ""), response.read().decode("utf-8")
