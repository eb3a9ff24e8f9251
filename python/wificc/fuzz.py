"""Mutated scenario documents through the Python API: every one must load and run, or be
refused with a named error (``ValueError("field: message")``), never anything else.

``python -m wificc.fuzz --cases 3000 --seed 1`` builds documents from the catalog's scenarios
(every test on a wired, a Wi-Fi and a trace path), changes one to three fields of each to a
random value (another type, a unit spelling, NaN, infinity, a huge number, a deep nesting, a
list where a table goes, an unknown key), and passes each to ``wificc.validate``; one that
validates is then run, its duration cut to 50 ms so that the whole fuzz stays quick. It runs in
a process whose address space is capped (``--memory-mb``), so a run that would exhaust memory
shows as an error rather than as a stalled machine. It prints one line per failure and a
summary line, and exits 1 if any document raised something other than a named error.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import random
import re
import resource
import sys
from collections.abc import Iterator
from typing import Any

# "field: message" with the field a path such as flows[0].cc or (scenario).
NAMED = re.compile(r"^[A-Za-z_(][\w.\[\]()\-]*: \S")

VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    1,
    2**64,
    -(2**63) - 1,
    0.5,
    1e308,
    math.nan,
    math.inf,
    -math.inf,
    "",
    "x",
    "50mbit",
    "50MB/s",
    "50mbps",
    "12Mbit/s",
    "300k",
    "1e30gbit",
    "20ms",
    "-5ms",
    "1us",
    "1bdp",
    "100p",
    "64kb",
    "static:64p",
    "/dev/zero",
    "a" * 300,
    [],
    [1, 2],
    ["6.1", "2ms"],
    {},
    {"kind": "edca", "bogus": 1},
    {"kind": "pfifo", "limit": "10p"},
]


# Values a scenario's fields often take: a document changed to one of these may still run.
PLAUSIBLE: list[Any] = ["10mbit", "20ms", "1gbit", "100p", "2bdp", 2, 0.01, True, False, "bbr", "cubic", "down"]


def _nested(depth: int) -> Any:
    value: Any = 1
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


def _bases() -> list[dict[str, Any]]:
    from wificc import scenarios

    bases = []
    for test in scenarios.TESTS:
        for path in ("wired", "wifi"):
            try:
                bases.append(scenarios.build(test, path_kind=path, length="1s", delay="0s"))
            except (ValueError, TypeError):
                continue
    return bases


def _slots(doc: Any, at: tuple = ()) -> Iterator[tuple]:
    """Every path of a table key or list index in ``doc``, down to 12 levels."""
    if len(at) >= 12:
        return
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield (*at, k)
            yield from _slots(v, (*at, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield (*at, i)
            yield from _slots(v, (*at, i))


def _mutate(doc: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    # Mostly one change, so that some documents stay valid and run; sometimes two or three.
    for _ in range(1 if rng.random() < 0.6 else rng.randint(2, 3)):
        slots = list(_slots(doc))
        if not slots:
            break
        where = rng.choice(slots)
        parent: Any = doc
        for step in where[:-1]:
            parent = parent[step]
        roll = rng.random()
        if roll < 0.1 and isinstance(parent, dict):
            parent[rng.choice(["bogus", "rate_", "kind", "mac", "x" * 50])] = rng.choice(VALUES)
        elif roll < 0.15:
            parent[where[-1]] = _nested(rng.choice([5, 40, 2000]))
        elif roll < 0.25:
            value = parent[where[-1]]
            parent[where[-1]] = list(value.values()) if isinstance(value, dict) else [value]
        elif roll < 0.6:
            parent[where[-1]] = copy.deepcopy(rng.choice(VALUES))
        else:
            parent[where[-1]] = rng.choice(PLAUSIBLE)
    return doc


def fuzz(cases: int, seed: int) -> tuple[int, int, int, list[str]]:
    """Documents tried, accepted and run, refused with a named error, and the failures."""
    import wificc

    rng = random.Random(seed)
    bases = _bases()
    ran = refused = 0
    failures = []
    for case in range(cases):
        doc = _mutate(rng.choice(bases), rng)
        try:
            normalised = wificc.validate(doc)
            normalised["duration"] = "50ms"
            normalised["warmup"] = "0s"
            for entry in normalised.get("flows", []) + normalised.get("pings", []):
                entry["start"], entry["stop"] = "0s", None
            wificc.run(normalised)
            ran += 1
        except (ValueError, TypeError) as e:
            if NAMED.match(str(e)):
                refused += 1
            else:
                failures.append(f"case {case}: {type(e).__name__} without a field: {str(e)[:200]!r}")
        except Exception as e:  # noqa: BLE001 - anything else is what this looks for
            failures.append(f"case {case}: {type(e).__name__}: {str(e)[:200]!r} for {json.dumps(doc)[:300]}")
    return cases, ran, refused, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--memory-mb", type=int, default=6000, help="address-space cap of this process")
    args = parser.parse_args(argv)
    cap = args.memory_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    # Runs are refused from their estimate well below the cap (an allocation that fails at the
    # cap aborts the process: Rust's allocator does not return).
    os.environ["WIFICC_MEMORY_LIMIT"] = str(cap // 4)
    cases, ran, refused, failures = fuzz(args.cases, args.seed)
    for failure in failures:
        print(failure)
    print(f"{cases} documents: {ran} ran, {refused} refused with a named error, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
