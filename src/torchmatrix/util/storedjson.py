"""The JSON files of a folder that holds whatever was copied into it, read without trusting them.

A results folder (``<output>/results/<machine>/<name>.json``) and bisect's
summaries (``<output>/bisect/<machine>/<name>.json``) hold files from any
machine, so :func:`read` reads only regular files that lie in the folder (a
link may point elsewhere in it, not out of it), at most
:data:`MAX_FILE_BYTES` of them, opened without waiting (a FIFO never blocks
it), with names that are text; and parses only strict UTF-8 JSON whose
integers have at most :data:`MAX_INT_DIGITS` digits, whose floats are finite,
whose strings hold no lone surrogate and whose nesting stays within
:data:`MAX_DEPTH`. :func:`read_each` reads every file of such a folder and
names each it refuses; the ``checked*`` functions check a field's type.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from packaging.version import InvalidVersion, Version

T = TypeVar("T")


MAX_FILE_BYTES = 8 << 20
"""The most a result file may hold. A normal one is a few KB; the worker caps a record's metrics at 1 MiB of
compact JSON, which the indented file can hold several times over; a file of tens of MB is no result."""


MAX_DEPTH = 64
"""How deep lists and objects may nest in a result file. The worker nests metrics at most 21 deep (25 in the
file); deeper data would only endanger the code that walks it (renderers recurse)."""


MAX_INT_DIGITS = 20
"""The most digits an integer in a result file may have: enough for any 64-bit integer (torch has no wider),
and every such integer converts to a float."""


def read(path: Path) -> Any:
    """The JSON of ``<folder>/<machine>/<name>.json``, read with every limit of the module's docstring; its seal is
    its reader's to check (:func:`unsealed`), once it knows the file is of a schema it reads.

    Raises OSError or ValueError naming what is wrong.
    """
    _check_name(path)
    return _parse(_contents(path))


SEAL = "content_sha256"
"""The key of a stored object's seal: the sha256 of the rest of it (:func:`sealed`)."""


def sealed(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its seal, the sha256 of its content as :func:`unsealed` checks it: a file edited after
    torchmatrix wrote it (an outcome changed by hand, a merge that kept half of two versions) is refused, never
    shown."""
    return {**data, SEAL: _content_digest(data)}


def unsealed(data: Any) -> Any:
    """``data`` less its seal where it has one, which must be its content's; as it is where it has none (written
    before files were sealed). Raises ValueError for a seal that is not its content's.

    A seal tells an edit, not who made it: anyone can seal what they wrote, as torchmatrix does.
    """
    if not isinstance(data, dict) or SEAL not in data:
        return data
    content = {key: value for key, value in data.items() if key != SEAL}
    if data[SEAL] != _content_digest(content):
        raise ValueError(
            f"it was changed after torchmatrix wrote it: its {SEAL} is not its content's sha256; "
            "run what made it again, or delete the file"
        )
    return content


def _content_digest(data: dict[str, Any]) -> str:
    """The sha256 of ``data`` as canonical JSON: keys sorted, no spaces, text as UTF-8."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_name(path: Path) -> None:
    """Raise unless the file's name and its folder's are text: reports name the file a result came from."""
    try:
        f"{path.parent.name}/{path.name}".encode()
    except UnicodeEncodeError:  # bytes that are no UTF-8, which Python holds as lone surrogates
        raise ValueError("its name is not UTF-8 text") from None


# Non-blocking: opening a FIFO for reading would wait for a writer forever. The target is resolved already,
# so a link in its last component can only be one swapped in since: not followed.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


_NOT_REGULAR = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _contents(path: Path) -> bytes:
    """The bytes of ``path``, if it is a regular file inside its results folder and small enough to be a result."""
    target = Path(os.path.realpath(path))
    if not target.is_relative_to(os.path.realpath(path.parent.parent)):
        # Quoted as Python writes strings, like every text from a file in a reason: one line, whatever it holds.
        raise ValueError(f"a link to {str(target)!r}, outside the results folder")
    fd = os.open(target, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _NOT_REGULAR if test(info.st_mode)), "something else")
            raise ValueError(f"not a regular file but {kind}")
        if info.st_size > MAX_FILE_BYTES:
            raise _too_big()
        with open(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_FILE_BYTES + 1)  # a file may have grown since, or lie about its size
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise _too_big()
    return data


def _too_big() -> ValueError:
    return ValueError(
        f"larger than a result file may be ({MAX_FILE_BYTES >> 20} MiB, where a record's metrics are at most "
        "1 MiB): no torchmatrix result; move it out of the results folder"
    )


