"""Shared by the analytic models: parameter checks, JSON-ready tables, figure files.

Every model keeps its parameters in a frozen dataclass whose ``__post_init__`` checks
each field with :func:`number` or :func:`integer`, so a bad value is reported as
``name: expected ..., got ...`` before any arithmetic runs. :func:`params_from` builds
such a dataclass from the keyword arguments of a model's ``run`` and rejects names it
does not know. :func:`records` turns a table into plain Python rows that ``json.dumps``
accepts, :func:`result` packs them with the model's name and parameters, and
:func:`save_figure` writes a figure as PNG and SVG, each file replaced atomically and
the SVG free of dates and random ids, so the same model gives the same bytes.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, TypeVar

import matplotlib
import pandas as pd
from matplotlib.figure import Figure

P = TypeVar("P")

# Image formats every model figure is written in, in this order.
FIGURE_FORMATS = ("png", "svg")
# Raster resolution of the PNG files, dots per inch.
FIGURE_DPI = 150
# Opacity of the grid lines drawn on every axis.
GRID_ALPHA = 0.3


def number(name: str, value: object, expected: str, ok: Callable[[float], bool]) -> float:
    """Return ``value`` as a float if it is a finite real number accepted by ``ok``.

    Raises ``ValueError("name: expected <expected>, got <value>")`` otherwise; booleans
    are refused even though Python counts them as integers.
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or not ok(float(value))
    ):
        raise ValueError(f"{name}: expected {expected}, got {value!r}")
    return float(value)


def integer(name: str, value: object, expected: str, minimum: int) -> int:
    """Return ``value`` as an int if it is an integer of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name}: expected {expected}, got {value!r}")
    return int(value)


def distinct_numbers(name: str, values: object, expected: str, ok: Callable[[float], bool]) -> tuple[float, ...]:
    """Check that ``values`` is a non-empty tuple of distinct numbers that ``ok`` takes.

    ``expected`` describes one value; the tuple keys the rows of a model's table, hence
    distinct.
    """
    if not isinstance(values, tuple) or not values:
        raise ValueError(f"{name}: expected a non-empty list of {expected}, got {values!r}")
    checked = tuple(number(name, v, expected, ok) for v in values)
    if len(set(checked)) != len(checked):
        raise ValueError(f"{name}: expected distinct {expected}, got {values!r}")
    return checked


def params_from(
    cls: Callable[..., P],
    kwargs: Mapping[str, Any],
    model: str,
    extra: tuple[str, ...] = (),
) -> P:
    """Build the parameter dataclass ``cls`` of ``model`` from ``kwargs``.

    Unknown names are an error that lists the accepted ones (the fields, then ``extra``:
    the names ``run`` takes itself). Lists (as JSON gives them) are turned into tuples,
    the form the dataclasses keep sequences in.
    """
    names = [f.name for f in fields(cls)]
    for key in kwargs:
        if key not in names:
            raise ValueError(
                f"unknown parameter {key!r} for model {model!r}; expected one of: " + ", ".join([*names, *extra])
            )
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items()})


def result(model: str, params: object, **tables: Any) -> dict[str, Any]:
    """A model's ``run`` result: its name, its parameters (tuples as lists), tables."""
    fields_ = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(params).items()}
    return {"model": model, "params": fields_, **tables}


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``frame`` as dicts of plain Python scalars, for ``json.dumps``."""
    columns = [frame[c].tolist() for c in frame.columns]
    return [dict(zip(frame.columns, row, strict=True)) for row in zip(*columns, strict=True)]


def save_figure(fig: Figure, title: str, path_prefix: str | os.PathLike[str]) -> list[Path]:
    """Grid every axis, title ``fig``, write it to ``<path_prefix>.png`` and ``.svg``.

    Returns both paths. Parent directories are created. Each file is written next to
    its destination and then renamed over it, so a reader never sees half a figure.
    """
    for ax in fig.axes:
        ax.grid(True, alpha=GRID_ALPHA)
    fig.suptitle(title)
    prefix = Path(path_prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    written = []
    with matplotlib.rc_context({"svg.hashsalt": "wificc"}):
        for fmt in FIGURE_FORMATS:
            path = prefix.with_name(f"{prefix.name}.{fmt}")
            partial = prefix.with_name(f".{prefix.name}.{fmt}.partial")
            metadata = {"Date": None} if fmt == "svg" else {"Software": None}
            fig.savefig(partial, format=fmt, dpi=FIGURE_DPI, metadata=metadata)
            os.replace(partial, path)
            written.append(path)
    return written
