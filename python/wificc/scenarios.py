"""The test catalog: scenario dicts built from command-line style options, Flent style.

A test is a declaration (:class:`Test`) of which traffic runs on which path, and :func:`build`
interprets every declaration the same way into a scenario dict for :func:`wificc.run`; adding a
test adds data, not code. :func:`describe` documents a test from its declaration.

**Timing** follows Flent (``flent/tests/*.conf`` and ``netperf_definitions.inc``): the pings run
for ``TOTAL_LENGTH = LENGTH + 2 * DELAY``, one every ``STEP`` (0.2 s); the TCP flows start after
``DELAY`` (5 s) and run for ``LENGTH`` (60 s in Flent, 30 s here, the length of the published
Wi-Fi studies), so the pings measure the idle path before and after the load.

**Series names** are Flent's data-set names: a flow of ``rrul`` is named ``TCP upload EF``, the
N flows of ``nflows`` ``TCP upload::1`` .. ``TCP upload::N`` (Flent's names for duplicated data
sets), the pings ``Ping (ms) ICMP`` and ``Ping (ms) UDP BK``; a run's flow, ping and series
tables carry them in their ``name`` column. ``tcp_upload``, ``tcp_download``, ``tcp_nup`` and
``tcp_ndown`` leave their flows and ping unnamed (the core names them ``cubic-up-0``,
``icmp-ping-0``). Flent's UDP_RR pings are back-to-back transactions averaged per STEP; here a
UDP ping is one request/response every STEP, the same probe as the ICMP ping in another packet
class.

**Paths.** ``wired`` is the dumbbell of ``crates/wificc-core/src/scenario.rs`` (default 50 Mbit/s,
20 ms). ``trace`` is the Mahimahi path (``mm-delay RTT/2 mm-link UP DOWN``, default 100 ms base
RTT and an unbounded queue, the BBR-APG study's setup): each direction replays a trace file
(``--trace-up``, ``--trace-down``) or follows a rate schedule (``--rates``, ``--step-at``, the
same schedule both ways); ``--buffer`` and ``--qdisc`` set the queue of both directions. Options
left at ``None`` keep the value of the base scenario (``--scenario FILE``) or, without one, these
defaults; the test always replaces the base's flows, pings and duration. Congestion-control
parameters (``--cc-param k=v``) apply to every flow of ``--cc`` (not to ``inter_protocol``'s
``--against`` flow). Errors are ``ValueError("--option: message")``; everything else is validated
by the core, whose errors name the scenario field.
"""

from __future__ import annotations

import copy
import json
import math
import random
import re
import textwrap
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Path of a test without a base scenario: the demo's wired setup (the README's examples).
DEFAULT_PATH: dict[str, Any] = {"kind": "wired", "rate": "50mbit", "rtt": "20ms"}
# The trace path's base RTT without a base scenario: the 100 ms of the BBR-APG reproduction
# (reproduce.py, study "apg").
DEFAULT_TRACE_RTT = "100ms"
# The starting point of each path preset selected with --path (or by a test's own path).
DEFAULT_PATHS: dict[str, dict[str, Any]] = {
    "wired": DEFAULT_PATH,
    "trace": {"kind": "trace", "rtt": DEFAULT_TRACE_RTT},
    # A station uploading to (or downloading from) a server on the AP's LAN. The 2 ms wired RTT
    # is an assumption: a Gigabit Ethernet LAN's propagation is microseconds, and the value stands
    # for the path's latency outside the Wi-Fi model; each study declares its own with its source
    # (reproduce.Study.wired_rtt).
    "wifi": {"kind": "wifi", "rtt": "2ms", "radio": {"chipset": "ath9k"}},
    # The Wi-Fi 6 study's hybrid bottleneck: ax201 station, 1 Gbit/s backhaul, 2.5 ms base RTT.
    "hybrid": {"kind": "wifi", "rtt": "2.5ms", "radio": {"chipset": "ax201"}, "backhaul": "1gbit"},
}
# Path options that only the Wi-Fi path takes.
WIFI_OPTIONS = ("chipset", "backhaul", "stations", "driver", "driver_params", "mcs", "txq", "ap_txq")
# Flent's DELAY: ping-only time before and after the TCP flows.
DEFAULT_DELAY = "5s"
# TCP time of a test (Flent's LENGTH); the published Wi-Fi studies run 30 s.
DEFAULT_LENGTH = "30s"
# Flent's STEP_SIZE: series sampling interval and ping interval.
DEFAULT_STEP = "200ms"
# The core's default seed (scenario.rs `default_seed`).
DEFAULT_SEED = 1
# Congestion control of a flow when no --cc is given (the Linux default).
DEFAULT_CC = "cubic"

# Flent's name of the ICMP ping data set (ping.inc, rrul.conf).
ICMP_SERIES = "Ping (ms) ICMP"
# Flent's word for a direction in its TCP data-set names ("TCP upload", "TCP download").
DIRECTION_WORDS = {"up": "upload", "down": "download"}
# RRUL's four classes (flent/tests/rrul.conf): series suffix and netperf marking.
RRUL_MARKS = (("BE", "CS0"), ("BK", "CS1"), ("CS5", "CS5"), ("EF", "EF"))
# RRUL's UDP_RR pings, in rrul.conf's order; "Ping (ms) UDP BE" runs unmarked, codepoint 0 (CS0).
RRUL_UDP_PINGS = (("UDP EF", "EF"), ("UDP BK", "CS1"), ("UDP BE", "CS0"))
# rrul_be.conf: four best-effort flows each way and three best-effort UDP pings.
RRUL_BE_MARKS = (("BE", "CS0"), ("BE2", "CS0"), ("BE3", "CS0"), ("BE4", "CS0"))
RRUL_BE_UDP_PINGS = (("UDP BE1", "CS0"), ("UDP BE2", "CS0"), ("UDP BE3", "CS0"))

