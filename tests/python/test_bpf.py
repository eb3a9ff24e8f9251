"""The BPF congestion controls in the running kernel: build, verifier, load, real TCP, unload.

The flows run between network namespaces made here and always deleted: a sender, a router and a
receiver joined by two veth pairs, the router shaping sender-to-receiver traffic with a token
bucket at 50 Mbit/s. Kernels may be built without netem (the one this was written on is), so the
path has no added delay: its base RTT is the namespaces' own, well under a millisecond. Each flow
is a Python socket pair: the sender selects the congestion control with
setsockopt(TCP_CONGESTION) and samples TCP_INFO every millisecond. This file is also the sender
and receiver program (`python test_bpf.py send|recv`), run inside the namespaces with
`ip netns exec`.

Skipped, with the reason, when not root or when the kernel cannot load BPF congestion controls.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner
from wificc import bpf
from wificc.cli import app

#: The bottleneck: token bucket rate, bucket depth (2 MTUs), queue limit (bytes, ~24 ms).
RATE_MBIT = 50
BURST_BYTES = 3000
QUEUE_BYTES = 150_000
#: TCP payload rate at the bottleneck: 1448 payload bytes per 1514-byte frame (the token bucket
#: counts the Ethernet header).
LINE_GOODPUT_BPS = RATE_MBIT * 1e6 * 1448 / 1514
#: Benchmarking addresses (RFC 2544), used only inside the namespaces made here.
SENDER_NET, RECEIVER_NET = "198.18.1", "198.18.2"
PORT = 5001
#: struct tcp_info (include/uapi/linux/tcp.h): byte offsets of the fields read here.
TCPI_PACING_RATE, TCPI_BYTES_ACKED = 104, 120
TCP_INFO_LEN = 232
#: Samples before this time (STARTUP and DRAIN) are left out of steady-state figures.
WARMUP_S = 1.0

UNAVAILABLE = bpf.unavailable_reason()
pytestmark = pytest.mark.skipif(UNAVAILABLE is not None, reason=str(UNAVAILABLE))


# ---- sender and receiver programs (run in the namespaces) ----


def receive(port: int, timeout_s: float) -> None:
    """Accept one connection, read it to the end, print the byte count."""
    with socket.create_server(("0.0.0.0", port)) as server:
        server.settimeout(timeout_s)
        print("ready", flush=True)
        conn, _ = server.accept()
        conn.settimeout(timeout_s)
        total = 0
        with conn:
            while chunk := conn.recv(1 << 16):
                total += len(chunk)
    print(total, flush=True)


def send(host: str, port: int, cc: str, seconds: float) -> None:
    """Send for `seconds` with congestion control `cc`; print what TCP_INFO showed as JSON."""
    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    sock.settimeout(5.0)
    sock.connect((host, port))
    chosen = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
    samples: list[tuple[float, int, int]] = []
    start = time.monotonic()
    stop = threading.Event()

    def info() -> tuple[int, int]:
        raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
        (pacing,) = struct.unpack_from("Q", raw, TCPI_PACING_RATE)
        (acked,) = struct.unpack_from("Q", raw, TCPI_BYTES_ACKED)
        return pacing, acked

    def sample() -> None:
        while not stop.is_set():
            pacing, acked = info()
            samples.append((time.monotonic() - start, pacing, acked))
            time.sleep(0.001)

    sampler = threading.Thread(target=sample)
    sampler.start()
    block = b"\0" * (1 << 16)
    try:
        while time.monotonic() - start < seconds:
            try:
                sock.send(block)
            except TimeoutError:
                pass
    finally:
        stop.set()
        sampler.join()
    _, acked = info()
    samples.append((time.monotonic() - start, 0, acked))
    sock.close()
    print(json.dumps({"cc": chosen, "samples": samples}), flush=True)


# ---- the path ----


@dataclass(frozen=True)
class Path3:
    """Sender, router and receiver namespaces."""

    sender: str
    router: str
    receiver: str


def sh(*args: str) -> None:
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{' '.join(args)}: {done.stderr.strip()}"


@pytest.fixture(scope="module")
def path():
    tag = f"wificc-bpf-{os.getpid()}"
    p = Path3(f"{tag}-s", f"{tag}-m", f"{tag}-r")
    made = []
    try:
        for ns in (p.sender, p.router, p.receiver):
            sh("ip", "netns", "add", ns)
            made.append(ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        for ns, dev, peer, peer_ns in ((p.sender, "s0", "m0", p.router), (p.router, "m1", "r0", p.receiver)):
            sh("ip", "-n", ns, "link", "add", dev, "type", "veth", "peer", "name", peer, "netns", peer_ns)
        for ns, dev, addr in (
            (p.sender, "s0", f"{SENDER_NET}.1/24"),
            (p.router, "m0", f"{SENDER_NET}.2/24"),
            (p.router, "m1", f"{RECEIVER_NET}.2/24"),
            (p.receiver, "r0", f"{RECEIVER_NET}.1/24"),
        ):
            sh("ip", "-n", ns, "addr", "add", addr, "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
        sh("ip", "-n", p.sender, "route", "add", "default", "via", f"{SENDER_NET}.2")
        sh("ip", "-n", p.receiver, "route", "add", "default", "via", f"{RECEIVER_NET}.2")
        sh("ip", "netns", "exec", p.router, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        sh(
            "ip", "netns", "exec", p.router, "tc", "qdisc", "replace", "dev", "m1", "root", "tbf",
            "rate", f"{RATE_MBIT}mbit", "burst", str(BURST_BYTES), "limit", str(QUEUE_BYTES),
        )  # fmt: skip
        yield p
    finally:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], check=False)


@dataclass(frozen=True)
class Flow:
    cc: str
    samples: list[tuple[float, int, int]]

    def goodput_bps(self) -> float:
        """Bytes ACKed per second after the warm-up."""
        t0, _, acked0 = next(s for s in self.samples if s[0] >= WARMUP_S)
        t1, _, acked1 = self.samples[-1]
        return (acked1 - acked0) * 8 / (t1 - t0)

    def gain_steps(self, gain: float) -> int:
        """Consecutive pacing-rate samples (after the warm-up) whose ratio is `gain` within 0.5%.

        BBR paces at gain x bw x 0.99 in every state, so while bw holds still, a sample taken in
        the probing phase over one taken while cruising is exactly the probing gain. On this
        sub-millisecond path BBR's bw estimate jumps now and then (ACK compression), which
        moves the rate by arbitrary ratios; the exact gain ratios still stand out by the
        hundred, and other gains' ratios do not appear."""
        rates = [r for t, r, _ in self.samples[:-1] if t >= WARMUP_S]
        return sum(1 for a, b in zip(rates, rates[1:], strict=False) if a and abs(b / a / gain - 1) < 0.005)


