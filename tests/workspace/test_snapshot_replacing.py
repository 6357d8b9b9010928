"""`convgit snapshot REF` on an entry other than the active leaf that has a snapshot already
asks first (on a terminal; elsewhere it needs --yes), and says that the old snapshot stays as
the new one's parent. Every example runs the real CLI on a real repository, under the guard
that the user's index, HEAD, branches, tags and stash never change."""

from __future__ import annotations

from tests.workspace.cli import convgit, one_sentence
from tests.workspace.gitrepo import GitRepo
from tests.workspace.test_restore_rules import on_a_terminal


def story(repo: GitRepo) -> dict[str, str]:
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()
    repo.write("src/app.py", "print('plan A')\n")
    a = convgit(repo.path, "assistant", "plan A", "--json").json()["id"]
    repo.write("src/app.py", "print('edited by hand')\n")
    return {"task": task["id"], "old": task["snapshot"]["commit"], "a": a}


def test_replacing_another_entrys_snapshot_needs_yes_without_a_terminal(repo: GitRepo) -> None:
    ids = story(repo)
    for extra in ([], ["--json"]):
        error = convgit(repo.path, "snapshot", ids["task"], *extra, code=1).stderr
        sentence = one_sentence(error)
        assert "is not the active leaf and has a snapshot already" in sentence
        assert "needs --yes" in sentence and "nothing was recorded" in sentence
        assert "stays as the new one's parent" in error
    assert (
        convgit(repo.path, "show", ids["task"], "--json").json()["snapshot"]["commit"]
        == (ids["old"])
    )
    done = convgit(repo.path, "snapshot", ids["task"], "--yes")
    assert f"its previous snapshot {ids['old'][:12]} is kept as the parent" in done.stdout
    again = convgit(repo.path, "snapshot", ids["task"], "--yes", "--json").json()
    assert again["unchanged"] is True
    back = convgit(repo.path, "diff", f"{ids['task']}@{{1}}", ids["task"], "--json").json()[
        "changes"
    ]
    assert back == [{"path": "src/app.py", "status": "modified"}]


def test_on_a_terminal_it_asks_and_the_leaf_or_the_same_files_need_no_asking(
    repo: GitRepo,
) -> None:
    ids = story(repo)
    code, out = on_a_terminal(repo.path, "snapshot", ids["task"], answer=b"\n")
    assert code == 1 and "stays as the new one's parent" in out
    assert f"record the files now as the snapshot of {ids['task']}? [y/N]" in out
    code, out = on_a_terminal(repo.path, "snapshot", ids["task"], answer=b"y\n")
    assert code == 0 and "is kept as the parent" in out
    convgit(repo.path, "snapshot", ids["task"])  # the same files: nothing to replace
    convgit(repo.path, "snapshot", ids["a"])  # the active leaf: the usual snapshot
