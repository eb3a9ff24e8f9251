"""Wired, Wi-Fi and hybrid bottleneck model of "Future of TCP on Wi-Fi 6" (2021).

A Wi-Fi station that holds ``k`` packets for its link sends them as one aggregate
(A-MPDU). With packet size ``l``, a per-transmission frame overhead ``l_oh``, PHY rate
``r`` and a fixed per-transmission medium overhead ``t_oh`` (preamble, contention, Block
Ack), the study models the airtime of one aggregate and the Wi-Fi throughput as::

    TxTw(k) = (k l + l_oh) 8 / r + t_oh          [s]
    Thr(k)  = k l 8 / TxTw(k)                    [bit/s]

Thr grows with k towards r: aggregation amortises t_oh. Behind the access point sits a
wired link of rate ``r_wired``; a burst of k packets takes ``TxTe(k) = k (l + le_oh) 8 /
r_wired`` on it, ``le_oh`` being the Ethernet per-frame overhead. Because r > r_wired, a
large enough aggregate delivers faster than the wire can carry. ``k_bar`` is the
aggregate at which Thr reaches r_wired; setting Thr(k) = r_wired and solving the linear
equation gives the closed form::

    k_bar = r_wired (8 l_oh / r + t_oh) / (8 l (1 - r_wired / r))

which is finite only when r > r_wired. For 1 < k_bar < mxg (the largest aggregate) the
path is a *hybrid* bottleneck: below k_bar the Wi-Fi hop limits, above it the wire does,
and the packets beyond k_bar wait in the wired queue. The study's delivery rate and
round-trip time::

    BW(k)  = Thr(min(k, k_bar))
    RTT(k) = RTT_base + 2 TxTw(k)                             for k <= k_bar
    RTT(k) = RTT_base + 2 TxTw(k_bar) + TxTe(k - k_bar)       for k >  k_bar

(a packet waits for the aggregate ahead of it, then for its own). ``k_bar`` is
real-valued and the formulas use it as such: the curves are continuous at k_bar.
``k_bar_packets`` is the smallest whole number of packets with Thr(k) >= r_wired, the
TSQ limit in packets that a real station needs. Note that k_bar compares the Wi-Fi rate
of ``l``-byte packets with the raw wire rate, while TxTe counts the Ethernet overhead;
both are the study's definitions, kept as they are.

Two single-bottleneck models frame the hybrid one, on the same quantities:

* Wired (the classic picture of Cardwell et al., "BBR: Congestion-Based Congestion
  Control", ACM Queue 2016): k counts all packets in flight on a path of base RTT
  ``rtt_base`` whose bottleneck is the wire. A packet occupies the wire for TxTe(1), so
  the pipe holds ``k_X = rtt_base / TxTe(1)`` packets; below k_X the rate is
  window-limited, k l 8 / rtt_base, and the RTT is rtt_base; above it the rate is l 8 /
  TxTe(1) and the excess queues: RTT = rtt_base + TxTe(k - k_X).
* Wi-Fi (the wire never limits): the aggregate is min(k, mxg), BW = Thr(min(k, mxg)),
  and RTT = rtt_base + 2 TxTw(min(k, mxg)) + (k - mxg) TxTw(mxg) / mxg above mxg, the
  excess draining one full aggregate per TxTw(mxg).

In the Wi-Fi and hybrid models k is what the station holds for its link (what a static
TSQ limit of k packets lets TCP queue below itself), as in the study; in the wired model
it is the whole flight. The named operating points (:func:`operating_points`) are:

* Wired X, k = k_X: the BDP point, full rate at the base RTT (Kleinrock's optimum).
* Wired Y, k = k_X + buffer: the buffer-full point, where a loss-based sender ends up.
* Wi-Fi A, k = 1: no aggregation, the lowest RTT and the lowest rate.
* Wi-Fi B, the k maximising the power BW/RTT. With a = 8 l / r, c = 8 l_oh / r + t_oh
  and d = rtt_base + 2 c the power is 8 l k / ((a k + c)(2 a k + d)), whose derivative
  vanishes at k_B = sqrt(c d / 2) / a (clamped to [1, mxg]; beyond mxg it only falls).
* Wi-Fi C, k = mxg: the largest aggregate, the highest rate without a standing queue.
* Wi-Fi D, k = mxg + buffer: the Wi-Fi queue full.
* Hybrid L, k = k_bar: the Wi-Fi hop just saturates the wire, the full rate at the
  lowest RTT (also the power optimum whenever k_B >= k_bar).
* Hybrid M, k = mxg: what a station allowed to aggregate fully keeps in flight; it gains
  no rate over L and adds TxTe(mxg - k_bar) of wired queueing.
* Hybrid N, k = k_bar + buffer: the wired queue full.

The reference parameters are the study's (its Table 1: l_oh 48 bytes, t_oh 0.5 ms); ``le_oh`` is 38 bytes, the
Ethernet per-frame cost on the wire: 7 preamble + 1 start-of-frame delimiter + 14 MAC
header + 4 FCS + 12 inter-frame gap (IEEE 802.3 clauses 3 and 4); ``buffer`` is 1000
packets, Linux's DEFAULT_TX_QUEUE_LEN (include/net/pkt_sched.h).
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

from wificc.models._common import integer, number, params_from, records, result, save_figure

BITS_PER_BYTE = 8
# Ethernet bytes on the wire besides the IP packet: preamble 7, SFD 1, MAC header 14,
# FCS 4, inter-frame gap 12 (IEEE 802.3 clauses 3 and 4).
ETHERNET_FRAME_OVERHEAD_BYTES = 38
# Linux default queue length of a network device, in packets (include/net/pkt_sched.h).
LINUX_DEFAULT_TX_QUEUE_LEN = 1000
# Relative floating-point error of k_bar ignored when rounding it up to whole packets.
K_BAR_ROUNDING = 1e-12
# Largest in-flight count of the default curves: the study's static TSQ sweep ends at
# 2048.
DEFAULT_K_MAX = 2048


@dataclass(frozen=True)
class HybridParams:
    """Model parameters in bytes, bit/s, s and packets; the study's by default."""

    l: float = 1500.0  # noqa: E741 (the study's symbol) packet size, bytes
    l_oh: float = 48.0  # per-transmission frame overhead on the Wi-Fi link, bytes
    r: float = 2.4e9  # Wi-Fi PHY rate, bit/s
    r_wired: float = 1e9  # wired link rate, bit/s
    mxg: int = 800  # largest aggregate, packets
    t_oh: float = 0.5e-3  # per-transmission medium overhead, s
    le_oh: float = ETHERNET_FRAME_OVERHEAD_BYTES  # Ethernet overhead per frame, bytes
    rtt_base: float = 2.5e-3  # base round-trip time, s
    buffer: int = LINUX_DEFAULT_TX_QUEUE_LEN  # bottleneck queue capacity, packets

    def __post_init__(self) -> None:
        number("l", self.l, "a packet size in bytes > 0", lambda v: v > 0)
        number("l_oh", self.l_oh, "a frame overhead in bytes >= 0", lambda v: v >= 0)
        number("r", self.r, "a PHY rate in bit/s > 0", lambda v: v > 0)
        number("r_wired", self.r_wired, "a wired rate in bit/s > 0", lambda v: v > 0)
        integer("mxg", self.mxg, "a largest aggregate of at least 1 packet", 1)
        number("t_oh", self.t_oh, "a per-transmission overhead in s >= 0", lambda v: v >= 0)
        number("le_oh", self.le_oh, "an Ethernet overhead in bytes >= 0", lambda v: v >= 0)
        number("rtt_base", self.rtt_base, "a base RTT in s > 0", lambda v: v > 0)
        integer("buffer", self.buffer, "a queue capacity of at least 0 packets", 0)


