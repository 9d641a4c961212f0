"""What a script printed, as `bisect --by-output` compares it: only what is per-process goes, everything else counts."""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from torchmatrix.worker import printed
from torchmatrix.worker.printed import Printed


@pytest.mark.parametrize("rule", printed.RULES, ids=lambda rule: rule.what)
def test_each_rule_changes_its_example_and_leaves_what_it_must_not_touch(rule: printed.Rule) -> None:
    assert rule.apply(rule.example) != rule.example
    assert rule.untouched
    for line in rule.untouched:
        assert rule.apply(line) == line


@pytest.mark.parametrize(
    ("line", "becomes"),
    [
        ("<MulBackward0 object at 0x7f3a2c1d5e80>", "<MulBackward0 object at 0x…>"),
        ("<function f at 0x7f3a2c1d5e80>", "<function f at 0x…>"),
        ("<function f.<locals>.g at 0x7f3a2c1d5e80>", "<function f.<locals>.g at 0x…>"),
        ("<weakref at 0x7f3a2c1d5e80; to 'A' at 0x7f3a2c1d9a10>", "<weakref at 0x…; to 'A' at 0x…>"),
        (
            '<code object f at 0x7f3a2c1d5e80, file "<string>", line 1>',
            '<code object f at 0x…, file "<string>", line 1>',
        ),
        (
            "<bound method A.f of <__main__.A object at 0x7f3a2c1d5e80>>",
            "<bound method A.f of <__main__.A object at 0x…>>",
        ),
        ("<cell at 0x7f3a2c1d5e80: int object at 0x7f3a2c1d9a10>", "<cell at 0x…: int object at 0x…>"),
        ("tensor(28., grad_fn=<MulBackward0>)", "tensor(28., grad_fn=<MulBackward0>)"),
        # The pair's folders are known, not guessed from their names.
        (
            "in /tmp/torchmatrix-worker-k2j4x9_a/torchmatrix-pair-9xq1b2c3/m.pt",
            "in /tmp/torchmatrix-worker-k2j4x9_a/torchmatrix-pair-9xq1b2c3/m.pt",
        ),
        ("torch 1.12.1+cu102 on python 3.10", "torch <torch version> on python 3.10"),
        ("torch 1.12.1", "torch <torch version>"),
        ("torch v1.12.1+cu102 (v1.12.1)", "torch v<torch version> (v<torch version>)"),  # f"torch v{torch.__version__}"
        # What is not per-process counts: each of these could be the very change asked about.
        ("0x3e99999a", "0x3e99999a"),  # a float's bits, as struct and hex print them
        ("bits 0x3e99999b at 0x3e99999b", "bits 0x3e99999b at 0x3e99999b"),
        ("<bits 0x3e99999b> <mask at 0x1ffffffffffffffff>", "<bits 0x3e99999b> <mask at 0x1ffffffffffffffff>"),
        ("wrote /tmp/tmpab12_x9q/out.pt", "wrote /tmp/tmpab12_x9q/out.pt"),
        ("step took 0.0312 s (12ms on the GPU)", "step took 0.0312 s (12ms on the GPU)"),
        ("[2026-01-05 14:03:27,118] ready", "[2026-01-05 14:03:27,118] ready"),
        ("1.12.10 11.12.1 1.12.1.2", "1.12.10 11.12.1 1.12.1.2"),
        ("xv1.12.1 v1.12.10 v11.12.1", "xv1.12.1 v1.12.10 v11.12.1"),
        ("x = 3.5  ", "x = 3.5  "),
    ],
)
def test_what_is_normalised_and_what_is_not(line: str, becomes: str) -> None:
    assert printed.normalised(line, ["1.12.1+cu102", "1.12.1"]) == becomes


ENVIRONMENT = "/home/me/.nox/probe-1-12-1"
PLACES = [
    ("/tmp/torchmatrix-worker-k2j4x9_a/torchmatrix-pair-9xq1b2c3", "<pair folder>"),
    ("/tmp/torchmatrix-worker-k2j4x9_a", "<worker folder>"),
    (ENVIRONMENT, "<cell environment>"),
]


