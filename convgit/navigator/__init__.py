"""``convgit ui``, the terminal navigator (textual). Only ``convgit ui`` imports it: every other
command, the hook and ``append`` start without textual."""
