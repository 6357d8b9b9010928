"""Pushes that meet on the remote, through ``git daemon`` on 127.0.0.1: two clones pushing at
once both get their turns there (the one that lost the race fetches, merges and pushes again),
and a remote hook's refusal reaches the user in the remote's own words."""

from __future__ import annotations

import stat
from pathlib import Path

import orjson

from tests.clirun import start as start_cli
from tests.sharing.clones import Clone, another_clone, bare, daemon, first_clone
from tests.workspace.cli import one_sentence
from tests.workspace.gitrepo import UserStateGuard

# Holds each push in the remote until two have arrived (10 s at most), so both were sent
# against the same refs and only one can take them first.
BARRIER = """#!/bin/sh
cat >/dev/null
touch "$GIT_DIR/arrived.$$"
i=0
while [ "$(ls "$GIT_DIR" | grep -c '^arrived\\.')" -lt 2 ] && [ $i -lt 100 ]; do
  sleep 0.1; i=$((i+1))
done
exit 0
"""

REFUSING = """#!/bin/sh
cat >/dev/null
echo "policy: pushes to this repository need a ticket number"
exit 1
"""


def shared_session(clone: Clone) -> str:
    """A session of one turn, shared."""
    clone.run("init")
    clone.write("app.py", "print('one')\n")
    clone.run("user", "make it print one")
    sid = clone.session()
    clone.run("share", sid)
    return sid


def hook(repo: Path, text: str) -> None:
    path = repo / "hooks" / "pre-receive"
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_two_clones_pushing_at_once_both_land(
    tmp_path: Path, user_state_guard: UserStateGuard
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    remote = bare(served / "shared.git")
    with daemon(served) as url:
        a = first_clone(tmp_path / "a", url + "shared.git")
        b = another_clone(tmp_path / "b", url + "shared.git")
        for clone in (a, b):
            user_state_guard.watch(clone.path)
        sid = shared_session(a)
        a.run("push")
        b.run("fetch")
        a.run("user", "from a")
        b.run("--session", sid, "user", "from b")
        hook(remote, BARRIER)
        pushes = [start_cli("--session", sid, "push", "--json", cwd=c.path) for c in (a, b)]
        done = [p.communicate(timeout=120) for p in pushes]
        for proc, (_, err) in zip(pushes, done, strict=True):
            assert proc.returncode == 0, err  # never git's bare "failed to push some refs"
        tries = sorted(orjson.loads(out)["tries"] for out, _ in done)
        assert tries == [1, 2]  # the one that lost fetched, merged and pushed again
        a.run("pull")
        b.run("pull")
        union = {e.get("content") for e in a.entries(sid).values()}
        assert {"from a", "from b"} <= union and a.entries(sid) == b.entries(sid)


def test_a_remote_hooks_refusal_is_shown_in_its_words(
    tmp_path: Path, user_state_guard: UserStateGuard
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    remote = bare(served / "shared.git")
    with daemon(served) as url:
        a = first_clone(tmp_path / "a", url + "shared.git")
        user_state_guard.watch(a.path)
        shared_session(a)
        hook(remote, REFUSING)
        refused = a.run("push", code=1)
        sentence = one_sentence(refused.stderr)
        assert "pushes to this repository need a ticket number" in sentence
        assert "failed to push some refs" not in sentence, sentence
