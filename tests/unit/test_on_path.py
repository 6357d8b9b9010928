"""``watcher.on_path`` answers what ``shutil.which`` answers (whether watchman is there), without
importing shutil on a snapshot's start."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from convgit.git.index.watcher import on_path


@pytest.mark.parametrize(
    "path",
    ["{run}", "{plain}:{run}", "{plain}", "{folder}", "", ":", "{missing}:{run}", None],
)
def test_on_path_answers_as_shutil_which(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str | None
) -> None:
    folders = {name: tmp_path / name for name in ("run", "plain", "folder", "missing")}
    for name in ("run", "plain", "folder"):
        folders[name].mkdir()
    (folders["run"] / "watchman").write_text("#!/bin/sh\n")
    (folders["run"] / "watchman").chmod(0o755)
    (folders["plain"] / "watchman").write_text("not a program\n")
    (folders["folder"] / "watchman").mkdir()
    monkeypatch.chdir(folders["run"])  # ":" looks in the current folder
    if path is None:
        monkeypatch.delenv("PATH", raising=False)
    else:
        monkeypatch.setenv("PATH", path.format(**{k: str(v) for k, v in folders.items()}))
    assert on_path("watchman") == (shutil.which("watchman") is not None)
    if path is not None:  # unset: the system's default path, which this test does not own
        assert on_path("watchman") == ("{run}" in path or path == ":")
