"""Running git and reading what it keeps: the runner, objects, trees changed, patches, remotes,
paths."""