def run_flow(p: Path3, cc: str, seconds: float) -> Flow:
    me = [sys.executable, str(Path(__file__).resolve())]
    with subprocess.Popen(
        ["ip", "netns", "exec", p.receiver, *me, "recv", str(PORT), str(seconds + 20)],
        stdout=subprocess.PIPE,
        text=True,
    ) as receiver:
        try:
            assert receiver.stdout.readline().strip() == "ready"
            to = [f"{RECEIVER_NET}.1", str(PORT)]
            sender = subprocess.run(
                ["ip", "netns", "exec", p.sender, *me, "send", *to, cc, str(seconds)],
                capture_output=True,
                text=True,
                timeout=seconds + 30,
                check=False,
            )
            assert sender.returncode == 0, sender.stderr
            received = int(receiver.stdout.readline())
            assert receiver.wait(timeout=10) == 0
        finally:
            receiver.kill()
    out = json.loads(sender.stdout)
    flow = Flow(out["cc"], [tuple(s) for s in out["samples"]])
    assert received >= flow.samples[-1][2], "the receiver got less than the sender saw ACKed"
    return flow


# ---- tests ----


@pytest.fixture(scope="module")
def built():
    return bpf.build()


@pytest.fixture(autouse=True)
def nothing_left_loaded():
    """Every test starts and ends with none of the variants registered."""
    bpf.unload()
    yield
    bpf.unload()


def struct_ops_names() -> list[str]:
    return [e["name"] for e in json.loads(subprocess.check_output(["bpftool", "-j", "struct_ops", "show"]))]


