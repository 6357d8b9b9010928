"""The restore: its plan, the guard that looks again before a file changes, the operation (plan,
save, apply), exact bytes, what is kept."""
