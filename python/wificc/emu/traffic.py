"""The traffic of a scenario over the emulator with the kernel's TCP: bulk senders and receivers,
ICMP and UDP pings, their sampling every STEP, and the results document in the simulator's
format."""

from __future__ import annotations

import math
import os
import platform
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from wificc import scenarios
from wificc.emu.kernel import available_ccs, is_variant
from wificc.emu.process import READY_TIMEOUT_S, STOP_TIMEOUT_S, Emulator, entered
from wificc.result import FLOW_SERIES_COLUMNS, MODEL_FIELDS

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
NSEC_PER_SEC = 1_000_000_000
# What the traffic generator adds to the emulator's notes.
RECORDING_NOTE = "tsq_bytes is recorded as 0 and the TSQ summary fields as missing (not observable through TUN)"
CC_PARAMS_NOTE = (
    "cc_params of the kernel's built-in congestion controls are not applied: their parameters are "
    "module-wide (those of wificc's BPF variants are, as knobs)"
)
# Prefix of wificc's BPF congestion controls (bpf/): variant "wNAME" implements the simulator's
# "NAME" (wbbr is bbr, wbbrp is bbrp, ...).


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


def write_share(report: dict[str, Any]) -> float | None:
    """Share of the run's wall time the emulator spent in its writes to the hosts (each write
    runs the receiving kernel's input path): the loop's load, beside its lateness."""
    elapsed = report.get("elapsed_s") or 0.0
    writes = report.get("writes") or []
    return sum(w["total_s"] for w in writes) / elapsed if elapsed > 0 and writes else None


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
        "lateness_own_p99_us": lateness.get("own_p99_us"),
        "lateness_own_within_100us": lateness.get("own_within_100us"),
        "write_share": write_share(report),
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
                    "writes",
                    "packets",
                    "tcp_acks",
                    "tun_drops",
                )
            },
        },
    }
