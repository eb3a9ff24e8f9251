"""The simulator's answer to a two-flow scenario over many start alignments: the second flow
starts OFFSET later (0, STEP, 2 STEP, ...), one seed, and the first flow's share of the goodput is
printed per offset with min / median / max. The seed leaves the start-up alone (it drives BBR's
random gain-cycle phase, pings), so seeds alone sample one start-up; the kernel's runs sample
start alignments by their own jitter.

    python scripts/bbr_state/start_offsets.py SCENARIO.json [--count 80] [--step-ms 0.25] [--seed 1]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
from pathlib import Path

from wificc import api


def with_offset(scenario: dict, offset_ns: int) -> dict:
    """The scenario with its second flow's start moved by offset_ns."""
    s = copy.deepcopy(scenario)
    start = int(str(s["flows"][1]["start"]).removesuffix("ns"))
    s["flows"][1]["start"] = f"{start + offset_ns}ns"
    return s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--count", type=int, default=80)
    ap.add_argument("--step-ms", type=float, default=0.25)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    scenario = json.loads(a.scenario.read_text())
    shares = []
    for i in range(a.count):
        offset_ns = round(i * a.step_ms * 1e6)
        r = api.run(dict(with_offset(scenario, offset_ns), seed=a.seed))
        g = r.flows.sort_values("id")["goodput_bps"].tolist()
        shares.append(100 * g[0] / sum(g))
        print(f"{offset_ns / 1e6:6.2f} ms  {shares[-1]:.1f}%", flush=True)
    median = statistics.median(shares)
    print(
        f"first flow's share over {a.count} offsets: "
        f"min {min(shares):.1f}%, median {median:.1f}%, max {max(shares):.1f}%"
    )


if __name__ == "__main__":
    main()