@pytest.mark.parametrize(
    ("line", "becomes"),
    [
        (f"{ENVIRONMENT}/lib/python3.10/site-packages/torch/__init__.py",
         "<cell environment>/lib/python3.10/site-packages/torch/__init__.py"),
        (f"'{ENVIRONMENT}/bin/python'", "'<cell environment>/bin/python'"),
        ("/tmp/torchmatrix-worker-k2j4x9_a/torchmatrix-pair-9xq1b2c3/m.pt", "<pair folder>/m.pt"),
        ("/tmp/torchmatrix-worker-k2j4x9_a/output", "<worker folder>/output"),
        # Another folder whose name starts alike is another folder.
        (f"{ENVIRONMENT}0/bin/python", f"{ENVIRONMENT}0/bin/python"),
        ("/home/me/.nox/probe-1-12-10/bin/python", "/home/me/.nox/probe-1-12-10/bin/python"),
        ("/tmp/torchmatrix-worker-k2j4x9_a/torchmatrix-pair-9xq1b2c4", "<worker folder>/torchmatrix-pair-9xq1b2c4"),
    ],
)  # fmt: skip
def test_the_cell_s_own_folders_are_replaced_whole(line: str, becomes: str) -> None:
    assert printed.normalised(line, ["1.12.1"], PLACES) == becomes


def test_the_worker_knows_the_cell_s_folders_as_given_and_resolved(tmp_path: Path) -> None:
    from torchmatrix.envside.torchmatrix_worker import records

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    folder = tmp_path / "link" / "pair"
    places = records.cell_places(str(folder), str(tmp_path / "link"))
    assert [str(folder), "<pair folder>"] in places and [str(tmp_path / "real" / "pair"), "<pair folder>"] in places
    assert [sys.prefix, "<cell environment>"] in places
    assert [len(path) for path, _ in places] == sorted((len(path) for path, _ in places), reverse=True)


def test_the_temporary_folders_names_alone_are_the_cells_own_and_a_relative_path_is_normalised_by_them() -> None:
    """``os.path.basename(os.getcwd())``, or a relative path to the pair's folder, differs in every process; what is
    URL-quoted is not among the forms normalised, and stays."""
    from torchmatrix.envside.torchmatrix_worker import records

    places = [(path, token) for path, token in records.cell_places(printed.EXAMPLE_FOLDER, printed.EXAMPLE_SCRATCH)]
    pair, worker = printed.EXAMPLE_FOLDER.rpartition("/")[2], printed.EXAMPLE_SCRATCH.rpartition("/")[2]
    said = f"in {pair}, from ../../{worker}/{pair}/m.pt; not {pair}x"
    assert printed.normalised(said, (), places) == (
        f"in <pair folder's name>, from ../../<worker folder's name>/<pair folder's name>/m.pt; not {pair}x"
    )
    quoted = printed.EXAMPLE_FOLDER.replace("/", "%2F")
    assert printed.normalised(quoted, (), places) == quoted


def run(lines: list[str], outcome: str = "pass", **metrics: object) -> Printed:
    text = "".join(line + "\n" for line in lines).encode()
    digest = hashlib.sha256(text).hexdigest()
    stored = {"exit_code": 0, "output": lines, "output_sha256": digest, "output_bytes": len(text), **metrics}
    found = Printed.of_run(outcome, "", stored)
    assert isinstance(found, Printed)
    return found


def test_a_run_is_how_it_ended_and_the_digest_of_all_it_printed() -> None:
    seen = run(["tensor(28.)"])
    assert Printed.from_category(seen.category()) == seen
    assert seen.describe() == "pass, prints 'tensor(28.)'"
    cut = Printed("pass", "ab" * 32, True, ("…xxxx",))
    assert Printed.from_category(cut.category()) == cut
    assert cut.describe() == "pass, prints more than 64 KiB, of which the end kept: '…xxxx'"
    masked = Printed("pass", "cd" * 32, False, ("a", "<differs between runs>"), (2,))
    assert Printed.from_category(masked.category()) == masked
    raised = run([], "fail", exit_code=None, raised="AssertionError: 0.9642857\nsecond line")
    assert raised.ended == "fail: AssertionError: 0.9642857\\nsecond line"
    assert run([], "fail", exit_code=2).ended == "fail (exit code 2)"
    assert Printed.of_run("pass", "", {"output": []}) == (
        "no digest of the whole output: a record of an older torchmatrix, run it again"
    )


