"""A pointer file (the current session, the one an agent's events follow) is written whole by
each writer however many write it at once: two agents' hooks ending their turns in the same
moment each write the pointer, and one of them failed when both used one scratch name."""

from __future__ import annotations

import threading
from pathlib import Path

from convgit.store.location import write_pointer


def test_writers_at_once_each_write_the_pointer_whole(tmp_path: Path) -> None:
    pointer = tmp_path / "current" / "abc.agent"
    failures: list[BaseException] = []
    start = threading.Barrier(4)

    def write(value: str) -> None:
        start.wait()
        try:
            for _ in range(300):
                write_pointer(pointer, value)
        except BaseException as error:  # the test reports any failure
            failures.append(error)

    threads = [threading.Thread(target=write, args=(f"session{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert pointer.read_text() in {f"session{n}\n" for n in range(4)}
    assert [p.name for p in pointer.parent.iterdir()] == ["abc.agent"]  # no scratch file left
