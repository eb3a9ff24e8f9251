"""Checks of the simulator against the running kernel, one module per suite."""