# The options a test may declare beyond the common ones, with their help text. Each is a
# keyword of build(); the CLI flag is the name with '-' for '_'.
TEST_OPTIONS: dict[str, str] = {
    "tsq_packets": "static TSQ limit in packets: stack.tsq = 'static:<N>p'",
    "rtts": "base RTT of each flow, one flow per client, such as '10ms,50ms'",
    "against": "congestion control of the competing flow",
    "trace_up": "Mahimahi trace file of the uplink (client to server)",
    "trace_down": "Mahimahi trace file of the downlink (server to client)",
    "rates": "rates of a schedule on both trace directions, such as '12mbit,24mbit'",
    "step_at": "when each later rate starts, after the start of the TCP flows: one time per "
    "rate after the first, or one time T for a step every T",
}
# The trace path's options, which any test on that path takes unless it declares otherwise.
TRACE_OPTIONS: dict[str, Any] = {"trace_up": None, "trace_down": None, "rates": None, "step_at": None}

# Width of describe()'s prose paragraph (a terminal's).
DESCRIBE_WIDTH = 100

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
# Units of a size string, in bytes (parse.rs).
_SIZE_UNITS_BYTES = {
    "": 1,
    "b": 1,
    "byte": 1,
    "bytes": 1,
    "kb": 1_000,
    "kib": 1 << 10,
    "mb": 1_000_000,
    "mib": 1 << 20,
}
# Units of a rate string, in bit/s (parse.rs RATE_UNITS: tc's convention, "bps" is bytes/s).
_RATE_UNITS_BPS = {
    "": 1,
    **{f"{p}bit{s}": m for p, m in (("", 1), ("k", 10**3), ("m", 10**6), ("g", 10**9)) for s in ("", "/s")},
    **{f"{p}bps": 8 * m for p, m in (("", 1), ("k", 10**3), ("m", 10**6), ("g", 10**9))},
}
_RATE_UNITS_SHOWN = (
    "bit, kbit, mbit, gbit (bit/s; also written kbit/s, Mbit/s, Gbit/s) or bps, kbps, mbps, gbps (bytes/s, as in tc)"
)
_NUMBER = re.compile(r"[0-9.eE+-]*")


@dataclass(frozen=True)
class Test:
    """One entry of the catalog: the traffic of a Flent test, and where it runs.

    ``layout`` says how the flows follow from the options: ``"count"`` (``flows`` flows, or
    ``--flows N`` when ``flows`` is None), ``"marked"`` (one flow per entry of ``marks`` in
    each direction, RRUL), ``"rtts"`` (one flow per ``--rtts`` entry, each on its own client)
    or ``"against"`` (one flow of ``--cc`` and one of ``--against``).
    """

    description: str
    # Direction of the TCP flows: "up" (client to server) or "down"; --direction overrides it.
    direction: str
    # Number of flows, or None when the user must give it (--flows), as Flent's *_streams.
    flows: int | None
    # Flent's ICMP ping for the whole test.
    ping: bool = True
    layout: str = "count"
    # Flows and pings carry Flent's series names (False: the core's default names).
    named: bool = True
    # Layout "marked": (series suffix, DSCP) of each flow, the same in both directions.
    marks: tuple[tuple[str, str], ...] = ()
    # UDP request/response pings for the whole test: (series suffix, DSCP).
    udp_pings: tuple[tuple[str, str], ...] = ()
    # The path the test runs on, or None for the base scenario's (default wired) or --path.
    path: str | None = None
    # Extra options the test takes (keys of TEST_OPTIONS) and their defaults (None: no default).
    options: Mapping[str, Any] = field(default_factory=lambda: dict(TRACE_OPTIONS))
    # Several congestion controls may share the flows (--cc repeated); False: one --cc only.
    mixed_cc: bool = True
    # What the test is for, in a few sentences (describe()).
    about: str = ""


