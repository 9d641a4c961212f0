"""Interpreter discovery on real interpreters (no network): each candidate is asked what it is, once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from torchmatrix.interpreters import candidates, discover

pytestmark = pytest.mark.integration


HOST_VERSION = tuple(sys.version_info[:3])


def fake_pyenv(tmp_path: Path) -> Path:
    """A pyenv root whose one version is this test's own interpreter."""
    bin_dir = tmp_path / "pyenv" / "versions" / "9.9.9" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(os.path.realpath(sys.executable))
    return tmp_path / "pyenv"


def test_pyenv_versions_are_found_without_being_on_path(tmp_path: Path) -> None:
    found = discover({"PATH": str(tmp_path / "empty"), "PYENV_ROOT": str(fake_pyenv(tmp_path))}, tmp_path / "c.json")
    assert [(python.version, python.source) for python in found if python.version == HOST_VERSION] == [
        (HOST_VERSION, "pyenv")
    ]
    assert found[0].path == os.path.realpath(sys.executable)


def test_an_interpreter_in_a_venv_stands_for_its_base(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    found = discover(
        {"PATH": str(tmp_path / "venv" / "bin"), "PYENV_ROOT": str(tmp_path / "none")}, tmp_path / "c.json"
    )
    paths = {python.path for python in found}
    assert not any(str(tmp_path / "venv") in path for path in paths)


def test_answers_are_cached_and_not_asked_again(tmp_path: Path) -> None:
    environ = {"PATH": str(tmp_path / "empty"), "PYENV_ROOT": str(fake_pyenv(tmp_path))}
    discover(environ, tmp_path / "cache.json")
    cached = (tmp_path / "cache.json").read_text()
    assert '"implementation": "CPython"' in cached
    assert discover(environ, tmp_path / "cache.json")[0].version == HOST_VERSION


def without_ensurepip(tmp_path: Path) -> Path:
    """A copy of this test's interpreter whose own standard library is the real one less ensurepip, as Debian's and
    Ubuntu's Pythons are without their pythonX.Y-venv package: ``python -m venv`` fails there."""
    prefix = tmp_path / "debian"
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    (prefix / "lib" / stdlib.name).mkdir(parents=True)
    for entry in stdlib.parent.iterdir():  # the shared libpython the copy may load from beside it, too
        if entry != stdlib:
            (prefix / "lib" / entry.name).symlink_to(entry)
    for entry in stdlib.iterdir():
        if entry.name != "ensurepip":
            (prefix / "lib" / stdlib.name / entry.name).symlink_to(entry)
    (prefix / "bin").mkdir()
    python = prefix / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    shutil.copy2(os.path.realpath(sys.executable), python)
    return python


def test_a_python_without_ensurepip_is_found_and_says_its_environments_are_left_unseeded(tmp_path: Path) -> None:
    python = without_ensurepip(tmp_path)
    venv = subprocess.run([str(python), "-m", "venv", str(tmp_path / "venv")], capture_output=True, text=True)
    assert venv.returncode != 0, "the stand-in is no Python without ensurepip"
    [found] = discover({"PATH": str(python.parent), "PYENV_ROOT": str(tmp_path / "none")}, tmp_path / "c.json")
    assert (found.path, found.seed, found.ensurepip) == (str(python), (), False)
    minor = found.minor
    assert found.why_unseeded.startswith(
        f"python{minor} at {python} has no ensurepip (Debian, Ubuntu: apt install python{minor}-venv): "
    )
    [host] = discover({"PATH": str(tmp_path / "empty"), "PYENV_ROOT": str(fake_pyenv(tmp_path))}, tmp_path / "d.json")
    assert (host.ensurepip, host.why_unseeded) == (True, "")


def test_a_broken_candidate_is_passed_over(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    broken = bin_dir / "python3.8"
    broken.write_text("#!/bin/sh\necho 'pyenv: python3.8: command not found' >&2; exit 127\n")
    broken.chmod(0o755)
    assert discover({"PATH": str(bin_dir), "PYENV_ROOT": str(tmp_path / "none")}, tmp_path / "c.json") == []


def test_uv_managed_pythons_are_found_in_uvs_install_folder(tmp_path: Path) -> None:
    installs = tmp_path / "uv-pythons"
    executable = installs / "cpython-9.9.9-linux-x86_64-gnu" / "bin" / "python3"
    executable.parent.mkdir(parents=True)
    executable.symlink_to(os.path.realpath(sys.executable))
    (installs / ".lock").write_text("")  # uv's own bookkeeping, not a Python
    environ = {
        "PATH": str(tmp_path / "empty"),
        "PYENV_ROOT": str(tmp_path / "none"),
        "UV_PYTHON_INSTALL_DIR": str(installs),
    }
    assert candidates(environ) == [("uv", str(executable))]
    assert [(python.version, python.source) for python in discover(environ, tmp_path / "c.json")] == [
        (HOST_VERSION, "uv")
    ]


def test_uvs_install_folder_is_remembered_until_what_uv_derives_it_from_changes(tmp_path: Path) -> None:
    installs = tmp_path / "uv-pythons"
    executable = installs / "cpython-9.9.9-linux-x86_64-gnu" / "bin" / "python3"
    executable.parent.mkdir(parents=True)
    executable.symlink_to(os.path.realpath(sys.executable))
    environ = {"PATH": str(tmp_path / "empty"), "PYENV_ROOT": str(tmp_path / "none")}
    cache = tmp_path / "c.json"
    assert [python.source for python in discover({**environ, "UV_PYTHON_INSTALL_DIR": str(installs)}, cache)] == ["uv"]
    assert discover({**environ, "UV_PYTHON_INSTALL_DIR": str(tmp_path / "elsewhere")}, cache) == []
    remembered = [key for key in json.loads(cache.read_text()) if key.endswith(" python dir")]
    assert len(remembered) == 1


def installed(env: Path) -> tuple[str, ...]:
    """``name==version`` of every distribution in ``env``'s site-packages."""
    infos = env.glob("lib/python*/site-packages/*.dist-info")
    return tuple(sorted("==".join(info.name.removesuffix(".dist-info").split("-", 1)) for info in infos))


def test_each_interpreters_seed_is_what_python_m_venv_installs(tmp_path: Path) -> None:
    environ = {"PATH": str(tmp_path / "empty"), "PYENV_ROOT": os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))}
    found = {python.minor: python for python in discover(environ, tmp_path / "c.json")}
    asked = [found[minor] for minor in ("3.11", "3.12") if minor in found] or [
        python for python in found.values() if python.path == os.path.realpath(sys.executable)
    ]
    assert asked, "no interpreter to ask"
    for python in asked:
        env = tmp_path / f"venv-{python.minor}"
        subprocess.run([python.path, "-m", "venv", str(env)], check=True, capture_output=True)
        assert python.seed == installed(env), python
    names = {
        minor: {seeded.split("==")[0] for seeded in found[minor].seed} for minor in ("3.11", "3.12") if minor in found
    }
    assert names.get("3.11", {"pip", "setuptools"}) == {"pip", "setuptools"}  # 3.11 and older bundle setuptools
    assert names.get("3.12", {"pip"}) == {"pip"}  # 3.12 and newer, pip alone


