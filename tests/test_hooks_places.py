"""Where convgit's hooks leave things: `hooks install --scope local` keeps Claude's local settings
out of git as Claude does; outside a git repository the hooks keep one per-user store (under
$XDG_DATA_HOME) keyed by folder, and a folder that never had a turn gets nothing; `hooks
uninstall --scope user` gives ~/.claude/settings.json back byte for byte (a file the install
made is removed), its backups going to the per-user store. Through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests import clirun
from tests.test_hook import SESSION, event, line
from tests.workspace.gitrepo import GitRepo, init_repo


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A per-user folder and a Claude folder of the test's own."""
    return {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path / "xdg"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-home"),
    }


def run(cwd: Path, env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    return clirun.run(*args, cwd=cwd, env=env, input=stdin).stdout


def ignored(repo: GitRepo, path: str) -> bool:
    done = subprocess.run(["git", "check-ignore", "-q", path], cwd=repo.path)
    return done.returncode == 0


def test_install_local_keeps_the_local_settings_out_of_git(
    repo: GitRepo, env: dict[str, str]
) -> None:
    exclude = repo.path / ".git" / "info" / "exclude"
    before = exclude.read_bytes() if exclude.exists() else b""
    assert not ignored(repo, ".claude/settings.local.json")
    said = run(repo.path, env, "hooks", "install", "claude-code")
    assert ignored(repo, ".claude/settings.local.json")
    assert exclude.read_bytes() == before + b"/.claude/settings.local.json\n"
    assert ".git/info/exclude" in said
    assert "??" not in subprocess.run(
        ["git", "status", "--porcelain"], cwd=repo.path, capture_output=True, text=True
    ).stdout.replace("?? .claude/settings.local.json", "")  # nothing else appeared
    run(repo.path, env, "hooks", "uninstall", "claude-code")
    run(repo.path, env, "hooks", "install", "claude-code")  # ignored already: added once
    assert exclude.read_bytes() == before + b"/.claude/settings.local.json\n"


def test_install_local_leaves_exclude_alone_when_git_ignores_the_file_already(
    repo: GitRepo, env: dict[str, str], tmp_path: Path
) -> None:
    other = init_repo(tmp_path / "other")
    (other.path / ".gitignore").write_text(".claude/\n")
    exclude = other.path / ".git" / "info" / "exclude"
    before = exclude.read_bytes() if exclude.exists() else None
    said = json.loads(run(other.path, env, "hooks", "install", "claude-code", "--json"))
    assert said["excluded"] is None
    assert (exclude.read_bytes() if exclude.exists() else None) == before


def untracked(repo: GitRepo) -> list[str]:
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=True,
    )
    return [line[3:] for line in done.stdout.splitlines() if line.startswith("??")]


@pytest.mark.parametrize(
    ("agent", "made"),
    [
        ("copilot", ".github/hooks/convgit.json"),
        ("gemini", ".gemini/settings.json"),
        ("opencode", ".opencode/plugins/convgit.js"),
        ("pi", ".pi/extensions/convgit.ts"),
        ("qwen", ".qwen/settings.json"),
    ],
)
def test_an_install_keeps_convgits_own_file_out_of_git_and_its_snapshots(
    repo: GitRepo, env: dict[str, str], agent: str, made: str
) -> None:
    """The file an install writes into the working tree (its own plugin, a settings file it
    made) is kept out of `git status` and of the snapshots, through .git/info/exclude, and said;
    uninstall takes that line out again, and nothing else."""
    exclude = repo.path / ".git" / "info" / "exclude"
    before = exclude.read_bytes() if exclude.exists() else b""
    said = run(repo.path, env, "hooks", "install", agent)
    assert (repo.path / made).is_file() and ignored(repo, made)
    assert untracked(repo) == []
    assert exclude.read_bytes() == before + f"/{made}\n".encode()
    assert f"added /{made} to .git/info/exclude (git ignores it, a file of convgit's)" in said
    run(repo.path, env, "init")
    run(repo.path, env, "user", "hello")
    snapped = json.loads(run(repo.path, env, "snapshot", "--json"))
    assert made not in repo.tree_paths(snapped["tree"])
    assert "README.md" in repo.tree_paths(snapped["tree"])
    run(repo.path, env, "hooks", "install", agent)  # again: ignored already, added once
    assert exclude.read_bytes() == before + f"/{made}\n".encode()

    run(repo.path, env, "hooks", "uninstall", agent)
    assert not (repo.path / made).exists()
    assert exclude.read_bytes() == before


def test_a_settings_file_of_the_users_stays_in_git(env: dict[str, str], tmp_path: Path) -> None:
    """Gemini's project settings the user committed (or made, untracked) are theirs: convgit's
    hooks go in, and git keeps seeing the file."""
    other = init_repo(tmp_path / "other")
    other.write(".gemini/settings.json", json.dumps({"ui": {"hideTips": True}}))
    other.commit_all("the team's Gemini settings")
    exclude = other.path / ".git" / "info" / "exclude"
    before = exclude.read_bytes()
    said = json.loads(run(other.path, env, "hooks", "install", "gemini", "--json"))
    assert said["excluded"] is None and exclude.read_bytes() == before
    assert not ignored(other, ".gemini/settings.json")
    other.git("rm", "-q", "--cached", ".gemini/settings.json")  # untracked, still the user's
    run(other.path, env, "hooks", "install", "gemini")
    assert untracked(other) == [".gemini/settings.json"]
    run(other.path, env, "hooks", "uninstall", "gemini")
    assert exclude.read_bytes() == before
    assert json.loads((other.path / ".gemini/settings.json").read_text()) == {
        "ui": {"hideTips": True}
    }