TESTS: dict[str, Test] = {
    "tcp_upload": Test("TCP upload with ICMP ping", "up", 1, named=False),
    "tcp_download": Test("TCP download with ICMP ping", "down", 1, named=False),
    "tcp_nup": Test("TCP upload, N flows (--flows N), with ICMP ping", "up", None, named=False),
    "tcp_ndown": Test("TCP download, N flows (--flows N), with ICMP ping", "down", None, named=False),
    "rrul": Test(
        "Realtime Response Under Load: 4 TCP up + 4 TCP down marked BE, BK, CS5, EF, ICMP and UDP pings",
        "up",
        8,
        layout="marked",
        marks=RRUL_MARKS,
        udp_pings=RRUL_UDP_PINGS,
        about="Flent's rrul: every class of traffic at once, both ways, with pings in three classes; "
        "the markings map to Wi-Fi access categories and to pfifo_fast bands.",
    ),
    "rrul_be": Test(
        "RRUL, all best effort: 4 TCP up + 4 TCP down, ICMP and 3 UDP pings",
        "up",
        8,
        layout="marked",
        marks=RRUL_BE_MARKS,
        udp_pings=RRUL_BE_UDP_PINGS,
        about="Flent's rrul_be: the load of rrul with every packet best effort (CS0).",
    ),
    "bottleneck_curve": Test(
        "One TCP upload under a static TSQ limit of N packets (--tsq-packets N)",
        "up",
        1,
        options={"tsq_packets": None, **TRACE_OPTIONS},
        mixed_cc=False,
        about="One point of the bottleneck curve: TSQ holds at most N packets below TCP whatever the "
        "rate, so sweeping N traces goodput and RTT against packets in flight (the Wi-Fi 6 study's "
        "analytic model, the BBRp study's curve).",
    ),
    "rtt_fairness": Test(
        "One TCP upload per base RTT (--rtts 10ms,50ms), each from its own client",
        "up",
        None,
        layout="rtts",
        path="wired",
        options={"rtts": "10ms,50ms"},
        about="Flows of different base RTTs share the bottleneck: path.rtt is the shortest RTT (and "
        "sizes a buffer given in BDPs), each client adds the rest as path.client_rtt; one ICMP ping "
        "per client measures each flow's path.",
    ),
    "inter_protocol": Test(
        "One TCP upload of --cc against one of --against (default cubic)",
        "up",
        2,
        layout="against",
        options={"against": "cubic", **TRACE_OPTIONS},
        about="Two flows of different congestion controls share the bottleneck from the same start; "
        "--cc-param applies to the --cc flow only.",
    ),
    "nflows": Test(
        "N TCP uploads of one congestion control (--flows N), with ICMP ping",
        "up",
        None,
        mixed_cc=False,
        about="Retransmissions (and fairness) against the number of flows: N flows of one "
        "congestion control start together.",
    ),
    "trace": Test(
        "One TCP download over Mahimahi traces (--trace-up FILE --trace-down FILE), with ICMP ping",
        "down",
        1,
        path="trace",
        options={"trace_up": None, "trace_down": None},
        mixed_cc=False,
        about="mm-delay + mm-link: each direction replays a trace of 1500-byte delivery "
        "opportunities per millisecond, looping, behind an unbounded queue by default.",
    ),
    "step": Test(
        "One TCP download over a rate step (--rates 12mbit,24mbit --step-at 3s), with ICMP ping",
        "down",
        1,
        path="trace",
        options={"rates": "12mbit,24mbit", "step_at": "3s"},
        mixed_cc=False,
        about="The trace path driven by a piecewise-constant rate schedule, the same both ways: how "
        "fast a congestion control finds new capacity (the BBR-APG study). One rate gives a "
        "constant link.",
    ),
}


def _quantity(option: str, text: str, what: str, example: str, units: Mapping[str, int], names: str) -> int:
    """``text`` as a number and a unit of ``units``, scaled and rounded as the core's parse.rs."""
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
        raise ValueError(f"{option}: got {text!r}, expected a {what} such as {example}")
    unit = s[len(number) :].strip().lower()
    if unit not in units:
        raise ValueError(f"{option}: got {text!r}, expected a {what} unit of {names}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{option}: got {text!r}, expected a non-negative {what}")
    return math.floor(value * units[unit] + 0.5)


def duration_ns(option: str, text: str) -> int:
    """Nanoseconds of a duration such as ``"30s"``, ``"200ms"`` or ``"1.5"`` (seconds).

    The same grammar and rounding as the core's ``parse::duration``; a bad value raises
    ``ValueError("<option>: got ..., expected ...")``.
    """
    return _quantity(option, text, "duration", "'20ms' or '30s'", _DURATION_UNITS_NS, "ns, us, ms, s or min")


def size_bytes(option: str, text: str) -> int:
    """Bytes of a size such as ``"64kb"``, ``"1mib"`` or ``"1500"``; the grammar of the core's
    ``parse::size``."""
    return _quantity(option, text, "size", "'64kb' or '1500b'", _SIZE_UNITS_BYTES, "b, kb, kib, mb or mib")


def rate_bps(option: str, text: str) -> int:
    """Bits per second of a rate such as ``"50mbit"``, ``"12Mbit/s"``, ``"10mbps"`` (10 MB/s,
    tc's convention) or ``"1000"`` (bit/s).

    The same grammar and rounding as the core's ``parse::rate``.
    """
    return _quantity(option, text, "rate", "'50mbit' or '1gbit'", _RATE_UNITS_BPS, _RATE_UNITS_SHOWN)


def _ns_text(ns: int) -> str:
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


def parse_cc_params(items: Iterable[str], option: str = "--cc-param") -> dict[str, Any]:
    """``["beta=0.8", "hystart=false"]`` -> ``{"beta": 0.8, "hystart": False}``."""
    params: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{option}: got {item!r}, expected KEY=VALUE such as 'beta=0.7'")
        params[key.strip()] = parse_value(value.strip())
    return params


def parse_list(option: str, value: str | Sequence[str]) -> list[str]:
    """``"10ms, 50ms"`` (or ``["10ms", "50ms"]``, as a sweep grid gives it) -> ``["10ms", "50ms"]``."""
    items = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    items = [item.strip() for item in items]
    if not items or any(not item for item in items):
        raise ValueError(f"{option}: got {value!r}, expected a comma-separated list such as '10ms,50ms'")
    return items


_WHOLE = re.compile(r"^(\d+)(ns|bit)$")
# The largest unit that divides a normalised quantity exactly, as the core's parser reads it.
_HUMAN_UNITS = {
    "ns": ((10**9, "s"), (10**6, "ms"), (10**3, "us")),
    "bit": ((10**9, "gbit"), (10**6, "mbit"), (10**3, "kbit")),
}


def _human(text: str) -> str:
    """``"200000000ns"`` -> ``"200ms"``, ``"10000000000bit"`` -> ``"10gbit"``; anything else as is."""
    m = _WHOLE.match(text)
    if not m or int(m.group(1)) == 0:
        return text
    n = int(m.group(1))
    for scale, unit in _HUMAN_UNITS[m.group(2)]:
        if n % scale == 0:
            return f"{n // scale}{unit}"
    return text