DEBIAN_ENSUREPIP = """
import os, sys


def _run_pip(args, additional_paths=None):
    raise AssertionError("pip is run by the query's stand-in")


def bootstrap(*, root=None, upgrade=False, user=False, altinstall=False, default_pip=False, verbosity=0):
    # Debian's and Ubuntu's guard: refused in the system's Python, allowed in an environment of it
    if not hasattr(sys, "real_prefix") and sys.prefix == getattr(sys, "base_prefix", sys.prefix):
        print("ensurepip is disabled in Debian/Ubuntu for the system python.")
        sys.exit(1)
    names = ["setuptools-66.1.1-py3-none-any.whl", "pip-23.0.1-py3-none-any.whl"]
    return _run_pip(["install"], [os.path.join("/usr/share/python-wheels", name) for name in names])
"""


def test_a_debian_python_is_found_and_asked_its_seed_as_in_a_new_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Debian's and Ubuntu's system Python (``/usr/bin/python3.11`` with python3.11-venv) seeds an environment with
    the wheels of ``/usr/share/python-wheels``, but its ensurepip exits in the system's Python itself: asked as in a
    new environment, as ``python -m venv`` asks it, it names them, and the Python is found, never passed over.
    Debian's own, where this machine has it; a stand-in of its ensurepip in this test's Python everywhere."""
    (tmp_path / "fake" / "ensurepip").mkdir(parents=True)
    (tmp_path / "fake" / "ensurepip" / "__init__.py").write_text(DEBIAN_ENSUREPIP)
    environ = {"PATH": str(tmp_path / "empty"), "PYENV_ROOT": str(fake_pyenv(tmp_path))}
    with monkeypatch.context() as patched:
        patched.setenv("PYTHONPATH", str(tmp_path / "fake"))
        found = discover(environ, tmp_path / "c.json")
    assert [python.seed for python in found if python.version == HOST_VERSION] == [
        ("pip==23.0.1", "setuptools==66.1.1")
    ]
    debian = Path("/usr/bin/python3")
    ensurepip = subprocess.run(
        [str(debian), "-I", "-c", "import ensurepip; print(ensurepip.__file__)"], capture_output=True, text=True
    ).stdout.strip() if debian.exists() else ""  # fmt: skip
    if not ensurepip or "disabled in Debian" not in Path(ensurepip).read_text():
        return
    [system] = discover({"PATH": str(debian.parent), "PYENV_ROOT": str(tmp_path / "none")}, tmp_path / "d.json")
    subprocess.run([system.path, "-m", "venv", str(tmp_path / "venv")], check=True, capture_output=True)
    assert system.seed == installed(tmp_path / "venv") != ()


WHEEL_FOLDER_ENSUREPIP = """
import os, sys