def gone(name: str) -> bool:
    """The kernel freed every struct_ops map called `name` (asynchronously, after an RCU grace)."""
    deadline = time.monotonic() + 5
    while name in struct_ops_names():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_every_variant_builds_to_a_bpf_object(built):
    # ELF header: e_machine (offset 18, little-endian) 247 is EM_BPF.
    assert [p.name for p in built] == [f"{n}.bpf.o" for n in bpf.variants()]
    assert bpf.variants() == ["wbbr", "wbbr_apg", "wbbr_pg", "wbbrn", "wbbrp"]
    for obj in built:
        head = obj.read_bytes()[:20]
        assert head[:4] == b"\x7fELF" and int.from_bytes(head[18:20], "little") == 247, obj


@pytest.mark.parametrize("name", ["wbbr", "wbbrp", "wbbrn", "wbbr_apg", "wbbr_pg"])
def test_variant_passes_the_verifier_carries_tcp_and_unloads(built, path, name):
    assert bpf.load([name]) == [name]
    assert name in bpf.available()
    assert sorted(p.name for p in bpf.pin_dir(name).iterdir()) == ["knobs", "limits", "ops"]
    assert bpf.registered(name) == bpf._pinned_id(bpf.pin_dir(name) / "ops")
    assert bpf.knobs(name)[0] == bpf.Knob("extra_acked", 1, 0, 1, 1)

    flow = run_flow(path, name, 3.0)
    assert flow.cc == name
    # A BBR flow fills the 50 Mbit/s bucket: at least 80% of the payload rate after 1 s.
    assert flow.goodput_bps() >= 0.8 * LINE_GOODPUT_BPS, flow.goodput_bps()

    assert bpf.unload([name]) == [name]
    assert name not in bpf.available()
    assert not bpf.pin_dir(name).exists()
    assert bpf.registered(name) is None
    assert gone(name)


def test_wbbrp_with_pace_5_behaves_as_wbbr_and_the_kernels_bbr(built, path):
    bpf.load(["wbbr", "wbbrp"])
    knobs = {k.name: k.raw for k in bpf.set_knobs("wbbrp", ["bbrp_pace=5"])}
    assert knobs == {"extra_acked": 1, "bbrp_pace": 5}
    flows = {cc: run_flow(path, cc, 3.0) for cc in ("bbr", "wbbr", "wbbrp")}
    base = flows["wbbr"].goodput_bps()
    # The same program with the knob that makes it bbr: within 5%. The kernel's own bbr is a
    # different implementation (jiffies timestamps at HZ=250) and these flows last 3 s on a
    # sub-millisecond path on a shared machine: within 10% here; the 5% comparison of issue 6
    # is made over 30 s flows on the emulated path.
    for cc, flow in flows.items():
        tolerance = 0.10 if cc == "bbr" else 0.05
        assert abs(flow.goodput_bps() - base) <= tolerance * base, (cc, base, flow.goodput_bps())
        # All three probe at 5/4 and only at 5/4.
        steps = {g: flow.gain_steps(g) for g in (1.25, 1.5, 4.0)}
        assert steps[1.25] >= 50 and steps[1.5] <= 5 and steps[4.0] <= 5, (cc, steps)


def test_bbrp_pace_reaches_the_running_program(built, path):
    # The default pace 6 probes at 6/4 = 1.5; pace 16, set while loaded, at 16/4 = 4.
    bpf.load(["wbbrp"])
    for pace, gain, others in ((6, 1.5, (1.25, 4.0)), (16, 4.0, (1.25, 1.5))):
        bpf.set_knobs("wbbrp", [f"bbrp_pace={pace}"])
        flow = run_flow(path, "wbbrp", 3.0)
        steps = {g: flow.gain_steps(g) for g in (gain, *others)}
        assert steps[gain] >= 50 and all(steps[g] <= 5 for g in others), (pace, steps)


def test_overlapping_runs_share_a_variant_and_the_last_to_end_unloads_it(built):
    first, second = bpf.lease_token(), bpf.lease_token()
    assert bpf.acquire(first, ["wbbrp"]) == ["wbbrp"]
    assert bpf.acquire(second, ["wbbrp"]) == [], "loaded once"
    assert bpf.release(first, ["wbbrp"]) == []
    assert "wbbrp" in bpf.available(), "the second run still uses it"
    assert bpf.release(second, ["wbbrp"]) == ["wbbrp"]
    assert "wbbrp" not in bpf.available() and gone("wbbrp")
    assert not (bpf.LEASE_ROOT / "wbbrp").exists()


