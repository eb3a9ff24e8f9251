"""Real kernels over wificc's link models (the library behind ``wificc emu run``, ``wificc emu
cleanup`` and ``wificc validate``, whose commands are in :mod:`wificc.cli.kernel`).

The emulator (``crates/wificc-emu``, a Rust binary) puts the server and each client of a
scenario's path in a network namespace of its own, joined to the emulator through a TUN device,
and carries every packet across the same link models the simulator builds for the scenario
(wired: NICs, the bottleneck's rate, delay, qdisc and buffer; trace: Mahimahi-style trace links;
Wi-Fi: the server's NIC, the backhaul and the BSS of the AP and its stations, with A-MPDU
aggregation), driven by the wall clock. This package runs the scenario's traffic over it with the
kernel's own TCP: for each flow, a bulk sender and a receiver (Python sockets created inside the
namespaces, ``TCP_CONGESTION`` set per socket, so any congestion control the kernel has, BPF ones
included: wificc's variants ``wbbr``, ... are loaded for the run when the kernel does not have
them, and unloaded after it unless another run still uses them, :func:`bpf_variants_loaded`);
for each ping, ICMP echo requests (a
raw socket; the server's kernel answers) or UDP echoes (a small responder), at the scenario's
interval, timed by the kernel's receive timestamps. Every STEP it reads each sender's
``tcp_info`` (cwnd, ssthresh, smoothed RTT, pacing and delivery rate, packets in flight,
retransmissions) and, for BBR, its model (``TCP_CC_INFO``: bandwidth, min RTT, gains). The
result has the simulator's format (:class:`wificc.result.Result`: the same summaries, series and
Parquet files), so the two can be compared row by row (on a Wi-Fi path, the per-node A-MPDU
figures too); the summary also carries the emulator's delivery lateness.

Fidelity notes, also printed with every run: the TUN driver frees a sent packet's buffer as soon
as it is queued for the emulator, so TCP Small Queues never holds the sender back (``tsq_bytes``
is recorded as 0, the TSQ summary fields as missing; on a Wi-Fi path an upload's aggregation then
depends only on what the kernel hands over); the TCP handshake happens before a flow's
start; a flow stops writing at its stop time and its last unsent bytes (at most
``TCP_NOTSENT_LOWAT``, about 50 ms of the path's rate) still leave; the parameters of the
kernel's built-in congestion controls are module-wide and are not applied (those of wificc's
BPF variants are, as their knobs: :func:`variant_knobs`).

The package by job: :mod:`~wificc.emu.process` (the emulator binary, a run of it, its network
namespaces), :mod:`~wificc.emu.traffic` (senders, receivers, pings, the results document),
:mod:`~wificc.emu.kernel` (the kernel's congestion controls and wificc's BPF variants),
:mod:`~wificc.emu.runner` (:func:`run_emulated`) and :mod:`~wificc.emu.compare` (the simulator
beside the kernel). Their public names are importable from ``wificc.emu``.
"""

from wificc.emu.compare import VALIDATE_CCS, compare_row, with_cc
from wificc.emu.kernel import (
    BPF_PREFIX,
    available_ccs,
    bpf_variants_loaded,
    is_variant,
    knobs_in_use,
    simulator_cc,
    validated,
    variant_knobs,
)
from wificc.emu.process import (
    EMU_BINARY_ENV,
    NAME_PREFIX,
    REPO_ROOT,
    TAG_PATTERN,
    TRAFFIC_RT_PRIORITY,
    Emulator,
    _base36,
    cleanup,
    emulator_binary,
    entered,
    new_tag,
    real_time,
    unavailable,
)
from wificc.emu.runner import emulator_lines, on_time, run_emulated
from wificc.emu.traffic import (
    BASE_PORT,
    ICMP_DATA_BYTES,
    FlowRun,
    PingRun,
    _bytes,
    _parse_ns,
    _path_rate_bps,
    _timeline,
    bbr_model,
    echo_request,
    icmp_checksum,
    nearest_rank,
    result_document,
    run_traffic,
    tcp_info,
)

__all__ = [
    "BASE_PORT",
    "BPF_PREFIX",
    "EMU_BINARY_ENV",
    "ICMP_DATA_BYTES",
    "NAME_PREFIX",
    "REPO_ROOT",
    "TAG_PATTERN",
    "TRAFFIC_RT_PRIORITY",
    "VALIDATE_CCS",
    "Emulator",
    "FlowRun",
    "PingRun",
    "_base36",
    "_bytes",
    "_parse_ns",
    "_path_rate_bps",
    "_timeline",
    "available_ccs",
    "bbr_model",
    "bpf_variants_loaded",
    "cleanup",
    "compare_row",
    "echo_request",
    "emulator_binary",
    "emulator_lines",
    "on_time",
    "entered",
    "icmp_checksum",
    "is_variant",
    "knobs_in_use",
    "nearest_rank",
    "new_tag",
    "real_time",
    "result_document",
    "run_emulated",
    "run_traffic",
    "simulator_cc",
    "tcp_info",
    "unavailable",
    "validated",
    "variant_knobs",
    "with_cc",
]
