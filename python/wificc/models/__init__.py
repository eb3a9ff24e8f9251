"""Analytic models of the published studies, each with ``table``, ``figure``, ``run``.

* ``hybrid``: the wired, Wi-Fi and hybrid bottleneck model of the Wi-Fi 6 study.
* ``startup``: BBR's Startup gain (2/ln 2, 4 ln 2) and a round-by-round simulation.
* ``pg-fluid``: the fluid model of two BBR flows probing in turn, after BBR-PG.

:data:`MODELS` maps the name a user types (``wificc model NAME``) to the model's
``run``, which takes the model's parameters as keyword arguments and returns JSON-ready
tables.
"""

from collections.abc import Callable
from importlib import import_module
from typing import Any

# The models by the name a user types, in the order they are listed; their modules (numpy,
# pandas, scipy, matplotlib) are imported when MODELS or FIGURES is first used, so that the
# command line can list the names without them.
NAMES = ("hybrid", "startup", "pg-fluid")


def _models() -> dict[str, Callable[..., dict[str, Any]]]:
    hybrid, startup, pg_fluid = (import_module(f"wificc.models.{m}") for m in ("hybrid", "startup", "pg_fluid"))
    return {"hybrid": hybrid.run, "startup": startup.run, "pg-fluid": pg_fluid.run}


def _figures() -> dict[str, Callable[[Any], list[Any]]]:
    """Each model's figures with its reference parameters: name -> (path prefix -> files written)."""
    hybrid, startup, pg_fluid = (import_module(f"wificc.models.{m}") for m in ("hybrid", "startup", "pg_fluid"))
    return {
        "hybrid": lambda prefix: hybrid.figure(hybrid.HybridParams(), prefix),
        "startup": lambda prefix: startup.figure(startup.StartupParams(), prefix),
        "pg-fluid": lambda prefix: pg_fluid.figure(pg_fluid.PgFluidParams(), prefix),
    }


def __getattr__(name: str) -> Any:
    """``MODELS`` (name -> the model's ``run``) and ``FIGURES``, built on first use."""
    made = {"MODELS": _models, "FIGURES": _figures}.get(name)
    if made is None:
        raise AttributeError(f"module 'wificc.models' has no attribute {name!r}")
    value = made()
    globals()[name] = value
    return value
