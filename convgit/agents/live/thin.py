"""The command an agent's settings run for convgit's hook (``convgit.agents.hook_command``):
``python -S .../thin.py hook AGENT [EVENT]``. It loads the recorder's thin client from this
folder by itself (its compiled copy, as ``convgit.agents.live.client`` has it), so that neither
Python's module runner nor convgit's package is imported before the event reaches the recorder;
the client runs convgit's own entry when the recorder does not take the event
(``client.main``)."""

import sys

import client  # type: ignore[import-not-found]  # this file's folder, first on the path

del sys.path[0]  # the folder's other modules are convgit's, not Python's
client.main()
