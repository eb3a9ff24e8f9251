"""The kernel receiver's ACK policy through the emulator, beside the simulator's (run as root).

One Wi-Fi download (the catalog's tcp_download on a chipset preset) runs in the simulator and
with the kernel's TCP through the emulator. The emulator counts, per connection, the data
segments and the pure ACKs the receiver sent, and histograms of segments per ACK and of the
time between ACKs (`crates/wificc-emu/src/acks.rs`); both runs' figures are printed with the
emulator's lateness. While the kernel run goes on, the receiving station's namespace's TCP
counters and the server's (/proc/net/netstat: backlog coalescing, delayed ACKs, drops, DSACKs,
reordering, loss probes) are read every 0.2 s; the last readings before the namespaces
disappear are printed.

    sudo .venv/bin/python scripts/wifi_download/ack_policy.py --chipset ath10k --cc bbr --length 15s
"""

from __future__ import annotations

import argparse
import subprocess
import threading
import time
from pathlib import Path

from wificc import api, emu, scenarios
from wificc.cli import scenario_of

COUNTERS = (
    "TCPBacklogCoalesce",
    "DelayedACKs",
    "DelayedACKLocked",
    "TCPHPHits",
    "TCPOFOQueue",
    "TCPAckCompressed",
    "TCPBacklogDrop",
    "TCPRcvQDrop",
    "TCPOFODrop",
    "TCPDSACKRecv",
    "TCPDSACKUndo",
    "TCPSACKReorder",
    "TCPLossProbes",
    "TCPSpuriousRTOs",
    "TCPLostRetransmit",
)


def netstat(netns: str) -> dict[str, int]:
    """TcpExt counters of a namespace and its TUN device's drop counts (empty once it is gone)."""
    out = subprocess.run(
        ["ip", "netns", "exec", netns, "cat", "/proc/net/netstat", "/proc/net/dev"], capture_output=True, text=True
    )
    lines = [line.split() for line in out.stdout.splitlines() if line.startswith("TcpExt:")]
    if len(lines) < 2:
        return {}
    found = {k: int(v) for k, v in zip(lines[0][1:], lines[1][1:], strict=False) if k in COUNTERS}
    for line in out.stdout.splitlines():
        name, _, fields = line.partition(":")
        if name.strip() == netns:
            f = fields.split()
            found["dev_rx_dropped"], found["dev_tx_dropped"] = int(f[3]), int(f[11])
    return found


def watch(netns: str, stop: threading.Event, last: dict[str, int], sysctls: tuple[str, ...] = ()) -> None:
    """Read ``netns``'s counters until ``stop``; once it exists, apply ``sysctls`` (KEY=VALUE)."""
    applied = False
    while not stop.is_set():
        if sysctls and not applied and Path(f"/var/run/netns/{netns}").exists():
            subprocess.run(["ip", "netns", "exec", netns, "sysctl", "-q", "-w", *sysctls], check=False)
            applied = True
        now = netstat(netns)
        if now:
            last.update(now)
        time.sleep(0.2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--chipset", default="ath9k")
    ap.add_argument("--cc", default="bbr")
    ap.add_argument("--length", default="15s")
    ap.add_argument(
        "--station-sysctl",
        action="append",
        default=[],
        help="KEY=VALUE set in the receiving station's namespace as soon as it exists "
        "(e.g. net.ipv4.tcp_backlog_ack_defer=0)",
    )
    args = ap.parse_args()
    options = {
        **scenarios.path_options("wifi", args.chipset, None, None, None, None, None, None, args.length, "2s"),
        "cc": [args.cc],
    }
    base = emu.validated(scenario_of("tcp_download", None, options))
    sim = api.run(emu.with_cc(base, emu.simulator_cc(args.cc)))
    tag = emu.new_tag()
    stop, last, last_server = threading.Event(), {}, {}
    watcher = threading.Thread(target=watch, args=(f"wcc-{tag}-c0", stop, last, tuple(args.station_sysctl)))
    server = threading.Thread(target=watch, args=(f"wcc-{tag}-s", stop, last_server))
    watcher.start()
    server.start()
    try:
        kernel = emu.run_emulated(emu.with_cc(base, args.cc), tag=tag)
    finally:
        stop.set()
        watcher.join()
        server.join()
    for name, result in (("simulator", sim), ("kernel", kernel)):
        f = result.raw["flows"][0]
        print(
            f"{name}: goodput {f['goodput_bps'] / 1e6:.1f} Mbit/s, data segments {f['segs_sent']}, "
            f"ACKs {f['acks_sent']}, segments per ACK {f['segs_sent'] / max(f['acks_sent'] or 1, 1):.2f}"
        )
    for a in kernel.raw["emulator"]["tcp_acks"]:
        if not a["acks"]:
            continue
        segs = {i: n for i, n in enumerate(a["segs_per_ack"]) if n}
        gaps = {f"<{2**i}us": n for i, n in enumerate(a["gap_us_log2"]) if n}
        print(f"kernel {a['src']}:{a['src_port']} -> {a['dst']}:{a['dst_port']}: ACKs by segments acked {segs}")
        print(f"  ACKs by time since the previous one {gaps}")
    print(f"receiving station's TcpExt counters at the end: {last}")
    print(f"sending server's TcpExt counters at the end: {last_server}")
    print("\n".join(emu.emulator_lines(kernel)))


if __name__ == "__main__":
    main()
