"""wificc: a laboratory for TCP congestion control over Wi-Fi.

``wificc.run(scenario)`` simulates a scenario (a dict, a TOML or JSON file, or TOML text) and
returns a :class:`Result` of pandas DataFrames; ``wificc.validate(scenario)`` returns the
scenario with every default filled in; ``wificc.cc_list()`` lists the congestion controls;
``wificc.sweep(grid, out)`` runs a parameter grid into a results directory (``wificc.sweep``
is also the module of that function, ``from wificc.sweep import ...``; calling the module
calls the function).

These names are imported on first use, so that importing a part of the package (the command
line) does not import the simulator, pandas and the rest.
"""

from importlib import import_module
from typing import Any

__all__ = ["Result", "cc_list", "run", "sweep", "validate"]

# Where each public name lives.
_PUBLIC = {
    "Result": "wificc.result",
    "cc_list": "wificc.api",
    "run": "wificc.api",
    "validate": "wificc.api",
}


def __getattr__(name: str) -> Any:
    if name == "sweep":
        # The submodule, which is callable (it runs wificc.sweep.sweep).
        return import_module("wificc.sweep")
    if name in _PUBLIC:
        value = getattr(import_module(_PUBLIC[name]), name)
        globals()[name] = value
        return value
    try:
        # A submodule (wificc._core, wificc.storage, ...), as if imported.
        return import_module(f"wificc.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"wificc.{name}":
            raise
    raise AttributeError(f"module 'wificc' has no attribute {name!r}")
