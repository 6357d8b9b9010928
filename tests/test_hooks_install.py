"""`convgit hooks install|uninstall|status claude-code` merge into Claude Code's settings files
and never clobber them: every other key and hook (with all its fields) is kept, installing
twice changes nothing, a file that does not parse is refused and left as it is, the write is
atomic, and uninstalling gives the file back its meaning. Through the real CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from convgit.agents import settings
from convgit.agents.claude_code import live as claude_code
from tests import clirun

HOOK = claude_code.handler()
THEIRS = {"type": "command", "command": "./lint.sh", "timeout": 12, "statusMessage": "linting"}
# a user's settings: other hooks with every kind of field, unknown keys, nested values
RICH = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"], "deny": []},
    "env": {"A": "1"},
    "someFutureKey": {"nested": [1, 2.5, None, True, "ü"]},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Edit|Write", "hooks": [THEIRS, {"type": "http", "url": "http://x"}]},
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done", "async": True}]}],
        "Notification": [{"matcher": "", "hooks": [{"type": "prompt", "prompt": "hi"}]}],
        "UserPromptSubmit": [],
    },
}


def run(cwd: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    ran = clirun.run(*args, cwd=cwd, code=code)
    return subprocess.CompletedProcess(list(args), ran.code, ran.stdout, ran.stderr)


def local(project: Path) -> Path:
    return project / ".claude" / "settings.local.json"


def without_ours(value: Any) -> Any:
    """The meaning a settings value has without convgit: its handlers out, and every group,
    event and hooks object that holds no handler (an empty one means nothing to Claude)."""
    if not isinstance(value, dict) or not isinstance(value.get("hooks"), dict):
        return value
    hooks = {}
    for event, groups in value["hooks"].items():
        kept = []
        for group in groups:
            handlers = [h for h in group.get("hooks", []) if not claude_code.is_ours(h)]
            if handlers:
                kept.append({**group, "hooks": handlers})
        if kept:
            hooks[event] = kept
    rest = {k: v for k, v in value.items() if k != "hooks"}
    return {**rest, "hooks": hooks} if hooks else rest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    return folder


def write(path: Path, text: str) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path.read_bytes()


@pytest.mark.parametrize("before", ["", "# mine\n/.claude/settings.local.json\n!/.claude/*\n"])
def test_uninstall_takes_out_the_exclude_line_the_install_added_and_none_of_the_users(
    project: Path, before: str
) -> None:
    """``info/exclude`` gets its very bytes back: the line the install added for Claude's local
    file goes, and a line of the same text the user wrote before (let back in by a later ``!``
    line, so the install added its own below) stays."""
    exclude = project / ".git" / "info" / "exclude"
    exclude.write_text(before)
    said = run(project, "hooks", "install", "claude-code").stdout
    assert "added /.claude/settings.local.json to .git/info/exclude" in said
    assert exclude.read_text() == before + "/.claude/settings.local.json\n"
    run(project, "hooks", "uninstall", "claude-code")
    assert exclude.read_text() == before
    assert not local(project).exists()


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(RICH),
        json.dumps(RICH, indent=7, sort_keys=True, ensure_ascii=True),  # odd formatting
        "  {\n\n\t" + json.dumps(RICH, separators=(" ,", " : "))[1:] + "\n\n\n",
        "{}",
        "",
    ],
    ids=["compact", "indented-sorted", "odd-spacing", "empty-object", "empty-file"],
)
def test_install_keeps_everything_and_uninstall_gives_the_meaning_back(
    project: Path, text: str
) -> None:
    original = write(local(project), text)
    meaning = json.loads(text) if text.strip() else {}
    mode = 0o640
    os.chmod(local(project), mode)
    inode = local(project).stat().st_ino

    out = run(project, "hooks", "install", "claude-code").stdout
    assert "installed convgit's hooks" in out
    installed = json.loads(local(project).read_text())
    assert without_ours(installed) == without_ours(meaning)  # nothing of the user's is lost
    for event, matcher in claude_code.EVENTS.items():
        ours = [g for g in installed["hooks"][event] if HOOK in g["hooks"]]
        assert len(ours) == 1 and ours[0].get("matcher") == matcher
    assert local(project).stat().st_mode & 0o777 == mode
    assert local(project).stat().st_ino != inode  # replaced whole, by a rename
    if original:
        (backup,) = (project / ".git" / "convgit" / "backups").iterdir()
        assert backup.read_bytes() == original

    again = local(project).read_bytes()
    assert "nothing changed" in run(project, "hooks", "install", "claude-code").stdout
    assert local(project).read_bytes() == again

    run(project, "hooks", "uninstall", "claude-code")
    assert local(project).read_bytes() == original  # nothing else changed: its very bytes
    assert "nothing changed" in run(project, "hooks", "uninstall", "claude-code").stdout


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"hooks": {"Stop": [}', "is not valid JSON"),
        ('// a comment\n{"hooks": {}}', "is not valid JSON"),
        ('{"model": "a", "model": "b"}', "has the key 'model' twice"),
        ('{"timeout": NaN}', "NaN"),
        ("[1, 2]", "is not a JSON object"),
        ('{"hooks": []}', "'hooks' that is not an object"),
        ('{"hooks": {"Stop": {"command": "x"}}}', "hooks.Stop that is not a list"),
        ('{"hooks": {"Stop": ["x"]}}', "entry 1 that is not an object"),
        ("\ufeff{}", "is not valid JSON"),
    ],
    ids=[
        "syntax",
        "comment",
        "repeated-key",
        "nan",
        "array",
        "hooks-list",
        "event",
        "group",
        "bom",
    ],
)
def test_a_settings_file_that_does_not_parse_is_refused_and_left_alone(
    project: Path, text: str, problem: str
) -> None:
    original = write(local(project), text)
    for verb in ("install", "uninstall"):
        done = run(project, "hooks", verb, "claude-code", code=1)
        assert problem in done.stderr and done.stderr.count("\n") <= 2
        assert local(project).read_bytes() == original
    status = run(project, "hooks", "status").stdout
    assert "unreadable" in status


def test_an_older_convgit_handler_is_replaced_and_the_users_own_that_run_it_are_kept(
    project: Path,
) -> None:
    stale = {"type": "command", "command": "convgit hook claude-code"}  # no guard, no timeout
    piped = {"type": "command", "command": "tee /tmp/x | convgit hook claude-code"}
    write(
        local(project),
        json.dumps(
            {"hooks": {"Stop": [{"hooks": [stale, piped]}], "PreCompact": [{"hooks": [stale]}]}}
        ),
    )
    assert "out of date" in run(project, "hooks", "status").stdout
    run(project, "hooks", "install", "claude-code")
    installed = json.loads(local(project).read_text())
    assert "PreCompact" not in installed["hooks"]  # convgit no longer hooks it
    handlers = [h for g in installed["hooks"]["Stop"] for h in g["hooks"]]
    assert handlers == [piped, HOOK]
    assert "installed" in run(project, "hooks", "status").stdout
    run(project, "hooks", "uninstall", "claude-code")
    assert json.loads(local(project).read_text()) == {"hooks": {"Stop": [{"hooks": [piped]}]}}


def test_scopes_write_their_own_file_and_a_symlinked_file_stays_a_link(
    project: Path, tmp_path: Path
) -> None:
    home = Path(os.environ["HOME"])
    dotfiles = tmp_path / "dotfiles" / "claude.json"
    write(dotfiles, '{"theme": "dark"}')
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    user = home / ".claude" / "settings.json"
    user.unlink(missing_ok=True)
    user.symlink_to(dotfiles)
    try:
        run(project, "hooks", "install", "claude-code", "--scope", "project")
        run(project, "hooks", "install", "claude-code", "--scope", "user")
        assert "hooks" in json.loads((project / ".claude" / "settings.json").read_text())
        assert not local(project).exists()
        assert user.is_symlink() and json.loads(dotfiles.read_text())["theme"] == "dark"
        assert "hooks" in json.loads(dotfiles.read_text())
        status = json.loads(run(project, "hooks", "status", "--json").stdout)
        states = {s["scope"]: s["state"] for s in status["agents"]["claude-code"]}
        assert states == {"local": "not installed", "project": "installed", "user": "installed"}
        run(project, "hooks", "uninstall", "claude-code", "--scope", "user")
        assert json.loads(dotfiles.read_text()) == {"theme": "dark"}
    finally:
        user.unlink()
    run(project, "hooks", "install", "claude-code", "--scope", "team", code=2)


def bare_path(tmp_path: Path, *tools: str) -> Path:
    """A folder for PATH with a shell (and ``tools``) but no convgit."""
    bare = tmp_path / "bin"
    bare.mkdir(exist_ok=True)
    for tool in ("sh", "bash", *tools):
        found = shutil.which(tool)
        assert found is not None
        (bare / tool).unlink(missing_ok=True)
        (bare / tool).symlink_to(found)
    return bare


def test_the_installed_command_does_nothing_where_convgit_is_not_installed(
    project: Path, tmp_path: Path
) -> None:
    bare = bare_path(tmp_path)
    gone = claude_code.handler(str(tmp_path / "uninstalled" / "bin" / "convgit"))
    done = subprocess.run(
        [str(bare / "bash"), "-c", str(gone["command"])],
        cwd=project,
        env={"PATH": str(bare), "HOME": str(tmp_path)},
        input='{"hook_event_name": "Stop", "session_id": "s1"}',
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5))
_value = st.recursive(
    _leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
_handler = st.one_of(
    st.fixed_dictionaries({"type": st.just("command"), "command": st.text(max_size=8)}),
    st.just(HOOK),
    st.just({"type": "command", "command": "convgit hook claude-code"}),
    st.dictionaries(st.sampled_from(["type", "url", "timeout", "if"]), _leaf, max_size=3),
)
_group = st.fixed_dictionaries(
    {"hooks": st.lists(_handler, max_size=3)},
    optional={
        "matcher": st.sampled_from(["", "*", "Bash", "Write|Edit|MultiEdit|NotebookEdit|Bash"])
    },
)
_settings = st.fixed_dictionaries(
    {},
    optional={
        "hooks": st.dictionaries(
            st.sampled_from([*claude_code.EVENTS, "Notification", "PreCompact"]),
            st.lists(_group, max_size=3),
            max_size=4,
        ),
        "other": _value,
    },
)


@given(_settings)
def test_merge_and_remove_keep_every_other_handler_and_key(value: dict[str, Any]) -> None:
    """For any settings: install keeps the meaning without convgit and puts each handler in
    once; installing again is the same value; uninstall is the meaning without convgit."""
    merged = settings.merge(value, claude_code.wanted(), claude_code.is_ours)
    assert without_ours(merged) == without_ours(value)
    assert settings.merge(merged, claude_code.wanted(), claude_code.is_ours) == merged
    found = settings.installed(merged, claude_code.is_ours)
    assert {event: len(handlers) for event, handlers in found.items()} == dict.fromkeys(
        claude_code.EVENTS, 1
    )
    removed = settings.remove(merged, claude_code.is_ours)
    assert without_ours(removed) == without_ours(value)
    assert settings.installed(removed, claude_code.is_ours) == {}
    if without_ours(value) == value:  # nothing of convgit's and nothing empty: the same value
        assert removed == value


@pytest.mark.parametrize("had", ["nothing", "an empty folder", "the user's file after"])
def test_uninstall_removes_the_empty_claude_folder_the_install_made(
    project: Path, had: str
) -> None:
    """The ``.claude`` folder the install made for the settings file goes with the file, when
    the uninstall leaves it empty; one that was there before the install, or that holds
    anything else (a file of the user's written since), stays as it is."""
    folder = project / ".claude"
    if had == "an empty folder":
        folder.mkdir()
    run(project, "hooks", "install", "claude-code")
    if had == "the user's file after":
        (folder / "commands").mkdir()
        (folder / "commands" / "mine.md").write_text("the user's own\n")
    said = run(project, "hooks", "uninstall", "claude-code").stdout
    assert not local(project).exists()
    if had == "nothing":
        assert not folder.exists()
        assert "removed the empty folder .claude (the install made it)\n" in said
    else:
        assert folder.is_dir() and "removed the empty folder" not in said
    if had == "the user's file after":
        assert (folder / "commands" / "mine.md").read_text() == "the user's own\n"
    elif had == "an empty folder":
        assert list(folder.iterdir()) == []
