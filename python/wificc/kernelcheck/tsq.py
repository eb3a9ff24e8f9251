"""The ``tsq-completion`` suite: TCP Small Queues with the sender's skbs held below TCP.

The emulator's TUN device releases (orphans) an skb as soon as it takes it, so through TUN
alone TSQ never throttles. Here every host's TUN device gets an htb qdisc shaped to RATE with
tc's default burst (``stack.host_shaper``, which the emulator installs with tc; this kernel has
no fq, etf, fq_codel, netem or BPF qdisc). htb keeps a GSO skb whole in its queue, so the socket
stays charged its truesize until htb releases it to the device, the same mechanism as a Wi-Fi
NIC's queue. The emulated path behind it is fast (1 Gbit/s, 20 ms, a 1 BDP pfifo that never
fills), so the local bottleneck and its backlog set goodput and delay.

The simulator runs the same scenario: its host NICs run the same shaper
(``crates/wificc-core/src/net/link.rs`` ``Shaper``: htb's tokens, checked per skb, with the
whole skb's segments let through at once) in front of the NIC at the emulator's access rate,
with ``stack.tx_orphan``: the kernel releases a whole GSO skb when htb dequeues it
(``validate_xmit_skb`` segments it and TUN orphans every segment in the same
``dev_hard_start_xmit`` call), and so does the simulator's NIC, as the skb's first packet starts
its transmission (``SenderConfig::orphan_whole_skb``).

Sweep: RATE x ``net.ipv4.tcp_limit_output_bytes`` (1, 4 or 16 ms of RATE, in bytes, or not set:
the kernel's default, which no limit here reaches, so TSQ's own pacing-rate limit binds; the
sysctl is per network namespace, and the emulator sets it in every host's) x cubic / bbr. From 5.0
(c73e5807e4f6) to 6.15 the sysctl caps only sockets with ``SK_PACING_NONE`` (cubic here, not
bbr); from 6.16 (c4221a8cc3a7) it caps every socket again: TSQ's limit is min(max(2 skbs, pacing
rate >> 10), sysctl). The simulator's kernel profiles model both (``limit_caps_paced``).

Measured in the kernel: goodput and pings as every emulator run; the socket's ``sk_wmem_alloc``
(bytes below TCP: what TSQ compares) every :data:`SAMPLE_S` through ``sock_diag``
(``INET_DIAG_SKMEMINFO``, what ``ss -m`` prints as ``t``) with its tcp_info (cwnd and pacing
rate, ``INET_DIAG_INFO``); the size of the skbs TCP hands to the
device (segments per skb) from the BPF probe of ``scripts/gso_charge``. In the simulator: the
flow's ``tsq_bytes`` series and ``skb_segs_mean``. Both medians over the flow's span after
:data:`SETTLE_S`.

Neither side frames packets at layer 2 (``path.l2_overhead`` 0): TUN has no link-layer header
and htb charges each packet its IP length. Both sides run the running kernel's profile
(:func:`wificc.kernelcheck.running_kernel`). The skb overhead of both sides is the running
kernel's: the simulator's ``stack.skb_overhead`` is set to 256 + the ``skbuff_small_head``
object size (the head TCP allocates, Linux 6.3+) when that cache exists.
"""

from __future__ import annotations

import socket
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from wificc import api, emu, scenarios
from wificc.kernelcheck import (
    BELOW_TCP_TOLERANCE,
    CLOSING_COLUMNS,
    DIFFERENCES,
    GOODPUT_PING_COLUMNS,
    GOODPUT_PING_COMPARED,
    GOODPUT_TOLERANCE,
    PING_TOLERANCE,
    Cell,
    Column,
    Compared,
    footer,
    goodput_ping_agreement,
    lateness,
    markdown_table,
    probe,
    relative,
    run_cells,
    running_kernel,
    verdict,
    within,
)

