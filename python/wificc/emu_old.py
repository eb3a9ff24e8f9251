"""Real kernels over wificc's link models: ``wificc emu run``, ``wificc emu cleanup`` and
``wificc validate`` (:func:`validate_cmd`).

The emulator (``crates/wificc-emu``, a Rust binary) puts the server and each client of a
scenario's path in a network namespace of its own, joined to the emulator through a TUN device,
and carries every packet across the same link models the simulator builds for the scenario
(wired: NICs, the bottleneck's rate, delay, qdisc and buffer; trace: Mahimahi-style trace links;
Wi-Fi: the server's NIC, the backhaul and the BSS of the AP and its stations, with A-MPDU
aggregation), driven by the wall clock. This module runs the scenario's traffic over it with the
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
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import platform
import queue
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from wificc import api, bpf, scenarios
from wificc.result import FLOW_SERIES_COLUMNS, MODEL_FIELDS, Result

# SCHED_FIFO priority of the traffic generator's threads: below the emulator's
# (crates/wificc-emu DEFAULT_RT_PRIORITY, 60), above normal tasks.
TRAFFIC_RT_PRIORITY = 50
# Environment variable naming the emulator binary (else target/{release,debug} or PATH).
EMU_BINARY_ENV = "WIFICC_EMU"
REPO_ROOT = Path(__file__).resolve().parents[2]
# Every name the emulator creates starts with this, then the run's tag (crates/wificc-emu/src/netns.rs).
NAME_PREFIX = "wcc-"
TAG_PATTERN = re.compile(r"[a-z0-9]{1,6}")
# Where `ip netns` keeps its namespaces (iproute2 NETNS_RUN_DIR).
NETNS_DIR = Path("/var/run/netns")
# setns(2) namespace type (linux/sched.h).
CLONE_NEWNET = 0x40000000
# Socket options (linux/tcp.h, asm-generic/socket.h).
TCP_INFO = 11
TCP_CONGESTION = 13
TCP_NOTSENT_LOWAT = 25
TCP_CC_INFO = 26
SO_TIMESTAMPNS = 35
# struct tcp_info (linux/tcp.h): field -> (byte offset, struct format); 248 bytes since 6.7.
TCP_INFO_LEN = 248
TCP_INFO_FIELDS: dict[str, tuple[int, str]] = {
    "unacked": (24, "I"),
    "sacked": (28, "I"),
    "lost": (32, "I"),
    "retrans": (36, "I"),
    "rtt_us": (68, "I"),
    "snd_ssthresh": (76, "I"),
    "snd_cwnd": (80, "I"),
    "total_retrans": (100, "I"),
    "pacing_rate": (104, "Q"),
    "data_segs_out": (156, "I"),
    "delivery_rate": (160, "Q"),
    "total_rto": (240, "H"),
}
# struct tcp_bbr_info (linux/inet_diag.h): bw_lo, bw_hi (bytes/s), min_rtt (us), pacing and
# cwnd gain (<< 8, BBR_UNIT).
BBR_INFO = struct.Struct("=5I")
BBR_UNIT = 256
# A pacing rate of ~0 (all ones) means "not paced" (sk_max_pacing_rate's default).
UNPACED = 2**64 - 1
# Ping payloads as the simulator sends them (crates/wificc-core/src/world.rs): ping's default
# 56 data bytes for ICMP, 48 for UDP.
ICMP_DATA_BYTES = 56
UDP_PING_BYTES = 48
ICMP_ECHO_REQUEST = 8
ICMP_ECHO_REPLY = 0
# TCP ports of flow i's receiver (BASE_PORT + i) and UDP ports of ping i's responder.
BASE_PORT = 20000
UDP_ECHO_BASE_PORT = 30000
# Sender and receiver buffers of the bulk transfer.
SEND_CHUNK = 128 * 1024
RECV_CHUNK = 1024 * 1024
# Unsent bytes a sender keeps queued: about 50 ms at the path's rate, at least 256 KiB, so the
# sender is never application-limited yet stops within ~50 ms of its stop time.
NOTSENT_MIN = 256 * 1024
NOTSENT_TIME_S = 0.05
# How often blocked socket calls wake up to check the clock.
POLL_S = 0.05
# Time to wait for the emulator's ready line and for it to stop.
READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
# The congestion controls `wificc validate` compares by default (each in the kernel and the
# simulator).
VALIDATE_CCS = ("cubic", "reno", "bbr")
NSEC_PER_SEC = 1_000_000_000
# What the traffic generator adds to the emulator's notes.
RECORDING_NOTE = "tsq_bytes is recorded as 0 and the TSQ summary fields as missing (not observable through TUN)"
CC_PARAMS_NOTE = (
    "cc_params of the kernel's built-in congestion controls are not applied: their parameters are "
    "module-wide (those of wificc's BPF variants are, as knobs)"
)
# Prefix of wificc's BPF congestion controls (bpf/): variant "wNAME" implements the simulator's
# "NAME" (wbbr is bbr, wbbrp is bbrp, ...).
BPF_PREFIX = "w"
# Waits for its standard input to end, then ends the run's lease (argument 1) on the BPF
# variants named after it, unloading those the runs loaded once no run uses them: this happens
# even when the run is killed (its end of the pipe closes then).
RELEASE_GUARD = "import sys; from wificc import bpf; sys.stdin.read(); bpf.release(sys.argv[1], sys.argv[2:])"
# Time the guard gets to unload (bpftool, and the kernel's asynchronous release).
UNLOAD_TIMEOUT_S = 60.0

app = typer.Typer(
    help="Real kernels over wificc's link models: network namespaces joined by TUN devices.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_libc = ctypes.CDLL(None, use_errno=True)


def _cli() -> Any:
    """The CLI module (its tables and error handling), imported when first used: the CLI mounts
    this module's commands, so importing it at load time would be circular."""
    from wificc import cli

    return cli


def unavailable() -> str | None:
    """Why the emulator cannot run on this machine, or None when it can."""
    if os.geteuid() != 0:
        return "the emulator needs root (network namespaces and TUN devices)"
    if not os.path.exists("/dev/net/tun"):
        return "no TUN device (/dev/net/tun)"
    if shutil.which("ip") is None:
        return "iproute2's ip is not installed (scripts/setup-debian.sh installs it)"
    return None


def emulator_binary() -> Path:
    """The wificc-emu binary: $WIFICC_EMU, else the repository's release or debug build, else PATH."""
    env = os.environ.get(EMU_BINARY_ENV)
    if env:
        if not os.access(env, os.X_OK):
            raise ValueError(f"{EMU_BINARY_ENV}={env}: not an executable file")
        return Path(env)
    for profile in ("release", "debug"):
        candidate = REPO_ROOT / "target" / profile / "wificc-emu"
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("wificc-emu")
    if found:
        return Path(found)
    raise ValueError(
        "wificc-emu: not built; build it with 'cargo build --release -p wificc-emu' "
        f"(or set {EMU_BINARY_ENV} to its path)"
    )


