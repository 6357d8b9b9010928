"""The rules outside the working tree that decide what a snapshot leaves out: git's
``info/exclude``, the excludes file (``core.excludesFile``, else ``$XDG_CONFIG_HOME/git/ignore``)
and, in a sparse checkout, its patterns (``info/sparse-checkout``).

A snapshot records them, as the first round recorded ``.gitignore`` by snapshotting it: a copy
of each file, byte for byte, in a folder of the store named by the hash of their contents
(``rules/<id>/exclude``, ``excludesFile``, ``sparse-checkout``), and the snapshot's sidecar
record names that id. The store keeps them, not git: nothing a `git gc` could collect, and no
ref added to the repository. Most turns the files did not move, and the id recorded last is
named again without reading them (their identities are remembered beside the private index, in
``<index>.rules``).

A restore then judges "left out by a rule" by the rules in force when its target was taken: a
file the target lacks that those rules ignored, or that lay outside that sparse checkout, is left
alone, even after the exclude line is gone or the cone widened. A snapshot without recorded
rules (taken before convgit recorded them) is judged by today's files. And whatever its target,
a restore never writes or deletes a path outside today's sparse checkout (``outside_sparse``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from convgit.base.errors import WorkspaceError
from convgit.base.valueclass import valueclass
from convgit.git.plumbing.objects import BLOB, EXEC, LEGACY_BLOB, Objects
from convgit.git.plumbing.paths import folders_above
from convgit.git.plumbing.run import SAFE, Git, git_words

EXCLUDE, EXCLUDES_FILE, SPARSE = "exclude", "excludesFile", "sparse-checkout"
_TRUE = ("", "true", "yes", "on", "1")


@valueclass(frozen=True)
class RuleFiles:
    """Where the rules outside the working tree are read from, now."""

    exclude: Path
    excludes_file: Path
    sparse: Path | None  # None: not a sparse checkout

    def named(self) -> dict[str, Path]:
        found = {EXCLUDE: self.exclude, EXCLUDES_FILE: self.excludes_file}
        if self.sparse is not None:
            found[SPARSE] = self.sparse
        return found

    def fingerprint(self) -> str:
        """Identity (name, path, mtime, size) of each file: another value means read them."""
        parts = []
        for name, path in self.named().items():
            try:
                info = path.stat()
                parts.append(f"{name}={path}:{info.st_mtime_ns}:{info.st_size}")
            except OSError:
                parts.append(f"{name}={path}:-")
        return "|".join(parts)

    def contents(self) -> dict[str, bytes]:
        """name -> the bytes of each rule file that exists now."""
        found = {}
        for name, path in self.named().items():
            try:
                found[name] = path.read_bytes()
            except OSError:
                continue
        return found


def find(git: Git) -> RuleFiles:
    """The rule files of ``git``'s worktree, as git's configuration names them (one git)."""
    listed = git.run(
        "config", "-z", "--get-regexp", r"^core\.(excludesfile|sparsecheckout)$", check=False
    ).stdout
    settings: dict[str, str] = {}
    for item in listed.split(b"\0"):
        key, _, value = os.fsdecode(item).partition("\n")
        if key:
            settings[key.lower()] = value  # the last one wins, as in git
    configured = settings.get("core.excludesfile", "")
    if configured:
        excludes = Path(os.path.expanduser(configured))
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
        excludes = Path(xdg, "git", "ignore")
    sparse_on = settings.get("core.sparsecheckout", "false").lower() in _TRUE
    return RuleFiles(
        git.common_dir / "info" / "exclude",
        excludes,
        git.git_dir / "info" / "sparse-checkout" if sparse_on else None,
    )


def record(files: RuleFiles, cache: Path, home: Path) -> str:
    """The id of the rules in ``files``, copied into ``home/<id>/`` (once). ``cache``
    remembers the files' identity and the id last recorded for it: while they did not move and
    that copy is there, nothing is read."""
    fingerprint = files.fingerprint()
    try:
        known, rules_id = [*cache.read_text().split("\n"), ""][:2]
    except OSError:
        known = rules_id = ""
    if known == fingerprint and rules_id and (home / rules_id).is_dir():
        return rules_id
    import hashlib  # here: a snapshot whose rules did not move never needs it

    contents = files.contents()
    digest = hashlib.sha1()
    for name in sorted(contents):
        digest.update(f"{name}\0{len(contents[name])}\0".encode() + contents[name])
    rules_id = digest.hexdigest()
    if not (home / rules_id).is_dir():
        import shutil
        import tempfile

        home.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{rules_id}-", dir=home))
        for name, data in contents.items():
            (scratch / name).write_bytes(data)
        try:
            os.rename(scratch, home / rules_id)
        except OSError:  # another process copied the same rules first
            shutil.rmtree(scratch, ignore_errors=True)
    temporary = Path(f"{cache}.tmp")
    temporary.write_text(f"{fingerprint}\n{rules_id}\n")
    os.replace(temporary, cache)
    return rules_id


def recorded(home: Path, rules_id: str) -> dict[str, bytes] | None:
    """The rules a snapshot recorded (name -> bytes), or None when their copy is gone or
    unreadable: the snapshot is then judged by today's rules."""
    folder = home / rules_id
    if not rules_id.isalnum() or not folder.is_dir():
        return None
    try:
        return {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file()}
    except OSError:
        return None