RATES_MBIT = (20, 100, 400)
# tcp_limit_output_bytes as ms of the rate; None: not set (the kernel's default, 4 MB from 6.16,
# above every limit here), so TSQ's own limit, max(2 skbs, pacing rate >> 10), is what binds.
TSQ_MS = (1, 4, 16, None)
CCS = ("cubic", "bbr")
PATH_RATE = "1gbit"
RTT = "20ms"
BUFFER = "1bdp"
LENGTH = "10s"
SMOKE_LENGTH = "4s"
DELAY = "1s"
# Sampling period of sk_wmem_alloc, and the start of the flow left out of the medians.
SAMPLE_S = 0.01
# tc's default htb burst on a kernel with high-resolution timers (1600 bytes plus the rate's
# bytes per psched tick, which is 0 here: `tc -d class show` prints "burst 1600b/1").
SHAPER_BURST = "1600b"
SETTLE_S = 1.0
# The check's receiving application (the emulator's Python reading thread) reads 34.8 us
# (median) after a burst's last segment arrives: measured with tcpdump on the receiver's TUN
# device in the 20 Mbit/s cubic cell at 4 ms, each ACK after its skb's last segment
# (docs/fidelity.md). The simulator's receiver is given the same wake-up (stack.read_delay).
READ_DELAY = "35us"
# SKB_DATA_ALIGN(sizeof(struct sk_buff)) on x86-64 (224 -> 256).
SKB_STRUCT = 256
SMALL_HEAD = Path("/sys/kernel/slab/skbuff_small_head/object_size")

# sock_diag (linux/sock_diag.h, linux/inet_diag.h, linux/netlink.h).
NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 0x1
NLM_F_DUMP = 0x300
NLMSG_DONE = 3
NLMSG_ERROR = 2
INET_DIAG_INFO = 2
INET_DIAG_SKMEMINFO = 7
SK_MEMINFO_WMEM_ALLOC = 2
# struct tcp_info (linux/tcp.h): tcpi_rtt (us) and tcpi_snd_cwnd (u32), tcpi_pacing_rate (u64,
# bytes per second).
TCPI_RTT_OFFSET = 68
TCPI_CWND_OFFSET = 80
TCPI_PACING_RATE_OFFSET = 104
TCP_ESTABLISHED = 1
NLMSG_HEADER = struct.Struct("=IHHII")
# inet_diag_req_v2: family, protocol, ext, pad, states, inet_diag_sockid (sport, dport, src[4],
# dst[4], if, cookie[2]).
DIAG_REQUEST = struct.Struct("=BBBxI2H16s16sI8s")
# inet_diag_msg: family, state, timer, retrans, sockid (sport, dport big-endian ...), expires,
# rqueue, wqueue, uid, inode.
DIAG_MSG_LEN = 72
DIAG_DPORT_OFFSET = 6
RTATTR = struct.Struct("=HH")


