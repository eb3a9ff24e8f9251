"""The kernel's bbr against the simulator's on one scenario: per flow class (base RTT above or
below --split), the share of time at each pacing gain, the mean length of a phase, the share of
time using the long-term (policer) rate and the long-term sampler's outcomes, with goodput.

Kernel: the scenario through ``wificc emu run`` with the ``bbr_state`` probe attached (root).
Simulator: the same scenario with a 1 ms model-series step.

    sudo .venv/bin/python scripts/bbr_state/compare.py SCENARIO.json [--runs N] [--seeds N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
BBR_UNIT = 256


def outcome(frm: int, to: int, rtt_cnt: int) -> str:
    """Name a transition of the long-term sampler (state = 2 * lt_use_bw + lt_is_sampling)."""
    if frm == 0 and to == 1:
        return "interval started (a loss)"
    if frm == 1 and to == 3:
        return "policer detected (two consistent lossy intervals)"
    if frm == 1 and to == 1:
        return "lossy interval, rate not consistent (restart)"
    if frm == 1 and to == 0:
        return "abandoned: too long (> 16 rounds)" if rtt_cnt >= 16 else "abandoned: app-limited sample"
    if frm == 3 and to == 0:
        return "long-term rate given up (48 rounds)"
    return f"{frm}->{to}"


def kernel_run(scenario: Path, loader: str, split_us: int, length_s: float) -> dict:
    probe = subprocess.Popen(
        [loader, str(int(length_s) + 30), str(split_us)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    time.sleep(2)
    out = subprocess.run(
            [str(Path(sys.executable).parent / "wificc"), "emu", "run", str(scenario), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    probe.terminate()
    text, _ = probe.communicate(timeout=30)
    gains: dict = defaultdict(dict)
    lt: dict = defaultdict(lambda: defaultdict(int))
    for line in text.splitlines():
        row = json.loads(line)
        if "gain" in row:
            g = row["gain"]
            gains[g["class"]][g["pacing_gain"]] = (g["ns"] / 1e9, g["phases_left"])
        else:
            r = row["lt"]
            lt[r["class"]][outcome(r["from"], r["to"], r["lt_rtt_cnt"])] += r["count"]
    result = json.loads(out.stdout[out.stdout.index("{") :])
    return {"gains": gains, "lt": lt, "goodput": [f["goodput_bps"] / 1e6 for f in result["flows"]]}


def sim_run(scenario: dict, seed: int) -> dict:
    from wificc import api

    s = dict(scenario, seed=seed, step="1ms")
    r = api.run(s)
    ms = r.model_series
    gains: dict = {}
    lt_share: dict = {}
    for flow, g in ms.groupby("flow"):
        pg = g[g["name"] == "pacing_gain"].sort_values("t")["value"]
        use = g[g["name"] == "lt_use_bw"]["value"]
        per = {}
        for gain, n in pg.round(2).value_counts().items():
            changes = int(((pg.round(2) == gain) & (pg.round(2).shift() != gain)).sum())
            per[int(round(gain * BBR_UNIT))] = (n * 1e-3, changes)
        gains[flow] = per
        lt_share[flow] = float(use.mean()) if len(use) else float("nan")
    return {"gains": gains, "lt_share": lt_share, "goodput": (r.flows["goodput_bps"] / 1e6).tolist()}


def show(label: str, gains: dict) -> None:
    for cls in sorted(gains):
        # Shares of PROBE_BW's time: the three gains of its cycle (STARTUP/DRAIN and the
        # sockets' other states are left out).
        total = sum(gains[cls].get(g, (0.0, 0))[0] for g in (320, 256, 192)) or 1.0
        parts = []
        for g in (320, 256, 192):
            t, n = gains[cls].get(g, (0.0, 0))
            parts.append(f"{g / BBR_UNIT:.2f}: {100 * t / total:4.1f}% ({1000 * t / n if n else 0:5.1f} ms x {n})")
        print(f"  {label} flow/class {cls}: " + ", ".join(parts))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--runs", type=int, default=1, help="kernel runs")
    ap.add_argument("--seeds", type=int, default=3, help="simulator seeds")
    ap.add_argument("--split", type=int, default=30000, help="srtt (us) separating the two flows")
    a = ap.parse_args()
    scenario = json.loads(a.scenario.read_text())
    loader = subprocess.run([str(HERE / "build.sh")], capture_output=True, text=True, check=True).stdout.split()[-1]
    for seed in range(1, a.seeds + 1):
        s = sim_run(scenario, seed)
        print(f"simulator seed {seed}: goodput {[round(x, 1) for x in s['goodput']]} Mbit/s, "
              f"long-term rate in use {[round(100 * v, 1) for v in s['lt_share'].values()]}%")  # fmt: skip
        show("sim", s["gains"])
    for i in range(a.runs):
        k = kernel_run(a.scenario, loader, a.split, 60)
        print(f"kernel run {i + 1}: goodput {[round(x, 1) for x in k['goodput']]} Mbit/s")
        show("kernel", k["gains"])
        for cls in sorted(k["lt"]):
            outcomes = "; ".join(f"{n} {c}" for n, c in sorted(k["lt"][cls].items()))
            print(f"  kernel class {cls} long-term sampler: {outcomes}")


if __name__ == "__main__":
    main()
