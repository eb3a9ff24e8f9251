"""The kernel receiver's ACK policy through the emulator, beside the simulator's (run as root).

One Wi-Fi download (the catalog's tcp_download on a chipset preset) runs in the simulator and
with the kernel's TCP through the emulator. The emulator counts, per connection, the data
segments and the pure ACKs the receiver sent, and histograms of segments per ACK and of the
time between ACKs (`crates/wificc-emu/src/acks.rs`); both runs' figures are printed with the
emulator's lateness.

    sudo .venv/bin/python scripts/wifi_download/ack_policy.py --chipset ath10k --cc bbr --length 15s
"""

from __future__ import annotations

import argparse

from wificc import api, emu, scenarios
from wificc.cli import scenario_of


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--chipset", default="ath9k")
    ap.add_argument("--cc", default="bbr")
    ap.add_argument("--length", default="15s")
    args = ap.parse_args()
    options = {
        **scenarios.path_options("wifi", args.chipset, None, None, None, None, None, None, args.length, "2s"),
        "cc": [args.cc],
    }
    base = emu.validated(scenario_of("tcp_download", None, options))
    sim = api.run(emu.with_cc(base, emu.simulator_cc(args.cc)))
    kernel = emu.run_emulated(emu.with_cc(base, args.cc))
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
    print("\n".join(emu.emulator_lines(kernel)))


if __name__ == "__main__":
    main()
