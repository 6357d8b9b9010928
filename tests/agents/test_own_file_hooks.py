"""Hooks that are a file of convgit's own in the agent's folder of extensions (pi's extension,
OpenCode's plugin: ``agents/own_file.py``): installing twice changes nothing the second time,
status names the scope, uninstalling gives the project back byte for byte (the folders the
install made go with it), and a file of the user's under convgit's name is refused and kept."""

from __future__ import annotations

import pytest

from tests.agents.hooked import convgit, convgit_json
from tests.workspace.gitrepo import GitRepo

# each agent: where its project-scope file goes, and a file of the user's under that name
FILES = {
    "pi": (".pi/extensions/convgit.ts", "export default function () {}\n"),
    "opencode": (".opencode/plugins/convgit.js", "export const Mine = async () => ({})\n"),
}


@pytest.mark.parametrize("agent", sorted(FILES))
def test_install_and_uninstall_give_the_project_back_as_it_was(
    agent: str, project: GitRepo
) -> None:
    where, users = FILES[agent]
    before = project.digest()
    convgit(project.path, "hooks", "install", agent)
    ours = project.path / where
    assert ours.is_file()
    again = convgit(project.path, "hooks", "install", agent)
    assert "nothing changed" in again
    status = convgit_json(project.path, "hooks", "status")["agents"][agent]
    assert [(s["scope"], s["state"], s["problem"]) for s in status] == [
        ("project", "installed", None),
        ("user", "not installed", None),
    ]
    convgit(project.path, "hooks", "uninstall", agent)
    assert project.digest() == before  # the folders the install made went with it

    # a file of the user's under convgit's name is refused and left as it is
    ours.parent.mkdir(parents=True)
    ours.write_text(users)
    convgit(project.path, "hooks", "install", agent, code=1)
    assert ours.read_text() == users
    convgit(project.path, "hooks", "uninstall", agent)
    assert ours.read_text() == users