def to_toml(scenario: Mapping[str, Any]) -> str:
    """A normalised scenario as a TOML document that loads back to the same scenario (TOML has no
    null: the unset optional fields are left out, which is what unset means)."""
    import tomli_w

    def present(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: present(v) for k, v in value.items() if v is not None}
        if isinstance(value, list):
            return [present(v) for v in value]
        if isinstance(value, str):
            return _human(value)
        return value

    return tomli_w.dumps(present(scenario))


def load(path: str | Path) -> dict[str, Any]:
    """Read a scenario file (``.json`` as JSON, anything else as TOML) into a dict."""
    p = Path(path)
    text = p.read_text()
    try:
        return json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"(document): {p}: {e}") from e


def _flag(option: str) -> str:
    return "--" + option.removesuffix("_params").replace("_", "-") + ("-param" if option.endswith("_params") else "")


def _check_options(name: str, test: Test, given: Mapping[str, Any]) -> dict[str, Any]:
    """The test's own options: those given, else the declared defaults; others are refused."""
    values = dict(test.options)
    for option, value in given.items():
        if value is None:
            continue
        if option not in test.options:
            takers = [t for t, spec in TESTS.items() if option in spec.options]
            raise ValueError(f"{_flag(option)}: {name} does not take it; it is an option of {', '.join(takers)}")
        values[option] = value
    return values


def _flow_ccs(name: str, test: Test, cc: list[str], flows: int | None) -> list[str]:
    """The congestion control of each flow: one flow per --cc, or --flows copies of one."""
    if flows is not None and flows < 1:
        raise ValueError(f"--flows: got {flows}, expected at least 1 flow")
    if flows is not None and test.flows is not None:
        raise ValueError(f"--flows: {name} runs {test.flows} flow; use tcp_nup or tcp_ndown for N flows")
    if len(cc) > 1 and not test.mixed_cc:
        raise ValueError(f"--cc: got {len(cc)} congestion controls, but {name} runs {_layout_text(test)} of one")
    if len(cc) > 1:
        if flows is not None and flows != len(cc):
            raise ValueError(f"--flows: got {flows}, but --cc names {len(cc)} congestion controls (one flow each)")
        return list(cc)
    count = flows if flows is not None else test.flows
    if count is None:
        raise ValueError(f"--flows: {name} needs the number of flows, such as --flows 4")
    return [cc[0] if cc else DEFAULT_CC] * count


def _per_flow(cc: list[str], count: int, what: str) -> list[str]:
    """One congestion control for all ``count`` flows, or one each."""
    if len(cc) in (0, 1):
        return [cc[0] if cc else DEFAULT_CC] * count
    if len(cc) != count:
        raise ValueError(f"--cc: got {len(cc)}, expected one for every flow or one each for the {count} {what}")
    return list(cc)


def _series(direction: str, suffix: str = "") -> str:
    return f"TCP {DIRECTION_WORDS[direction]}{suffix}"


def _flows(
    name: str,
    test: Test,
    options: Mapping[str, Any],
    cc: list[str],
    flows: int | None,
    direction: str | None,
) -> list[dict[str, Any]]:
    """Each flow's congestion control, direction and (when named) series, DSCP and client."""
    way = direction or test.direction
    if test.layout == "count":
        ccs = _flow_ccs(name, test, cc, flows)
        suffixes = [""] if test.flows == 1 and len(ccs) == 1 else [f"::{i + 1}" for i in range(len(ccs))]
        return [
            {"name": _series(way, suffix), "cc": c} if test.named else {"cc": c}
            for c, suffix in zip(ccs, suffixes, strict=True)
        ]
    if flows is not None:
        raise ValueError(f"--flows: {name} sets its flows itself ({_layout_text(test)})")
    if test.layout == "marked":
        if direction is not None:
            raise ValueError(f"--direction: {name} runs flows both ways; got {direction!r}")
        ways = [(w, suffix, dscp) for w in DIRECTION_WORDS for suffix, dscp in test.marks]
        ccs = _per_flow(cc, len(ways), "flows")
        return [
            {"name": _series(w, f" {suffix}"), "cc": c, "direction": w, "dscp": dscp}
            for (w, suffix, dscp), c in zip(ways, ccs, strict=True)
        ]
    if test.layout == "rtts":
        rtts = options["rtts"]
        ccs = _per_flow(cc, len(rtts), "RTTs of --rtts")
        return [
            {"name": _series(way, f" {rtt}"), "cc": c, "client": i}
            for i, (rtt, c) in enumerate(zip(rtts, ccs, strict=True))
        ]
    # Layout "against": the flow of --cc and the competing flow.
    against = options["against"]
    if len(cc) != 1:
        raise ValueError(
            f"--cc: {name} needs one congestion control to run against {against}, got {len(cc)}; such as --cc bbr"
        )
    if cc[0] == against:
        raise ValueError(f"--against: got {against!r}, the same as --cc; expected another congestion control")
    return [
        {"name": _series(way, f" {cc[0]}"), "cc": cc[0]},
        {"name": _series(way, f" {against}"), "cc": against, "cc_params": {}},
    ]


def _flows_of_stations(test: str, spec: Test, flows: int | None, per_station: int, stations: int) -> int:
    """``--flows-per-station M``: M flows from each of the N stations (N x M, in turn)."""
    if spec.layout != "count" or spec.flows is not None:
        raise ValueError(f"--flows-per-station: {test} sets its flows itself; use tcp_nup or tcp_ndown")
    if flows is not None:
        raise ValueError("--flows-per-station: give either --flows or --flows-per-station, not both")
    if isinstance(per_station, bool) or not isinstance(per_station, int) or per_station < 1:
        raise ValueError(f"--flows-per-station: got {per_station!r}, expected a whole number >= 1")
    return per_station * stations