def test_what_changed_names_the_ending_the_line_or_what_came_before_the_end_kept() -> None:
    old, new = run(["a", "tensor(0.)"]), run(["a", "tensor(28.)"])
    assert printed.what_changed(old.category(), new.category()) == [
        "what it printed, from OLD to NEW: line 2: 'tensor(0.)' → 'tensor(28.)'"
    ]
    failed = [run([], "fail", raised=f"AssertionError: {x}") for x in ("0.9642857", "0.9642858")]
    assert printed.what_changed(failed[0].category(), failed[1].category()) == [
        "how it ended, from OLD to NEW: 'fail: AssertionError: 0.9642857' → 'fail: AssertionError: 0.9642858'"
    ]
    ends = [Printed("pass", digest * 64, True, ("…x",)) for digest in "ab"]
    assert printed.what_changed(ends[0].category(), ends[1].category()) == [
        "what it printed, from OLD to NEW: the end kept is the same, what came before it is not"
    ]


def test_what_is_compared_is_the_normalised_digest_never_the_size_as_printed() -> None:
    # torch.__version__ printed by 1.8.0 and by 1.9.1+cu102: normalised alike, printed 6 and 12 bytes long
    normalised = "<torch version>\n"
    digest = hashlib.sha256(normalised.encode()).hexdigest()
    old, new = (
        Printed.of_run("pass", "", {"output": ["<torch version>"], "output_sha256": digest, "output_bytes": size})
        for size in (6, 12)
    )
    assert isinstance(old, Printed) and isinstance(new, Printed)
    assert old.category() == new.category()


def test_lines_that_differ_between_runs_of_one_release_are_per_process() -> None:
    runs = [run(["seed", f"id {number}", "done"]) for number in (140234, 140876, 140234)]
    release = printed.one_release(runs)
    assert isinstance(release, Printed) and release.per_process == (2,)
    assert release.lines == ("seed", "id <differs between runs>", "done")
    assert release.describe() == (
        "pass, prints 'seed' / 'id <differs between runs>' / 'done' (line 2 per-process: differ between runs)"
    )
    other = printed.one_release([run(["seed", f"id {number}", "done"]) for number in (7, 8)])
    assert isinstance(other, Printed) and other.category() == release.category()
    assert printed.one_release([runs[0], runs[2]]) == runs[0]


def test_runs_that_cannot_be_one_release_are_unstable_and_say_where_they_differ_first() -> None:
    lines = printed.one_release([run(["a", "b"]), run(["a", "b", "c"]), run(["a", "b"])])
    assert lines == (
        "pass, prints 'a' / 'b' in 2; pass, prints 'a' / 'b' / 'c' in 1 of 3 runs; first difference: line 3: "
        "nothing → 'c'"
    )
    ended = printed.one_release([run(["a"]), run(["a"], "fail", exit_code=1)])
    assert isinstance(ended, str) and ended.endswith("first difference: how it ended: 'pass' → 'fail (exit code 1)'")
    cut = [Printed("pass", digest * 64, True, ("…x", "y")) for digest in "ab"]
    assert printed.one_release(cut) == (
        "pass, prints more than 64 KiB, of which the end kept: '…x' / 'y' in 1; pass, prints more than 64 KiB, of "
        "which the end kept: '…x' / 'y' in 1 of 2 runs; first difference: the end kept is the same, what came before "
        "it is not"
    )


def test_a_test_whose_output_pytest_never_captured_is_not_compared() -> None:
    unseen = {"output_unseen": "pytest's capture is off (-s or --capture=no in addopts of pytest.ini)"}
    assert Printed.of_run("pass", "", unseen) == (
        "no output recorded: pytest's capture is off (-s or --capture=no in addopts of pytest.ini): the test's output "
        "is not seen; remove it to compare by output"
    )


def test_what_was_printed_in_a_few_words() -> None:
    assert printed.describe([]) == "prints nothing"
    assert printed.describe(["tensor(28.)", "done"]) == "prints 'tensor(28.)' / 'done'"
    assert printed.describe(["a", "b" * 100]) == "prints 2 lines, the last '" + "b" * 49 + "…'"
    assert printed.describe(["1", "2", "3", "4"]) == "prints 4 lines, the last '4'"
    assert printed.describe(["x" * 70000]) == "prints 1 line of 70000 characters, '" + "x" * 49 + "…'"


def test_the_first_line_that_differs_is_named_and_a_long_one_shown_where_it_differs() -> None:
    assert printed.first_difference(["tensor(0.)", "x"], ["tensor(28.)", "x"]) == "line 1: 'tensor(0.)' → 'tensor(28.)'"
    assert printed.first_difference(["a"], ["a", "b"]) == "line 2: nothing → 'b'"
    assert printed.first_difference(["a"], ["a"]) == ""
    long = "x" * 100
    assert printed.first_difference([long + "1"], [long + "2"]) == (f"line 1: '…{'x' * 10}1' → '…{'x' * 10}2'")


