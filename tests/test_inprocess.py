"""The recorder's client that pi's and OpenCode's plugins carry (``convgit.agents.live.inprocess``)
finds the recorder where the hook's thin client finds it (``client.place``), run in node for
each case: the working tree above the event's folder (a link followed), the folder of this
user's recorders (``XDG_RUNTIME_DIR``, else ``/tmp/convgit-UID``), the key of the tree and
``CONVGIT_STORE``; none where the thin client finds none."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from convgit.agents.live import client, inprocess
from tests.workspace.gitrepo import GitRepo

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def plugin_finds(cwd: Path, env: dict[str, str]) -> str | None:
    """The socket the plugin's client names for an event in ``cwd`` under ``env``."""
    script = inprocess.fragment("pi", None) + (
        f"\nconst found = CONVGIT_RECORDER.where({json.dumps(str(cwd))})"
        "\nprocess.stdout.write(JSON.stringify(found && found.path))\n"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    found = json.loads(done.stdout)
    return found if found is None else str(found)


def thin_client_finds(
    cwd: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> str | None:
    with monkeypatch.context() as patched:
        for name in ("XDG_RUNTIME_DIR", "CONVGIT_STORE", "GIT_DIR"):
            patched.delenv(name, raising=False)
        for name, value in env.items():
            patched.setenv(name, value)
        patched.chdir(cwd)
        found = client.place(os.getcwd())
    return None if found is None else os.fsdecode(os.path.join(found[0], found[1] + b".sock"))


def test_the_plugins_client_finds_the_recorder_the_thin_client_finds(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    (repo.path / "src" / "deep").mkdir(parents=True)
    link = tmp_path / "linked"
    link.symlink_to(repo.path / "src")
    outside = tmp_path / "outside"
    outside.mkdir()
    base = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "CONVGIT_STORE")}
    base.pop("GIT_DIR", None)
    cases = [
        (repo.path, {"XDG_RUNTIME_DIR": str(run)}),
        (repo.path / "src" / "deep", {"XDG_RUNTIME_DIR": str(run) + "/"}),
        (link, {"XDG_RUNTIME_DIR": str(run), "CONVGIT_STORE": "../store"}),
        (repo.path, {"XDG_RUNTIME_DIR": str(run), "CONVGIT_STORE": str(tmp_path / "s" / ".")}),
        (repo.path, {}),  # no runtime folder: /tmp/convgit-UID
        (repo.path, {"XDG_RUNTIME_DIR": str(tmp_path / "missing")}),
        (repo.path, {"XDG_RUNTIME_DIR": str(run), "GIT_DIR": str(repo.path / ".git")}),
        (outside, {"XDG_RUNTIME_DIR": str(run)}),
    ]
    found = []
    for cwd, env in cases:
        thin = thin_client_finds(cwd, env, monkeypatch)  # makes the folder when it is missing
        assert plugin_finds(cwd, {**base, **env}) == thin, (cwd, env)
        found.append(thin)
    assert found[0] == found[1] != found[2] != found[3]  # the key follows the store
    assert found[0] is not None and found[0].startswith(f"{run}/convgit/")
    assert found[4] == found[5] is not None and found[4].startswith(f"/tmp/convgit-{os.getuid()}/")
    assert found[6] is None and found[7] is None


def test_the_plugins_client_asks_the_recorder_only_when_the_variable_lets_it(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`CONVGIT_RECORDER` unset or `on`: the plugin's client connects to the recorder's socket;
    `off`, or a value the hook refuses (`false`, `0`): it asks nothing, and the hook's command
    does the event (and says the refusal), as the thin client does (before: any value but
    `off` was handed to a running recorder)."""
    import socket
    import threading

    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    env = {"XDG_RUNTIME_DIR": str(run)}
    path = thin_client_finds(repo.path, env, monkeypatch)
    assert path is not None
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listening.bind(path)
    listening.listen(8)
    asked: list[bytes] = []

    def serve() -> None:  # a recorder that reads each request and leaves the event to the hook
        while True:
            try:
                conn, _ = listening.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                data = b""
                while chunk := conn.recv(1 << 16):
                    data += chunk
                asked.append(data)
                conn.sendall(client.FALL_BACK + b"not this time")

    threading.Thread(target=serve, daemon=True).start()
    base = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "CONVGIT_STORE")}
    base.pop("CONVGIT_RECORDER", None)
    script = tmp_path / "hand.mjs"  # a module as the plugin is; its worker a script
    script.write_text(
        inprocess.fragment("pi", None)
        + f"\nconst out = CONVGIT_RECORDER.hand({json.dumps(str(repo.path))}, '{{}}')"
        + "\nprocess.stdout.write(JSON.stringify(out))\n"
    )
    try:
        for value, asks in ((None, True), ("on", True), ("off", False), ("false", False),
                            ("0", False)):  # fmt: skip
            more = {} if value is None else {"CONVGIT_RECORDER": value}
            before = len(asked)
            done = subprocess.run(
                ["node", str(script)],
                env={**base, **env, **more}, capture_output=True, text=True, timeout=60,
                check=True,
            )  # fmt: skip
            assert json.loads(done.stdout) is None  # the hook's command does the event
            assert (len(asked) > before) == asks, (value, asked[before:])
            if asks:
                assert asked[-1].startswith(client.PROTOCOL + b"\0event\0"), asked[-1][:80]
    finally:
        listening.close()
