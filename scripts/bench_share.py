"""The sharing rows of scripts/bench.py (issue 25): `convgit push` and `convgit fetch` of a
session of many snapshotted turns on a generated tree, against plain `git push` and `git fetch`
of the same refs (the same objects) in the same run; and the bytes a second push sends after
one more turn, against the first push's."""

from __future__ import annotations

import shutil
import sys
from typing import Any

import orjson


def bench_share(bench: Any, files: int, turns: int, make_tree: Any, turns_of: Any) -> None:
    size = f"{turns} turns ({2 * turns} entries, {turns} snapshots) of {files:,} files"
    print(f"generating a {files:,}-file repository (sharing rows)", file=sys.stderr, flush=True)
    root = make_tree(bench, bench.root / f"share-{files}", files)
    change = turns_of(root)
    sid = orjson.loads(bench.convgit(root, "init", "--json").stdout)["id"]

    def turn() -> None:
        change.change()
        records = [
            {"type": "message", "role": "user", "content": f"turn {change.n}"},
            {"type": "message", "role": "assistant", "content": f"did turn {change.n}"},
        ]
        lines = b"".join(orjson.dumps(r) + b"\n" for r in records)
        bench.convgit(root, "append", "--json", input=lines)

    for _ in range(turns):
        turn()
    bench.convgit(root, "share", sid)
    remote = bench.root / "share-remote.git"
    specs = [f"refs/convgit/{sid}/*:refs/convgit/{sid}/*"]

    def fresh_remote() -> None:
        shutil.rmtree(remote, ignore_errors=True)
        bench.run(["git", "init", "-q", "--bare", str(remote)], bench.root)
        listed = bench.run(["git", "remote"], root).stdout.decode().split()
        if "origin" not in listed:
            bench.run(["git", "remote", "add", "origin", str(remote)], root)
        tracked = bench.run(
            ["git", "for-each-ref", "--format=delete %(refname)", "refs/convgit/_remote/"], root
        ).stdout
        bench.run(["git", "update-ref", "--stdin"], root, input=tracked)

    sent: dict[str, int] = {}

    def ours_first() -> float:
        fresh_remote()
        return bench.timed([*bench.cli, "push", "--json"], root)

    def git_first() -> float:
        fresh_remote()
        return bench.timed(["git", "push", "-q", "origin", *specs], root)

    a, b = bench.alternate(ours_first, git_first)
    bench.add("push of a shared session (first)", size, a, b, "git push of its refs", None)
    first = orjson.loads(bench.convgit(root, "push", "--dry-run", "--json").stdout)
    fresh_remote()
    sent["first"] = int(
        orjson.loads(bench.convgit(root, "push", "--json").stdout)["bytes"] or first["bytes"]
    )

    def ours_again() -> float:
        turn()
        before = bench.convgit(root, "push", "--dry-run", "--json").stdout
        sent["again"] = int(orjson.loads(before)["bytes"])
        return bench.timed([*bench.cli, "push", "--json"], root)

    def git_again() -> float:
        turn()
        return bench.timed(["git", "push", "-q", "origin", *specs], root)

    a, b = bench.alternate(ours_again, git_again)
    bench.add(
        "push after one more turn", size, a, b, "git push of its refs", None,
        note=f"sent {sent['again']:,} bytes (the first push: {sent['first']:,})",
    )  # fmt: skip
    bench.convgit(root, "push")
    clone = bench.root / "share-clone"

    def fresh_clone() -> None:
        shutil.rmtree(clone, ignore_errors=True)
        bench.run(["git", "init", "-q", "-b", "main", str(clone)], bench.root)
        bench.run(["git", "remote", "add", "origin", str(remote)], clone)

    def ours_fetch() -> float:
        fresh_clone()
        return bench.timed([*bench.cli, "fetch", "--json"], clone)

    def git_fetch() -> float:
        fresh_clone()
        refspecs = ["refs/convgit/*:refs/convgit/*"]
        return bench.timed(["git", "fetch", "-q", "origin", *refspecs], clone)

    a, b = bench.alternate(ours_fetch, git_fetch)
    bench.add("fetch of that session into a new clone", size, a, b, "git fetch of its refs", None)


__all__ = ["bench_share"]