def test_a_rule_s_match_cut_by_where_a_long_line_is_read_in_pieces_is_still_replaced() -> None:
    import io

    from torchmatrix.envside.torchmatrix_worker import records

    address = b"<object object at 0x7f0e2b7a0ac0>"
    cut = address.index(b"0x") + 2
    line = b"x" * (records.OUTPUT_CHUNK - cut - 4) + address + b"\n"  # the first piece ends inside the address
    other = line.replace(b"7f0e2b7a0ac0", b"7f2bd4da0ac0")
    first, second = (records.read_output(io.BytesIO(data), ()) for data in (line, other))
    assert first["sha256"] == second["sha256"] and first["bytes"] == len(line)
    assert first["end"].endswith(b"<object object at 0x\xe2\x80\xa6>\n")


def test_all_of_a_message_longer_than_a_record_keeps_is_compared() -> None:
    said = {"outcome": "fail", "message": "AssertionError: …", "metrics": {"output": [], "output_sha256": "0" * 64,
            "output_bytes": 0, "raised": "AssertionError: …" + "." * 10}}  # fmt: skip
    runs = [
        Printed.of_run(said["outcome"], said["message"], dict(said["metrics"], raised_sha256=digest))
        for digest in ("a" * 64, "b" * 64)
    ]
    assert isinstance(runs[0], Printed) and isinstance(runs[1], Printed)
    assert runs[0].category() != runs[1].category()


def test_output_whose_lines_read_alike_but_whose_bytes_differ_is_said_to_differ_in_bytes() -> None:
    old = Printed("pass", "a" * 64, False, ("value",)).category()  # value\n
    new = Printed("pass", "b" * 64, False, ("value",)).category()  # value\r\n
    [said] = printed.what_changed(old, new)
    assert said.startswith("what it printed, from OLD to NEW: bytes its lines do not show (a line's end, \\r or \\f")
    cut = Printed("pass", "b" * 64, True, ("value",)).category()
    assert "is the same, what came before it is not" in printed.what_changed(old, cut)[0]


def test_a_folder_of_the_cell_ending_a_sentence_is_normalised_and_a_longer_name_is_not() -> None:
    places = [(printed.EXAMPLE_FOLDER, "<pair folder>")]
    said = f"saved in {printed.EXAMPLE_FOLDER}. Then {printed.EXAMPLE_FOLDER}.0 and {printed.EXAMPLE_FOLDER}.old"
    assert printed.normalised(said, (), places) == (
        f"saved in <pair folder>. Then {printed.EXAMPLE_FOLDER}.0 and {printed.EXAMPLE_FOLDER}.old"
    )


def test_what_a_per_process_line_holds_that_is_the_same_in_every_run_still_counts() -> None:
    def release(dtype: str) -> Printed:
        runs = [run([f"loss {value} dtype={dtype}"]) for value in ("0.3411", "-0.12e-3")]
        found = printed.one_release(runs)
        assert isinstance(found, Printed)
        return found

    old, new = release("float32"), release("float64")
    assert old.lines == ("loss <differs between runs> dtype=float32",)
    assert old.category() != new.category()
    assert release("float32").category() == old.category()
    uneven = printed.one_release([run(["took 3 s"]), run(["took 3 s and more"])])
    assert isinstance(uneven, Printed) and uneven.lines == ("took 3 s<differs between runs>",)


def test_words_every_run_shares_count_where_the_runs_print_unlike_numbers_of_words() -> None:
    """A line printed with one, two or three words of noise before what the bug is about: the noise is per-process,
    and the result beside it still tells the releases apart, whichever run came first."""

    def release(result: str, *noise: int) -> Printed:
        found = printed.one_release([run([" ".join(["tmpfile"] * times + ["result", result])]) for times in noise])
        assert isinstance(found, Printed) and found.per_process == (1,)
        return found

    old, new = release("fail", 1, 2, 3, 1), release("pass", 2, 1, 1, 3)
    assert old.lines == ("<differs between runs>tmpfile result fail",)
    assert old.category() != new.category()
    assert release("fail", 3, 1).category() == old.category()
    unshared = printed.one_release([run(["x1"]), run(["y2 z"])])
    assert isinstance(unshared, Printed) and unshared.lines == ("<differs between runs>",)