def flow_cc_params(params: Mapping[str, Any], ccs: Sequence[str], own: Sequence[bool] = ()) -> list[dict[str, Any]]:
    """Each flow's congestion-control parameters from ``--cc-param`` keys.

    ``KEY`` applies to every flow (but a test's competing flow, ``own``, which keeps its CCA's
    defaults), ``CC.KEY`` to the flows running CC, and ``N:KEY`` to flow N (counting from 1 in
    the order of the test's flows); a qualified key overrides a plain one, a flow's own over its
    CCA's.
    """
    own = list(own) or [False] * len(ccs)
    shared: dict[str, Any] = {}
    by_cc: dict[str, dict[str, Any]] = {}
    by_flow: dict[int, dict[str, Any]] = {}
    for key, value in params.items():
        flow, colon, rest = key.partition(":")
        if colon:
            try:
                n = int(flow)
            except ValueError:
                n = 0
            if not 1 <= n <= len(ccs) or not rest:
                raise ValueError(f"--cc-param: {key!r} names flow {flow!r}; expected N:KEY with N from 1 to {len(ccs)}")
            by_flow.setdefault(n, {})[rest] = value
            continue
        cc, dot, rest = key.partition(".")
        if dot:
            if cc not in ccs or not rest:
                raise ValueError(
                    f"--cc-param: {key!r} names {cc!r}, but the flows run {', '.join(dict.fromkeys(ccs))}; "
                    "expected CC.KEY for one of them"
                )
            by_cc.setdefault(cc, {})[rest] = value
        else:
            shared[key] = value
    return [
        {**({} if mine else shared), **by_cc.get(cc, {}), **by_flow.get(i + 1, {})}
        for i, (cc, mine) in enumerate(zip(ccs, own, strict=True))
    ]


def _rtts(value: str | Sequence[str]) -> list[str]:
    """The --rtts list: at least two distinct durations."""
    rtts = parse_list("--rtts", value)
    ns = [duration_ns("--rtts", rtt) for rtt in rtts]
    if len(rtts) < 2:
        raise ValueError(f"--rtts: got {value!r}, expected at least two RTTs such as '10ms,50ms'")
    if len(set(ns)) != len(ns):
        raise ValueError(f"--rtts: got {value!r}, expected distinct RTTs (one flow each)")
    return rtts


def _schedule(
    rates_value: Any, step_at_value: Any, given_step_at: bool, delay_ns: int, length_ns: int
) -> list[dict[str, str]]:
    """The rate schedule of --rates and --step-at, its times counted from the start of the flows."""
    rates = parse_list("--rates", rates_value)
    if [rate_bps("--rates", rate) for rate in rates][-1] == 0:
        raise ValueError(f"--rates: got {rates_value!r}, expected a positive last rate (it lasts forever)")
    if len(rates) == 1:
        if given_step_at:
            raise ValueError(f"--step-at: got {step_at_value!r}, but --rates has one rate (no step)")
        return [{"at": "0s", "rate": rates[0]}]
    if step_at_value is None:
        raise ValueError(f"--step-at: --rates has {len(rates)} rates; say when they start, such as --step-at 3s")
    times = [duration_ns("--step-at", t) for t in parse_list("--step-at", step_at_value)]
    steps = len(rates) - 1
    if len(times) == 1:
        times = [times[0] * (k + 1) for k in range(steps)]
    elif len(times) != steps:
        raise ValueError(
            f"--step-at: got {step_at_value!r}, expected {steps} times (one per rate after the first) "
            "or one time T for a step every T"
        )
    previous = 0
    for t in times:
        if t <= previous:
            raise ValueError(f"--step-at: got {step_at_value!r}, expected increasing times after 0s")
        previous = t
    if times[-1] >= length_ns:
        raise ValueError(
            f"--step-at: got {step_at_value!r}, expected steps within the "
            f"{length_ns / NSEC_PER_SEC:g}s of TCP (--length)"
        )
    return [{"at": "0s", "rate": rates[0]}] + [
        {"at": _ns_text(delay_ns + t), "rate": rate} for t, rate in zip(times, rates[1:], strict=True)
    ]


def _trace_path(
    path: dict[str, Any], options: Mapping[str, Any], given: Mapping[str, Any], timing: tuple[int, int]
) -> None:
    """Fill the trace path's two directions from trace files or a rate schedule."""
    files = {"uplink": options.get("trace_up"), "downlink": options.get("trace_down")}
    rates = options.get("rates")
    if rates is not None and any(files.values()):
        raise ValueError("--rates: a trace path replays trace files (--trace-up, --trace-down) or a schedule, not both")
    links = {way: dict(path.get(way) or {}) for way in files}
    if rates is not None:
        schedule = _schedule(rates, options.get("step_at"), given.get("step_at") is not None, *timing)
        for link in links.values():
            link.pop("trace", None)
            link["schedule"] = copy.deepcopy(schedule)
    elif given.get("step_at") is not None:
        raise ValueError("--step-at: needs --rates, the rates to step between")
    for (way, file), option in zip(files.items(), ("--trace-up", "--trace-down"), strict=True):
        if file is not None:
            p = Path(file)
            if not p.is_file():
                raise ValueError(f"{option}: got {str(file)!r}, expected a Mahimahi trace file (no such file)")
            links[way].pop("schedule", None)
            links[way]["trace"] = str(p.resolve())
        if "trace" not in links[way] and "schedule" not in links[way]:
            raise ValueError(
                f"{option}: the trace path needs a trace file each way (--trace-up FILE --trace-down FILE) "
                "or a rate schedule (--rates)"
            )
    path.update(links)