_WHEEL_PKG_DIR = os.environ["FAKE_WHEEL_PKG_DIR"]


def _run_pip(args, additional_paths=None):
    raise AssertionError("pip is run by the query's stand-in")


def bootstrap(*, root=None, upgrade=False, user=False, altinstall=False, default_pip=False, verbosity=0):
    names = sorted(os.listdir(_WHEEL_PKG_DIR))
    return _run_pip(["install"], [os.path.join(_WHEEL_PKG_DIR, name) for name in names])
"""


def test_a_wheel_of_the_folder_ensurepip_seeds_from_replaced_is_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A distribution's update of the wheels ``python -m venv`` seeds with (Debian's ``python3-pip-whl`` in
    ``/usr/share/python-wheels``) leaves the interpreter's executable as it was: the kept answer is asked again, and
    the seed is the new one, not the one the cache remembers."""
    (tmp_path / "fake" / "ensurepip").mkdir(parents=True)
    (tmp_path / "fake" / "ensurepip" / "__init__.py").write_text(WHEEL_FOLDER_ENSUREPIP)
    wheels = tmp_path / "python-wheels"
    wheels.mkdir()
    (wheels / "pip-23.0.1-py3-none-any.whl").write_bytes(b"old")
    (wheels / "setuptools-66.1.1-py3-none-any.whl").write_bytes(b"old")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "fake"))
    monkeypatch.setenv("FAKE_WHEEL_PKG_DIR", str(wheels))
    environ = {"PATH": str(tmp_path / "empty"), "PYENV_ROOT": str(fake_pyenv(tmp_path))}

    def seed() -> tuple[str, ...]:
        [found] = [python.seed for python in discover(environ, tmp_path / "c.json") if python.version == HOST_VERSION]
        return found

    assert seed() == ("pip==23.0.1", "setuptools==66.1.1")
    assert seed() == ("pip==23.0.1", "setuptools==66.1.1")
    (wheels / "pip-23.0.1-py3-none-any.whl").unlink()
    (wheels / "pip-26.0.1-py3-none-any.whl").write_bytes(b"new")
    assert seed() == ("pip==26.0.1", "setuptools==66.1.1")
