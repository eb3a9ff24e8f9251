"""Fluid model of two BBR flows probing in turn, after BBR-PG (Future Internet, 2024).

Two flows A and B share one bottleneck of capacity 1, A holding the share a and B the
share 1 - a; each paces at its bandwidth estimate. When A probes it paces at ``g_A``
times its share while B keeps pacing at its own; the FIFO bottleneck divides its
capacity in proportion to the arrival rates, so A now gets g_A a / (g_A a + 1 - a) and
its share grows by::

    dA = (g_A - 1) a (1 - a) / ((g_A - 1) a + 1)

When B probes at g_B from the shares (a, 1 - a), B gets g_B (1 - a) / (a + g_B (1 - a))
and its share grows by::

    dB = (g_B - 1) a (1 - a) / (g_B - (g_B - 1) a)

With BBR's ProbeBW gain g_A = g_B = 1.25 these are the study's::

    dA = 0.25 a (1 - a) / (0.25 a + 1)
    dB = 0.25 a (1 - a) / (1.25 - 0.25 a)

For a < 1/2 the smaller flow gains more when it probes than the larger one does, but the
two gains are computed from different shares, and probing in turn makes the shares
drift.

A probing cycle (:func:`probe_cycle`) applies, in this order:

1. A probes: its max filter keeps the higher measurement a + dA(a) while B's still holds
   1 - a. Both then pace at their estimates, which sum to 1 + dA; the bottleneck shares
   its capacity in proportion, so A's share becomes a' = (a + dA(a)) / (1 + dA(a)).
2. B probes from (a', 1 - a'): its estimate becomes 1 - a' + dB(a') and, renormalised
   the same way, A's share becomes a'' = a' / (1 + dB(a')), B's 1 - a''.

Iterating the cycle from any start converges to the one share a* with cycle(a*) = a*
(:func:`fixed_point`, found from the drift of ln(a / (1 - a)), :func:`log_odds_drift`).
The cycle maps a larger share to a larger share, so the approach is monotone. With equal
gains a* is slightly below 1/2: the flow that probes first ends up with less
(a* = 0.4865 at g = 1.25). BBR-PG scales the probing gain of each flow by
rtt / min_rtt; setting g_A and g_B apart shows how that moves the split.
Fairness is reported as Jain's index of the two shares, (a + b)^2 / (2 (a^2 + b^2)).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from scipy.optimize import brentq

from wificc.models._common import distinct_numbers, integer, number, params_from, records, result, save_figure

# BBR's ProbeBW up gain, 5/4 (tcp_bbr.c bbr_pacing_gain[0]).
BBR_PROBE_GAIN = 1.25
# Absolute tolerance of the fixed-point search: none to speak of, so that only the
# relative tolerance counts even for a share of 1e-12.
_ROOT_XTOL = 1e-300


@dataclass(frozen=True)
class PgFluidParams:
    """Starting shares of flow A, number of probing cycles and the two probing gains."""

    starts: tuple[float, ...] = (0.1, 0.5, 0.9)
    cycles: int = 40
    gain_a: float = BBR_PROBE_GAIN
    gain_b: float = BBR_PROBE_GAIN

    def __post_init__(self) -> None:
        distinct_numbers("starts", self.starts, "shares of flow A in (0, 1)", lambda v: 0 < v < 1)
        integer("cycles", self.cycles, "at least 1 probing cycle", 1)
        number("gain_a", self.gain_a, "a probing gain > 1", lambda v: v > 1)
        number("gain_b", self.gain_b, "a probing gain > 1", lambda v: v > 1)


@dataclass(frozen=True)
class CycleStep:
    """One probing cycle: A's share before, after A's probe and after B's probe."""

    a_start: float
    d_a: float
    a_after_a: float
    d_b: float
    a_end: float


def share_gain_a(a: Any, gain: float = BBR_PROBE_GAIN) -> Any:
    """dA = (g - 1) a (1 - a) / ((g - 1) a + 1): A's gain when probing at ``gain``."""
    return (gain - 1) * a * (1 - a) / ((gain - 1) * a + 1)


def share_gain_b(a: Any, gain: float = BBR_PROBE_GAIN) -> Any:
    """dB = (g - 1) a (1 - a) / (g - (g - 1) a): B's gain when probing at ``gain``."""
    return (gain - 1) * a * (1 - a) / (gain - (gain - 1) * a)


def probe_cycle(a: float, p: PgFluidParams) -> CycleStep:
    """A probes, shares renormalise; B probes, shares renormalise (module doc)."""
    d_a = share_gain_a(a, p.gain_a)
    a_after_a = (a + d_a) / (1 + d_a)
    d_b = share_gain_b(a_after_a, p.gain_b)
    return CycleStep(a, d_a, a_after_a, d_b, a_after_a / (1 + d_b))


