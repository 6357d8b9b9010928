"""A working tree whose hooks go through the recorder (``convgit.agents.live.recorder``), for the
tests of the recorder: Claude Code's hook events written by hand (as tests/test_hook.py writes
them), run through the real ``convgit hook claude-code`` with the recorder on, its folder of
sockets a test's own; every recorder a test started is ended when it ends."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests import clirun
from tests.workspace.gitrepo import GitRepo

SESSION = "0b9c3f4e-1111-4222-8333-944445555666"


class Recorded:
    """``repo``'s hooks through its recorder, with ``env`` over the tests' environment."""

    def __init__(self, repo: GitRepo, run: Path, **env: str | None) -> None:
        self.repo = repo
        self.run = run  # XDG_RUNTIME_DIR: the recorders' folder is run/convgit
        self.env: dict[str, str | None] = {
            "CONVGIT_RECORDER": "on",
            "XDG_RUNTIME_DIR": str(run),
            "CONVGIT_RECORDER_IDLE": "300",
            **env,
        }

    @property
    def folder(self) -> Path:
        return self.run / "convgit"

    def hook(self, stdin: bytes, agent: str = "claude-code", **env: str | None) -> bytes:
        """One event through ``convgit hook AGENT``; what it printed."""
        ran = clirun.run(
            "hook", agent, cwd=self.repo.path, input=stdin, env={**self.env, **env},
            timeout=90, logs_tracebacks=True,
        )  # fmt: skip
        return ran.out

    def cli(self, *args: str, code: int | None = 0) -> clirun.Ran:
        return clirun.run(*args, cwd=self.repo.path, env=self.env, code=code)

    def json(self, *args: str) -> Any:
        return self.cli(*args, "--json").json()

    def key(self) -> str:
        (found,) = [p.stem for p in self.folder.glob("*.lock")]
        return found

    def wait_running(self, timeout: float = 60) -> dict[str, Any]:
        """The recorder's own status once it answers (it warms up first)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            said = self.json("recorder", "status")
            if said["running"]:
                return dict(said)
            time.sleep(0.1)
        raise AssertionError(f"no recorder answered: {self.json('recorder', 'status')}")

    def wait_gone(self, pid: int, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not alive(pid):
                return
            time.sleep(0.05)
        raise AssertionError(f"the recorder {pid} is still running")

    def allow_start(self) -> None:
        """Let the next hook start a recorder at once (a client starts one at most every few
        seconds)."""
        for stamp in self.folder.glob("*.started"):
            stamp.unlink()

    def log(self) -> list[str]:
        text = (self.repo.path / ".git" / "convgit" / "logs" / "hooks.log").read_text()
        return [line for line in text.splitlines() if line[:1].isdigit()]

    def recorder_log(self) -> list[str]:
        path = self.repo.path / ".git" / "convgit" / "logs" / "recorder.log"
        return path.read_text().splitlines() if path.exists() else []

    def end(self) -> None:
        """End every recorder this test started (by its pid, from its state file)."""
        for state in self.folder.glob("*.json") if self.folder.is_dir() else []:
            try:
                pid = json.loads(state.read_text()).get("pid")
            except (OSError, ValueError):
                continue
            if isinstance(pid, int) and alive(pid):
                os.kill(pid, signal.SIGTERM)
                try:
                    self.wait_gone(pid, 10)
                except AssertionError:
                    os.kill(pid, signal.SIGKILL)


def recording(repo: GitRepo, tmp_path: Path) -> Iterator[Recorded]:
    """The body of the recorder tests' ``recorded`` fixture: ``repo``'s hooks through its
    recorder, the recorders' folder in ``tmp_path``; after the test, every recorder it started
    ended and watchman's watch of the tree dropped."""
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    made = Recorded(repo, run)
    yield made
    made.end()
    subprocess.run(["watchman", "watch-del", str(repo.path)], capture_output=True, timeout=30)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (a child of this process that ended) is gone too
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


class Claude:
    """A Claude Code session written by hand: its transcript, and its hook events."""

    def __init__(self, folder: Path, cwd: Path, session: str = SESSION) -> None:
        self.session = session
        self.transcript = folder / f"{session}.jsonl"
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        self.transcript.write_text("")
        self.cwd = cwd
        self.n = 0
        self.parent: str | None = None

    def event(self, name: str, **more: Any) -> bytes:
        payload = {
            "session_id": self.session,
            "transcript_path": str(self.transcript),
            "cwd": str(self.cwd),
            "hook_event_name": name,
            **more,
        }
        return json.dumps(payload).encode()

    def start(self) -> bytes:
        return self.event("SessionStart", source="startup")

    def prompt(self) -> bytes:
        self.n += 1
        return self.event("UserPromptSubmit", prompt_id=f"p-{self.n}")

    def reply(self) -> bytes:
        """The turn's prompt and reply written to the transcript; the Stop that ends it."""
        user, reply = f"u-{self.session[:4]}-{self.n}", f"a-{self.session[:4]}-{self.n}"
        with self.transcript.open("a") as out:
            out.write(
                line(
                    self.session,
                    "user",
                    user,
                    self.parent,
                    f"prompt {self.n}",
                    promptId=f"p-{self.n}",
                )
            )
            out.write(
                line(self.session, "assistant", reply, user, [{"type": "text", "text": "Done."}])
            )
        self.parent = reply
        return self.event("Stop", prompt_id=f"p-{self.n}", last_assistant_message="Done.")

    def ids(self) -> tuple[str, str]:
        """The prompt's and the reply's ids of the current turn."""
        return f"u-{self.session[:4]}-{self.n}", f"a-{self.session[:4]}-{self.n}"


def line(session: str, kind: str, uuid: str, parent: str | None, content: Any, **more: Any) -> str:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=f"msg_{uuid}", type="message", model="claude-test")
    record = {
        "parentUuid": parent,
        "isSidechain": False,
        "type": kind,
        "message": message,
        "uuid": uuid,
        "timestamp": "2026-12-01T10:00:00.000Z",
        "sessionId": session,
        **more,
    }
    return json.dumps(record, separators=(",", ":")) + "\n"


def no_lock_is_left(root: Path) -> None:
    """Every lock convgit takes can be taken at once, and git left no lock file."""
    store = root / ".git" / "convgit"
    for path in [*store.glob("locks/*.lock"), *store.glob("index/*.flock")]:
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError when held
        finally:
            os.close(fd)
    left = [p for p in (root / ".git").rglob("*.lock") if not p.is_relative_to(store / "locks")]
    assert not left, left
