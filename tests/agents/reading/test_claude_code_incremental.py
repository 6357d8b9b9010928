"""A transcript imported while Claude writes it (as the Stop hook does, turn by turn, and with
a last line caught half-written) ends as the same tree, with the same kept records and leaf,
as one import of the finished file; an import of a file that was rewritten reads it again."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.clirun import invoke

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "claude-code"


def _import(folder: Path, file: Path) -> dict[str, Any]:
    result = invoke("-C", str(folder), "import", "claude-code", str(file), "--json")
    assert result.exit_code == 0, (result.output, result.exception)
    found: dict[str, Any] = orjson.loads(result.stdout)["imports"][0]  # the session's own file
    return found


def _session(folder: Path) -> tuple[list[dict[str, Any]], str | None]:
    """The entries and kept records of the one session in ``folder``, in file order, and the
    active leaf: everything an import decides, without the bookkeeping of how it went."""
    (path,) = (folder / ".convgit" / "sessions").glob("*[0-9a-f].jsonl")
    records = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    kept = [r for r in records if r["type"] not in ("import", "leaf")]
    status = invoke("-C", str(folder), "status", "--json")
    return kept, orjson.loads(status.stdout)["leaf"]


def _grown(tmp_path: Path, data: bytes, cuts: list[int]) -> tuple[list[dict[str, Any]], Any]:
    """Import after each cut, as the file grows to it, then after it is whole."""
    folder = tmp_path / "grown"
    folder.mkdir()
    file = folder / "transcript.jsonl"
    file.write_bytes(b"")
    for cut in [*cuts, len(data)]:
        with open(file, "ab") as out:
            out.write(data[file.stat().st_size : cut])
        if b"\n" in data[:cut]:  # before its first line is whole, a file names no session
            # each import reads on from where the last stopped: nothing is read twice
            assert _import(folder, file)["known"] == 0
    return _session(folder)


def _whole(tmp_path: Path, data: bytes) -> tuple[list[dict[str, Any]], Any]:
    folder = tmp_path / "whole"
    folder.mkdir()
    file = folder / "transcript.jsonl"
    file.write_bytes(data)
    _import(folder, file)
    return _session(folder)


def _cuts(data: bytes, steps: int) -> list[int]:
    """Cut points spread over the file, every other one in the middle of a line."""
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    chosen = ends[:: max(1, len(ends) // steps)][1:]
    return [end - (17 if n % 2 else 0) for n, end in enumerate(chosen)]


@pytest.mark.parametrize(
    "name",
    [
        "cc-2.1.79_rewind-after-interrupt_agent-tool.jsonl",
        "cc-2.1.14_compact-boundary_and_microcompact.jsonl",
        "cc-2.1.7+2.1.12_resume_two-objects-on-one-line_duplicate-uuid.jsonl",
    ],
)
def test_a_sample_imported_as_it_grows_is_the_sample_imported_once(
    samples: Path, tmp_path: Path, name: str
) -> None:
    data = (samples / "claude-code" / name).read_bytes()
    assert _grown(tmp_path, data, _cuts(data, 8)) == _whole(tmp_path, data)


FIXTURE_NAMES = [
    "split-reply-interleaved.jsonl",
    "subagent-mirrors.jsonl",
    "compaction.jsonl",
    "resume-stub.jsonl",
    "duplicate-uuid-other-content.jsonl",
    "two-objects-on-one-line.jsonl",
]


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_a_transcript_cut_anywhere_and_finished_later_is_the_same_tree(
    tmp_path: Path, name: str
) -> None:
    """Every line end, the middle of every line, and (for two objects on one line) between
    them: one import of the part, one of the rest."""
    data = (FIXTURES / name).read_bytes()
    whole = _whole(tmp_path, data)
    cuts = sorted(
        {i + 1 for i, byte in enumerate(data) if byte == ord("\n")}
        | {i - 9 for i, byte in enumerate(data) if byte == ord("\n")}
        | {i + 1 for i in range(len(data) - 1) if data[i : i + 2] == b"}{"}
    )
    for cut in cuts:
        trial = tmp_path / str(cut)
        trial.mkdir()
        assert _grown(trial, data, [cut]) == whole, cut


def test_a_rewritten_file_is_read_again_and_only_what_is_new_is_added(tmp_path: Path) -> None:
    source = FIXTURES / "rewind.jsonl"
    folder = tmp_path / "s"
    folder.mkdir()
    file = folder / "t.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    file.write_bytes(b"".join(lines[:4]))
    assert _import(folder, file)["new"] == 4
    # the same records, written again in another order with one more: not a continuation
    file.write_bytes(b"".join([lines[1], lines[0], *lines[2:]]))
    again = _import(folder, file)
    assert again["new"] == 2 and again["entries"] == 6 and again["known"] == 4
    whole = tmp_path / "w"
    whole.mkdir()
    shutil.copy(source, whole / "t.jsonl")
    _import(whole, whole / "t.jsonl")
    ids = [r["id"] for r in _session(folder)[0] if "parentId" in r]
    assert ids == [r["id"] for r in _session(whole)[0] if "parentId" in r]


def test_a_subagent_file_growing_after_its_mirrors_ends_as_one_import(tmp_path: Path) -> None:
    folder = FIXTURES / "subagent-mirrors-and-file"
    main = (folder / "main.jsonl").read_bytes()
    sub = (folder / "main" / "subagents" / "agent-ag1.jsonl").read_bytes()
    ends = [i + 1 for i, byte in enumerate(sub) if byte == ord("\n")]
    found = []
    for name, cuts in (("steps", ends[:-1]), ("once", [])):
        place = tmp_path / name
        (place / "main" / "subagents").mkdir(parents=True)
        (place / "main.jsonl").write_bytes(main)
        grown = place / "main" / "subagents" / "agent-ag1.jsonl"
        for cut in [*cuts, len(sub)]:
            grown.write_bytes(sub[:cut])
            _import(place, place / "main.jsonl")
        found.append(_session(place))
    assert found[0] == found[1]