def log_odds_drift(a: float, p: PgFluidParams) -> float:
    """Change of ln(a / (1 - a)) over one probing cycle from A's share ``a``.

    A's probe adds ln g_A - ln(1 + (g_A - 1) a), B's subtracts
    ln g_B - ln(1 + (g_B - 1)(1 - a')), a' being A's share after its probe. Both terms
    fall as a grows, so the drift falls from ln g_A at a = 0 to -ln g_B at a = 1.
    """
    b_after_a = 1 - probe_cycle(a, p).a_after_a
    gain_a, gain_b = p.gain_a - 1, p.gain_b - 1
    a_probe = math.log1p(gain_a) - math.log1p(gain_a * a)
    b_probe = math.log1p(gain_b) - math.log1p(gain_b * b_after_a)
    return a_probe - b_probe


def fixed_point(p: PgFluidParams) -> float:
    """The share a* in (0, 1) that a probing cycle leaves unchanged.

    The root of :func:`log_odds_drift`, which falls strictly from ln g_A > 0 at a = 0
    to -ln g_B < 0 at a = 1: a* exists and is unique. Shares below it grow, shares above
    it shrink.
    """
    return brentq(log_odds_drift, 0.0, 1.0, args=(p,), xtol=_ROOT_XTOL)


def _jain(a: float) -> float:
    """Jain's index of the shares (a, 1 - a)."""
    return 1 / (2 * (a * a + (1 - a) * (1 - a)))


def trajectory(a0: float, p: PgFluidParams) -> pd.DataFrame:
    """``p.cycles`` probing cycles from A's share ``a0``, one row per cycle.

    Columns: a0, cycle (1-based), a_start, d_a, a_after_a, d_b, a_end, b_end, jain.
    """
    a = number("a0", a0, "a share of flow A strictly between 0 and 1", lambda v: 0 < v < 1)
    rows = []
    for cycle in range(1, p.cycles + 1):
        step = probe_cycle(a, p)
        end = {"b_end": 1 - step.a_end, "jain": _jain(step.a_end)}
        rows.append({"a0": a0, "cycle": cycle, **vars(step), **end})
        a = step.a_end
    return pd.DataFrame(rows)


def table(p: PgFluidParams) -> pd.DataFrame:
    """:func:`trajectory` from each start of ``p.starts``, one after the other."""
    return pd.concat([trajectory(a0, p) for a0 in p.starts], ignore_index=True)


def figure(p: PgFluidParams, path_prefix: str | os.PathLike[str]) -> list[Path]:
    """Plot A's share per cycle from each start and dA, dB versus a; write PNG, SVG."""
    cycles = table(p)
    a_star = fixed_point(p)
    fig = Figure(figsize=(11, 4.5), layout="constrained")
    share_ax, gain_ax = fig.subplots(1, 2)
    for a0, runs in cycles.groupby("a0", sort=False):
        shares = np.concatenate(([a0], runs["a_end"]))
        share_ax.plot(np.arange(len(shares)), shares, "-o", markersize=2, label=f"a0 = {a0:g}")
    share_ax.axhline(a_star, color="black", linestyle="--", linewidth=0.8, label=f"a* = {a_star:.4f}")
    share_ax.axhline(0.5, color="grey", linewidth=0.6)
    share_ax.set_xlabel("probing cycle (A probes, then B)")
    share_ax.set_ylabel("share of flow A")
    share_ax.legend()
    a = np.linspace(0, 1, 401)
    gain_ax.plot(a, share_gain_a(a, p.gain_a), label=f"dA (A probes at {p.gain_a:g})")
    gain_ax.plot(a, share_gain_b(a, p.gain_b), label=f"dB (B probes at {p.gain_b:g})")
    gain_ax.set_xlabel("share a of flow A")
    gain_ax.set_ylabel("share gained by the prober")
    gain_ax.legend()
    return save_figure(fig, "Two BBR flows probing in turn (fluid model)", path_prefix)


def run(**kwargs: Any) -> dict[str, Any]:
    """Iterate ``PgFluidParams(**kwargs)``; JSON-ready fixed point and cycle table."""
    p = params_from(PgFluidParams, kwargs, "pg-fluid")
    a_star = fixed_point(p)
    return result(
        "pg-fluid",
        p,
        fixed_point=a_star,
        fixed_point_jain=_jain(a_star),
        cycles=records(table(p)),
    )
