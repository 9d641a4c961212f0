"""Which torch wheels exist: the package index's listing plus local find-links folders.

The index listing (PEP 691 JSON, or the PEP 503 HTML page) is fetched once,
cached on disk, refreshed after a day or when a requested release is missing
from it, and used from the cache when the index cannot be reached.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import time
import urllib.error
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

from ..util import atomicfile
from ..util.cachedir import cache_dir

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
        """Whether this wheel installs on a machine with these platform tags (a pure-Python wheel on any)."""
        return any(tag.platform in platforms or tag.platform == "any" for tag in self.tags)


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
        builds = self._by_release.get(Version(version.public), ())
        return tuple(wheel for wheel in builds if version.local is None or wheel.version == version)

    def versions(self, platforms: Collection[str] | None = None) -> list[Version]:
        """Every release with at least one wheel (for ``platforms``, when given), oldest first."""
        return sorted(
            release
            for release, builds in self._by_release.items()
            if platforms is None or any(wheel.fits(platforms) for wheel in builds)
        )

    @functools.cached_property
    def _by_release(self) -> dict[Version, tuple[Wheel, ...]]:
        """The wheels by public version (``2.13.0`` for ``2.13.0+cpu``), parsed once for every cell's questions."""
        grouped: dict[Version, list[Wheel]] = {}
        for wheel in self.wheels:
            grouped.setdefault(Version(wheel.version.public), []).append(wheel)
        return {release: tuple(builds) for release, builds in grouped.items()}

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


def dated(version: Version) -> str:
    """``2.6.0.dev20241001 (2024-10-01)``: a nightly build's version with the date it carries; others as they are."""
    digits = str(version.dev) if version.dev is not None else ""
    try:
        day = datetime.date(int(digits[:4]), int(digits[4:6]), int(digits[6:])) if len(digits) == 8 else None
    except ValueError:  # eight digits that are no date
        day = None
    return f"{version} ({day.isoformat()})" if day else str(version)


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
    found = [_find_links_wheels(link, fetch) for link in find_links]
    local = tuple(wheel for wheels, _ in found for wheel in wheels)
    unread = tuple(note for _, note in found if note)
    # A release the find-links have is no reason to fetch the index again: it may never list it (a nightly).
    index = _index_listing(index_url, set(wanted) - set(Listing(local).versions()), fetch, cache, now)
    notes = index.notes + unread
    return Listing(wheels=index.wheels + local, known=index.known, offline=index.offline, notes=notes)


def _index_listing(index_url: str, wanted: set[Version], fetch: Fetch, cache: Path, now: float) -> Listing:
    cache_file = cache / f"{hashlib.sha256(index_url.encode()).hexdigest()[:16]}-{PROJECT}.json"
    cached = _read_cache(cache_file)
    if cached is not None:
        wheels = _wheels(cached["files"], index_url)
        fresh = now - cached["fetched_at"] < MAX_AGE_SECONDS
        cached_listing = Listing(wheels)
        if fresh and wanted <= set(cached_listing.versions()):
            return cached_listing
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
    try:
        atomicfile.write_json(cache_file, {"url": url, "fetched_at": now, "files": files})
    except OSError as exc:  # a cache folder that cannot be written only costs the index's next answer
        note = f"cannot keep the listing in {cache_file} ({exc.strerror or exc}): the index is read again next time"
        return Listing(_wheels(files, index_url), notes=(note,))
    return Listing(_wheels(files, index_url))


def _reason(exc: Exception) -> str:
    if isinstance(exc, urllib.error.URLError) and not isinstance(exc, urllib.error.HTTPError):
        return str(exc.reason)
    return str(exc)


def _read_cache(path: Path) -> dict[str, Any] | None:
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


def _find_links_wheels(link: str, fetch: Fetch) -> tuple[list[Wheel], str]:
    """The torch wheels of a find-links folder or page, and a note if it cannot be read ('' if it can)."""
    if "://" not in link or link.startswith("file://"):
        folder = Path(unquote(urlparse(link).path) if link.startswith("file://") else link)
        if not folder.is_dir():
            return [], f"find-links {link}: no such folder, so no wheels from there"
        return list(_wheels((path.name for path in folder.glob(f"{PROJECT}-*.whl")), str(folder))), ""
    try:
        _content_type, body = fetch(link)
    except OSError as exc:
        return [], f"find-links {link}: cannot be read ({_reason(exc)}), so no wheels from there"
    return list(_wheels(_anchor_filenames(body), link)), ""


def _anchor_filenames(html: str) -> list[str]:
    from html.parser import HTMLParser  # noqa: PLC0415 - only an HTML page needs it; every start would pay

    hrefs: list[str] = []

    class Anchors(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            href = dict(attrs).get("href")
            if tag == "a" and href:
                hrefs.append(href)

    Anchors().feed(html)
    return [unquote(urlparse(href).path.rsplit("/", 1)[-1]) for href in hrefs]


def reachable(index_url: str, timeout: float = 10.0) -> bool:
    """Whether the index answers now (asked when an install failed, to tell a dead network from other causes)."""
    import urllib.request  # noqa: PLC0415 - with ssl, 15 ms that a start from the cached listing does not need

    request = urllib.request.Request(f"{index_url}/{PROJECT}/", headers={"User-Agent": "torchmatrix"})
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def http_fetch(url: str) -> tuple[str, str]:
    """GET ``url`` asking for the JSON simple API; (content type, text)."""
    import urllib.request  # noqa: PLC0415 - see reachable()

    request = urllib.request.Request(url, headers={"Accept": _JSON_ACCEPT, "User-Agent": "torchmatrix"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.headers.get("Content-Type", ""), response.read().decode("utf-8")
