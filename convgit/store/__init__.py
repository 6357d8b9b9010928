"""The append-only files of a store, no git: where they live (``location``), appending and
reading them (``jsonl``), loading a session and its sidecar (``load``), the sidecar as values
(``sidecar``)."""
