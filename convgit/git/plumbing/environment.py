"""The environment git runs in: the caller's, scrubbed of what would point git elsewhere (the
standard library alone: a reply's snapshot starts its first git with it before convgit's modules
are imported, ``convgit.git.index.survey_plan``)."""

from __future__ import annotations

import os

# Variables that point git at another repository, index or object store, or change what a
# pathspec means: the store's discovery honours them, and they never leak into our commands.
LOCAL_GIT_VARS = frozenset(
    [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_INDEX_VERSION",
        "GIT_COMMON_DIR",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_IMPLICIT_WORK_TREE",
        "GIT_GRAFT_FILE",
        "GIT_NO_REPLACE_OBJECTS",
        "GIT_REPLACE_REF_BASE",
        "GIT_PREFIX",
        "GIT_SHALLOW_FILE",
        "GIT_NAMESPACE",
        "GIT_CEILING_DIRECTORIES",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
        "GIT_QUARANTINE_PATH",
        "GIT_OPTIONAL_LOCKS",
        "GIT_LITERAL_PATHSPECS",
        "GIT_GLOB_PATHSPECS",
        "GIT_NOGLOB_PATHSPECS",
        "GIT_ICASE_PATHSPECS",
        "GIT_REFLOG_ACTION",
        "GIT_EXTERNAL_DIFF",
    ]
)


def scrubbed_env() -> dict[str, str]:
    """The environment git runs in: the caller's, without the variables that would point it
    elsewhere or an identity of the user's, in the C locale (a few messages are parsed)."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in LOCAL_GIT_VARS and not name.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_"))
    }
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def user_env() -> dict[str, str]:
    """The environment for a user's command run in a worktree convgit made: the caller's,
    without the variables that would point git at another repository, index or object store."""
    return {name: value for name, value in os.environ.items() if name not in LOCAL_GIT_VARS}