def test_outside_git_the_hooks_keep_a_per_user_store_and_a_folder_without_a_turn_gets_nothing(
    tmp_path: Path, env: dict[str, str]
) -> None:
    xdg = tmp_path / "xdg"
    idle, busy = tmp_path / "idle", tmp_path / "busy"
    idle.mkdir()
    busy.mkdir()
    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_text("")
    hook = ("hook", "claude-code")
    for name in ("SessionStart", "SessionEnd"):  # an older install's events, no turn
        assert (
            run(idle, env, *hook, stdin=event(name, transcript, idle, source="startup").decode())
            == ""
        )
    assert list(idle.iterdir()) == []
    assert not (xdg / "convgit" / "folders").exists()

    assert run(busy, env, *hook, stdin=event("UserPromptSubmit", transcript, busy).decode()) == ""
    with transcript.open("a") as out:
        out.write(line("user", "u-1", None, "Hello"))
        out.write(line("assistant", "a-1", "u-1", [{"type": "text", "text": "Hi."}]))
    stop = event("Stop", transcript, busy, last_assistant_message="Hi.").decode()
    assert run(busy, env, *hook, stdin=stop) == ""
    assert list(busy.iterdir()) == []  # no .convgit in the folder
    (store,) = (xdg / "convgit" / "folders").iterdir()
    assert store.name.startswith("busy-")
    path = json.loads(run(busy, env, "log", "--json"))["entries"]
    assert path[0]["content"] == "Hello"
    assert "problem" not in (store / "logs" / "hooks.log").read_text()


@pytest.mark.parametrize(
    "before",
    [None, b'{"theme":"dark","hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}}'],
    ids=["no-file", "compact-file"],
)
def test_uninstall_user_gives_the_settings_back_byte_for_byte(
    tmp_path: Path, env: dict[str, str], before: bytes | None
) -> None:
    plain = tmp_path / "somewhere"  # not a repository, as a user's home often is not
    plain.mkdir()
    settings = Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    if before is not None:
        settings.parent.mkdir()
        settings.write_bytes(before)
    run(plain, env, "hooks", "install", "claude-code", "--scope", "user")
    assert "UserPromptSubmit" in json.loads(settings.read_text())["hooks"]
    run(plain, env, "hooks", "uninstall", "claude-code", "--scope", "user")
    assert (settings.read_bytes() if settings.exists() else None) == before
    assert list(plain.iterdir()) == []  # no backups (nor store) in the folder it ran in
    backups = tmp_path / "xdg" / "convgit" / "backups"
    assert backups.is_dir() and list(backups.iterdir())


def test_copilots_user_hooks_go_beside_the_users_own_under_copilot_home(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """GitHub Copilot CLI's user scope is ``$COPILOT_HOME/hooks/``: a hooks file of the user's
    under convgit's name, in the CLI's documented flat shape, keeps its handler; convgit's go in
    as groups of their own, one command per event naming it (the CLI's payload does not), and
    uninstall gives the file back byte for byte."""
    home = tmp_path / "copilot-home"
    env = {**env, "COPILOT_HOME": str(home)}
    theirs = {"type": "command", "bash": "./notify.sh", "timeoutSec": 5}
    hooks = home / "hooks" / "convgit.json"
    hooks.parent.mkdir(parents=True)
    hooks.write_text(json.dumps({"version": 1, "hooks": {"agentStop": [theirs]}}))
    before = hooks.read_bytes()
    plain = tmp_path / "somewhere"
    plain.mkdir()
    run(plain, env, "hooks", "install", "copilot", "--scope", "user")
    installed = json.loads(hooks.read_text())
    assert installed["version"] == 1 and installed["hooks"]["agentStop"][0] == theirs
    ours = {
        event: [(g.get("matcher"), h["command"]) for g in groups[-1:] for h in g["hooks"]]
        for event, groups in installed["hooks"].items()
    }
    assert sorted(ours) == ["agentStop", "postToolUse", "userPromptSubmitted"]
    for name, [(matcher, command)] in ours.items():
        assert f"convgit hook copilot {name}" in command  # its event named, as the CLI does not
        assert matcher == ("create|edit|apply_patch" if name == "postToolUse" else None)
    status = json.loads(run(plain, env, "hooks", "status", "copilot", "--json"))
    assert [(s["scope"], s["state"]) for s in status["agents"]["copilot"]] == [
        ("project", "not installed"),
        ("user", "installed"),
    ]
    run(plain, env, "hooks", "uninstall", "copilot", "--scope", "user")
    assert hooks.read_bytes() == before


def test_a_settings_file_qwen_rewrote_since_the_install_goes_with_the_uninstall(
    repo: GitRepo, env: dict[str, str]
) -> None:
    """Qwen Code rewrites its settings files at its start (its own format, and its settings'
    ``$version``): the file the install made still goes at uninstall, with its line in
    .git/info/exclude, since nothing in it is the user's."""
    exclude = repo.path / ".git" / "info" / "exclude"
    before = exclude.read_bytes() if exclude.exists() else b""
    run(repo.path, env, "hooks", "install", "qwen")
    made = repo.path / ".qwen" / "settings.json"
    value = json.loads(made.read_text())
    made.write_text(json.dumps({**value, "$version": 4}, indent=2))  # as Qwen leaves it
    said = json.loads(run(repo.path, env, "hooks", "uninstall", "qwen", "--json"))
    assert said["changed"] is True
    assert not made.exists() and exclude.read_bytes() == before