def _path(
    name: str,
    test: Test,
    scenario: dict[str, Any],
    path_kind: str | None,
    settings: Mapping[str, Any],
    options: Mapping[str, Any],
    given: Mapping[str, Any],
    timing: tuple[int, int],
) -> None:
    """Choose the path (the test's, --path, the base's or wired) and apply the path options."""
    if test.path is not None and path_kind not in (None, test.path):
        raise ValueError(f"--path: got {path_kind!r}, but {name} runs on the {test.path} path")
    path = scenario.setdefault("path", dict(DEFAULT_PATH))
    kind = path_kind or test.path
    if kind is not None and kind != path.get("kind"):
        path.clear()
        path.update(copy.deepcopy(DEFAULT_PATHS.get(kind, {"kind": kind})))
    if path.get("kind") == "wifi":
        _wifi_path(name, test, path, settings)
        return
    for option in WIFI_OPTIONS:
        if settings.get(option) is not None:
            raise ValueError(f"{_flag(option)}: needs the Wi-Fi path (--path wifi or --path hybrid)")
    if path.get("kind") == "trace":
        if settings.get("rate") is not None:
            raise ValueError("--rate: the trace path's capacity comes from its traces or --rates")
        if settings.get("rtt") is not None:
            path["rtt"] = settings["rtt"]
        _trace_path(path, options, given, timing)
        for way in ("uplink", "downlink"):
            queue = path[way].get("queue")
            if settings.get("qdisc") is not None:
                queue = {"kind": settings["qdisc"]}
            if settings.get("buffer") is not None:
                queue = {**(queue or {"kind": "pfifo"}), "limit": settings["buffer"]}
            if queue is not None:
                path[way]["queue"] = queue
        return
    for option in TRACE_OPTIONS:
        if given.get(option) is not None:
            raise ValueError(f"{_flag(option)}: needs the trace path (--path trace, or the trace and step tests)")
    for key in ("rate", "rtt", "buffer"):
        if settings.get(key) is not None:
            path[key] = settings[key]
    if settings.get("qdisc") is not None:
        path["qdisc"] = {"kind": settings["qdisc"]}
    if test.layout == "rtts":
        if settings.get("rtt") is not None:
            raise ValueError(f"--rtt: {name} sets each flow's RTT with --rtts")
        ns = [duration_ns("--rtts", rtt) for rtt in options["rtts"]]
        base = min(ns)
        path["rtt"] = options["rtts"][ns.index(base)]
        path["clients"] = len(ns)
        path["client_rtt"] = [_ns_text(n - base) for n in ns]


def _wifi_path(name: str, test: Test, path: dict[str, Any], settings: Mapping[str, Any]) -> None:
    """The Wi-Fi path's options: --rate/--buffer/--qdisc set the AP's wired backhaul."""
    if test.layout == "rtts":
        raise ValueError(f"--path: {name} needs per-client RTTs, which the Wi-Fi path does not have")
    if settings.get("rtt") is not None:
        path["rtt"] = settings["rtt"]
    for option, key in (("rate", "backhaul"), ("backhaul", "backhaul"), ("buffer", "backhaul_buffer")):
        if settings.get(option) is not None:
            path[key] = settings[option]
    if settings.get("qdisc") is not None:
        path["backhaul_qdisc"] = {"kind": settings["qdisc"]}
    if settings.get("chipset") is not None:
        path.setdefault("radio", {})["chipset"] = settings["chipset"]
    if settings.get("stations") is not None:
        path["stations"] = settings["stations"]
    if settings.get("mcs") is not None:
        path.setdefault("radio", {}).update(_mcs(settings["mcs"]))
    if settings.get("txq") is not None:
        path.setdefault("radio", {})["txq"] = _txq(settings["txq"])
    if settings.get("ap_txq") is not None:
        path.setdefault("radio", {})["ap_txq"] = _txq(settings["ap_txq"], "--ap-txq")
    driver = settings.get("driver")
    params = settings.get("driver_params")
    if driver is not None or params:
        radio = path.setdefault("radio", {})
        table = radio.get("driver")
        table = {"kind": table} if isinstance(table, str) else dict(table or {})
        if driver is not None:
            table["kind"] = driver
        for key, value in (params or {}).items():
            node = table
            *parents, last = key.split(".")
            for part in parents:
                node = node.setdefault(part, {})
                if not isinstance(node, dict):
                    raise ValueError(f"--driver-param: {key!r} sets inside {part!r}, which is not a table")
            node[last] = value
        radio["driver"] = table


# The mac80211 TXQ disciplines of the Wi-Fi nodes (path.radio.txq, path.radio.ap_txq), as --txq
# and --ap-txq name them.
TXQ_KINDS = ("fq_codel", "pfifo")


def _txq(value: str, option: str = "--txq") -> dict[str, Any]:
    """``--txq`` (``--ap-txq``): ``fq_codel`` or ``pfifo``, optionally with a packet limit
    (``pfifo:256``)."""
    kind, sep, limit = str(value).partition(":")
    kind = kind.strip()
    if kind not in TXQ_KINDS:
        raise ValueError(
            f"{option}: got {value!r}, expected one of {', '.join(TXQ_KINDS)}, optionally :LIMIT (packets)"
        )
    table: dict[str, Any] = {"kind": kind}
    if sep:
        try:
            packets = int(limit.strip())
        except ValueError:
            packets = 0
        if packets < 1:
            raise ValueError(f"{option}: got {value!r}, expected a limit in packets >= 1 after ':', such as pfifo:256")
        table["limit"] = packets
    return table


