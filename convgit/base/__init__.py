"""The base every layer may use, standing on nothing of convgit's: ``errors`` (``ConvgitError``
and each subclass with its exit code), ``codec`` (lines to values and back), ``faults`` (the
named points where crash tests kill the process), ``locks`` (``flock(2)``), ``process_groups``
(one process group per command, timeouts, interruptions). Each module stands alone."""
