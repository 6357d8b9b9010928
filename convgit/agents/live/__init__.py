"""Recording an agent as it works, from its hooks: one event at a time (``turns.record``), in the
session that mirrors the agent's session (``mirroring``), the turn's own state in a small file
beside the agent session's pointer (``state``). Every agent's adapter (its folder's ``live``
part) reads its events into one ``events.Event``."""