def _mcs(value: int | str | Sequence[int]) -> dict[str, Any]:
    """``--mcs``: one MCS for every link (``5``), or one per station (``7,3``)."""
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, Sequence) else [value]
    try:
        numbers = [int(str(v).strip()) for v in items]
    except ValueError:
        raise ValueError(f"--mcs: got {value!r}, expected an MCS such as 7, or one per station such as 7,3") from None
    if len(numbers) == 1 and not (isinstance(value, Sequence) and not isinstance(value, str)):
        return {"mcs": numbers[0]}
    return {"station_mcs": numbers}


def build(
    test: str,
    *,
    base: Mapping[str, Any] | None = None,
    path_kind: str | None = None,
    chipset: str | None = None,
    backhaul: str | None = None,
    stations: int | None = None,
    driver: str | None = None,
    driver_params: Mapping[str, Any] | None = None,
    mcs: int | str | Sequence[int] | None = None,
    txq: str | None = None,
    ap_txq: str | None = None,
    rate: str | None = None,
    rtt: str | None = None,
    buffer: str | None = None,
    qdisc: str | None = None,
    cc: Iterable[str] = (),
    cc_params: Mapping[str, Any] | None = None,
    flows: int | None = None,
    flows_per_station: int | None = None,
    tsq: str | None = None,
    tp: int | None = None,
    kernel: str | None = None,
    length: str = DEFAULT_LENGTH,
    delay: str = DEFAULT_DELAY,
    seed: int | None = None,
    warmup: str | None = None,
    step: str | None = None,
    ping: bool | None = None,
    direction: str | None = None,
    tsq_packets: int | None = None,
    rtts: str | Sequence[str] | None = None,
    against: str | None = None,
    trace_up: str | Path | None = None,
    trace_down: str | Path | None = None,
    rates: str | Sequence[str] | None = None,
    step_at: str | Sequence[str] | None = None,
) -> dict[str, Any]:
    """The scenario dict of ``test`` with these options over ``base`` (or the defaults).

    ``tsq_packets`` .. ``step_at`` are the options of particular tests (see :data:`TESTS` and
    :func:`describe`); a test refuses an option it does not declare.
    """
    if test not in TESTS:
        raise ValueError(f"test: got {test!r}, expected one of {', '.join(TESTS)}")
    spec = TESTS[test]
    if direction not in (None, "up", "down"):
        raise ValueError(f"--direction: got {direction!r}, expected 'up' or 'down'")
    given = {
        "tsq_packets": tsq_packets,
        "rtts": rtts,
        "against": against,
        "trace_up": trace_up,
        "trace_down": trace_down,
        "rates": rates,
        "step_at": step_at,
    }
    options = _check_options(test, spec, given)
    if "rtts" in options:
        options["rtts"] = _rtts(options["rtts"])
    scenario = copy.deepcopy(dict(base)) if base else {}
    delay_ns = duration_ns("--delay", delay)
    length_ns = duration_ns("--length", length)
    if length_ns == 0:
        raise ValueError(f"--length: got {length!r}, expected a positive duration")
    settings = {
        "rate": rate,
        "rtt": rtt,
        "buffer": buffer,
        "qdisc": qdisc,
        "chipset": chipset,
        "backhaul": backhaul,
        "stations": stations,
        "driver": driver,
        "driver_params": driver_params,
        "mcs": mcs,
        "txq": txq,
        "ap_txq": ap_txq,
    }
    _path(test, spec, scenario, path_kind, settings, options, given, (delay_ns, length_ns))
    path = scenario["path"]
    stations = int(path.get("stations", 1)) if path.get("kind") == "wifi" else 1
    if flows_per_station is not None:
        flows = _flows_of_stations(test, spec, flows, flows_per_station, stations)

    stack = scenario.setdefault("stack", {})
    if "tsq_packets" in options:
        if tsq is not None:
            raise ValueError(f"--tsq: {test} sets the TSQ with --tsq-packets")
        packets = options["tsq_packets"]
        if packets is None:
            raise ValueError(f"--tsq-packets: {test} needs the static TSQ limit, such as --tsq-packets 64")
        if isinstance(packets, bool) or not isinstance(packets, int) or packets < 1:
            raise ValueError(f"--tsq-packets: got {packets!r}, expected a whole number of packets >= 1")
        stack["tsq"] = f"static:{packets}p"
    for key, value in (("tsq", tsq), ("tp", tp), ("kernel", kernel)):
        if value is not None:
            stack[key] = value
    for key, value in (("seed", seed), ("warmup", warmup), ("step", step)):
        if value is not None:
            scenario[key] = value

    step_text = str(scenario.get("step", DEFAULT_STEP))
    ping_interval = _ns_text(duration_ns("--step" if step is not None else "step", step_text))
    scenario["duration"] = _ns_text(length_ns + 2 * delay_ns)
    timing = {"start": _ns_text(delay_ns), "stop": _ns_text(delay_ns + length_ns)}
    made = _flows(test, spec, options, list(cc), flows, direction)
    params = flow_cc_params(cc_params or {}, [f["cc"] for f in made], ["cc_params" in f for f in made])
    scenario["flows"] = [
        {
            **({"name": f["name"]} if "name" in f else {}),
            "cc": f["cc"],
            "cc_params": p,
            "direction": f.get("direction", direction or spec.direction),
            **{key: f[key] for key in ("client", "dscp") if key in f},
            **timing,
        }
        for f, p in zip(made, params, strict=True)
    ]
    if spec.layout == "count" and stations > 1:
        # Several stations: the flows go to them in turn (flow i from station i mod N).
        for i, f in enumerate(scenario["flows"]):
            f.setdefault("client", i % stations)
    scenario["pings"] = _pings(spec, options, ping, ping_interval, int(scenario.get("seed", DEFAULT_SEED)))
    return scenario


