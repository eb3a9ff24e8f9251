"""The ``wired`` suite: the wired validation grid of :mod:`wificc.validation` (tcp_upload,
simulator against kernel); ``--smoke`` runs its first cell with 3 s of TCP and 1 s of pings
around it. Its cells are not repeated (``--repeat`` 1 only)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from wificc import validation

SMOKE_LENGTH = "3s"
SMOKE_DELAY = "1s"


def run(
    out: Path, *, smoke: bool, report: Callable[[str], None], repeat: int = 1, only: Sequence[str] | None = None
) -> pd.DataFrame:
    """The grid into ``out``; the smoke run is its 10 Mbit/s, 20 ms, 1 BDP cubic cell. The grid
    runs each cell once (its cells are :mod:`wificc.validation`'s, which ``wificc validate-grid``
    without ``--suite`` shares): ``repeat`` must be 1."""
    if only:
        raise ValueError(
            "--cell: the wired suite runs its grid (choose it with --rate, --rtt, --buffer and --cc without --suite)"
        )
    if repeat != 1:
        raise ValueError(
            f"--repeat: got {repeat} for the wired suite, expected 1 (its grid, wificc.validation, runs each "
            "cell once; run it again into another directory to see its spread)"
        )
    if smoke:
        grid = validation.cells(("10mbit",), ("20ms",), ("1bdp",), ("cubic",))
        frame = validation.run_grid(out, grid, length=SMOKE_LENGTH, delay=SMOKE_DELAY, report=report)
    else:
        frame = validation.run_grid(out, report=report)
    return frame.assign(verdict=[validation.verdict(r) for r in frame.to_dict("records")])


def markdown(rows: list[dict[str, Any]]) -> str:
    return validation.markdown(rows)