REFERENCE = HybridParams()


@dataclass(frozen=True)
class OperatingPoint:
    """One named point of a model: where it sits (k) and what it delivers."""

    model: str
    name: str
    k: float
    bw_bps: float
    rtt_s: float
    meaning: str


def _packets(k: Any) -> np.ndarray:
    """``k`` as a float array of packet counts, each finite and at least 1."""
    expected = "k: expected packets in flight >= 1 (a number or an array of them), got"
    try:
        arr = np.asarray(k, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{expected} {k!r}") from None
    bad = arr[~(np.isfinite(arr) & (arr >= 1))]
    if bad.size:
        raise ValueError(f"{expected} {bad.flat[0]!r}")
    return arr


def _shaped(k: Any, values: np.ndarray) -> Any:
    """``values`` as a float when ``k`` was a scalar, else as an array."""
    return float(values) if np.ndim(k) == 0 else values


def _txtw(p: HybridParams, k: np.ndarray) -> np.ndarray:
    return (k * p.l + p.l_oh) * BITS_PER_BYTE / p.r + p.t_oh


def _thr(p: HybridParams, k: np.ndarray) -> np.ndarray:
    return k * p.l * BITS_PER_BYTE / _txtw(p, k)


def _txte(p: HybridParams, k: np.ndarray) -> np.ndarray:
    return k * (p.l + p.le_oh) * BITS_PER_BYTE / p.r_wired


def txtw(k: Any, p: HybridParams = REFERENCE) -> Any:
    """TxTw(k) = (k l + l_oh) 8 / r + t_oh: airtime of an aggregate of k packets, s."""
    return _shaped(k, _txtw(p, _packets(k)))


def thr(k: Any, p: HybridParams = REFERENCE) -> Any:
    """Thr(k) = k l 8 / TxTw(k): Wi-Fi throughput, aggregates of k packets, bit/s."""
    return _shaped(k, _thr(p, _packets(k)))


def txte(k: Any, p: HybridParams = REFERENCE) -> Any:
    """TxTe(k) = k (l + le_oh) 8 / r_wired: time k packets take on the wire, seconds."""
    return _shaped(k, _txte(p, _packets(k)))


def k_bar(p: HybridParams = REFERENCE) -> float:
    """The real k at which Thr(k) = r_wired (closed form in the module doc).

    Infinite when r <= r_wired: the Wi-Fi hop never reaches the wired rate.
    """
    if p.r <= p.r_wired:
        return math.inf
    per_transmission_s = p.l_oh * BITS_PER_BYTE / p.r + p.t_oh
    return p.r_wired * per_transmission_s / (p.l * BITS_PER_BYTE * (1 - p.r_wired / p.r))


def _hybrid_k_bar(p: HybridParams) -> float:
    """k_bar, or a ValueError when the parameters do not make a hybrid bottleneck."""
    kb = k_bar(p)
    if not 1 < kb < p.mxg:
        raise ValueError(
            f"r, r_wired: not a hybrid bottleneck: Thr(k) reaches r_wired = "
            f"{p.r_wired} bit/s at k_bar = {kb} packets with r = {p.r} bit/s; expected "
            f"1 < k_bar < mxg = {p.mxg} (r must exceed r_wired, and Thr(mxg) reach it)"
        )
    return kb


def k_bar_packets(p: HybridParams = REFERENCE) -> int:
    """The smallest whole number k with Thr(k) >= r_wired (requires a hybrid path).

    k_bar rounded up; a k_bar that floating point puts a hair above a whole number (less
    than K_BAR_ROUNDING relative) counts as that number.
    """
    return math.ceil(_hybrid_k_bar(p) * (1 - K_BAR_ROUNDING))


def bw(k: Any, p: HybridParams = REFERENCE) -> Any:
    """Hybrid delivery rate BW(k) = Thr(min(k, k_bar)), bit/s."""
    kk = _packets(k)
    return _shaped(k, _thr(p, np.minimum(kk, _hybrid_k_bar(p))))


def rtt(k: Any, p: HybridParams = REFERENCE) -> Any:
    """Hybrid RTT(k): rtt_base + 2 TxTw(k) to k_bar, plus TxTe(k - k_bar) beyond, s."""
    kk = _packets(k)
    kb = _hybrid_k_bar(p)
    wifi = p.rtt_base + 2 * _txtw(p, np.minimum(kk, kb))
    return _shaped(k, wifi + _txte(p, np.maximum(kk - kb, 0.0)))


def wired_bdp(p: HybridParams = REFERENCE) -> float:
    """k_X = rtt_base / TxTe(1): packets the wired pipe holds at its base RTT."""
    return float(p.rtt_base / _txte(p, np.float64(1.0)))


def wired_bw(k: Any, p: HybridParams = REFERENCE) -> Any:
    """Wired delivery rate min(k l 8 / rtt_base, l 8 / TxTe(1)), bit/s of packets."""
    kk = _packets(k)
    window = kk * p.l * BITS_PER_BYTE / p.rtt_base
    return _shaped(k, np.minimum(window, p.l * BITS_PER_BYTE / _txte(p, np.float64(1.0))))


def wired_rtt(k: Any, p: HybridParams = REFERENCE) -> Any:
    """Wired RTT: rtt_base up to k_X, plus TxTe(k - k_X) of queueing beyond, seconds."""
    kk = _packets(k)
    return _shaped(k, p.rtt_base + _txte(p, np.maximum(kk - wired_bdp(p), 0.0)))


def wifi_bw(k: Any, p: HybridParams = REFERENCE) -> Any:
    """Wi-Fi-only delivery rate Thr(min(k, mxg)), bit/s."""
    return _shaped(k, _thr(p, np.minimum(_packets(k), p.mxg)))


def wifi_rtt(k: Any, p: HybridParams = REFERENCE) -> Any:
    """Wi-Fi-only RTT, s: rtt_base + 2 TxTw(min(k, mxg)) + (k - mxg) TxTw(mxg) / mxg.

    The last term, the queue beyond the largest aggregate, counts only for k > mxg.
    """
    kk = _packets(k)
    aggregate = np.minimum(kk, p.mxg)
    excess_s = np.maximum(kk - p.mxg, 0.0) * _txtw(p, np.float64(p.mxg)) / p.mxg
    return _shaped(k, p.rtt_base + 2 * _txtw(p, aggregate) + excess_s)


def wifi_power_optimum(p: HybridParams = REFERENCE) -> float:
    """k_B = sqrt(c d / 2) / a, the Wi-Fi k maximising BW/RTT, clamped to [1, mxg]."""
    a = p.l * BITS_PER_BYTE / p.r
    c = p.l_oh * BITS_PER_BYTE / p.r + p.t_oh
    d = p.rtt_base + 2 * c
    return min(max(math.sqrt(c * d / 2) / a, 1.0), float(p.mxg))


def operating_points(p: HybridParams = REFERENCE) -> list[OperatingPoint]:
    """The points X, Y (wired), A-D (Wi-Fi), L, M, N (hybrid): see the module doc."""
    kx = wired_bdp(p)
    kb = _hybrid_k_bar(p)
    wired = [
        ("X", kx, "BDP point: full rate at the base RTT"),
        ("Y", kx + p.buffer, "buffer-full point: where a loss-based sender operates"),
    ]
    wifi = [
        ("A", 1.0, "no aggregation: lowest RTT, lowest rate"),
        ("B", wifi_power_optimum(p), "maximum power BW/RTT"),
        ("C", float(p.mxg), "largest aggregate mxg: highest rate, no standing queue"),
        ("D", float(p.mxg + p.buffer), "Wi-Fi queue full"),
    ]
    hybrid = [
        ("L", kb, "k_bar: Wi-Fi saturates the wire, full rate at the lowest RTT"),
        ("M", float(p.mxg), "full aggregation mxg: no extra rate, wired queueing"),
        ("N", kb + p.buffer, "wired queue full"),
    ]
    points = [OperatingPoint("wired", n, k, wired_bw(k, p), wired_rtt(k, p), m) for n, k, m in wired]
    points += [OperatingPoint("wifi", n, k, wifi_bw(k, p), wifi_rtt(k, p), m) for n, k, m in wifi]
    points += [OperatingPoint("hybrid", n, k, bw(k, p), rtt(k, p), m) for n, k, m in hybrid]
    return points


def points_table(p: HybridParams = REFERENCE) -> pd.DataFrame:
    """The operating points as a table: model, name, k, bw_bps, rtt_s, meaning."""
    return pd.DataFrame([vars(point) for point in operating_points(p)])


def table(p: HybridParams, ks: Any) -> pd.DataFrame:
    """The three models at each k of ``ks``: aggregate terms, then rate and RTT.

    Columns: k, txtw_s, thr_bps, txte_s, then wired_/wifi_/hybrid_ bw_bps and rtt_s.
    """
    kk = np.atleast_1d(_packets(ks))
    return pd.DataFrame(
        {
            "k": kk,
            "txtw_s": txtw(kk, p),
            "thr_bps": thr(kk, p),
            "txte_s": txte(kk, p),
            "wired_bw_bps": wired_bw(kk, p),
            "wired_rtt_s": wired_rtt(kk, p),
            "wifi_bw_bps": wifi_bw(kk, p),
            "wifi_rtt_s": wifi_rtt(kk, p),
            "hybrid_bw_bps": bw(kk, p),
            "hybrid_rtt_s": rtt(kk, p),
        }
    )


def figure(p: HybridParams, path_prefix: str | os.PathLike[str]) -> list[Path]:
    """Plot rate and RTT versus k for the three models, points marked; write PNG, SVG.

    The hybrid column repeats the Wi-Fi-only curves dashed in grey, so that k_bar shows
    as the point where the two part.
    """
    points = operating_points(p)
    k_max = max(DEFAULT_K_MAX, math.ceil(1.1 * max(point.k for point in points)))
    curves = table(p, np.arange(1, k_max + 1))
    fig = Figure(figsize=(13, 7), layout="constrained")
    axes = fig.subplots(2, 3, sharex="col")
    titles = {
        "wired": "Wired bottleneck",
        "wifi": "Wi-Fi bottleneck",
        "hybrid": "Hybrid",
    }
    for col, (model, title) in enumerate(titles.items()):
        rate_ax, rtt_ax = axes[0][col], axes[1][col]
        if model == "hybrid":
            rate_ax.plot(curves["k"], curves["wifi_bw_bps"] / 1e6, "--", color="grey")
            rtt_ax.plot(curves["k"], curves["wifi_rtt_s"] * 1e3, "--", color="grey")
        rate_ax.plot(curves["k"], curves[f"{model}_bw_bps"] / 1e6, color="tab:blue")
        rtt_ax.plot(curves["k"], curves[f"{model}_rtt_s"] * 1e3, color="tab:red")
        for point in (q for q in points if q.model == model):
            for ax, value in (
                (rate_ax, point.bw_bps / 1e6),
                (rtt_ax, point.rtt_s * 1e3),
            ):
                ax.plot(point.k, value, "o", color="black", markersize=4)
                ax.annotate(
                    point.name,
                    (point.k, value),
                    xytext=(4, 4),
                    textcoords="offset points",
                )
        rate_ax.set_title(title)
        rate_ax.set_ylabel("delivery rate (Mbit/s)")
        rtt_ax.set_ylabel("RTT (ms)")
        rtt_ax.set_xlabel("packets in flight k")
    title = (
        f"r = {p.r / 1e9:g} Gbit/s, r_wired = {p.r_wired / 1e9:g} Gbit/s, "
        f"k_bar = {k_bar(p):.2f}, mxg = {p.mxg}, buffer = {p.buffer}"
    )
    return save_figure(fig, title, path_prefix)


def run(k_max: int = DEFAULT_K_MAX, k_step: int = 1, **kwargs: Any) -> dict[str, Any]:
    """Evaluate ``HybridParams(**kwargs)`` on k = 1, 1 + k_step, ... up to k_max.

    Returns JSON-ready tables: the parameters, k_bar (real and in whole packets), the
    operating points and the curves.
    """
    p = params_from(HybridParams, kwargs, "hybrid", extra=("k_max", "k_step"))
    integer("k_max", k_max, "a largest k of at least 1 packet", 1)
    integer("k_step", k_step, "a k step of at least 1 packet", 1)
    return result(
        "hybrid",
        p,
        k_bar=k_bar(p),
        k_bar_packets=k_bar_packets(p),
        operating_points=records(points_table(p)),
        curves=records(table(p, np.arange(1, k_max + 1, k_step))),
    )