def _pings(spec: Test, options: Mapping[str, Any], ping: bool | None, interval: str, seed: int) -> list[dict[str, Any]]:
    """Flent's ICMP ping (one per client when the flows come from several) and UDP pings."""
    pings: list[dict[str, Any]] = []
    if spec.ping if ping is None else ping:
        if not spec.named:
            pings.append({"kind": "icmp"})
        elif spec.layout == "rtts":
            pings += [
                {"name": f"{ICMP_SERIES} {rtt}", "kind": "icmp", "client": i} for i, rtt in enumerate(options["rtts"])
            ]
        else:
            pings.append({"name": ICMP_SERIES, "kind": "icmp"})
    pings += [{"name": f"Ping (ms) {suffix}", "kind": "udp", "dscp": dscp} for suffix, dscp in spec.udp_pings]
    if len(pings) > 1:
        # Flent runs each pinger as a process of its own, so their first pings (and every one
        # after them) fall at independent phases within the interval, not at the same instants.
        step = duration_ns("--step", interval)
        for i, p in enumerate(pings):
            phase = random.Random(f"{seed}:ping:{i}").randrange(step) if step > 0 else 0
            p["start"] = _ns_text(phase)
    return [{**p, "interval": interval} for p in pings]


def _layout_text(test: Test) -> str:
    """The flows of a test in words, for describe() and messages."""
    way = DIRECTION_WORDS[test.direction]
    if test.layout == "marked":
        marks = ", ".join(f"{suffix} ({dscp})" for suffix, dscp in test.marks)
        return f"{len(test.marks)} uploads and {len(test.marks)} downloads marked {marks}"
    if test.layout == "rtts":
        return f"one {way} per RTT of --rtts, client i with RTT i"
    if test.layout == "against":
        return f"one {way} of --cc and one of --against"
    if test.flows is None:
        return f"N {way}s (--flows N)"
    return f"{test.flows} {way}" + ("s" if test.flows > 1 else "")


def _series_text(test: Test) -> str:
    """The Flent series names of a test's flows, in words."""
    if not test.named:
        return "named by the core (<cc>-<direction>-<i>, icmp-ping-0)"
    if test.layout == "marked":
        return ", ".join(_series(w, f" {suffix}") for w in DIRECTION_WORDS for suffix, _ in test.marks)
    if test.layout == "rtts":
        return _series(test.direction, " <rtt>")
    if test.layout == "against":
        return _series(test.direction, " <cc>") + ", " + _series(test.direction, " <against>")
    if test.flows is None:
        return _series(test.direction, "::1") + " .. " + _series(test.direction, "::N")
    return _series(test.direction)


def describe(test: str) -> str:
    """A test's documentation: what it runs, its timing, series names, path and own options."""
    if test not in TESTS:
        raise ValueError(f"test: got {test!r}, expected one of {', '.join(TESTS)}")
    spec = TESTS[test]
    icmp = {False: "ICMP ping", True: ICMP_SERIES}[spec.named]
    if spec.layout == "rtts":
        icmp = f"{ICMP_SERIES} <rtt> (one per client)"
    pings = ([icmp] if spec.ping else []) + [f"Ping (ms) {suffix} ({dscp})" for suffix, dscp in spec.udp_pings]
    path = spec.path or "the base scenario's or --path (default wired)"
    lines = [f"{test}: {spec.description}"]
    if spec.about:
        lines.append(textwrap.fill(spec.about, DESCRIBE_WIDTH))
    lines += [
        f"  flows:   {_layout_text(spec)}, for LENGTH (default {DEFAULT_LENGTH}) after DELAY (default {DEFAULT_DELAY})",
        f"  series:  {_series_text(spec)}",
        f"  pings:   {', '.join(pings) or 'none'}, every STEP ({DEFAULT_STEP}) for LENGTH + 2 x DELAY",
        f"  path:    {path}",
    ]
    for option, default in spec.options.items():
        if option in TRACE_OPTIONS and spec.path is None:
            continue
        shown = "required" if default is None else f"default {default}"
        lines.append(f"  {_flag(option)}: {TEST_OPTIONS[option]} ({shown})")
    if spec.path is None and set(TRACE_OPTIONS) <= set(spec.options):
        lines.append("  with --path trace: --trace-up FILE --trace-down FILE, or --rates and --step-at")
    return "\n".join(lines)


def catalog() -> list[tuple[str, str]]:
    """Every test of the catalog with its one-line description, in catalog order."""
    return [(name, spec.description) for name, spec in TESTS.items()]


def path_options(
    path: str | None,
    chipset: str | None,
    backhaul: str | None,
    stations: int | None,
    rate: str | None,
    rtt: str | None,
    buffer: str | None,
    qdisc: str | None,
    length: str | None,
    delay: str | None,
) -> dict[str, Any]:
    """The catalog options (scenarios.build keywords) of the path and timing options that
    `wificc run`, `emu run` and `validate` share; None where not given."""
    return {
        "path_kind": path,
        "chipset": chipset,
        "backhaul": backhaul,
        "stations": stations,
        "rate": rate,
        "rtt": rtt,
        "buffer": buffer,
        "qdisc": qdisc,
        "length": length,
        "delay": delay,
    }
