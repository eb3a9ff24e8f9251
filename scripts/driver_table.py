#!/usr/bin/env python3
"""The Wi-Fi driver issue's headline settings, measured: median goodput over repetitions, with
the sending radio's A-MPDU p10/p50/p90 and TX-completion latency p50/p90.

    .venv/bin/python scripts/driver_table.py [--reps 10] [--length 30s] [--set KEY=VALUE ...]
        [--only ROW] [--out results/driver_table.csv]

Each row is a catalog test with the same options ``wificc reproduce`` gives it (30 s of load
between 5 s of pings, seeds 1..reps). ``--set`` adds scenario overrides to every run (dotted
keys, e.g. ``--set path.radio.driver.rx_mitigation=false``) so that a mechanism can be switched
off and its effect measured.
"""

from __future__ import annotations

import argparse
import json
import statistics
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import wificc
from wificc import scenarios

BBRP = ["cubic", "bbr", "bbrp"]
BBRN = ["bbr2", "bbrn"]
WIFI6 = ["cubic", "bbr2"]

# (row, test, options, CCAs): the four rows of the drivers issue.
# (row, test, options, CCAs): the four rows of the drivers issue, each on its study's testbed
# kernel (BBRp 4.19, BBR-n 5.13, Wi-Fi 6 5.4; `--kernel` runs every row on one profile).
ROWS: list[tuple[str, str, dict[str, Any], list[str]]] = [
    *[
        (f"ath9k up {tsq}", "tcp_upload", {"path_kind": "wifi", "chipset": "ath9k", "tsq": tsq, "kernel": "4.19"}, BBRP)
        for tsq in ("1ms", "4ms", "8ms")
    ],
    *[
        (f"{chip} down", "tcp_download", {"path_kind": "wifi", "chipset": chip, "kernel": "4.19"}, BBRP)
        for chip in ("ath9k", "ath10k")
    ],
    *[
        (
            f"qca9377 up {tsq}",
            "tcp_upload",
            {"path_kind": "wifi", "chipset": "qca9377", "tsq": tsq, "kernel": "5.13"},
            BBRN,
        )
        for tsq in ("default", "1ms")
    ],
    *[
        (
            f"ax201 up {tsq}",
            "tcp_upload",
            {"path_kind": "hybrid", "chipset": "ax201", "tsq": tsq, "kernel": "5.4"},
            WIFI6,
        )
        for tsq in ("1ms", "32ms")
    ],
]


def _set(doc: dict[str, Any], dotted: str, value: Any) -> None:
    keys = dotted.split(".")
    for k in keys[:-1]:
        if not isinstance(doc.get(k), dict):
            doc[k] = {} if k not in doc or not isinstance(doc[k], str) else {"kind": doc[k]}
        doc = doc[k]
    doc[keys[-1]] = value


def _one(job: tuple[str, dict[str, Any], str, int, str, list[tuple[str, Any]]]) -> dict[str, Any]:
    test, options, cc, seed, length, sets = job
    doc = scenarios.build(test, cc=[cc], seed=seed, length=length, **options)
    for key, value in sets:
        _set(doc, key, value)
    r = wificc.run(doc)
    flows = r.flows
    wifi = r.wifi
    up = flows["direction"].iloc[0] == "up"
    # The radio that sends the data: the station for an upload, the AP for a download.
    node = wifi[wifi["node"] == (1 if up else 0)].iloc[0]
    return {
        "goodput": float(flows["goodput_bps"].sum()) / 1e6,
        "ampdu": [node.get("ampdu_p10"), node.get("ampdu_p50"), node.get("ampdu_p90")],
        "txc": [node.get("tx_completion_p50_ms"), node.get("tx_completion_p90_ms")],
    }


def _med(values: list[Any]) -> float | None:
    xs = [float(v) for v in values if v is not None and v == v]
    return statistics.median(xs) if xs else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--length", default="30s")
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE scenario override (JSON value)")
    ap.add_argument("--only", action="append", default=[], help="row name prefix to run")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--kernel", help="run every row on this kernel profile instead of its study's")
    ap.add_argument("--json", help="write the table as JSON here")
    a = ap.parse_args()
    sets = []
    for item in a.set:
        key, _, value = item.partition("=")
        try:
            sets.append((key, json.loads(value)))
        except json.JSONDecodeError:
            sets.append((key, value))
    rows = [r for r in ROWS if not a.only or any(r[0].startswith(o) for o in a.only)]
    jobs, keys = [], []
    for name, test, options, ccs in rows:
        if a.kernel:
            options = {**options, "kernel": a.kernel}
        for cc in ccs:
            for seed in range(1, a.reps + 1):
                jobs.append((test, options, cc, seed, a.length, sets))
                keys.append((name, cc))
    with ProcessPoolExecutor(a.workers) as pool:
        results = list(pool.map(_one, jobs))
    table: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for key, res in zip(keys, results, strict=True):
        table.setdefault(key, []).append(res)
    out = []
    print("| setting | cc | goodput Mbit/s (median) | A-MPDU p10/p50/p90 | TX completion p50/p90 ms |")
    print("|---|---|---|---|---|")
    fmt = lambda v, d=1: "-" if v is None else f"{v:.{d}f}"  # noqa: E731
    for (name, cc), res in table.items():
        g = _med([r["goodput"] for r in res])
        amp = [_med([r["ampdu"][i] for r in res]) for i in range(3)]
        txc = [_med([r["txc"][i] for r in res]) for i in range(2)]
        out.append({"setting": name, "cc": cc, "goodput_mbps": g, "ampdu": amp, "tx_completion_ms": txc})
        print(f"| {name} | {cc} | {fmt(g)} | {'/'.join(fmt(x, 0) for x in amp)} | {'/'.join(fmt(x, 2) for x in txc)} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
