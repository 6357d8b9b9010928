"""The recorder's client inside the agent's own process, for the agents whose hooks are a plugin
of convgit's they load (pi's extension, OpenCode's plugin): the plugin hands each event to the
recorder over its Unix socket itself, no process started for it, and runs the hook's command,
as before, whenever the recorder does not record it.

The client (``inprocess.js``, with the thread that speaks to the socket while the agent waits,
``inprocess_worker.js``, or in Bun on Linux the agent's own thread through libc,
``inprocess_direct.js``; both end a stopped recorder by ``inprocess_process.js``) is written
into the plugin by ``fragment``, with what convgit knows
when it installs it: the package folder the hook's command runs (none when ``--command``
chose another program: that plugin always runs the command) and the thin client's protocol,
answers and timeouts (``client``). What depends on the event, the plugin finds as the thin
client finds it (``client.place``: the working tree above the event's folder, the folder of
this user's recorders, the key of the tree and ``CONVGIT_STORE``; ``client.package``: the
version in the package's ``__init__.py``), and anything it cannot find (no folder of the
recorders yet, ``GIT_DIR`` set, another user's socket) is left to the command, whose thin client
finds it the same way. The agent waits for the recorder as it waits for the hook's process: the
plugin's thread blocks (``Atomics.wait``) while the worker thread speaks to the socket, or
blocks in libc's calls itself, so the agent goes on only once the event is recorded, as with the
command. Bun starts a worker slowly and at the agent's cost (it measured +220 ms a turn where
the recorder's events took 40 ms): there the worker is used only when ``bun:ffi`` or glibc's
``libc.so.6`` cannot be loaded.

What differs from the thin client: the recorder's pid, which the thin client learns from the
socket (``SO_PEERCRED``, not in node), is read from its state file, and a process is ended only
when its command line names the recorder's key; the socket is trusted as this user's when it
is owned by them, in their own folder no one else may enter (``client.runtime_folder``), as the
recorder checks the plugin's uid as any client's.
"""

from __future__ import annotations

import json
from pathlib import Path

from convgit.agents.live import client

_HERE = Path(__file__).resolve().parent


def fragment(agent: str, program: str | None) -> str:
    """The client's text for ``agent``'s plugin, which runs ``program`` (None: this convgit,
    whose package folder the client names; another program: the client never speaks to a
    recorder, as it cannot know that program's convgit)."""
    from convgit.agents import hook_command

    package = None if program is not None else str(hook_command.THIN.parents[2])
    process = (_HERE / "inprocess_process.js").read_text()
    worker = (_HERE / "inprocess_worker.js").read_text().replace("@PROCESS@\n", process)
    direct = process + (_HERE / "inprocess_direct.js").read_text()
    values = {
        "@PACKAGE@": json.dumps(package),
        "@ARGS@": json.dumps([agent]),
        "@PROTOCOL@": json.dumps(client.PROTOCOL.decode()),
        "@HANDSHAKE_MS@": str(round(client.HANDSHAKE * 1000)),
        "@WAIT_MS@": str(round(client.WAIT * 1000)),
        "@BEAT_MS@": str(round(client.BEAT * 1000)),
        "@TAKEN@": str(client.TAKEN[0]),
        "@WORKER@": json.dumps(worker),
    }
    text = (_HERE / "inprocess.js").read_text().replace("@DIRECT@\n", direct)
    for name, value in values.items():
        text = text.replace(name, value)
    return text
