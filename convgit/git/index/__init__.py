"""The private index: its file format, the index itself, what it keeps out, the watchers that find
what changed."""