def unaccounted(
    git: Git,
    objects: Objects,
    target_tree_id: str,
    current_tree_id: str,
    then: Mapping[str, bytes] | None,
    paths: list[str],
) -> dict[str, str]:
    """Why the target tree does not account for each of ``paths`` (files it lacks) by its rules:
    its .gitignore files with the rules outside the working tree recorded with it (``then``;
    today's when None), and the sparse checkout it was taken in. Asks git only when some of
    those rules differ from the ones the files now obey (files ignored now are left alone)."""
    if not paths:
        return {}
    gitignores, differs = _gitignores(objects, target_tree_id, current_tree_id, paths)
    if then is None and not differs:
        return {}
    today = find(git)
    now = today.contents()
    found: dict[str, str] = {}
    sparse = None if then is None else then.get(SPARSE)
    if sparse is not None and sparse != now.get(SPARSE):
        inside = _matched(git, {}, {EXCLUDE: sparse}, today, paths)
        for path in paths:
            if path not in inside:
                found[path] = "not in the snapshot: outside the sparse checkout then"
    rest = [p for p in paths if p not in found]
    if then is not None:
        rules = {k: v for k, v in then.items() if k != SPARSE}
        differs = differs or rules != {k: v for k, v in now.items() if k != SPARSE}
    if rest and differs:
        sources = _matched(git, gitignores, None if then is None else rules, today, rest)
        then_said = "" if then is None else " when the snapshot was taken"
        for path, source in sources.items():
            found[path] = {
                EXCLUDE: f"ignored by info/exclude{then_said}",
                EXCLUDES_FILE: f"ignored by the excludes file (core.excludesFile){then_said}",
            }.get(source, "ignored by the snapshot's .gitignore")
    return found


def outside_sparse(git: Git, files: RuleFiles, paths: list[str]) -> set[str]:
    """Those of ``paths`` that lie outside the sparse checkout now (cone or not: git's patterns
    in ``info/sparse-checkout``, matched as git matches them); none outside one."""
    if files.sparse is None or not paths:
        return set()
    try:
        patterns = files.sparse.read_bytes()
    except OSError:
        return set()  # no patterns file: git checks out everything
    inside = _matched(git, {}, {EXCLUDE: patterns}, files, paths)
    return {path for path in paths if path not in inside}


def _gitignores(
    objects: Objects, target_tree_id: str, current_tree_id: str, paths: list[str]
) -> tuple[dict[str, bytes], bool]:
    """The target's .gitignore files on the way to ``paths`` (name -> blob id), and whether
    any of them differs from the files now."""
    folders = {lead for path in paths for lead in ("", *folders_above(path))}
    found: dict[str, bytes] = {}
    differs = False
    for folder in sorted(folders):
        name = f"{folder}/.gitignore" if folder else ".gitignore"
        theirs = objects.lookup(target_tree_id, name)
        differs = differs or theirs != objects.lookup(current_tree_id, name)
        if theirs is not None and theirs[0] in (BLOB, EXEC, LEGACY_BLOB):
            found[name] = objects.blob(theirs[1])
    return found, differs


def _matched(
    git: Git,
    gitignores: Mapping[str, bytes],
    rules: Mapping[str, bytes] | None,
    today: RuleFiles,
    paths: list[str],
) -> dict[str, str]:
    """path -> which rules ignore it (".gitignore", ``EXCLUDE`` or ``EXCLUDES_FILE``), asked of
    `git check-ignore` in a scratch working tree holding ``gitignores``. A scratch git dir holds
    ``rules`` (recorded ones); when None, the repository's own info/exclude and excludes file
    (``today``) are used."""
    import tempfile  # here: only a restore asks

    with tempfile.TemporaryDirectory(prefix="convgit-rules-") as scratch:
        tree = Path(scratch, "tree")
        tree.mkdir()
        for name, data in gitignores.items():
            target = tree / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        git_dir, exclude, excludes = git.git_dir, today.exclude, today.excludes_file
        settings: list[str] = []
        if rules is not None:
            git_dir = Path(scratch, "git")
            for folder in ("objects", "refs", "info"):
                (git_dir / folder).mkdir(parents=True)
            (git_dir / "HEAD").write_text("ref: refs/heads/rules\n")
            exclude, excludes = git_dir / "info" / "exclude", Path(scratch, "excludes")
            exclude.write_bytes(rules.get(EXCLUDE, b""))
            excludes.write_bytes(rules.get(EXCLUDES_FILE, b""))
            settings = ["-c", f"core.excludesFile={excludes}"]
        proc = subprocess.run(
            [
                "git", f"--git-dir={git_dir}", f"--work-tree={tree}",
                *(part for setting in SAFE for part in ("-c", setting)), *settings,
                "check-ignore", "-v", "-z", "--no-index", "--stdin",
            ],
            cwd=tree, env=git.env, capture_output=True,
            input=b"\0".join(map(os.fsencode, paths)) + b"\0", check=False,
        )  # fmt: skip
    if proc.returncode not in (0, 1):
        raise WorkspaceError(f"git check-ignore failed: {git_words(proc.stderr, proc.returncode)}")
    fields = proc.stdout.split(b"\0")
    found: dict[str, str] = {}
    for at in range(0, len(fields) - 3, 4):
        source, _, pattern, path = fields[at : at + 4]
        if pattern.startswith(b"!"):
            continue  # a negated pattern matched: the path is not ignored
        where = os.fsdecode(source)
        if where == str(excludes):
            found[os.fsdecode(path)] = EXCLUDES_FILE
        elif where == str(exclude) or where.endswith("/info/exclude"):
            found[os.fsdecode(path)] = EXCLUDE
        else:
            found[os.fsdecode(path)] = ".gitignore"
    return found
