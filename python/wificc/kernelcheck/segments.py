"""The ``segments`` suite: in the emulator, the arrival times at the sender's TUN device of the
segments of each software-segmented skb (offloads off on that device: ``ethtool -K tso off gso
off``, as on a Wi-Fi driver without TSO), recorded by the BPF probe of ``scripts/gso_charge``
(``net_dev_start_xmit``: the moment each segment is handed to the driver).

What the ath9k model assumes (``crates/wificc-core/src/net/wifi/driver.rs``, ``Wake::PerFrame``;
``bss.rs``): the segments of one skb reach mac80211 one by one at the same simulated instant,
and the driver is woken for each (``drv_wake_tx_queue`` -> ``ath_txq_schedule``), so the first
frame of a burst can leave alone while the hardware queue has room. The measured gaps must be
too short for anything else to happen between two segments of one skb: shorter than the
shortest time in which the medium can be taken, AIFS[AC_BE] = SIFS + AIFSN x slot = 16 + 3 x 9 =
43 us (IEEE 802.11-2016: OFDM/HT aSIFSTime 16 us and aSlotTime 9 us, Table 19-25; default EDCA
AIFSN 3 for AC_BE, Table 9-155). The cell agrees when at least 99% of the gaps are shorter.
"""

from __future__ import annotations

import collections
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from wificc import api, emu, scenarios
from wificc.kernelcheck import (
    CLOSING_COLUMNS,
    Cell,
    Column,
    footer,
    lateness,
    markdown_table,
    probe,
    run_cells,
    running_kernel,
    verdict,
)
from wificc.kernelcheck.gso import analyzer

AIFS_BE_US = 16 + 3 * 9
# Share of the gaps that must be shorter than AIFS[BE].
MIN_SHARE_BELOW_AIFS = 0.99
RATES = ("20mbit", "100mbit")
CCS = ("cubic", "bbr")
RTT = "20ms"
BUFFER = "1bdp"
LENGTH = "8s"
SMOKE_LENGTH = "3s"
DELAY = "1s"


def quantile(values: list[float], q: float) -> float | None:
    """Nearest-rank quantile (the simulator's rule)."""
    return emu.nearest_rank(values, q)


# The probe's events a segmentation is found from (analyze.py ``segmentations``): the GSO skb
# queued, dequeued and freed by its segmentation (with the call stack naming the segmenter),
# and its segments at the driver. Not the slab allocations, whose recording, with a call
# stack each, would run inside the segmentation loop and widen the gaps it measures.
SEGMENTATION_KINDS = ("QUEUE", "DEQ", "GSOFREE", "XMIT")


def gaps(events: list[dict[str, Any]]) -> tuple[list[float], list[int], list[float]]:
    """For every segmentation whose segments were all seen: the gaps (us) between consecutive
    segments at the driver, the segment counts and the spans (us) first to last."""
    by: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for e in events:
        by[e["kind"]].append(e)
    out: list[float] = []
    counts: list[int] = []
    spans: list[float] = []
    for g, _site, segs, _before in analyzer().segmentations(by, {}):
        if len(segs) < 2 or len(segs) != -(-g["payload"] // g["gso_size"]):
            continue
        ts = [s["ts"] for s in segs]
        out += [(b - a) / 1e3 for a, b in zip(ts, ts[1:], strict=False)]
        counts.append(len(segs))
        spans.append((ts[-1] - ts[0]) / 1e3)
    return out, counts, spans


def summarise(gap_us: list[float], counts: list[int], spans: list[float]) -> dict[str, Any]:
    """The distribution of the gaps and whether it fits the per-frame wake-up model."""
    below = sum(1 for g in gap_us if g < AIFS_BE_US)
    share = below / len(gap_us) if gap_us else None
    return {
        "skbs": len(counts),
        "segments_p50": quantile([float(c) for c in counts], 0.5),
        "gap_p50_us": quantile(gap_us, 0.5),
        "gap_p90_us": quantile(gap_us, 0.9),
        "gap_p99_us": quantile(gap_us, 0.99),
        "gap_max_us": max(gap_us) if gap_us else None,
        "span_p50_us": quantile(spans, 0.5),
        "below_aifs_share": share,
        "wake_ok": None if share is None else share >= MIN_SHARE_BELOW_AIFS,
    }


@contextmanager
def offloads_off_recording(running: emu.Emulator, built: probe.Probe, keep: list[probe.Recording]) -> Iterator[None]:
    """Offloads off on the sender's (client 0's) TUN device, and the probe recording."""
    name = running.host("client", 0)["name"]
    subprocess.run(
        ["ip", "netns", "exec", name, "ethtool", "-K", name, "tso", "off", "gso", "off"],
        check=True,
        capture_output=True,
    )
    with probe.recording(built, emu.BASE_PORT, name, kinds=SEGMENTATION_KINDS) as rec:
        keep.append(rec)
        yield


def scenario(rate: str, cc: str, length: str, seed: int = 1) -> dict[str, Any]:
    return api.validate(
        scenarios.build(
            "tcp_upload",
            seed=seed,
            rate=rate,
            rtt=RTT,
            buffer=BUFFER,
            cc=[cc],
            length=length,
            delay=DELAY,
            kernel=running_kernel(),
        )
    )


def cells(smoke: bool) -> list[Cell]:
    if smoke:
        return [Cell("20mbit-cubic", {"rate": "20mbit", "cc": "cubic", "length": SMOKE_LENGTH})]
    return [Cell(f"{r}-{c}", {"rate": r, "cc": c, "length": LENGTH}) for r in RATES for c in CCS]


def run(
    out: Path, *, smoke: bool, report: Callable[[str], None], repeat: int = 1, only: Sequence[str] | None = None
) -> pd.DataFrame:
    with probe.built() as built:

        def run_cell(cell: Cell, staging: Path, seed: int) -> dict[str, Any]:
            keep: list[probe.Recording] = []
            kernel = emu.run_emulated(
                scenario(cell.params["rate"], cell.params["cc"], cell.params["length"], seed),
                during=lambda running: offloads_off_recording(running, built, keep),
            )
            kernel.save(staging / "kernel")
            row = {
                "rate": cell.params["rate"],
                "cc": cell.params["cc"],
                **summarise(*gaps(keep[0].events)),
                **lateness(kernel.summary),
            }
            row["verdict"] = verdict(row, ("wake",))
            return row

        return run_cells(out, cells(smoke), run_cell, markdown, report, repeat=repeat, checks=("wake",), only=only)


COLUMNS = (
    Column("rate", "rate"),
    Column("cc", "cc"),
    Column("skbs segmented", "skbs", "int"),
    Column("segments/skb p50", "segments_p50", "int"),
    Column("gap p50 us", "gap_p50_us", "us"),
    Column("gap p90 us", "gap_p90_us", "us"),
    Column("gap p99 us", "gap_p99_us", "us"),
    Column("gap max us", "gap_max_us", "us"),
    Column("span p50 us", "span_p50_us", "us"),
    Column(f"gaps < {AIFS_BE_US} us", "below_aifs_share", "share"),
    *CLOSING_COLUMNS,
)


def markdown(rows: list[dict[str, Any]]) -> str:
    return markdown_table(
        rows,
        COLUMNS,
        footer(
            rows, ("wake",), f"at least {MIN_SHARE_BELOW_AIFS:.0%} of the gaps shorter than AIFS[BE] = {AIFS_BE_US} us"
        )
        + " The gaps are the kernel's own timestamps, taken before the emulator.",
    )
