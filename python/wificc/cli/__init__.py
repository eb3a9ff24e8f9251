"""The ``wificc`` command line (typer + rich), one module per command group:

* :mod:`~wificc.cli.runs`: ``run``, ``check``, ``demo``, ``bench``, ``model``;
* :mod:`~wificc.cli.catalog`: ``cc list|show``, ``tests``, ``schema``, ``reference``;
* :mod:`~wificc.cli.studies`: ``sweep``, ``reproduce``, ``plot``, ``report``, ``flent``;
* :mod:`~wificc.cli.kernel`: ``emu run|cleanup``, ``validate``, ``validate-grid``;
* :mod:`~wificc.cli.bpf`: ``bpf build|load|unload|list|set``;

and :mod:`~wificc.cli.common`, what they share. Importing the command line imports no simulator,
pandas, pyarrow, matplotlib, scipy or dask: each command imports what it needs when it runs.

A scenario the core rejects, a bad option or an unreadable file is reported as one line
``error: field: message`` on stderr with exit code 2, never a traceback. Tables go to stdout,
progress bars to stderr, so ``--json`` output stays machine-readable. Ctrl-C ends a run, a
sweep or a reproduction with exit code 130 after saying what was stored and how to resume.
"""

# Each module adds its commands to the app; `wificc --help` lists them in this order.
# isort: off
from wificc.cli import runs, catalog, studies, kernel, bpf
from wificc.cli.common import EXIT_INTERRUPTED, EXIT_USER_ERROR, app, user_errors

# isort: on

__all__ = ["EXIT_INTERRUPTED", "EXIT_USER_ERROR", "app", "bpf", "catalog", "kernel", "runs", "studies", "user_errors"]