def test_a_per_process_value_masks_itself_alone_however_its_runs_split_it() -> None:
    """A uuid splits into as many pieces as its groups that begin with a digit: runs whose uuids split unlike each
    other, or alike, read the same, and what beside them is a release's own still counts."""

    def release(result: str, *uuids: str) -> tuple[str, ...]:
        found = printed.one_release([run([f"run {uuid} result {result}"]) for uuid in uuids])
        assert isinstance(found, Printed)
        return found.lines

    unlike, alike = ("4f1c-9ab2", "af1c-bab2"), ("4f1c-9ab2", "5e2d-8cd1")
    assert release("7.0", *unlike) == release("7.0", *alike) == ("run <differs between runs> result 7.0",)
    assert release("8.0", *unlike) != release("7.0", *alike)


def test_what_a_per_process_value_is_glued_to_still_counts_however_its_runs_split_it() -> None:
    """``print(f"{uuid.uuid4()}:dot={result}")``: the uuid and the result are one word. Runs whose uuids split into
    unlike numbers of pieces mask the uuid alone, so a release that prints dot=pass is never taken for one that
    prints dot=fail."""
    unlike, alike = ("4f1c-9ab2", "af1c-bab2"), ("4f1c-9ab2", "5e2d-8cd1")
    old = release_of(*([f"{uuid}:dot=fail"] for uuid in unlike))
    new = release_of(*([f"{uuid}:dot=pass"] for uuid in alike))
    assert Printed.from_category(old).lines == ("<differs between runs>:dot=fail",)
    assert not printed.same(old, new) and not printed.same(new, old)
    assert printed.same(old, release_of(*([f"{uuid}:dot=fail"] for uuid in alike)))


def test_the_name_of_an_interpreters_own_prefix_is_no_cells_and_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a venv's folder is a cell's: run from /usr/local's own Python, "local" in the output is left as printed."""
    from torchmatrix.envside.torchmatrix_worker import records

    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    for prefix, base, named in (("/usr/local", "/usr/local", False), ("/w/.nox/probe-1-12-1", "/usr/local", True)):
        monkeypatch.setattr(sys, "prefix", prefix)
        monkeypatch.setattr(sys, "base_prefix", base)
        places = dict(map(tuple, records.cell_places("/tmp/pair", "/tmp/worker")))
        assert (places.get(prefix.rpartition("/")[2]) == records.ENVIRONMENT_NAME) is named, places


def release_of(*runs: list[str]) -> str:
    found = printed.one_release([run(lines) for lines in runs])
    assert isinstance(found, Printed), found
    return found.category()


def test_noise_whose_number_of_words_varies_is_no_change() -> None:
    """Runs print one or two words of noise: a release whose runs printed one and two, and one whose runs printed
    two each, are lined up unlike, and still the same: a mark stands for any words."""
    uneven = release_of(["values: 3f result pass"], ["values: a1 b2 result pass"])
    even = release_of(["values: c4 d5 result pass"], ["values: e6 f7 result pass"])
    assert Printed.from_category(uneven).lines != Printed.from_category(even).lines
    assert printed.same(uneven, even) and printed.same(even, uneven)
    signs = release_of(["tensor([ 0.1000, -0.2000])"], ["tensor([0.3000, 0.4000])"])
    assert printed.same(signs, release_of(["tensor([0.5000, 0.6000])"], ["tensor([-0.7000, 0.8000])"]))
    assert not printed.same(uneven, release_of(["values: 3f result fail"], ["values: a1 b2 result fail"]))
    assert printed.what_changed(uneven, even) == []


def test_a_word_every_run_prints_counts_wherever_the_noise_puts_it() -> None:
    """Runs print ``dot=…`` after one noise word or two, in four words each: every word differs by place, yet every
    run of one release printed dot=fail and every run of the other dot=pass."""
    old = release_of(["n1 dot=fail n2 n3"], ["m1 m2 dot=fail m3"])
    new = release_of(["k1 dot=pass k2 k3"], ["j1 j2 dot=pass j3"])
    assert Printed.from_category(old).lines == Printed.from_category(new).lines
    assert not printed.same(old, new)
    assert printed.what_changed(old, new) == ["the words every run prints, from OLD to NEW: 'dot=fail' → 'dot=pass'"]
    assert printed.same(old, release_of(["x1 x2 dot=fail x3"], ["y1 dot=fail y2 y3"]))


