"""Analytic models of the published studies, each with ``table``, ``figure``, ``run``.

* ``hybrid``: the wired, Wi-Fi and hybrid bottleneck model of the Wi-Fi 6 study.
* ``startup``: BBR's Startup gain (2/ln 2, 4 ln 2) and a round-by-round simulation.
* ``pg-fluid``: the fluid model of two BBR flows probing in turn, after BBR-PG.

:data:`MODELS` maps the name a user types (``wificc model NAME``) to the model's
``run``, which takes the model's parameters as keyword arguments and returns JSON-ready
tables.
"""

from collections.abc import Callable
from typing import Any

from wificc.models import hybrid, pg_fluid, startup

MODELS: dict[str, Callable[..., dict[str, Any]]] = {
    "hybrid": hybrid.run,
    "startup": startup.run,
    "pg-fluid": pg_fluid.run,
}

# Each model's figures with its reference parameters: name -> (path prefix -> files written).
FIGURES: dict[str, Callable[[Any], list[Any]]] = {
    "hybrid": lambda prefix: hybrid.figure(hybrid.HybridParams(), prefix),
    "startup": lambda prefix: startup.figure(startup.StartupParams(), prefix),
    "pg-fluid": lambda prefix: pg_fluid.figure(pg_fluid.PgFluidParams(), prefix),
}