def cleanup(prefix: str = NAME_PREFIX) -> list[str]:
    """Remove the namespaces and devices whose names start with ``prefix``; returns their names."""
    done = subprocess.run([str(emulator_binary()), "cleanup", "--prefix", prefix], capture_output=True, text=True)
    if done.returncode != 0:
        raise OSError(done.stderr.strip() or f"wificc-emu cleanup exited with {done.returncode}")
    return [line.removeprefix("removed ") for line in done.stdout.splitlines() if line]


_tags = iter(range(36**2))


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def new_tag() -> str:
    """A run tag unique among this machine's concurrent runs: pid and a counter, base 36."""
    return (_base36(os.getpid())[-4:] + _base36(next(_tags)).rjust(2, "0"))[-6:]


class Emulator:
    """A running ``wificc-emu run``: started on entry, stopped and cleaned up on exit.

    ``ready`` is the emulator's ready line (hosts, addresses, clock origin, notes); :meth:`stop`
    ends the run and returns its report (lateness, packet counters, queue summaries and series).
    Whatever happens, leaving the context removes every namespace of the run.
    """

    def __init__(
        self,
        scenario: dict[str, Any],
        *,
        tag: str | None = None,
        spin_us: int | None = None,
        rt_priority: int | None = None,
    ):
        if tag is not None and not TAG_PATTERN.fullmatch(tag):
            raise ValueError(f"--tag: got {tag!r}, expected 1 to 6 lowercase letters or digits")
        self.scenario = scenario
        self.tag = tag or new_tag()
        self.spin_us = spin_us
        self.rt_priority = rt_priority
        self.ready: dict[str, Any] = {}
        self.report: dict[str, Any] | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._errors: Any = None

    def __enter__(self) -> Emulator:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def origin_ns(self) -> int:
        """``CLOCK_MONOTONIC`` nanoseconds of scenario time 0."""
        return int(self.ready["origin_ns"])

    def host(self, role: str, client: int | None = None) -> dict[str, Any]:
        """The ready line's entry for the server or client ``client``."""
        for h in self.ready["hosts"]:
            if h["role"] == role and h["client"] == client:
                return h
        raise ValueError(f"{role} {client}: not a host of this run")

    def _start(self) -> None:
        # The emulator builds the path and the stack; it checks the flows as the simulator does.
        flows = [{**f, "cc": simulator_cc(f["cc"])} for f in self.scenario.get("flows", [])]
        # The scenario goes to the emulator in an anonymous memory file it inherits: no file on
        # disk is left behind however this process ends (a SIGKILL included).
        fd = os.memfd_create("wificc-emu-scenario", 0)
        with os.fdopen(fd, "w", closefd=False) as f:
            json.dump({**self.scenario, "flows": flows}, f)
        name = f"/proc/self/fd/{fd}"
        command = [str(emulator_binary()), "run", name, "--tag", self.tag, "--stdin-control"]
        if self.spin_us is not None:
            command += ["--spin-us", str(self.spin_us)]
        if self.rt_priority is not None:
            command += ["--rt-priority", str(self.rt_priority)]
        self._errors = tempfile.TemporaryFile(mode="w+")
        try:
            self._proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._errors,
                text=True,
                pass_fds=(fd,),
            )
        finally:
            os.close(fd)
        threading.Thread(target=self._read_lines, daemon=True).start()
        line = self._next_line(READY_TIMEOUT_S)
        if line is None:
            raise OSError(f"wificc-emu did not start: {self._stderr()}")
        self.ready = json.loads(line)

    def _read_lines(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _next_line(self, timeout: float) -> str | None:
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def _stderr(self) -> str:
        """The emulator's error output, once it has exited (it is killed if it has not)."""
        assert self._proc is not None and self._errors is not None
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        self._errors.seek(0)
        return self._errors.read().strip() or f"exit code {self._proc.returncode}"

    def check(self) -> None:
        """Raise if the emulator has stopped on its own (signalled, or failed) during the run."""
        assert self._proc is not None
        if self._proc.poll() is not None or not self._lines.empty():
            line = self._next_line(STOP_TIMEOUT_S)
            why = json.loads(line)["stopped_by"] if line else self._stderr()
            raise OSError(f"wificc-emu stopped during the run ({why}); the run is incomplete")

    def stop(self) -> dict[str, Any]:
        """End the run (closing the emulator's standard input) and return its report."""
        assert self._proc is not None and self._proc.stdin is not None
        if self.report is not None:
            return self.report
        self._proc.stdin.close()
        line = self._next_line(STOP_TIMEOUT_S)
        if line is None:
            raise OSError(f"wificc-emu did not report: {self._stderr()}")
        self.report = json.loads(line)
        self._proc.wait(STOP_TIMEOUT_S)
        return self.report

    def close(self) -> None:
        """Stop the emulator however it is, and remove anything of this run left behind.

        The emulator removes its own namespaces whenever it can; what a killed emulator left is
        removed here by the run's name prefix, and only once the emulator had reported ready:
        its namespaces then existed under this tag, so the prefix cannot name another live run.
        """
        proc = self._proc
        if proc is not None and proc.poll() is None:
            if proc.stdin is not None and not proc.stdin.closed:
                proc.stdin.close()
            try:
                proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self._errors is not None:
            self._errors.close()
            self._errors = None
        if proc is not None and self.ready and proc.returncode != 0:
            cleanup(f"{NAME_PREFIX}{self.tag}-")


@contextmanager
def entered(netns: str) -> Iterator[None]:
    """Run the body with this thread inside network namespace ``netns`` (sockets created there
    stay there)."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(NETNS_DIR / netns, os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {netns}")
        try:
            yield
        finally:
            if _libc.setns(own, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back to the original namespace")
    finally:
        os.close(target)
        os.close(own)


def tcp_info(sock: socket.socket) -> dict[str, int]:
    """The fields of :data:`TCP_INFO_FIELDS` that this kernel's ``struct tcp_info`` has."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, TCP_INFO_LEN)
    out = {}
    for name, (offset, fmt) in TCP_INFO_FIELDS.items():
        if offset + struct.calcsize("=" + fmt) <= len(raw):
            out[name] = struct.unpack_from("=" + fmt, raw, offset)[0]
    return out


def bbr_model(sock: socket.socket) -> list[tuple[str, float]]:
    """BBR's model from ``TCP_CC_INFO`` under the simulator's names (empty if not BBR)."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, BBR_INFO.size)
    if len(raw) < BBR_INFO.size:
        return []
    bw_lo, bw_hi, min_rtt_us, pacing_gain, cwnd_gain = BBR_INFO.unpack_from(raw)
    return [
        ("bw_bps", float((bw_hi << 32 | bw_lo) * 8)),
        ("min_rtt_us", float(min_rtt_us)),
        ("pacing_gain", pacing_gain / BBR_UNIT),
        ("cwnd_gain", cwnd_gain / BBR_UNIT),
    ]


def icmp_checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071)."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def echo_request(ident: int, seq: int) -> bytes:
    """An ICMP echo request with ``ICMP_DATA_BYTES`` of zeroes."""
    body = bytes(ICMP_DATA_BYTES)
    header = struct.pack("!BBHHH", ICMP_ECHO_REQUEST, 0, 0, ident, seq & 0xFFFF)
    checksum = icmp_checksum(header + body)
    return struct.pack("!BBHHH", ICMP_ECHO_REQUEST, 0, checksum, ident, seq & 0xFFFF) + body


def nearest_rank(values: list[float], q: float) -> float | None:
    """The q-quantile by the nearest-rank rule (the simulator's rule), None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _parse_ns(text: Any) -> int:
    return scenarios.duration_ns("scenario", str(text))


def _now_ns(origin_ns: int) -> int:
    return time.monotonic_ns() - origin_ns


def sleep_until(origin_ns: int, t_ns: int) -> None:
    """Sleep until scenario time ``t_ns``."""
    delay = t_ns - _now_ns(origin_ns)
    if delay > 0:
        time.sleep(delay / NSEC_PER_SEC)


def _kernel_time_ns(ancillary: list[tuple[int, int, bytes]]) -> int:
    """The SO_TIMESTAMPNS receive time (CLOCK_REALTIME ns) among a message's control data, or
    the current time when the kernel gave none."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
            sec, nsec = struct.unpack_from("=qq", data)
            return sec * NSEC_PER_SEC + nsec
    return time.time_ns()


@dataclass
class FlowRun:
    """One bulk TCP transfer of the scenario, with its sockets and what is measured of it."""

    id: int
    name: str
    cc: str
    start_ns: int
    stop_ns: int
    limit: int | None
    dscp: int
    sender_ns: str
    receiver_ns: str
    receiver_addr: str
    notsent_lowat: int
    listener: socket.socket | None = None
    sender: socket.socket | None = None
    delivered: int = 0
    delivered_at_from: int = 0
    delivered_at_stop: int | None = None
    last_delivered: int = 0
    kernel_cc: str = ""
    last_info: dict[str, int] = field(default_factory=dict)
    series: dict[str, list[Any]] = field(default_factory=dict)
    threads: list[threading.Thread] = field(default_factory=list)

    @property
    def port(self) -> int:
        return BASE_PORT + self.id

    def prepare(self) -> None:
        """Listen in the receiver's namespace, connect from the sender's (before the start)."""
        with entered(self.receiver_ns):
            self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((self.receiver_addr, self.port))
        self.listener.listen(1)
        self.listener.settimeout(POLL_S)
        with entered(self.sender_ns):
            self.sender = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self.sender.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, self.cc.encode())
        except OSError as e:
            raise ValueError(
                f"flows[{self.id}].cc: {self.cc!r} is not a congestion control of this kernel "
                f"({e.strerror}); available: {available_ccs()}"
            ) from None
        self.sender.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, self.dscp << 2)
        self.sender.setsockopt(socket.IPPROTO_TCP, TCP_NOTSENT_LOWAT, self.notsent_lowat)
        self.sender.settimeout(READY_TIMEOUT_S)
        self.sender.connect((self.receiver_addr, self.port))
        self.sender.settimeout(POLL_S)
        self.kernel_cc = self.sender.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0").decode()
        self.series = {k: [] for k in FLOW_SERIES_FIELDS}

    def start(self, origin_ns: int, done: threading.Event) -> None:
        self.threads = [
            threading.Thread(target=self._receive, args=(done,), daemon=True),
            threading.Thread(target=self._send, args=(origin_ns, done), daemon=True),
        ]
        for t in self.threads:
            t.start()

    def _receive(self, done: threading.Event) -> None:
        assert self.listener is not None
        conn = None
        while conn is None and not done.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
        if conn is None:
            return
        conn.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, self.dscp << 2)
        conn.settimeout(POLL_S)
        buf = bytearray(RECV_CHUNK)
        with conn:
            while not done.is_set():
                try:
                    n = conn.recv_into(buf)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if n == 0:
                    return
                self.delivered += n

    def _send(self, origin_ns: int, done: threading.Event) -> None:
        assert self.sender is not None
        sleep_until(origin_ns, self.start_ns)
        chunk = memoryview(bytes(SEND_CHUNK))
        sent = 0
        while not done.is_set() and _now_ns(origin_ns) < self.stop_ns:
            n = SEND_CHUNK if self.limit is None else min(SEND_CHUNK, self.limit - sent)
            if n <= 0:
                return
            try:
                sent += self.sender.send(chunk[:n])
            except TimeoutError:
                continue
            except OSError:
                return

    def sample(self, t_ns: int, step_ns: int) -> None:
        """The STEP sample at scenario time ``t_ns``, recorded while the flow is active."""
        delivered = self.delivered
        goodput = (delivered - self.last_delivered) * 8 * NSEC_PER_SEC / step_ns
        self.last_delivered = delivered
        if not (self.start_ns < t_ns <= self.stop_ns + step_ns) or self.sender is None:
            return
        try:
            info = tcp_info(self.sender)
            model = bbr_model(self.sender) if self.kernel_cc == "bbr" else []
        except OSError:
            return
        self.last_info = info
        s = self.series
        t = t_ns / NSEC_PER_SEC
        pacing = info.get("pacing_rate", UNPACED)
        s["t"].append(t)
        s["goodput_bps"].append(goodput)
        s["srtt_ms"].append(info["rtt_us"] / 1e3)
        s["cwnd"].append(info["snd_cwnd"])
        s["ssthresh"].append(info["snd_ssthresh"])
        s["pacing_rate_bps"].append(math.nan if pacing == UNPACED else pacing * 8.0)
        s["delivery_rate_bps"].append(info.get("delivery_rate", 0) * 8.0)
        s["inflight"].append(max(0, info["unacked"] - info["sacked"] - info["lost"] + info["retrans"]))
        s["tsq_bytes"].append(0)
        s["retrans"].append(info["total_retrans"])
        for name, value in model:
            s["model_t"].append(t)
            s["model_name"].append(name)
            s["model_value"].append(value)

    def close(self) -> None:
        for sock in (self.sender, self.listener):
            if sock is not None:
                sock.close()


# The flow series' fields of the results document: the flow series columns but the entity's
# id and name, then the model's long-form fields.
FLOW_SERIES_FIELDS = (
    *(c for c in FLOW_SERIES_COLUMNS if c not in ("flow", "name")),
    *MODEL_FIELDS.values(),
)


@dataclass
class PingRun:
    """One ping stream: ICMP echo (the server's kernel answers) or UDP echo (a responder)."""

    id: int
    name: str
    kind: str
    dscp: int
    interval_ns: int
    start_ns: int
    stop_ns: int
    client_ns: str
    server_ns: str
    server_addr: str
    sock: socket.socket | None = None
    responder: socket.socket | None = None
    sent: int = 0
    # Per sequence number: (scenario send time ns, CLOCK_REALTIME send time ns).
    sent_at: dict[int, tuple[int, int]] = field(default_factory=dict)
    # (scenario send time ns, RTT ns) per reply, in arrival order.
    replies: list[tuple[int, int]] = field(default_factory=list)
    threads: list[threading.Thread] = field(default_factory=list)

    @property
    def ident(self) -> int:
        return (os.getpid() * 64 + self.id) & 0xFFFF

    @property
    def udp_port(self) -> int:
        return UDP_ECHO_BASE_PORT + self.id

    def prepare(self) -> None:
        with entered(self.client_ns):
            if self.kind == "icmp":
                self.sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
            else:
                self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, self.dscp << 2)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.settimeout(POLL_S)
        if self.kind == "udp":
            with entered(self.server_ns):
                self.responder = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.responder.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, self.dscp << 2)
            self.responder.bind((self.server_addr, self.udp_port))
            self.responder.settimeout(POLL_S)

    def start(self, origin_ns: int, done: threading.Event) -> None:
        targets: list[Any] = [(self._send, (origin_ns, done)), (self._receive, (origin_ns, done))]
        if self.responder is not None:
            targets.append((self._echo, (done,)))
        self.threads = [threading.Thread(target=f, args=a, daemon=True) for f, a in targets]
        for t in self.threads:
            t.start()

    def _send(self, origin_ns: int, done: threading.Event) -> None:
        assert self.sock is not None
        seq = 0
        while not done.is_set():
            t = self.start_ns + seq * self.interval_ns
            if t >= self.stop_ns:
                return
            sleep_until(origin_ns, t)
            if done.is_set():
                return
            if self.kind == "icmp":
                payload, to = echo_request(self.ident, seq), (self.server_addr, 0)
            else:
                payload = struct.pack("=Q", seq).ljust(UDP_PING_BYTES, b"\0")
                to = (self.server_addr, self.udp_port)
            self.sent_at[seq & 0xFFFF] = (_now_ns(origin_ns), time.time_ns())
            try:
                self.sock.sendto(payload, to)
            except OSError:
                return
            self.sent += 1
            seq += 1

    def _receive(self, origin_ns: int, done: threading.Event) -> None:
        assert self.sock is not None
        space = socket.CMSG_SPACE(16)
        while not done.is_set():
            try:
                data, ancillary, _, _ = self.sock.recvmsg(2048, space)
            except TimeoutError:
                continue
            except OSError:
                return
            at = _kernel_time_ns(ancillary)
            seq = self._reply_seq(data)
            if seq is not None and seq in self.sent_at:
                sent_model, sent_real = self.sent_at.pop(seq)
                self.replies.append((sent_model, at - sent_real))

    def _reply_seq(self, data: bytes) -> int | None:
        """The sequence number of one of our echo replies, or None for anything else."""
        if self.kind == "udp":
            return struct.unpack_from("=Q", data)[0] & 0xFFFF if len(data) >= 8 else None
        ihl = (data[0] & 0x0F) * 4
        if len(data) < ihl + 8:
            return None
        kind, _, _, ident, seq = struct.unpack_from("!BBHHH", data, ihl)
        return seq if kind == ICMP_ECHO_REPLY and ident == self.ident else None

    def _echo(self, done: threading.Event) -> None:
        assert self.responder is not None
        while not done.is_set():
            try:
                data, peer = self.responder.recvfrom(2048)
                self.responder.sendto(data, peer)
            except TimeoutError:
                continue
            except OSError:
                return

    def close(self) -> None:
        for sock in (self.sock, self.responder):
            if sock is not None:
                sock.close()


def available_ccs() -> str:
    return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().strip()


def _flows(scenario: dict[str, Any], emu: Emulator, duration_ns: int) -> list[FlowRun]:
    server = emu.host("server")
    rate_bps = _path_rate_bps(scenario["path"])
    lowat = max(NOTSENT_MIN, int(rate_bps / 8 * NOTSENT_TIME_S))
    out = []
    for i, f in enumerate(scenario["flows"]):
        client = emu.host("client", f["client"])
        up = f["direction"] == "up"
        sender, receiver = (client, server) if up else (server, client)
        stop = f.get("stop")
        out.append(
            FlowRun(
                id=i,
                name=f.get("name") or f"{f['cc']}-{f['direction']}-{i}",
                cc=f["cc"],
                start_ns=_parse_ns(f["start"]),
                stop_ns=min(_parse_ns(stop), duration_ns) if stop is not None else duration_ns,
                limit=None if f.get("bytes") is None else _bytes(f["bytes"]),
                dscp=int(f["dscp"]),
                sender_ns=sender["name"],
                receiver_ns=receiver["name"],
                receiver_addr=receiver["addr"],
                notsent_lowat=lowat,
            )
        )
    return out


def _pings(scenario: dict[str, Any], emu: Emulator, duration_ns: int) -> list[PingRun]:
    server = emu.host("server")
    out = []
    for i, p in enumerate(scenario["pings"]):
        stop = p.get("stop")
        out.append(
            PingRun(
                id=i,
                name=p.get("name") or f"{p['kind']}-ping-{i}",
                kind=p["kind"],
                dscp=int(p["dscp"]),
                interval_ns=_parse_ns(p["interval"]),
                start_ns=_parse_ns(p["start"]),
                stop_ns=_parse_ns(stop) if stop is not None else duration_ns,
                client_ns=emu.host("client", p["client"])["name"],
                server_ns=server["name"],
                server_addr=server["addr"],
            )
        )
    return out


def _bytes(size: Any) -> int:
    """Bytes of a normalised size ("123b" or a number)."""
    return scenarios.size_bytes("flows.bytes", str(size))


def _path_rate_bps(path: dict[str, Any]) -> float:
    """The bottleneck rate of a wired path in bit/s (0 when the path has none, e.g. traces)."""
    rate = path.get("rate")
    if rate is None:
        return 0.0
    text = str(rate).strip().lower()
    for unit, scale in (("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1.0)):
        if text.endswith(unit):
            return float(text.removesuffix(unit)) * scale
    return float(text)


def _timeline(duration_ns: int, step_ns: int, warmup_ns: int, flows: list[FlowRun]) -> list[tuple[int, int, str, Any]]:
    """The timed actions of a run, in order: (time, order at equal times, action, subject)."""
    actions: list[tuple[int, int, str, Any]] = []
    k = 1
    while k * step_ns <= duration_ns:
        actions.append((k * step_ns, 1, "sample", None))
        k += 1
    if warmup_ns > 0:
        actions.append((warmup_ns, 0, "warmup", None))
    for f in flows:
        actions.append((f.stop_ns, 2, "stop", f))
    return sorted(actions, key=lambda a: (a[0], a[1]))


def run_traffic(scenario: dict[str, Any], emu: Emulator) -> tuple[list[FlowRun], list[PingRun], float]:
    """Run the scenario's flows and pings over a running emulator until its duration; returns
    them with what was measured, and the wall time from the origin to the end."""
    duration_ns, step_ns, warmup_ns = (_parse_ns(scenario[k]) for k in ("duration", "step", "warmup"))
    flows = _flows(scenario, emu, duration_ns)
    pings = _pings(scenario, emu, duration_ns)
    done = threading.Event()
    try:
        for item in [*flows, *pings]:
            item.prepare()
        origin = emu.origin_ns
        for item in [*flows, *pings]:
            item.start(origin, done)
        for t, _, action, flow in _timeline(duration_ns, step_ns, warmup_ns, flows):
            sleep_until(origin, t)
            emu.check()
            if action == "warmup":
                for f in flows:
                    if f.start_ns < warmup_ns:
                        f.delivered_at_from = f.delivered
            elif action == "sample":
                for f in flows:
                    f.sample(t, step_ns)
            else:
                flow.delivered_at_stop = flow.delivered
        sleep_until(origin, duration_ns)
        wall_s = _now_ns(origin) / NSEC_PER_SEC
    finally:
        done.set()
        for item in [*flows, *pings]:
            item.close()
        for item in [*flows, *pings]:
            for t in item.threads:
                t.join(STOP_TIMEOUT_S)
    return flows, pings, wall_s


def _flow_summary(f: FlowRun, warmup_ns: int, drops: int, acks: int | None) -> dict[str, Any]:
    """A flow's summary in the simulator's columns; what TUN hides is None."""
    start = max(f.start_ns, warmup_ns)
    span = max(f.stop_ns - start, 1)
    delivered = (f.delivered_at_stop if f.delivered_at_stop is not None else f.delivered) - f.delivered_at_from
    info = f.last_info
    segs = info.get("data_segs_out", 0)
    retrans = info.get("total_retrans", 0)
    n = max(len(f.series["t"]), 1)
    return {
        "id": f.id,
        "name": f.name,
        "cc": f.kernel_cc,
        "start_s": f.start_ns / NSEC_PER_SEC,
        "stop_s": f.stop_ns / NSEC_PER_SEC,
        "goodput_bps": delivered * 8 * NSEC_PER_SEC / span,
        "bytes_delivered": f.delivered,
        "segs_sent": segs,
        "retrans": retrans,
        "retrans_rate": retrans / segs if segs else 0.0,
        "drops": drops,
        "rto_count": info.get("total_rto"),
        "recoveries": None,
        "srtt_mean_ms": sum(f.series["srtt_ms"]) / n,
        "cwnd_mean": sum(f.series["cwnd"]) / n,
        "tsq_throttled": None,
        "max_tsq_bytes": None,
        "tsq_exceptions": None,
        "tsq_max_excess": None,
        "skbs_sent": None,
        "skb_segs_mean": None,
        "acks_sent": acks,
    }


def _ping_summary(p: PingRun, warmup_ns: int, window: tuple[int, int]) -> dict[str, Any]:
    """As the simulator summarises a ping: percentiles over the pings sent in the measurement
    ``window`` (ns, the flows' span), and as ``rtt_all_*`` over every ping after the warm-up."""
    lo, hi = window

    def percentiles(prefix: str, rtts: list[int]) -> dict[str, float | None]:
        ms = [r / 1e6 for r in rtts]
        return {
            **{f"{prefix}_p{q}_ms": nearest_rank(ms, q / 100) for q in (10, 50, 90, 99)},
            f"{prefix}_mean_ms": sum(ms) / len(ms) if ms else None,
        }

    return {
        "id": p.id,
        "name": p.name,
        "kind": p.kind,
        "dscp": p.dscp,
        "sent": p.sent,
        "received": len(p.replies),
        **percentiles("rtt", [rtt for sent, rtt in p.replies if max(lo, warmup_ns) <= sent <= hi]),
        **percentiles("rtt_all", [rtt for sent, rtt in p.replies if sent >= warmup_ns]),
    }


def _load_window_ns(scenario: dict[str, Any], duration_ns: int) -> tuple[int, int]:
    """The simulator's measurement window (`World::set_load_window`): the flows' span."""
    flows = scenario["flows"]
    if not flows:
        return 0, duration_ns
    stops = [duration_ns if f.get("stop") is None else min(_parse_ns(f["stop"]), duration_ns) for f in flows]
    return min(_parse_ns(f["start"]) for f in flows), max(stops)


def _flow_acks(f: FlowRun, report: dict[str, Any]) -> int | None:
    """Pure ACKs the flow's receiver sent, as the emulator counted them (its data direction is
    the one with data segments on the flow's port)."""
    ours = [a for a in report.get("tcp_acks", []) if f.port in (a["src_port"], a["dst_port"])]
    return max((a["acks"] for a in ours), default=None)


def _flow_drops(f: FlowRun, report: dict[str, Any]) -> int:
    """Packets of the flow (data or ACKs: its receiver's port on either side) that the emulated
    queues dropped."""
    return sum(d["drops"] for d in report["tcp_drops"] if f.port in (d["src_port"], d["dst_port"]))


def result_document(
    scenario: dict[str, Any],
    emu: Emulator,
    flows: list[FlowRun],
    pings: list[PingRun],
    report: dict[str, Any],
    wall_s: float,
    knobs: dict[str, dict[str, str]] | None = None,
) -> dict[str, Any]:
    """The simulator's results document (crates/wificc-core/src/metrics/results.rs) for an
    emulated run, with the emulator's own figures in ``summary`` and under ``emulator``, where
    ``bpf_knobs`` holds the knobs of the BPF variants the run used, as they were when it ran."""
    duration_ns, warmup_ns = _parse_ns(scenario["duration"]), _parse_ns(scenario["warmup"])
    flow_rows = [_flow_summary(f, warmup_ns, _flow_drops(f, report), _flow_acks(f, report)) for f in flows]
    goodputs = [r["goodput_bps"] for r in flow_rows]
    squares = sum(g * g for g in goodputs)
    notes = [*emu.ready["notes"], RECORDING_NOTE]
    lost = sum(d.get("tx_dropped") or 0 for d in report.get("tun_drops") or [])
    if lost:
        notes.append(
            f"{lost} packets the hosts sent were dropped at their TUN devices before the emulator read "
            "them (it was late): losses outside the emulated path"
        )
    if any(f.get("cc_params") and not is_variant(f["cc"]) for f in scenario["flows"]):
        notes.append(CC_PARAMS_NOTE)
    lateness = report["lateness"]
    packets = report["packets"]
    summary = {
        "duration_s": duration_ns / NSEC_PER_SEC,
        "warmup_s": warmup_ns / NSEC_PER_SEC,
        "seed": scenario["seed"],
        "events": packets["read"],
        "wall_s": wall_s,
        "speed": duration_ns / NSEC_PER_SEC / wall_s if wall_s > 0 else math.inf,
        "events_per_s": packets["read"] / wall_s if wall_s > 0 else math.inf,
        "total_goodput_bps": sum(goodputs),
        "jain": sum(goodputs) ** 2 / (len(goodputs) * squares) if squares > 0 else None,
        "emulated": True,
        "kernel": platform.release(),
        "scheduler": report["scheduler"],
        "lateness_p50_us": lateness["p50_us"],
        "lateness_p99_us": lateness["p99_us"],
        "lateness_max_us": lateness["max_us"],
        "lateness_within_100us": lateness["within_100us"],
        "lateness_batch_p99_us": lateness["batch_p99_us"],
        "lateness_batch_within_100us": lateness["batch_within_100us"],
        "notes": "; ".join(notes),
    }
    return {
        "summary": summary,
        "flows": flow_rows,
        "pings": [_ping_summary(p, warmup_ns, _load_window_ns(scenario, duration_ns)) for p in pings],
        "queues": report["queues"],
        "wifi": report["wifi"],
        "series": {
            "flows": [{"id": f.id, "name": f.name, **f.series} for f in flows],
            "pings": [
                {
                    "id": p.id,
                    "name": p.name,
                    "t": [s / NSEC_PER_SEC for s, _ in p.replies],
                    "rtt_ms": [r / 1e6 for _, r in p.replies],
                }
                for p in pings
            ],
            "queues": report["queue_series"],
            "wifi": report["wifi_series"],
        },
        "scenario": scenario,
        "emulator": {
            "tag": emu.tag,
            "notes": notes,
            "bpf_knobs": knobs or {},
            **{
                k: report.get(k)
                for k in (
                    "stopped_by",
                    "elapsed_s",
                    "spin_us",
                    "scheduler",
                    "cpu_s",
                    "preempted",
                    "lateness",
                    "packets",
                    "tcp_acks",
                    "tun_drops",
                )
            },
        },
    }


def simulator_cc(cc: str) -> str:
    """The simulator's congestion control that kernel congestion control ``cc`` implements: the
    BPF variant wNAME is NAME; any other name is its own (all are, without the BPF sources)."""
    if not cc.startswith(BPF_PREFIX):
        return cc
    try:
        variants = bpf.variants()
    except bpf.BpfError:
        return cc
    return cc.removeprefix(BPF_PREFIX) if cc in variants else cc


def is_variant(cc: str) -> bool:
    """Whether kernel congestion control ``cc`` is one of wificc's BPF variants."""
    return simulator_cc(cc) != cc


def validated(scenario: api.ScenarioLike) -> dict[str, Any]:
    """The scenario with every default filled in, its flows on the kernel congestion controls it
    names: a flow on a BPF variant (wbbr, ...) is checked as a flow on the simulator's
    algorithm it implements, then runs on the variant."""
    text, fmt = api.scenario_text(scenario)
    try:
        raw = json.loads(text) if fmt == "json" else tomllib.loads(text)
    except ValueError as e:
        raise ValueError(f"(scenario): {e}") from None
    flows = raw.get("flows")
    if not isinstance(flows, list):
        return api.validate(raw)
    kernel = [f.get("cc") if isinstance(f, dict) else None for f in flows]
    renamed = [{**f, "cc": simulator_cc(cc)} if isinstance(cc, str) else f for f, cc in zip(flows, kernel, strict=True)]
    normalised = api.validate({**raw, "flows": renamed})
    for f, cc in zip(normalised["flows"], kernel, strict=True):
        if isinstance(cc, str):
            f["cc"] = cc
    return normalised


def variant_knobs(scenario: dict[str, Any]) -> dict[str, list[str]]:
    """The knob assignments of each BPF variant that flows of the normalised ``scenario`` give
    ``cc_params`` (:func:`wificc.bpf.knob_assignments`). Flows on one variant share its knobs,
    so they must ask for the same values; a ``ValueError`` names the field otherwise."""
    sets: dict[str, tuple[int, list[str]]] = {}
    for i, flow in enumerate(scenario["flows"]):
        cc, params = flow["cc"], flow.get("cc_params") or {}
        if not is_variant(cc) or not params:
            continue
        try:
            assignments = bpf.knob_assignments(cc, params, f"flows[{i}].cc_params")
        except bpf.BpfError as e:
            raise ValueError(str(e)) from None
        first, earlier = sets.setdefault(cc, (i, assignments))
        if sorted(earlier) != sorted(assignments):
            raise ValueError(
                f"flows[{i}].cc_params: flows {first} and {i} both run {cc} with different parameters "
                f"({', '.join(earlier)} against {', '.join(assignments)}); a loaded variant has one set "
                "of knobs for all its connections"
            )
    return {cc: assignments for cc, (_, assignments) in sets.items()}


@contextmanager
def bpf_variants_loaded(ccs: Iterable[str], knob_sets: dict[str, list[str]] | None = None) -> Iterator[list[str]]:
    """Hold a lease on the BPF variants among ``ccs`` for the block (:func:`wificc.bpf.acquire`),
    loading those the kernel does not have yet, with the knobs of ``knob_sets``
    (:func:`variant_knobs`); yields the names this run loaded. When the block
    ends, however it ends, the lease ends, and a variant that runs loaded is unloaded once no
    other run holds it.

    The release is done by a guard process in a session of its own that waits for its standard
    input to end: when the block ends it is closed and waited for; if this process is killed,
    the kernel closes it, and the guard still releases.
    """
    wanted = sorted({cc for cc in ccs if is_variant(cc)})
    if not wanted:
        yield []
        return
    token = bpf.lease_token()
    guard = subprocess.Popen(
        [sys.executable, "-c", RELEASE_GUARD, token, *wanted], stdin=subprocess.PIPE, start_new_session=True
    )
    try:
        try:
            loaded = bpf.acquire(token, wanted, knob_sets)
        except bpf.BpfError as e:
            raise OSError(f"loading {', '.join(wanted)}: {e}") from None
        yield loaded
    finally:
        assert guard.stdin is not None
        guard.stdin.close()
        guard.wait(UNLOAD_TIMEOUT_S)


@contextmanager
def real_time(priority: int) -> Iterator[None]:
    """Run the body, and the threads it starts, under ``SCHED_FIFO`` at ``priority`` (0: leave
    the scheduler as it is); the calling thread's policy is restored afterwards."""
    if priority == 0:
        yield
        return
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    try:
        yield
    finally:
        os.sched_setscheduler(0, policy, param)


def run_emulated(
    scenario: api.ScenarioLike,
    *,
    tag: str | None = None,
    spin_us: int | None = None,
    rt_priority: int | None = None,
    traffic_priority: int = TRAFFIC_RT_PRIORITY,
    during: Callable[[Emulator], AbstractContextManager[Any]] | None = None,
) -> Result:
    """Run a scenario through the emulator with the kernel's TCP; the simulator's result format.

    A flow may name any congestion control of the kernel, or one of wificc's BPF variants
    (wbbr, wbbrp, ...): those not loaded yet are loaded for the run and unloaded after it,
    unless another run still holds a lease on them. A flow's ``cc_params`` on a variant set its
    knobs (:func:`variant_knobs`); on a kernel built-in they are not applied, and the result's
    notes say so.
    The traffic generator's threads run at ``SCHED_FIFO`` ``traffic_priority`` (0: the normal
    scheduler): a receiver preempted by other work on a busy machine would hold back its ACKs
    and turn them into stretch ACKs and bursts the path never caused.

    ``during``, given the running emulator, returns a context entered once the hosts exist and
    left before the emulator stops (a kernel check's set-up in a host's namespace, or a probe
    recording while the traffic runs); whatever it creates must be gone when it is left."""
    reason = unavailable()
    if reason is not None:
        raise OSError(f"emulator unavailable: {reason}")
    normalised = validated(scenario)
    knob_sets = variant_knobs(normalised)
    with (
        bpf_variants_loaded((f["cc"] for f in normalised["flows"]), knob_sets),
        Emulator(normalised, tag=tag, spin_us=spin_us, rt_priority=rt_priority) as emu,
    ):
        knobs = knobs_in_use(normalised)
        with during(emu) if during is not None else nullcontext(), real_time(traffic_priority):
            flows, pings, wall_s = run_traffic(normalised, emu)
        report = emu.stop()
    return Result.from_json(json.dumps(result_document(normalised, emu, flows, pings, report, wall_s, knobs)))


def knobs_in_use(scenario: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The knobs of each BPF variant the scenario's flows run, as now set (a variant loaded
    without wificc's pins has none to show)."""
    out = {}
    for cc in sorted({f["cc"] for f in scenario["flows"] if is_variant(f["cc"])}):
        try:
            out[cc] = {k.name: k.show() for k in bpf.knobs(cc)}
        except bpf.BpfError:
            continue
    return out


def emulator_lines(result: Result) -> list[str]:
    """What the emulator adds to a run's output: timing quality and what is not reproduced."""
    s = result.summary
    within = s["lateness_within_100us"]
    lines = [
        f"emulator ({s['scheduler']}, kernel {s['kernel']}): delivery lateness p50 "
        f"{s['lateness_p50_us'] or 0:.1f} us, p99 {s['lateness_p99_us'] or 0:.1f} us, max "
        f"{s['lateness_max_us'] or 0:.1f} us, {100 * (within or 0):.2f}% within 100 us; "
        f"first packet of each batch due at one instant: p99 {s['lateness_batch_p99_us'] or 0:.1f} us, "
        f"{100 * (s['lateness_batch_within_100us'] or 0):.2f}% within 100 us"
    ]
    for name, knobs in result.raw["emulator"].get("bpf_knobs", {}).items():
        lines.append(f"{name} knobs: " + ", ".join(f"{k}={v}" for k, v in knobs.items()))
    lines += [f"note: {n}" for n in result.raw["emulator"]["notes"]]
    return lines


# Options shared by `emu run` and `validate` (the CLI-style scenario options of `wificc run`).
ScenarioArg = Annotated[
    Path | None, typer.Argument(help="Scenario file (TOML/JSON); without options it runs as written.")
]
TestOpt = Annotated[str | None, typer.Option(help=f"Test for the options: {', '.join(scenarios.TESTS)} (tcp_upload).")]
PathOpt = Annotated[str | None, typer.Option("--path", help="Path preset: wired, wifi, hybrid or trace.")]
ChipsetOpt = Annotated[
    str | None,
    typer.Option(help="Wi-Fi chipset preset: ath9k-htc, ath9k, ath10k-1x1, ath10k, qca9377, ax201."),
]
BackhaulOpt = Annotated[str | None, typer.Option(help="Wi-Fi path: AP <-> server wired rate.")]
StationsOpt = Annotated[int | None, typer.Option(help="Wi-Fi path: number of stations.")]
RateOpt = Annotated[str | None, typer.Option(help="Bottleneck rate, e.g. 50mbit.")]
RttOpt = Annotated[str | None, typer.Option(help="Base round-trip time, e.g. 20ms.")]
BufferOpt = Annotated[str | None, typer.Option(help="Bottleneck buffer: 100p, 64kb or 1bdp.")]
QdiscOpt = Annotated[str | None, typer.Option(help="Bottleneck qdisc: pfifo, fq_codel, ...")]
LengthOpt = Annotated[str | None, typer.Option(help="TCP time (Flent LENGTH), default 30s.")]
DelayOpt = Annotated[str | None, typer.Option(help="Ping-only time before and after, default 5s.")]
OutOpt = Annotated[Path | None, typer.Option(help="Write the run's Parquet files into this directory.")]


def scenario_from(scenario_file: Path | None, test: str | None, options: dict[str, Any]) -> dict[str, Any] | Path:
    """The scenario to run: the file as written, or TEST (default tcp_upload) with the options
    over the file."""
    given = {k: v for k, v in options.items() if v is not None}
    if scenario_file is not None and not given and test is None:
        return scenario_file
    return _cli().scenario_of(test or "tcp_upload", scenario_file, given)


@app.command("run")
def run_cmd(
    scenario_file: ScenarioArg = None,
    test: TestOpt = None,
    path: PathOpt = None,
    chipset: ChipsetOpt = None,
    backhaul: BackhaulOpt = None,
    stations: StationsOpt = None,
    rate: RateOpt = None,
    rtt: RttOpt = None,
    buffer: BufferOpt = None,
    qdisc: QdiscOpt = None,
    cc: Annotated[
        list[str] | None, typer.Option("--cc", help="Kernel congestion control; repeat for one flow each.")
    ] = None,
    cc_param: Annotated[
        list[str] | None,
        typer.Option("--cc-param", help="KEY=VALUE for every flow's congestion control (a BPF variant's knobs)."),
    ] = None,
    length: LengthOpt = None,
    delay: DelayOpt = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    out: OutOpt = None,
    tag: Annotated[
        str | None,
        typer.Option(help="Run tag: namespaces are wcc-TAG-s, wcc-TAG-c<i> (default from the pid)."),
    ] = None,
    spin_us: Annotated[int | None, typer.Option(help="Emulator spin window before each event, us.")] = None,
    rt_priority: Annotated[int | None, typer.Option(help="Emulator SCHED_FIFO priority (0: normal).")] = None,
) -> None:
    """Run a scenario's traffic with the kernel's TCP through the emulated path."""
    with _cli().user_errors():
        options = {
            **scenarios.path_options(path, chipset, backhaul, stations, rate, rtt, buffer, qdisc, length, delay),
            "cc": cc,
            "cc_params": scenarios.parse_cc_params(cc_param) if cc_param else None,
        }
        scenario = scenario_from(scenario_file, test, options)
        result = run_emulated(scenario, tag=tag, spin_us=spin_us, rt_priority=rt_priority)
        if out is not None:
            result.save(out)
    if json_output:
        print(json.dumps({**_cli().run_report(test, result, out), "emulator": result.raw["emulator"]}))
        return
    s = result.summary
    typer.echo(
        f"{test or scenario_file or 'tcp_upload'}: {s['duration_s']:g} s emulated in {s['wall_s']:.3g} s, "
        f"total goodput {s['total_goodput_bps'] / 1e6:.2f} Mbit/s"
    )
    for table in _cli().summary_tables(result):
        _cli().out_console.print(table)
    for line in emulator_lines(result):
        typer.echo(line)
    if out is not None:
        typer.echo(f"wrote {out}")


@app.command("cleanup")
def cleanup_cmd(
    prefix: Annotated[str, typer.Option(help="Name prefix of what to remove.")] = NAME_PREFIX,
) -> None:
    """Remove namespaces and TUN devices that an interrupted run left behind."""
    with _cli().user_errors():
        removed = cleanup(prefix)
    typer.echo("\n".join(f"removed {name}" for name in removed) if removed else "nothing to remove")


def with_cc(scenario: dict[str, Any], cc: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The scenario with every flow on congestion control ``cc`` with ``params`` (default: its
    defaults)."""
    return {**scenario, "flows": [{**f, "cc": cc, "cc_params": dict(params or {})} for f in scenario["flows"]]}


def compare_row(cc: str, sim: Result, kernel: Result) -> dict[str, Any]:
    """Goodput, ping percentiles, retransmissions, mean cwnd and, on a Wi-Fi path, the AP's mean
    A-MPDU size of both runs (first flow and first ping; goodput summed over the flows)."""

    def pick(result: Result) -> dict[str, Any]:
        raw = result.raw
        flows, ping = raw["flows"], (raw["pings"] or [{}])[0]
        ap = next((w for w in raw.get("wifi") or [] if w["node"] == 0), {})
        return {
            "goodput_bps": raw["summary"]["total_goodput_bps"],
            "ping_p50_ms": ping.get("rtt_p50_ms"),
            "ping_p90_ms": ping.get("rtt_p90_ms"),
            "retrans": sum(f["retrans"] for f in flows),
            "cwnd_mean": sum(f["cwnd_mean"] for f in flows) / max(len(flows), 1),
            "ap_ampdu_mean": ap.get("ampdu_mean"),
        }

    a, b = pick(sim), pick(kernel)
    row: dict[str, Any] = {"cc": cc}
    for key in a:
        row[f"sim_{key}"] = a[key]
        row[f"kernel_{key}"] = b[key]
    return row


def comparison_lines(row: dict[str, Any]) -> list[list[str]]:
    """The table lines of one congestion control: simulator, kernel, and their difference."""

    def run(side: str) -> list[str]:
        return [
            _cli()._mbit(row[f"{side}_goodput_bps"]),
            _cli()._ms(row[f"{side}_ping_p50_ms"]),
            _cli()._ms(row[f"{side}_ping_p90_ms"]),
            str(row[f"{side}_retrans"]),
            f"{row[f'{side}_cwnd_mean']:.1f}",
            _cli()._num(row[f"{side}_ap_ampdu_mean"]),
        ]

    def change(key: str) -> str:
        x, y = row[f"sim_{key}"], row[f"kernel_{key}"]
        return _cli()._percent((y - x) / x if x and y is not None else None)

    keys = ("goodput_bps", "ping_p50_ms", "ping_p90_ms")
    difference = [
        *(change(k) for k in keys),
        f"{row['kernel_retrans'] - row['sim_retrans']:+d}",
        change("cwnd_mean"),
        change("ap_ampdu_mean"),
    ]
    return [
        [row["cc"], "simulator", *run("sim")],
        ["", "kernel", *run("kernel")],
        ["", "kernel - simulator", *difference],
    ]


def validate_cmd(
    scenario_file: ScenarioArg = None,
    test: TestOpt = None,
    path: PathOpt = None,
    chipset: ChipsetOpt = None,
    backhaul: BackhaulOpt = None,
    stations: StationsOpt = None,
    rate: RateOpt = None,
    rtt: RttOpt = None,
    buffer: BufferOpt = None,
    qdisc: QdiscOpt = None,
    cc: Annotated[
        list[str] | None,
        typer.Option(
            "--cc", help=f"Congestion controls to compare (default {', '.join(VALIDATE_CCS)}); wbbr, ... BPF."
        ),
    ] = None,
    cc_param: Annotated[
        list[str] | None,
        typer.Option(
            "--cc-param",
            help="KEY=VALUE for every compared cc: the simulator's parameter and the BPF variant's knob.",
        ),
    ] = None,
    length: LengthOpt = None,
    delay: DelayOpt = None,
    out: Annotated[Path | None, typer.Option(help="Write both runs of each cc and comparison.csv here.")] = None,
) -> None:
    """Run a scenario in the simulator and with the kernel's TCP through the emulator, per
    congestion control, and print them side by side (a BPF variant, e.g. wbbr, runs in the
    kernel against the simulator's algorithm it implements, bbr). With --cc-param, both runs of
    each cc get the parameters: the simulator's algorithm as parameters, the BPF variant as
    knobs; the kernel's built-ins cannot take them."""
    with _cli().user_errors():
        options = scenarios.path_options(path, chipset, backhaul, stations, rate, rtt, buffer, qdisc, length, delay)
        base = validated(scenario_from(scenario_file, test, options))
        params = scenarios.parse_cc_params(cc_param) if cc_param else {}
        names = cc or VALIDATE_CCS
        for name in names:
            if params and not is_variant(name):
                raise ValueError(
                    f"--cc-param: {name} is a kernel built-in, whose parameters wificc cannot set (they are "
                    "module-wide); compare it without --cc-param, or compare BPF variants (wbbr, wbbrp, ...)"
                )
            checked = validated(with_cc(base, name, params))
            variant_knobs(checked)
        rows = []
        notes: dict[str, None] = {}
        for name in names:
            sim = api.run(with_cc(base, simulator_cc(name), params))
            kernel = run_emulated(with_cc(base, name, params))
            rows.append(compare_row(name, sim, kernel))
            notes.update(dict.fromkeys(kernel.raw["emulator"]["notes"]))
            if out is not None:
                sim.save(out / name / "sim")
                kernel.save(out / name / "kernel")
        if out is not None:
            _cli().write_csv(out / "comparison.csv", rows)
    table = _cli()._table(
        "simulator and kernel",
        ["cc", "run", "goodput Mbit/s", "ping p50 ms", "ping p90 ms", "retrans", "mean cwnd", "AP A-MPDU"],
        [line for r in rows for line in comparison_lines(r)],
    )
    _cli().out_console.print(table)
    for note in notes:
        typer.echo(f"note: {note}")
    if out is not None:
        typer.echo(f"wrote {out}")
