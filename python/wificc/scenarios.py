"""The test catalog: scenario dicts built from command-line style options, Flent style.

A test is a declaration (:class:`Test`) of which traffic runs, and :func:`build` interprets it
into a scenario dict for :func:`wificc.run`. Timing follows Flent (``flent/tests/*.conf`` and
``common.inc``): an ICMP ping runs for the whole test, ``TOTAL_LENGTH = LENGTH + 2 * DELAY``,
every ``STEP`` (0.2 s); the TCP flows start after ``DELAY`` (5 s) and run for ``LENGTH``
(60 s in Flent, 30 s here, the length of the published Wi-Fi studies), so the ping measures the
idle path before and after the load. ``tcp_nup`` / ``tcp_ndown`` take their number of flows
like Flent's ``upload_streams`` / ``download_streams``: it must be given.

The path is the wired dumbbell of ``crates/wificc-core/src/scenario.rs``. Options left at
``None`` keep the value of the base scenario (``--scenario FILE``) or, without one, the defaults
below; the test always replaces the base's flows, pings and duration. Congestion-control
parameters (``--cc-param k=v``) apply to every flow. Errors are ``ValueError("--option:
message")``; everything else is validated by the core, whose errors name the scenario field.
"""

from __future__ import annotations

import copy
import json
import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Path of a test without a base scenario: the demo's wired setup (SPEC section 6 examples).
DEFAULT_PATH: dict[str, Any] = {"kind": "wired", "rate": "50mbit", "rtt": "20ms"}
# The starting point of each path preset selected with --path.
DEFAULT_PATHS: dict[str, dict[str, Any]] = {"wired": DEFAULT_PATH}
# Flent's DELAY: ping-only time before and after the TCP flows.
DEFAULT_DELAY = "5s"
# TCP time of a test (Flent's LENGTH); the published Wi-Fi studies run 30 s.
DEFAULT_LENGTH = "30s"
# Flent's STEP_SIZE: series sampling interval and ICMP ping interval.
DEFAULT_STEP = "200ms"
# Congestion control of a flow when no --cc is given (the Linux default).
DEFAULT_CC = "cubic"

NSEC_PER_SEC = 1_000_000_000
# Units of a duration string, in nanoseconds; the grammar of crates/wificc-core/src/parse.rs.
_DURATION_UNITS_NS = {
    "": NSEC_PER_SEC,
    "s": NSEC_PER_SEC,
    "sec": NSEC_PER_SEC,
    "ms": 1_000_000,
    "us": 1_000,
    "ns": 1,
    "m": 60 * NSEC_PER_SEC,
    "min": 60 * NSEC_PER_SEC,
}
_NUMBER = re.compile(r"[0-9.eE+-]*")


@dataclass(frozen=True)
class Test:
    """One entry of the catalog: the traffic of a Flent test."""

    description: str
    # Direction of the TCP flows: "up" (client to server) or "down".
    direction: str
    # Number of flows, or None when the user must give it (--flows), as Flent's *_streams.
    flows: int | None
    # Flent's ICMP ping for the whole test.
    ping: bool = True


TESTS: dict[str, Test] = {
    "tcp_upload": Test("TCP upload with ICMP ping", "up", 1),
    "tcp_download": Test("TCP download with ICMP ping", "down", 1),
    "tcp_nup": Test("TCP upload, N flows (--flows N), with ICMP ping", "up", None),
    "tcp_ndown": Test("TCP download, N flows (--flows N), with ICMP ping", "down", None),
}


def duration_ns(option: str, text: str) -> int:
    """Nanoseconds of a duration such as ``"30s"``, ``"200ms"`` or ``"1.5"`` (seconds).

    The same grammar and rounding as the core's ``parse::duration``; a bad value raises
    ``ValueError("<option>: got ..., expected ...")``.
    """
    s = text.strip()
    number = _NUMBER.match(s).group(0)
    # A trailing 'e' may start a unit rather than an exponent: retreat until it parses.
    while number:
        try:
            value = float(number)
            break
        except ValueError:
            number = number[:-1]
    if not number:
        raise ValueError(f"{option}: got {text!r}, expected a duration such as '20ms' or '30s'")
    unit = s[len(number) :].strip().lower()
    if unit not in _DURATION_UNITS_NS:
        raise ValueError(f"{option}: got {text!r}, expected a duration unit of ns, us, ms, s or min")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{option}: got {text!r}, expected a non-negative duration")
    return math.floor(value * _DURATION_UNITS_NS[unit] + 0.5)