@pytest.mark.parametrize(
    "printing",
    [
        lambda dot: (["threads=4", f"dot={dot}"], [f"dot={dot}", "threads=4"]),  # lines in either order
        lambda dot: ([f"threads=4 dot={dot}"], [f"dot={dot} threads=4"]),  # words in either order
    ],
    ids=["lines", "words"],
)
def test_what_every_run_prints_in_another_order_still_counts(printing: Callable[[str], tuple[list[str], ...]]) -> None:
    old, new = release_of(*printing("fail")), release_of(*printing("pass"))
    assert not printed.same(old, new)
    assert printed.same(old, release_of(*printing("fail")[::-1]))


def test_a_set_every_run_prints_in_an_order_of_its_own_is_no_change() -> None:
    """Each run orders a set by its own hash seed: which item comes last, before the ``}``, is the process's own.
    Two releases whose every run printed the same set are the same, whichever item each run printed last; one
    whose set holds another item is not."""
    old = release_of(["on: {'cuda', 'V', 'mps', 'cpu'}"], ["on: {'cuda', 'mps', 'cpu', 'V'}"])
    new = release_of(["on: {'cuda', 'mps', 'V', 'cpu'}"], ["on: {'mps', 'cuda', 'V', 'cpu'}"])
    assert printed.same(old, new) and printed.same(new, old)
    other = release_of(["on: {'cuda', 'xla', 'V', 'cpu'}"], ["on: {'xla', 'cuda', 'V', 'cpu'}"])
    assert not printed.same(old, other)


def test_the_sign_of_a_per_process_number_and_a_run_of_dots_are_no_words_of_their_own() -> None:
    """A number each run prints anew (``hash("x")``, a random value) keeps its sign: runs of one release that all
    happened to print a negative one share no ``-`` that another release's runs lack. So do dots a run prints as
    time passes (``loading....``). A sign that moves from one item of a set to another is a change."""
    negative = release_of(["h: -123456"], ["h: -98765"])
    assert printed.same(negative, release_of(["h: 55555"], ["h: -4444"]))
    dots = release_of(["loading.... done"], ["loading...... done"])
    assert printed.same(dots, release_of(["loading... done"], ["loading....... done"]))
    signs = release_of(["{('a', -1), ('b', 2)}"], ["{('b', 2), ('a', -1)}"])
    assert not printed.same(signs, release_of(["{('a', 1), ('b', -2)}"], ["{('b', -2), ('a', 1)}"]))


def test_runs_alike_are_compared_by_digest_as_one_run_is() -> None:
    one, other = release_of(["a 1"], ["a 1"]), release_of(["a 2"], ["a 2"])
    assert Printed.from_category(one).shared is None and not printed.same(one, other)
    varied = release_of(["a 1"], ["a 2"])
    assert printed.same(varied, release_of(["a 3"], ["a 4"]))
    assert not printed.same(varied, one)  # every run of one printed "1", not every run of the other


def test_a_long_word_of_punctuation_between_letters_is_split_in_linear_time() -> None:
    """A run printed one word of 200,000 marks between two letters (a progress line, ``a!!!…!!!a``): its words are
    found at once, never by a pattern that tries each place the word's end could be (about half an hour)."""
    started = time.monotonic()
    words = printed._words(["a" + "!" * 200_000 + "a", "(-1.5),"])
    assert time.monotonic() - started < 5.0
    assert words == ["a!" + "!" * 199_999 + "a", "(", ")", ",", "-1.5"]


def test_a_path_to_a_held_pythons_environment_reads_as_a_matrix_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bisect holds one Python: a release whose matrix Python differs runs in .nox/held-python-3.10/probe-1-13-1,
    the next in .nox/probe-2-0-0. ``print(os.path.relpath(torch.__file__))`` prints the same in both, never a change
    between releases that is the folders' own."""
    from torchmatrix.environment import disk
    from torchmatrix.envside.torchmatrix_worker import records

    assert records.HELD_PREFIX == disk.HELD_PREFIX
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setattr(sys, "base_prefix", "/usr/local")
    seen = []
    for prefix in ("/w/out/.nox/held-python-3.10/probe-1-13-1", "/w/out/.nox/probe-2-0-0"):
        monkeypatch.setattr(sys, "prefix", prefix)
        places = records.cell_places("/tmp/pair", "/tmp/worker")
        relative = prefix.removeprefix("/w/") + "/lib/python3.10/site-packages/torch/__init__.py"
        seen.append(printed.normalised(f"{relative}\n", places=[tuple(place) for place in places]))
    assert seen[0] == seen[1] == "out/.nox/<cell environment's name>/lib/python3.10/site-packages/torch/__init__.py\n"