def test_a_variant_loaded_by_hand_outlives_the_runs_that_use_it(built):
    bpf.load(["wbbrn"])
    run = bpf.lease_token()
    assert bpf.acquire(run, ["wbbrn"]) == []
    assert bpf.release(run, ["wbbrn"]) == []
    assert "wbbrn" in bpf.available()
    assert not (bpf.LEASE_ROOT / "wbbrn").exists(), "no lease left behind"


def test_the_lease_of_a_run_that_died_keeps_nothing_loaded(built):
    # A pid above the kernel's limit: a process that no longer runs.
    dead = f"{2**22 + 1}-0dead"
    live = bpf.lease_token()
    assert bpf.acquire(dead, ["wbbr"]) == ["wbbr"]
    assert bpf.acquire(live, ["wbbr"]) == []
    assert bpf.release(live, ["wbbr"]) == ["wbbr"]
    assert "wbbr" not in bpf.available()


def knob(name: str, key: str) -> int:
    return next(k.raw for k in bpf.knobs(name) if k.name == key)


def test_a_run_that_loads_a_variant_sets_the_knobs_its_parameters_ask_for(built):
    run = bpf.lease_token()
    assignments = bpf.knob_assignments("wbbrn", {"probe_bw_up_gain": 1.4, "send_quantum_interval": "2ms"})
    assert bpf.acquire(run, ["wbbrn"], {"wbbrn": assignments}) == ["wbbrn"]
    assert (knob("wbbrn", "probe_bw_up_gain"), knob("wbbrn", "send_quantum_interval_us")) == (358, 2000)
    # A second run asking for the same values shares it; one asking for others is refused
    # and leaves no lease.
    same, other = bpf.lease_token(), bpf.lease_token()
    assert bpf.acquire(same, ["wbbrn"], {"wbbrn": ["probe_bw_up_gain=1.4"]}) == []
    refused = r"wbbrn is already loaded with probe_bw_up_gain = 1\.39844, and this run asks for 1\.5"
    with pytest.raises(bpf.BpfError, match=refused):
        bpf.acquire(other, ["wbbrn"], {"wbbrn": ["probe_bw_up_gain=1.5"]})
    assert not (bpf.LEASE_ROOT / "wbbrn" / other).exists()
    assert bpf.release(same, ["wbbrn"]) == []
    assert bpf.release(run, ["wbbrn"]) == ["wbbrn"]
    assert not (bpf.LEASE_ROOT / "wbbrn").exists()


def test_knobs_a_variant_cannot_take_unload_what_the_run_loaded(built):
    run = bpf.lease_token()
    with pytest.raises(bpf.BpfError, match=r"knob bbrp_pace = '99': expected an integer from 1 to 63"):
        bpf.acquire(run, ["wbbrp"], {"wbbrp": ["bbrp_pace=99"]})
    assert "wbbrp" not in bpf.available() and gone("wbbrp")
    assert not (bpf.LEASE_ROOT / "wbbrp" / run).exists()
    # Loaded by hand at the defaults: a run asking for the default values uses it as it is.
    bpf.load(["wbbrp"])
    assert bpf.acquire(run, ["wbbrp"], {"wbbrp": bpf.knob_assignments("wbbrp", {"bbrp_pace": 6})}) == []
    assert bpf.release(run, ["wbbrp"]) == [] and "wbbrp" in bpf.available()


