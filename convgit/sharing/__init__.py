"""Sharing sessions through git remotes: ``convgit share``, ``push``, ``fetch`` and ``pull``.

A shared session travels as git objects on refs under ``refs/convgit/`` (``refs``): its file and
sidecar in a session commit (``session_commit``), its snapshot and saved-state commits by their
own refs. Two clones that both appended merge by union of entries (``merge``); nothing leaves
the machine unless ``convgit push`` sends it, after a scan for secrets (``secrets``). Only the
command line imports this package.
"""
