"""The remotes a plain ``git push`` sends convgit's refs to: a remote configured as a mirror
(``remote.<name>.mirror``, as ``git remote add --mirror=push`` sets it) or with a push refspec
that takes every ref (``refs/*``). ``git push --mirror`` and ``git clone --mirror`` carry every
``refs/convgit/*`` too, sessions never shared and their snapshots included; only the
configured ones can be seen from here."""

from __future__ import annotations

import os

from convgit.git.plumbing.run import Git

_EVERY_REF = ("refs/*", "+refs/*", "refs/convgit/*", "+refs/convgit/*")


def mirrors(git: Git) -> list[str]:
    """The remotes whose ``git push`` sends every ref of convgit's, sorted."""
    listed = git.run(
        "config", "-z", "--get-regexp", r"^remote\..*\.(mirror|push)$", check=False
    ).stdout
    found = set()
    for item in os.fsdecode(listed).split("\0"):
        key, _, value = item.partition("\n")
        name, _, setting = key.removeprefix("remote.").rpartition(".")
        if not name:
            continue
        mirrored = setting == "mirror" and value.strip().lower() in ("true", "yes", "on", "1", "")
        if mirrored or (setting == "push" and value.split(":", 1)[0].strip() in _EVERY_REF):
            found.add(name)
    return sorted(found)