def _parse(data: bytes) -> Any:
    """``data`` as strict JSON of the shape a result can have (see the module's docstring)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    try:
        value = json.loads(text, parse_int=_integer, parse_float=_finite_float, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at line {exc.lineno}); truncated?") from None
    except RecursionError:  # nested deeper than the parser can go, which is far deeper than MAX_DEPTH
        raise _too_deep() from None
    _check_depth(value)
    if SURROGATE_ESCAPE.search(text) and text_only(value) != value:  # within MAX_DEPTH: text_only may recurse
        raise ValueError("a string holds a lone UTF-16 surrogate (an escape such as \\ud800): not text")
    return value


SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""How JSON writes a UTF-16 surrogate: only a text holding one can hold a lone one, which is no text."""
_SURROGATE = re.compile("[\ud800-\udfff]")  # JSON reads a pair of surrogate escapes as one character


def text_only(value: Any) -> Any:
    """``value`` with each lone surrogate of its strings (JSON's ``"\\ud800"``) replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [text_only(item) for item in value]
    if isinstance(value, dict):
        return {text_only(key): text_only(item) for key, item in value.items()}
    return value


def _integer(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {digits} digits (at most {MAX_INT_DIGITS}, as a 64-bit integer has)")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        shown = text if len(text) <= 30 else text[:20] + "…"
        raise ValueError(f"the number {shown} is too large for a float")
    return value


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON (torchmatrix stores non-finite numbers as the strings 'nan', 'inf')")


def _check_depth(value: Any) -> None:
    """Raise if lists and objects nest deeper than MAX_DEPTH in ``value``; without recursing, as it may be deep."""
    pending = [(value, 1)] if type(value) in (dict, list) else []
    while pending:
        item, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise _too_deep()
        children = item.values() if type(item) is dict else item
        pending.extend((child, depth + 1) for child in children if type(child) in (dict, list))


def _too_deep() -> ValueError:
    return ValueError(f"lists and objects nested more than {MAX_DEPTH} deep")


def read_each(folder: Path, reader: Callable[[Path], T]) -> tuple[list[T], list[str]]:
    """``reader`` of every ``<folder>/<machine>/<name>.json`` (no hidden file); a warning for each it refuses."""
    found: list[T] = []
    warnings: list[str] = []
    for path in sorted(_files(folder)):
        try:
            found.append(reader(path))
        except (OSError, ValueError) as exc:
            warnings.append(f"skipping {path}: {exc}")
    return found, warnings


def _files(folder: Path) -> Iterable[Path]:
    if not folder.is_dir():
        return []
    return (path for path in folder.glob("*/*.json") if not path.name.startswith("."))


# --- the fields of a file read --------------------------------------------------------------

_JSON_TYPES = {str: "a string", list: "a list", dict: "an object", bool: "a boolean", type(None): "null"}


def checked(data: dict[str, Any], key: str, kind: type | tuple[type, ...], optional: bool = False) -> Any:
    """``data[key]`` if it is of ``kind`` (numbers never booleans; None when ``optional``), else ValueError."""
    if key not in data:
        raise ValueError(f"no {key!r}")
    value = data[key]
    if value is None and optional:
        return None
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        got = _JSON_TYPES.get(type(value), "a number")
        raise ValueError(f"{key!r} is {got}")
    return value


def checked_version(data: dict[str, Any], key: str) -> str:
    """``data[key]``, a string that is a PEP 440 version (one that is not would sort and match as no release)."""
    text = checked(data, key, str)
    try:
        Version(text)
    except InvalidVersion:
        raise ValueError(f"{key!r} is not a version: {text!r}") from None
    return text


def checked_time(data: dict[str, Any], key: str) -> str:
    """``data[key]``, a string that is an ISO 8601 time with a UTC offset (as results.now_iso writes)."""
    text = checked(data, key, str)
    if _moment(text) is None:
        raise ValueError(f"{key!r} is not an ISO 8601 time with a UTC offset: {text!r}")
    return text


def moment(text: str) -> datetime:
    """The ISO 8601 time ``text`` (with its offset) as a time; the oldest there is when it is none."""
    return _moment(text) or _NEVER


_NEVER = datetime.min.replace(tzinfo=timezone.utc)


def _moment(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    # A time without an offset cannot be compared with one that has one, nor placed on another machine's clock.
    return moment if moment.utcoffset() is not None else None
