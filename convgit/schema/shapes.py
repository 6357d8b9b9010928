"""The shape of each command's ``--json`` output, declared once: a ``TypedDict`` per shape,
its keys in the order the command prints them, and ``SHAPES``, the shape of each command (some
commands print one shape: ``fork`` prints a move's as ``switch`` does). docs/json.md's table
names these keys and is checked against them (tests/test_docs_pages.py), and every command's
real output is checked against them (tests/workspace/test_json_shapes.py); a report's
``to_json`` that returns a whole command's object, and an object a command builds where it
prints it, is typed as its shape, so mypy checks its keys too. The values are ``Any`` here:
what each holds is said in docs/json.md."""

from __future__ import annotations

from typing import Any, TypedDict


class InitJson(TypedDict):
    id: Any
    path: Any
    snapshots: Any


class MessageJson(TypedDict):
    type: Any
    role: Any
    content: Any
    id: Any
    ts: Any
    parentId: Any
    snapshot: Any
    files_from: Any


class ToolJson(TypedDict):
    type: Any
    role: Any
    content: Any
    toolCallId: Any
    isError: Any
    id: Any
    ts: Any
    parentId: Any
    snapshot: Any
    files_from: Any


class AppendJson(TypedDict):
    ids: Any
    leaf: Any
    files_from: Any


class SystemJson(TypedDict):
    leaf: Any
    system: Any
    entry: Any


class EntriesJson(TypedDict):
    session: Any
    leaf: Any
    entries: Any


class SessionsJson(TypedDict):
    sessions: Any


class BranchesJson(TypedDict):
    at: Any
    branches: Any


class UseJson(TypedDict):
    session: Any
    current: Any


class MoveJson(TypedDict):
    id: Any
    session: Any
    source: Any
    leaf: Any
    files_changed: Any
    note: Any


class LabelJson(TypedDict):
    id: Any
    label: Any
    moved_from: Any
    replaced: Any


class NameJson(TypedDict):
    session: Any
    name: Any


class StatusJson(TypedDict):
    session: Any
    name: Any
    leaf: Any
    leaf_snapshot: Any
    workspace: Any
    snapshots: Any
    files: Any
    left_alone: Any
    diverged: Any
    further_down: Any
    interrupted_restore: Any
    not_recorded: Any
    snapshot_skipped: Any
    files_error: Any
    watcher: Any
    recorder: Any
    hook_failures: Any
    store: Any
    mirrors: Any


class SnapshotJson(TypedDict):
    entry: Any
    files: Any
    unchanged: Any
    commit: Any
    tree: Any
    skipped: Any
    replaces: Any


class SnapshotsJson(TypedDict):
    session: Any
    snapshots: Any
    store: Any


class RestoreJson(TypedDict):
    entry: Any
    saved_state: Any
    undo: Any
    commit: Any
    before: Any
    saved: Any
    dry_run: Any
    note: Any
    note_skipped: Any
    interrupted: Any
    changes: Any
    replaced: Any
    left_alone: Any
    agent_files: Any


class RestoresJson(TypedDict):
    saved_states: Any


class WorktreeJson(TypedDict):
    added: Any
    removed: Any
    worktrees: Any


class RunJson(TypedDict):
    command: Any
    runs: Any
    failed: Any


class FsckJson(TypedDict):
    session: Any
    ok: Any
    problems: Any
    let_go: Any
    interrupted_gc: Any


class RepairJson(TypedDict):
    moved: Any
    backup: Any
    new_header: Any
    records: Any


class ImportJson(TypedDict):
    imports: Any


class HtmlJson(TypedDict):
    session: Any
    path: Any
    bytes: Any


class RedactJson(TypedDict):
    dry_run: Any
    sessions: Any
    runs: Any
    elsewhere: Any
    working_tree: Any
    remotes: Any
    dropped: Any
    gc: Any


class HooksStatusJson(TypedDict):
    agents: Any
    on_path: Any
    log: Any
    events: Any
    problems: Any
    last: Any
    last_problem: Any
    timing: Any
    hook_failures: Any


class RecorderStatusJson(TypedDict):
    running: Any
    pid: Any
    since: Any
    version: Any
    watcher: Any
    events: Any
    snapshots: Any
    latest_snapshot: Any
    why: Any
    setting: Any


class RecorderStopJson(TypedDict):
    stopped: Any
    pid: Any


