"""The wheel listing: parsed from the index, cached, refreshed, and used offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.version import Version

from torchmatrix.index import releases

from ..conftest import DATA

INDEX = "https://pypi.example/simple"
RECORDED = (DATA / "pypi-torch-simple.json").read_text()


class Index:
    """A stand-in for the index: serves the recorded page, or fails like a dead network."""

    def __init__(self, body: str = RECORDED, content_type: str = "application/vnd.pypi.simple.v1+json") -> None:
        self.body, self.content_type, self.calls, self.down = body, content_type, 0, False

    def __call__(self, url: str) -> tuple[str, str]:
        self.calls += 1
        if self.down:
            raise OSError("network is unreachable")
        assert url == f"{INDEX}/torch/"
        return self.content_type, self.body


def test_the_listing_is_parsed_with_packaging(tmp_path: Path) -> None:
    listing = releases.listing(INDEX, fetch=Index(), cache=tmp_path)
    wheels = listing.wheels_for(Version("1.9.0"))
    assert {wheel.filename for wheel in wheels} >= {"torch-1.9.0-cp39-cp39-manylinux1_x86_64.whl"}
    assert Version("2.15.0") in listing.versions()
    assert listing.known and not listing.offline


def test_an_html_index_page_works_too(tmp_path: Path) -> None:
    names = [entry["filename"] for entry in json.loads(RECORDED)["files"]]
    html = "".join(f'<a href="https://files.example/{name}#sha256=00">{name}</a>' for name in names)
    listing = releases.listing(INDEX, fetch=Index(html, "text/html"), cache=tmp_path)
    assert len(listing.wheels_for(Version("2.2.0"))) == len([n for n in names if n.startswith("torch-2.2.0-")])


def test_the_cache_serves_until_a_release_is_missing_from_it(tmp_path: Path) -> None:
    index = Index()
    releases.listing(INDEX, fetch=index, cache=tmp_path, now=1000.0)
    releases.listing(INDEX, wanted=[Version("1.9.0")], fetch=index, cache=tmp_path, now=2000.0)
    assert index.calls == 1
    releases.listing(INDEX, wanted=[Version("9.9.9")], fetch=index, cache=tmp_path, now=2000.0)
    assert index.calls == 2
    releases.listing(INDEX, fetch=index, cache=tmp_path, now=2000.0 + releases.MAX_AGE_SECONDS + 1)
    assert index.calls == 3


def test_offline_with_a_cache_uses_it_and_says_so(tmp_path: Path) -> None:
    index = Index()
    releases.listing(INDEX, fetch=index, cache=tmp_path, now=0.0)
    index.down = True
    listing = releases.listing(INDEX, fetch=index, cache=tmp_path, now=10.0 * releases.MAX_AGE_SECONDS)
    assert listing.known and listing.offline
    assert listing.wheels_for(Version("2.0.1"))
    assert "using the listing cached" in listing.notes[0]


def test_offline_without_a_cache_knows_nothing(tmp_path: Path) -> None:
    index = Index()
    index.down = True
    listing = releases.listing(INDEX, fetch=index, cache=tmp_path)
    assert not listing.known and listing.offline and not listing.wheels
    assert "no cached listing" in listing.notes[0]


def test_a_find_links_folder_adds_local_builds(tmp_path: Path) -> None:
    folder = tmp_path / "wheels"
    folder.mkdir()
    (folder / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").touch()
    (folder / "numpy-2.0.0-cp311-cp311-manylinux_2_28_x86_64.whl").touch()
    (folder / "torch-broken.whl").touch()
    listing = releases.listing(INDEX, [str(folder)], fetch=Index(), cache=tmp_path / "cache")
    local = [wheel for wheel in listing.wheels_for(Version("2.13.0")) if wheel.source == str(folder)]
    assert [wheel.version for wheel in local] == [Version("2.13.0+cpu")]


def test_a_release_admits_its_local_builds_and_a_local_build_only_itself(tmp_path: Path) -> None:
    folder = tmp_path / "wheels"
    folder.mkdir()
    for name in ("torch-2.0.0-cp311-cp311-linux_x86_64.whl", "torch-2.0.0+cpu-cp311-cp311-linux_x86_64.whl"):
        (folder / name).touch()
    listing = releases.listing(INDEX, [str(folder)], fetch=Index(), cache=tmp_path / "cache")

    def local_builds(version: str) -> list[str]:
        builds = listing.wheels_for(Version(version))
        return sorted(str(wheel.version) for wheel in builds if wheel.source == str(folder))

    assert local_builds("2.0.0") == local_builds("2.0") == ["2.0.0", "2.0.0+cpu"]
    assert local_builds("2.0.0+cpu") == ["2.0.0+cpu"]


@pytest.mark.parametrize("body", ["not json", '{"files": 3}', '{"nofiles": []}'])
def test_a_garbled_index_page_counts_as_unreachable(tmp_path: Path, body: str) -> None:
    listing = releases.listing(INDEX, fetch=Index(body), cache=tmp_path)
    assert not listing.known


def test_versions_can_be_limited_to_the_wheels_for_some_platforms(tmp_path: Path) -> None:
    listing = releases.listing(INDEX, fetch=Index(), cache=tmp_path)
    assert listing.versions(["manylinux1_x86_64", "manylinux_2_28_x86_64"]) == listing.versions()
    assert listing.versions(["musllinux_1_2_riscv64"]) == []
    (wheel,) = [w for w in listing.wheels_for(Version("1.9.0")) if w.filename.endswith("cp39-manylinux1_x86_64.whl")]
    assert wheel.fits(["manylinux1_x86_64"]) and not wheel.fits(["macosx_11_0_arm64"])


def test_a_missing_release_is_named_with_its_neighbours(tmp_path: Path) -> None:
    listing = releases.listing(INDEX, fetch=Index(), cache=tmp_path)
    assert (
        listing.missing(Version("1.12.2"))
        == "the index lists no torch 1.12.2; the releases around it are 1.12.1 and 1.13.1"
    )
    assert listing.missing(Version("1.9.0"), ["musllinux_1_2_riscv64"]) == "torch 1.9.0 has no wheel for this platform"


def test_a_folder_of_pure_python_nightlies_lists_them_in_version_order_for_any_platform(tmp_path: Path) -> None:
    folder = tmp_path / "nightly"
    folder.mkdir()
    names = ["2.6.0", "2.6.0rc1", "2.6.0.dev20241002", "2.5.1", "2.6.0.dev20241001", "2.6.0.dev20241010"]
    for version in names:
        (folder / f"torch-{version}-py3-none-any.whl").touch()
    listing = releases.listing(INDEX, [str(folder)], fetch=Index('{"files": []}'), cache=tmp_path / "cache")
    assert [str(v) for v in listing.versions(["musllinux_1_2_riscv64"])] == [
        "2.5.1", "2.6.0.dev20241001", "2.6.0.dev20241002", "2.6.0.dev20241010", "2.6.0rc1", "2.6.0",
    ]  # fmt: skip
    index = Index('{"files": []}')
    releases.listing(INDEX, [str(folder)], wanted=[Version("2.6.0.dev20241002")], fetch=index, cache=tmp_path / "cache")
    assert index.calls == 0, "a release of the find-links is no reason to fetch the index again"


def test_a_nightly_shows_its_date_and_any_other_version_shows_itself() -> None:
    assert releases.dated(Version("2.6.0.dev20241001")) == "2.6.0.dev20241001 (2024-10-01)"
    assert releases.dated(Version("2.6.0.dev20241001+cpu")) == "2.6.0.dev20241001+cpu (2024-10-01)"
    assert releases.dated(Version("2.6.0.dev2")) == "2.6.0.dev2"
    assert releases.dated(Version("2.6.0.dev20241399")) == "2.6.0.dev20241399"  # eight digits, no date
    assert releases.dated(Version("2.6.0rc1")) == "2.6.0rc1"


def test_a_cache_folder_that_cannot_be_written_costs_a_note_not_the_listing(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    listing = releases.listing(INDEX, fetch=Index(), cache=tmp_path / "file")
    assert Version("1.9.0") in listing.versions()
    (note,) = listing.notes
    assert note.startswith(f"cannot keep the listing in {tmp_path / 'file'}/") and "the index is read again" in note


def test_a_find_links_folder_that_is_not_there_is_a_note(tmp_path: Path) -> None:
    listing = releases.listing(INDEX, [str(tmp_path / "nowhere")], fetch=Index(), cache=tmp_path)
    assert Version("1.9.0") in listing.versions()
    assert listing.notes == (f"find-links {tmp_path / 'nowhere'}: no such folder, so no wheels from there",)
