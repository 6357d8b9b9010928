"""The command an agent's settings run for convgit's hook (``convgit.agents.hook_command``):
``python -S .../convgit/agents/live/thin.py hook AGENT [EVENT]``. It loads the recorder's thin
client (``client``) from this folder by itself, its compiled copy as ``convgit.agents.live.client``
has it, so that neither Python's module runner nor any module of convgit's package is imported
before the event reaches the recorder. When the recorder does not take the event, the hook does
the work in this process, exactly as ``python -S -m convgit hook`` does (``convgit.__main__``);
anything else asked of it is ``python -m convgit``'s."""

import os
import sys


def main() -> None:
    """Hand the hook's event to the recorder; else do it here, as ``convgit hook`` does."""
    import client  # type: ignore[import-not-found]  # this file's folder, first on the path

    del sys.path[0]  # the folder's other modules are convgit's, not Python's
    args = sys.argv[1:]
    if args[:1] != ["hook"] or "--help" in args or "-h" in args:
        flags = ["-S"] if sys.flags.no_site else []
        os.execv(sys.executable, [sys.executable, *flags, "-m", "convgit", *args])
    handed = client.run(args[1:])
    if isinstance(handed, int):  # recorded: what the agent reads was written unbuffered
        os._exit(handed)  # no interpreter teardown: about 2 ms of a 10 ms hook
    import gc

    gc.disable()  # as ``convgit.__main__`` runs a hook
    from convgit.agents import hook
    from convgit.base.leaving import leave

    leave(hook.run(args[1:], raw=handed))


if __name__ == "__main__":
    main()