class HooksDismissJson(TypedDict):
    dismissed: Any


class HooksInstallJson(TypedDict):
    agent: Any
    scope: Any
    path: Any
    changed: Any
    events: Any
    backup: Any
    hooks: Any
    excluded: Any


class SearchJson(TypedDict):
    query: Any
    filters: Any
    results: Any
    more: Any
    indexes: Any


class HooksUninstallJson(TypedDict):
    agent: Any
    scope: Any
    path: Any
    changed: Any
    events: Any
    backup: Any
    hooks: Any
    folders: Any
    recorder: Any


class SharingJson(TypedDict):
    session: Any
    shared: Any
    changed: Any
    mirrors: Any


class PushJson(TypedDict):
    remote: Any
    dry_run: Any
    pushed: Any
    tries: Any
    merged: Any
    replaced: Any
    bytes: Any
    sessions: Any
    notes: Any


class FetchJson(TypedDict):
    remote: Any
    merged: Any
    sessions: Any
    notes: Any


class WhyJson(TypedDict):
    commit: Any
    subject: Any
    found_by: Any
    session: Any
    entry: Any
    snapshot: Any
    exact: Any
    differ: Any
    path: Any
    predates: Any


class BlameJson(TypedDict):
    session: Any
    path: Any
    base: Any
    lines: Any


class AttributionRewriteJson(TypedDict):
    commits: Any


class DiffJson(TypedDict):
    changes: Any


class ShowJson(TypedDict):
    entry: Any
    snapshot: Any
    children: Any
    saved_state: Any
    let_go: Any


class TrashMoveJson(TypedDict):
    session: Any
    name: Any
    entries: Any
    files: Any
    refs: Any


class GcTrashJson(TypedDict):
    removed: Any
    leftover_refs: Any


class GcJson(TypedDict):
    dry_run: Any
    policy: Any
    let_go: Any
    kept: Any
    skipped: Any
    bytes: Any
    over_budget: Any
    rebased: Any
    objects: Any
    left: Any
    finished_interrupted: Any


class ContextJson(TypedDict):
    leaf: Any
    model: Any
    thinking: Any
    system: Any
    messages: Any
    dropped: Any


class ContextFormatJson(TypedDict):
    request: Any
    dropped: Any


class ResumeJson(TypedDict):
    agent: Any
    agent_session_id: Any
    path: Any
    command: Any
    entry: Any
    written: Any
    resume_at: Any
    files: Any


SHAPES: dict[str, type] = {
    "init": InitJson,
    "user": MessageJson,
    "assistant": MessageJson,
    "tool": ToolJson,
    "append": AppendJson,
    "system": SystemJson,
    "log": EntriesJson,
    "tree": EntriesJson,
    "sessions": SessionsJson,
    "branches": BranchesJson,
    "use": UseJson,
    "switch": MoveJson,
    "fork": MoveJson,
    "edit": MoveJson,
    "retry": MoveJson,
    "label": LabelJson,
    "name": NameJson,
    "status": StatusJson,
    "snapshot": SnapshotJson,
    "snapshots": SnapshotsJson,
    "restore": RestoreJson,
    "restores": RestoresJson,
    "worktree": WorktreeJson,
    "run": RunJson,
    "fsck": FsckJson,
    "repair": RepairJson,
    "import": ImportJson,
    "html": HtmlJson,
    "redact": RedactJson,
    "hooks status": HooksStatusJson,
    "recorder status": RecorderStatusJson,
    "recorder stop": RecorderStopJson,
    "hooks dismiss": HooksDismissJson,
    "hooks install": HooksInstallJson,
    "search": SearchJson,
    "hooks uninstall": HooksUninstallJson,
    "share": SharingJson,
    "unshare": SharingJson,
    "push": PushJson,
    "fetch": FetchJson,
    "pull": FetchJson,
    "why": WhyJson,
    "blame": BlameJson,
    "attribution rewrite": AttributionRewriteJson,
    "diff": DiffJson,
    "show": ShowJson,
    "sessions rm": TrashMoveJson,
    "sessions restore": TrashMoveJson,
    "gc --trash": GcTrashJson,
    "gc": GcJson,
    "context": ContextJson,
    "context --format": ContextFormatJson,
    "resume": ResumeJson,
}


def keys(command: str) -> tuple[str, ...]:
    """The keys ``command --json`` prints, in order."""
    return tuple(SHAPES[command].__annotations__)
