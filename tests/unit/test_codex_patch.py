"""The files a Codex patch writes, read from the patch an apply_patch PostToolUse event carries:
added, updated and moved-to files, each once; a deleted file is none of them."""

from convgit.agents.codex.live import event, patched


def test_a_patch_names_the_files_it_leaves_written() -> None:
    patch = (
        "*** Begin Patch\n*** Add File: new.env\n+A=1\n"
        "*** Update File: src/app.py\n@@\n-x\n+y\n"
        "*** Update File: old.txt\n*** Move to: moved.txt\n@@\n-a\n+b\n"
        "*** Delete File: gone.txt\n"
        "*** Update File: new.env\n@@\n-A=1\n+A=2\n*** End Patch\n"
    )
    assert patched(patch) == ("new.env", "src/app.py", "old.txt", "moved.txt")


def test_only_apply_patch_events_name_files() -> None:
    base = {"hook_event_name": "PostToolUse", "session_id": "s1", "turn_id": "t1"}
    patch = {"command": "*** Begin Patch\n*** Add File: a.env\n+A\n*** End Patch\n"}
    found = event({**base, "tool_name": "apply_patch", "tool_input": patch})
    assert found.edited == ("a.env",) and found.prompt_id == "t1"
    shell = event({**base, "tool_name": "Bash", "tool_input": {"command": "*** Add File: b"}})
    assert shell.edited == ()
