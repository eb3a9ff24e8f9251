"""How long the command line takes to start: each command run N times in a fresh process (wall
time: min, median, max), and the ten slowest imports of ``import wificc.cli`` by
``python -X importtime``. ``--against OTHER/bin/wificc`` times another installation in turn with
this one (run by run, alternately, so that both see the same load).

    .venv/bin/python scripts/startup_time.py [-n 20] [--wificc .venv/bin/wificc] [--against PATH]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = (["--help"], ["cc", "list"], ["run", "--help"], ["tests"])


def timed(command: list[str], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return times


def slowest_imports(python: str, count: int = 10) -> list[tuple[int, str]]:
    """(cumulative microseconds, module) of the slowest imports of ``import wificc.cli``."""
    done = subprocess.run([python, "-X", "importtime", "-c", "import wificc.cli"], capture_output=True, text=True)
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
        rows.append((int(cumulative), name))
    return sorted(rows, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20, help="runs of each command")
    parser.add_argument("--wificc", default=str(Path(sys.executable).parent / "wificc"))
    parser.add_argument("--against", help="another wificc executable, timed alternately")
    args = parser.parse_args()
    programs = [args.wificc, *([args.against] if args.against else [])]
    print(f"{'command':<24} {'min s':>7} {'median s':>9} {'max s':>7}  ({args.n} runs)")
    for command in COMMANDS:
        times: dict[str, list[float]] = {p: [] for p in programs}
        for _ in range(args.n):
            for program in programs:
                times[program] += timed([program, *command], 1)
        for program in programs:
            shown = "wificc " + " ".join(command) + ("" if program == args.wificc else " (against)")
            t = times[program]
            print(f"{shown:<24} {min(t):7.3f} {statistics.median(t):9.3f} {max(t):7.3f}")
    print("\nslowest imports of 'import wificc.cli' (cumulative):")
    for micros, name in slowest_imports(str(Path(args.wificc).parent / "python")):
        print(f"  {micros / 1000:7.1f} ms  {name}")


if __name__ == "__main__":
    main()