def _ns(ns: int) -> str:
    return f"{ns}ns"


def parse_value(text: str) -> bool | int | float | str:
    """A parameter value as typed on the command line: bool, int, float, else the string."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def parse_cc_params(items: Iterable[str]) -> dict[str, Any]:
    """``["beta=0.8", "hystart=false"]`` -> ``{"beta": 0.8, "hystart": False}``."""
    params: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--cc-param: got {item!r}, expected KEY=VALUE such as 'beta=0.7'")
        params[key.strip()] = parse_value(value.strip())
    return params


def load(path: str | Path) -> dict[str, Any]:
    """Read a scenario file (``.json`` as JSON, anything else as TOML) into a dict."""
    p = Path(path)
    text = p.read_text()
    try:
        return json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"(document): {p}: {e}") from e


def _flow_ccs(name: str, test: Test, cc: list[str], flows: int | None) -> list[str]:
    """The congestion control of each flow: one flow per --cc, or --flows copies of one."""
    if flows is not None and flows < 1:
        raise ValueError(f"--flows: got {flows}, expected at least 1 flow")
    if flows is not None and test.flows is not None:
        raise ValueError(f"--flows: {name} runs {test.flows} flow; use tcp_nup or tcp_ndown for N flows")
    if len(cc) > 1:
        if flows is not None and flows != len(cc):
            raise ValueError(
                f"--flows: got {flows}, but --cc names {len(cc)} congestion controls (one flow each)"
            )
        return list(cc)
    count = flows if flows is not None else test.flows
    if count is None:
        raise ValueError(f"--flows: {name} needs the number of flows, such as --flows 4")
    return [cc[0] if cc else DEFAULT_CC] * count


def build(
    test: str,
    *,
    base: Mapping[str, Any] | None = None,
    path_kind: str | None = None,
    rate: str | None = None,
    rtt: str | None = None,
    buffer: str | None = None,
    qdisc: str | None = None,
    cc: Iterable[str] = (),
    cc_params: Mapping[str, Any] | None = None,
    flows: int | None = None,
    tsq: str | None = None,
    tp: int | None = None,
    length: str = DEFAULT_LENGTH,
    delay: str = DEFAULT_DELAY,
    seed: int | None = None,
    warmup: str | None = None,
    step: str | None = None,
    ping: bool | None = None,
    direction: str | None = None,
) -> dict[str, Any]:
    """The scenario dict of ``test`` with these options over ``base`` (or the defaults)."""
    if test not in TESTS:
        raise ValueError(f"test: got {test!r}, expected one of {', '.join(TESTS)}")
    spec = TESTS[test]
    if direction not in (None, "up", "down"):
        raise ValueError(f"--direction: got {direction!r}, expected 'up' or 'down'")
    scenario = copy.deepcopy(dict(base)) if base else {}
    path = scenario.setdefault("path", dict(DEFAULT_PATH))
    if path_kind is not None and path_kind != path.get("kind"):
        path.clear()
        path.update(DEFAULT_PATHS.get(path_kind, {"kind": path_kind}))
    for key, value in (("rate", rate), ("rtt", rtt), ("buffer", buffer)):
        if value is not None:
            path[key] = value
    if qdisc is not None:
        path["qdisc"] = {"kind": qdisc}
    stack = scenario.setdefault("stack", {})
    for key, value in (("tsq", tsq), ("tp", tp)):
        if value is not None:
            stack[key] = value
    for key, value in (("seed", seed), ("warmup", warmup), ("step", step)):
        if value is not None:
            scenario[key] = value

    delay_ns = duration_ns("--delay", delay)
    length_ns = duration_ns("--length", length)
    if length_ns == 0:
        raise ValueError(f"--length: got {length!r}, expected a positive duration")
    step_text = str(scenario.get("step", DEFAULT_STEP))
    ping_interval = _ns(duration_ns("--step" if step is not None else "step", step_text))
    scenario["duration"] = _ns(length_ns + 2 * delay_ns)
    scenario["flows"] = [
        {
            "cc": name,
            "cc_params": dict(cc_params or {}),
            "direction": direction or spec.direction,
            "start": _ns(delay_ns),
            "stop": _ns(delay_ns + length_ns),
        }
        for name in _flow_ccs(test, spec, list(cc), flows)
    ]
    with_ping = spec.ping if ping is None else ping
    scenario["pings"] = [{"kind": "icmp", "interval": ping_interval}] if with_ping else []
    return scenario