def diag_request(seq: int) -> bytes:
    """A dump request for the established TCP/IPv4 sockets with their memory counters and
    tcp_info."""
    body = DIAG_REQUEST.pack(
        socket.AF_INET,
        socket.IPPROTO_TCP,
        1 << (INET_DIAG_SKMEMINFO - 1) | 1 << (INET_DIAG_INFO - 1),
        1 << TCP_ESTABLISHED,
        0,
        0,
        bytes(16),
        bytes(16),
        0,
        bytes(8),
    )
    return (
        NLMSG_HEADER.pack(NLMSG_HEADER.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + body
    )


def parse_diag(data: bytes, dport: int) -> tuple[list[dict[str, int]], bool]:
    """For every socket to ``dport`` in one netlink reply buffer its ``wmem`` (sk_wmem_alloc)
    and, where the reply has its tcp_info, ``cwnd`` (segments), ``rtt_us`` (srtt) and
    ``pacing_bps``; and whether the dump ended in it."""
    out = []
    offset = 0
    while offset + NLMSG_HEADER.size <= len(data):
        length, kind, _, _, _ = NLMSG_HEADER.unpack_from(data, offset)
        if length < NLMSG_HEADER.size:
            break
        if kind in (NLMSG_DONE, NLMSG_ERROR):
            return out, True
        msg = offset + NLMSG_HEADER.size
        (port,) = struct.unpack_from("!H", data, msg + DIAG_DPORT_OFFSET)
        if port == dport:
            at = msg + DIAG_MSG_LEN
            found: dict[str, int] = {}
            while at + RTATTR.size <= offset + length:
                size, attr = RTATTR.unpack_from(data, at)
                if size < RTATTR.size:
                    break
                value = at + RTATTR.size
                if attr == INET_DIAG_SKMEMINFO and size >= RTATTR.size + 4 * (SK_MEMINFO_WMEM_ALLOC + 1):
                    (found["wmem"],) = struct.unpack_from("=I", data, value + 4 * SK_MEMINFO_WMEM_ALLOC)
                elif attr == INET_DIAG_INFO and size >= RTATTR.size + TCPI_PACING_RATE_OFFSET + 8:
                    (found["rtt_us"],) = struct.unpack_from("=I", data, value + TCPI_RTT_OFFSET)
                    (found["cwnd"],) = struct.unpack_from("=I", data, value + TCPI_CWND_OFFSET)
                    (rate,) = struct.unpack_from("=Q", data, value + TCPI_PACING_RATE_OFFSET)
                    found["pacing_bps"] = rate * 8
                at += (size + 3) & ~3
            if "wmem" in found:
                out.append(found)
        offset += (length + 3) & ~3
    return out, False


class WmemSampler:
    """Samples sk_wmem_alloc of the sockets to ``dport`` in namespace ``netns`` every
    :data:`SAMPLE_S` from a thread: ``samples`` holds (monotonic ns, bytes), ``tcp`` (monotonic
    ns, cwnd, srtt us, pacing rate bit/s) from the same replies' tcp_info."""

    def __init__(self, netns: str, dport: int):
        self.netns, self.dport = netns, dport
        self.samples: list[tuple[int, int]] = []
        self.tcp: list[tuple[int, int, int, int]] = []
        self._stop = threading.Event()
        with emu.entered(netns):
            self._sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _query(self, seq: int) -> list[dict[str, int]]:
        self._sock.send(diag_request(seq))
        values: list[dict[str, int]] = []
        while True:
            found, done = parse_diag(self._sock.recv(65536), self.dport)
            values += found
            if done:
                return values

    def _run(self) -> None:
        seq = 0
        while not self._stop.wait(SAMPLE_S):
            seq += 1
            t = time.monotonic_ns()
            for v in self._query(seq):
                # sk_get_meminfo reports sk_wmem_alloc_get(): sk_wmem_alloc less the socket's
                # own reference (1), the bytes below TCP.
                self.samples.append((t, v["wmem"]))
                if "cwnd" in v:
                    self.tcp.append((t, v["cwnd"], v["rtt_us"], v["pacing_bps"]))

    def __enter__(self) -> WmemSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()


@contextmanager
def shaped_sender(running: emu.Emulator, built: probe.Probe, keep: dict[str, Any]) -> Iterator[None]:
    """The wmem sampler and the probe on the sender (client 0) while the traffic runs; the
    emulator put htb on its TUN device (``stack.host_shaper``), and tc's view of it is kept."""
    name = running.host("client", 0)["name"]
    keep["origin_ns"] = running.origin_ns
    with (
        WmemSampler(name, emu.BASE_PORT) as sampler,
        probe.recording(built, emu.BASE_PORT, name, kinds=SKB_KINDS) as rec,
    ):
        keep["sampler"], keep["recording"] = sampler, rec
        yield
    keep["qdisc"] = subprocess.run(
        ["ip", "netns", "exec", name, "tc", "-s", "qdisc", "show", "dev", name], capture_output=True, text=True
    ).stdout


def limit_bytes(rate_mbit: int, tsq_ms: int | None) -> int | None:
    """``tsq_ms`` of the rate, in bytes (None: the sysctl is left at the kernel's default)."""
    return None if tsq_ms is None else rate_mbit * 1_000_000 // 8 * tsq_ms // 1000


def skb_overhead() -> int | None:
    """The running kernel's truesize overhead of a TCP skb when it has the small-head cache."""
    try:
        return SKB_STRUCT + int(SMALL_HEAD.read_text())
    except (OSError, ValueError):
        return None


def scenarios_of(params: dict[str, Any], seed: int = 1) -> tuple[dict[str, Any], dict[str, Any]]:
    """(kernel scenario, simulator scenario) of a cell's repetition ``seed``."""
    built = scenarios.build(
        "tcp_upload",
        rate=PATH_RATE,
        rtt=RTT,
        buffer=BUFFER,
        cc=[params["cc"]],
        length=params["length"],
        delay=DELAY,
        seed=seed,
    )
    # The TUN device has no link-layer header and htb charges a packet its IP length
    # (qdisc_pkt_len), so the simulator's NIC is given no L2 framing either (the 1 Gbit/s
    # emulated path behind it never queues, framed or not).
    built["path"]["l2_overhead"] = 0
    # htb at the rate on every host's device, tc's default burst: the emulator installs it on
    # the TUN devices, the simulator runs it in front of each host NIC (net/link.rs Shaper).
    built.setdefault("stack", {})["host_shaper"] = {"rate": f"{params['rate_mbit']}mbit", "burst": SHAPER_BURST}
    built.setdefault("stack", {})["kernel"] = running_kernel()
    lob = limit_bytes(params["rate_mbit"], params["tsq_ms"])
    if lob is not None:
        built.setdefault("stack", {})["limit_output_bytes"] = f"{lob}b"
    overhead = skb_overhead()
    if overhead is not None:
        built["stack"]["skb_overhead"] = overhead
    kernel = api.validate(built)
    # TUN orphans each skb as htb hands it over (tun_net_xmit), so the simulator's NIC releases
    # TSQ when the skb's first packet starts its transmission (stack.tx_orphan).
    # The receiving application reads READ_DELAY after data arrives, as the check's does.
    sim = api.validate({**built, "stack": {**built["stack"], "tx_orphan": True, "read_delay": READ_DELAY}})
    return kernel, sim


def median(values: list[float]) -> float | None:
    return emu.nearest_rank(values, 0.5)


def window_ns(scenario: dict[str, Any]) -> tuple[int, int]:
    """The flow's span after the settling time, scenario ns."""
    flow = scenario["flows"][0]
    start = emu._parse_ns(flow["start"]) + int(SETTLE_S * 1e9)
    stop = emu._parse_ns(flow["stop"]) if flow.get("stop") is not None else emu._parse_ns(scenario["duration"])
    return start, stop


def in_window(keep: dict[str, Any], window: tuple[int, int], samples: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """The sampler's ``samples`` (monotonic ns first) that fall in the window (scenario ns)."""
    origin = keep["origin_ns"]
    return [s for s in samples if window[0] <= s[0] - origin < window[1]]


def kernel_below_tcp(keep: dict[str, Any], window: tuple[int, int]) -> float | None:
    return median([float(v) for _, v in in_window(keep, window, keep["sampler"].samples)])


def kernel_pacing(keep: dict[str, Any], window: tuple[int, int]) -> tuple[float | None, float | None]:
    """Medians of the kernel socket's pacing rate (bit/s) and cwnd (segments) in the window."""
    picked = in_window(keep, window, keep["sampler"].tcp)
    return median([float(s[3]) for s in picked]), median([float(s[1]) for s in picked])


# The probe's events this check reads (kernel_segs_per_skb): the skbs handed to the device.
SKB_KINDS = ("QUEUE",)


def kernel_segs_per_skb(events: list[dict[str, Any]]) -> float | None:
    """Mean segments per skb TCP handed to the device (net_dev_queue events with payload)."""
    segs = [
        max(1, -(-e["payload"] // (e["gso_size"] or e["payload"])))
        for e in events
        if e["kind"] == "QUEUE" and e["payload"] > 0
    ]
    return sum(segs) / len(segs) if segs else None


def sim_median(sim: Any, window: tuple[int, int], column: str) -> float | None:
    """Median of the simulator's flow 0 ``column`` samples (``t`` in seconds) in the window."""
    series = sim.flow_series
    ns = series["t"] * 1e9
    picked = series[(series["flow"] == 0) & (ns >= window[0]) & (ns < window[1])]
    return median([float(v) for v in picked[column]])


def sim_below_tcp(sim: Any, window: tuple[int, int]) -> float | None:
    """Median of the simulator's flow 0 ``tsq_bytes`` samples in the window."""
    return sim_median(sim, window, "tsq_bytes")


def run(
    out: Path, *, smoke: bool, report: Callable[[str], None], repeat: int = 1, only: Sequence[str] | None = None
) -> pd.DataFrame:
    with probe.built() as built:

        def run_cell(cell: Cell, staging: Path, seed: int) -> dict[str, Any]:
            p = cell.params
            kernel_scenario, sim_scenario = scenarios_of(p, seed)
            sim = api.run(sim_scenario)
            keep: dict[str, Any] = {}
            kernel = emu.run_emulated(kernel_scenario, during=lambda running: shaped_sender(running, built, keep))
            sim.save(staging / "sim")
            kernel.save(staging / "kernel")
            (staging / "qdisc.txt").write_text(keep.get("qdisc", ""))
            window = window_ns(kernel_scenario)
            k_flow, s_flow = kernel.flows.iloc[0], sim.flows.iloc[0]
            k_pacing, k_cwnd = kernel_pacing(keep, window)
            k_ping = kernel.pings.iloc[0]["rtt_p50_ms"] if len(kernel.pings) else None
            s_ping = sim.pings.iloc[0]["rtt_p50_ms"] if len(sim.pings) else None
            row: dict[str, Any] = {
                "rate_mbit": p["rate_mbit"],
                "tsq_ms": "none" if p["tsq_ms"] is None else p["tsq_ms"],
                "limit_output_bytes": limit_bytes(p["rate_mbit"], p["tsq_ms"]),
                "cc": p["cc"],
                "sim_goodput_bps": float(s_flow["goodput_bps"]),
                "kernel_goodput_bps": float(k_flow["goodput_bps"]),
                "sim_ping_p50_ms": s_ping,
                "kernel_ping_p50_ms": k_ping,
                "sim_below_tcp_p50": sim_below_tcp(sim, window),
                "kernel_below_tcp_p50": kernel_below_tcp(keep, window),
                "sim_segs_per_skb": float(s_flow["skb_segs_mean"]),
                "kernel_segs_per_skb": kernel_segs_per_skb(keep["recording"].events),
                "sim_pacing_p50_bps": sim_median(sim, window, "pacing_rate_bps"),
                "kernel_pacing_p50_bps": k_pacing,
                "sim_cwnd_p50": sim_median(sim, window, "cwnd"),
                "kernel_cwnd_p50": k_cwnd,
                **lateness(kernel.summary),
            }
            row.update(goodput_ping_agreement(row))
            row["below_tcp_diff"] = relative(row["sim_below_tcp_p50"], row["kernel_below_tcp_p50"])
            row["below_tcp_ok"] = within(row["below_tcp_diff"], BELOW_TCP_TOLERANCE)
            row["verdict"] = verdict(row, ("goodput", "ping", "below_tcp"))
            return row

        return run_cells(
            out, cells(smoke), run_cell, markdown, report, repeat=repeat, compared=COMPARED, checks=CHECKS, only=only
        )


def cells(smoke: bool) -> list[Cell]:
    if smoke:
        grid = [(100, 4, "cubic")]
        length = SMOKE_LENGTH
    else:
        grid = [(r, m, c) for r in RATES_MBIT for m in TSQ_MS for c in CCS]
        length = LENGTH
    return [
        Cell(f"{r}mbit-{cap_label(m)}-{c}", {"rate_mbit": r, "tsq_ms": m, "cc": c, "length": length})
        for r, m, c in grid
    ]


def cap_label(tsq_ms: int | None) -> str:
    """A cell id's part for ``tcp_limit_output_bytes``: ``4ms``, or ``nocap`` when not set."""
    return "nocap" if tsq_ms is None else f"{tsq_ms}ms"


CHECKS = ("goodput", "ping", "below_tcp")
COMPARED = (
    *GOODPUT_PING_COMPARED,
    Compared("sim_below_tcp_p50", "kernel_below_tcp_p50", "below_tcp_diff", "below_tcp", BELOW_TCP_TOLERANCE),
)

COLUMNS = (
    Column("rate Mbit/s", "rate_mbit", "int"),
    Column("TSQ ms", "tsq_ms", "label"),
    Column("cc", "cc"),
    *GOODPUT_PING_COLUMNS,
    Column("below TCP p50 sim B", "sim_below_tcp_p50", "int"),
    Column("below TCP p50 kernel B", "kernel_below_tcp_p50", "int"),
    Column("diff", "below_tcp_diff", "diff"),
    Column("segs/skb sim", "sim_segs_per_skb", "num"),
    Column("segs/skb kernel", "kernel_segs_per_skb", "num"),
    Column("pacing p50 sim Mbit/s", "sim_pacing_p50_bps", "mbit"),
    Column("pacing p50 kernel Mbit/s", "kernel_pacing_p50_bps", "mbit"),
    *CLOSING_COLUMNS,
)


def markdown(rows: list[dict[str, Any]]) -> str:
    return markdown_table(
        rows,
        COLUMNS,
        footer(
            rows,
            CHECKS,
            f"goodput {GOODPUT_TOLERANCE:.0%}, median ping {PING_TOLERANCE:.0%}, "
            f"median bytes below TCP {BELOW_TCP_TOLERANCE:.0%}{DIFFERENCES}",
        ),
    )