def test_set_checks_names_values_and_order(built):
    bpf.load(["wbbrn", "wbbr_apg"])
    # Gains are written as decimals and stored in 1/256: 0.9 -> 230.4 -> 230, shown 0.898438.
    down = {k.name: k for k in bpf.set_knobs("wbbrn", ["probe_bw_down_gain=0.9"])}["probe_bw_down_gain"]
    assert (down.raw, down.show()) == (230, "0.898438")
    with pytest.raises(bpf.BpfError) as e:
        bpf.set_knobs("wbbrn", ["probe_bw_up_gain=16"])
    assert str(e.value) == (
        "wbbrn: knob probe_bw_up_gain = '16': expected a number from 0.00390625 to 15.9961 (steps of 1/256)"
    )
    with pytest.raises(bpf.BpfError, match="wbbr_apg has no knob 'apg_len'; its knobs are extra_acked, "):
        bpf.set_knobs("wbbr_apg", ["apg_len=4"])
    with pytest.raises(bpf.BpfError, match="knob apg_eval = '2': expected an integer from 0 to 1"):
        bpf.set_knobs("wbbr_apg", ["apg_eval=2"])
    with pytest.raises(bpf.BpfError) as e:
        bpf.set_knobs("wbbr_apg", ["apg_len_min=12"])
    assert str(e.value) == (
        "apg_len_min = 12, apg_len_init = 8, apg_len_max = 16: expected apg_len_min <= apg_len_init <= apg_len_max"
    )
    # A rejected assignment changes nothing; a valid one changes only its knob.
    after = {k.name: k.raw for k in bpf.set_knobs("wbbr_apg", ["apg_len_min=8", "apg_eval=1"])}
    assert after == {
        "extra_acked": 1,
        "apg_len_init": 8,
        "apg_len_min": 8,
        "apg_len_max": 16,
        "apg_stride": 4,
        "apg_tolerance": 64,
        "apg_eval": 1,
    }


def test_a_failed_load_unloads_what_it_loaded(built):
    # A registration wificc did not make (as an interrupted load leaves) blocks loading wbbrp;
    # wbbr, loaded first in the same call, must be unloaded again.
    subprocess.run(["bpftool", "struct_ops", "register", str(bpf.object_path("wbbrp"))], check=True)
    with pytest.raises(bpf.BpfError, match="wbbrp is registered but not pinned by wificc"):
        bpf.load(["wbbr", "wbbrp"])
    assert "wbbr" not in bpf.available() and not bpf.pin_dir("wbbr").exists()
    # unload finds the unpinned registration by name.
    assert bpf.unload(["wbbrp"]) == ["wbbrp"]
    assert "wbbrp" not in bpf.available() and gone("wbbrp")


def test_an_interrupted_load_leaves_nothing(built):
    # SIGTERM (what `kill` sends) arrives once the first of the five is registered: the load
    # unregisters what it had registered, removes the pins, and exits with 128 + SIGTERM.
    loader = subprocess.Popen([sys.executable, "-c", "from wificc import bpf; bpf.load()"])
    try:
        deadline = time.monotonic() + 60
        while not set(bpf.variants()) & set(bpf.available()):
            assert loader.poll() is None and time.monotonic() < deadline, "no variant got registered"
            time.sleep(0.005)
        loader.send_signal(signal.SIGTERM)
        assert loader.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        loader.kill()
    assert not set(bpf.variants()) & set(bpf.available())
    assert not bpf.PIN_ROOT.exists() or not any(bpf.PIN_ROOT.iterdir())
    assert all(gone(name) for name in bpf.variants())


def test_command_line(built):
    runner = CliRunner()
    loaded = runner.invoke(app, ["bpf", "load", "wbbrp"])
    assert (loaded.exit_code, loaded.output) == (0, "wbbrp: loaded\n")
    listing = runner.invoke(app, ["bpf", "list", "wbbrp", "wbbr"]).output.splitlines()
    assert listing[0].startswith("wbbrp     loaded (struct_ops map ")
    assert listing[0].endswith("  extra_acked=1 bbrp_pace=6")
    assert listing[1] == "wbbr      built, not loaded"
    wrong = runner.invoke(app, ["bpf", "set", "wbbrp", "bbrp_pace=64"])
    assert wrong.exit_code == 1
    assert "error: wbbrp: knob bbrp_pace = '64': expected an integer from 1 to 63" in wrong.output
    unloaded = runner.invoke(app, ["bpf", "unload", "wbbrp", "wbbr"])
    assert (unloaded.exit_code, unloaded.output) == (0, "wbbrp: unloaded\nwbbr: was not loaded\n")


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "recv":
        receive(int(args[0]), float(args[1]))
    else:
        send(args[0], int(args[1]), args[2], float(args[3]))
