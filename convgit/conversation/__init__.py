"""The conversation track as pure values and functions over them, no I/O beyond what it is
handed: the tree (``tree``), what replay sends the model (``replay``), what an append may write
(``appending``) and the parts of a message (``parts``). It never imports the store, git or a
session."""
