"""The store's upkeep: what keeps a store over time, beside the sessions it holds. ``collecting``
(``convgit gc``: the snapshots and saved states the policy does not keep are let go) by the
policy of ``retention``; ``trash`` (``sessions rm`` and ``restore``, ``gc --trash``); ``redact``
(the one rewrite of history). Each works over the store's sessions through ``Session`` and its
parts, which know nothing of it."""
