"""The BBR variants as real Linux congestion controls: build, load, unload, list and tune them.

wificc's BBR-family algorithms exist twice: in the simulator, and as BPF struct_ops congestion
controls in `bpf/` (one object per variant, built by clang against the running kernel's BTF).
Once loaded they are ordinary kernel congestion controls named `wbbr`, `wbbrp`, `wbbrn`,
`wbbr_apg` and `wbbr_pg` (the `w` keeps them apart from the kernel's own `bbr`), selectable with
`setsockopt(TCP_CONGESTION)`, `iperf3 -C` or `sysctl net.ipv4.tcp_congestion_control`.

Loading registers the object's struct_ops map with `bpftool struct_ops register` and pins three
maps under `/sys/fs/bpf/wificc/NAME/`: `ops` (the registered struct_ops map), `knobs` (the
variant's parameters, which the programs read on every ACK) and `limits` (each knob's minimum,
maximum and display scale, read-only). The pins are the handle for everything afterwards:
`unload` unregisters exactly the pinned instance and removes its pins, `set` rewrites the pinned
knob map after checking the new values against the pinned limits. Knob names, order and limits
come from the object itself (its BTF and read-only data), so this module repeats none of them.
Debian's bpftool (7.1) cannot pin struct_ops links, so the struct_ops map itself is pinned and
unregistered by id; a registration left without pins (an interrupted load) is found by name.

A load that fails part-way or is interrupted (Ctrl-C, SIGTERM, SIGHUP) unloads everything it had
loaded; what a SIGKILL leaves behind, `unload` removes.

Runs that use variants (`wificc emu run`, `validate`) hold a lease on them (`acquire`,
`release`): a file `/run/wificc/bpf-leases/NAME/PID-TOKEN`. A variant a run had to load is
marked as loaded for runs and is unloaded when its last live lease ends; one loaded by hand
stays. Checking and loading, and releasing and unloading, happen under one lock, so runs that
overlap neither load a variant twice nor unload one that another run still uses. A lease whose
process is gone no longer counts.

A flow's scenario `cc_params` (the simulator algorithm's parameters) reach the variant's knobs
through `PARAM_KNOBS` (`knob_assignments`): a run that loads the variant sets them; a run that
finds it loaded, by hand or by another run, requires the values it asks for to be already set,
since the knobs are shared by every connection on the variant. A parameter without a knob is
refused by name.

The sources ship in the package (`wificc/bpf_sources`, a link to `bpf/` in the repository): an
installed package builds them in the user cache, `$XDG_CACHE_HOME/wificc/bpf` (`source_dir`).

Kernel requirements are in `bpf/README.md`: BTF (`CONFIG_DEBUG_INFO_BTF`), BPF struct_ops for
`tcp_congestion_ops` with a 4-argument `cong_control` (Linux 6.10 or later), root.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from wificc import scenarios, userdirs

# Environment variable naming the directory of the BPF sources to build from.
BPF_DIR_ENV = "WIFICC_BPF_DIR"
# The sources as the package ships them (a link to the repository's bpf/ in a checkout).
PACKAGED_SOURCES = Path(__file__).resolve().parent / "bpf_sources"
PIN_ROOT = Path("/sys/fs/bpf/wificc")
BPFFS = Path("/sys/fs/bpf")
BTF_VMLINUX = Path("/sys/kernel/btf/vmlinux")
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
DEFAULT_CC = Path("/proc/sys/net/ipv4/tcp_congestion_control")
#: Names of the maps the objects define for their knobs and limits (bpf/wbbr.h).
KNOB_MAP = ".data.knobs"
LIMIT_MAP = ".rodata.limits"
#: Knobs whose values must not decrease along each tuple (checked when all of them exist).
ORDERED_KNOBS = (
    ("apg_len_min", "apg_len_init", "apg_len_max"),
    ("pg_probe_rtt_min_ms", "pg_probe_rtt_max_ms"),
)
#: Leases of runs on variants, and the lock that serialises them (see the module doc).
LEASE_ROOT = Path("/run/wificc/bpf-leases")
#: Marks a variant that runs loaded: the last lease to end unloads it.
RUN_LOADED = ".loaded-for-runs"
#: How long an unregistered algorithm may take to leave the kernel's list (RCU grace periods).
UNREGISTER_WAIT_S = 5.0
#: cong_control receives (sk, ack, flag, rs) since Linux 6.10; the programs are written for that.
MIN_KERNEL = (6, 10)


class BpfError(Exception):
    """Something the BPF workflow needs is missing or failed; the message says what."""


# ---- where things are ----


def source_dir() -> Path:
    """Where the variants are built from: ``$WIFICC_BPF_DIR``; else the repository's ``bpf/`` in
    a source checkout; else the sources the package ships (``wificc/bpf_sources``), copied into
    the user cache (``$XDG_CACHE_HOME/wificc/bpf``, :func:`cached_sources`), since an installed
    package's directory may not be writable and the build writes beside its sources."""
    env = os.environ.get(BPF_DIR_ENV)
    if env:
        path = Path(env)
        if not (path / "Makefile").is_file():
            raise BpfError(f"{BPF_DIR_ENV}={env}: no BPF sources there (no Makefile); expected wificc's bpf/")
        return path
    checkout = Path(__file__).resolve().parents[2] / "bpf"
    if (checkout / "Makefile").is_file():
        return checkout
    if (PACKAGED_SOURCES / "Makefile").is_file():
        return cached_sources(PACKAGED_SOURCES, userdirs.cache_dir() / "bpf")
    raise BpfError(
        f"BPF sources not found: neither {checkout} nor {PACKAGED_SOURCES} has them; "
        f"set {BPF_DIR_ENV} to wificc's bpf/ directory"
    )


def cached_sources(packaged: Path, cache: Path) -> Path:
    """Copy the packaged sources into ``cache`` (files whose content differs only, so that
    ``make`` keeps objects built from the same sources); returns ``cache``."""
    cache.mkdir(parents=True, exist_ok=True)
    for source in sorted(packaged.iterdir()):
        if not source.is_file():
            continue
        target = cache / source.name
        data = source.read_bytes()
        if not target.is_file() or target.read_bytes() != data:
            staging = cache / f".{source.name}.{os.getpid()}"
            staging.write_bytes(data)
            os.replace(staging, target)
    return cache


def variants() -> list[str]:
    """The algorithms there are sources for, one per `bpf/NAME.bpf.c`."""
    return sorted(p.name.removesuffix(".bpf.c") for p in source_dir().glob("*.bpf.c"))


def object_path(name: str) -> Path:
    return source_dir() / "build" / f"{name}.bpf.o"


def pin_dir(name: str) -> Path:
    return PIN_ROOT / name


def checked_names(names: Iterable[str]) -> list[str]:
    """`names` (all variants when empty), each checked to be a variant, in the order given."""
    known = variants()
    chosen = list(names) or known
    for name in chosen:
        if name not in known:
            raise BpfError(f"unknown congestion control {name!r}: expected one of {', '.join(known)}")
    return list(dict.fromkeys(chosen))


# ---- preconditions ----


def unavailable_reason() -> str | None:
    """Why BPF congestion controls cannot be loaded here, or None if they can."""
    if os.geteuid() != 0:
        return "managing BPF congestion controls needs root (CAP_BPF and CAP_NET_ADMIN): run as root"
    if not BTF_VMLINUX.is_file():
        return f"{BTF_VMLINUX} is missing: the kernel needs CONFIG_DEBUG_INFO_BTF=y"
    release = os.uname().release
    version = re.match(r"(\d+)\.(\d+)", release)
    if version and (int(version[1]), int(version[2])) < MIN_KERNEL:
        return f"Linux {release} is too old: BPF cong_control with (sk, ack, flag, rs) needs 6.10 or later"
    if b"bpf_struct_ops_tcp_congestion_ops" not in BTF_VMLINUX.read_bytes():
        return "this kernel has no BPF struct_ops for tcp_congestion_ops (CONFIG_BPF_JIT, CONFIG_BPF_SYSCALL)"
    return None


def require_tools(*tools: str) -> None:
    packages = {"bpftool": "bpftool", "clang": "clang llvm", "make": "make"}
    for tool in tools:
        if shutil.which(tool) is None:
            raise BpfError(
                f"{tool} not found: install it with `apt-get install {packages.get(tool, tool)}` "
                "(scripts/setup-debian.sh installs everything)"
            )


def require_kernel() -> None:
    reason = unavailable_reason()
    if reason:
        raise BpfError(reason)
    require_tools("bpftool")


def ensure_bpffs() -> None:
    """Mount the BPF filesystem at /sys/fs/bpf if it is not mounted (pins live there)."""
    mounts = Path("/proc/mounts").read_text().split("\n")
    if any(line.split()[1:3] == [str(BPFFS), "bpf"] for line in mounts if line):
        return
    _run(["mount", "-t", "bpf", "bpf", str(BPFFS)], "mounting the BPF filesystem at /sys/fs/bpf")


# ---- running tools ----


def _run(cmd: list[str], what: str) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()[-8:]
        raise BpfError(f"{what} failed ({' '.join(cmd)}):\n" + "\n".join(detail))
    return done.stdout


def _bpftool(*args: str, what: str) -> object:
    return json.loads(_run(["bpftool", "-j", *args], what) or "null")


# ---- kernel state ----


def available() -> list[str]:
    """The kernel's registered congestion controls (all network namespaces share them)."""
    return AVAILABLE.read_text().split()


def _state(ops_id: int) -> str | None:
    """State of a struct_ops map (INUSE while registered), or None if it is gone."""
    done = subprocess.run(["bpftool", "-j", "struct_ops", "dump", "id", str(ops_id)], capture_output=True, text=True)
    match = re.search(r'"state":\s*"BPF_STRUCT_OPS_STATE_(\w+)"', done.stdout)
    return match.group(1) if match else None


def registered(name: str) -> int | None:
    """Id of the struct_ops map registered under `name`, or None."""
    listing = _bpftool("struct_ops", "show", what="listing struct_ops maps") or []
    for entry in listing:
        if entry.get("name") == name and _state(entry["id"]) == "INUSE":
            return int(entry["id"])
    return None


def _pinned_id(path: Path) -> int | None:
    if not path.exists():
        return None
    info = _bpftool("map", "show", "pinned", str(path), what=f"reading the pinned map {path}")
    return int(info["id"])


def _maps_of(ops_id: int) -> dict[str, int]:
    """Name -> id of the maps the programs of a struct_ops map use."""
    dump = _run(["bpftool", "-j", "struct_ops", "dump", "id", str(ops_id)], "reading the struct_ops map")
    maps: dict[str, int] = {}
    for prog_id in sorted(set(re.findall(r"prog_id:(\d+)", dump))):
        prog = _bpftool("prog", "show", "id", prog_id, what=f"reading program {prog_id}")
        for map_id in prog.get("map_ids", []):
            info = _bpftool("map", "show", "id", str(map_id), what=f"reading map {map_id}")
            maps[info["name"]] = int(map_id)
    return maps


# ---- knobs ----


@dataclass(frozen=True)
class Knob:
    """One parameter of a loaded algorithm, in the kernel's units (`raw`)."""

    name: str
    raw: int
    lo: int
    hi: int
    scale: int

    def show(self, raw: int | None = None) -> str:
        value = self.raw if raw is None else raw
        return str(value) if self.scale == 1 else f"{value / self.scale:g}"

    def expected(self) -> str:
        if self.scale == 1:
            return f"an integer from {self.lo} to {self.hi}"
        return f"a number from {self.show(self.lo)} to {self.show(self.hi)} (steps of 1/{self.scale})"

    def parse(self, text: str) -> int:
        """The raw value of `text` (a decimal for scaled knobs), checked against the limits."""
        try:
            raw = int(text) if self.scale == 1 else round(float(text) * self.scale)
        except (ValueError, OverflowError):
            raw = None
        if raw is None or not self.lo <= raw <= self.hi:
            raise BpfError(f"knob {self.name} = {text!r}: expected {self.expected()}")
        return raw


def _struct_values(path: Path) -> tuple[list[int], dict[str, dict[str, int]]]:
    """Raw u32 words and the BTF-formatted variables of the one-element map pinned at `path`."""
    entry = _bpftool("map", "lookup", "pinned", str(path), "key", "0", "0", "0", "0", what=f"reading {path}")
    raw = bytes(int(b, 16) for b in entry["value"])
    words = [int.from_bytes(raw[i : i + 4], "little") for i in range(0, len(raw), 4)]
    variables: dict[str, dict[str, int]] = {}
    for section in entry["formatted"]["value"].values():
        for var in section:
            variables.update(var)
    return words, variables


def knobs(name: str) -> list[Knob]:
    """The knobs of the loaded algorithm `name`, with their current values and limits."""
    where = pin_dir(name)
    if not (where / "knobs").exists():
        raise BpfError(f"{name} is not loaded by wificc (no {where / 'knobs'}): run `wificc bpf load {name}`")
    words, current = _struct_values(where / "knobs")
    (values,) = current.values()
    _, limits = _struct_values(where / "limits")
    if len(words) != len(values) or set(limits) != {"wbbr_knobs_min", "wbbr_knobs_max", "wbbr_knobs_scale"}:
        raise BpfError(f"{where}: the knob maps do not have the layout of bpf/wbbr.h")
    return [
        Knob(
            key,
            int(values[key]),
            int(limits["wbbr_knobs_min"][key]),
            int(limits["wbbr_knobs_max"][key]),
            int(limits["wbbr_knobs_scale"][key]),
        )
        for key in values
    ]


def _parsed(name: str, by_name: Mapping[str, Knob], assignments: Iterable[str]) -> dict[str, int]:
    """The raw values `key=value` assignments give knobs of `name`, each checked."""
    raw = {}
    for item in assignments:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep:
            raise BpfError(f"{item!r}: expected key=value")
        if key not in by_name:
            raise BpfError(f"{name} has no knob {key!r}; its knobs are {', '.join(by_name)}")
        try:
            raw[key] = by_name[key].parse(text.strip())
        except BpfError as e:
            raise BpfError(f"{name}: {e}") from None
    return raw


def set_knobs(name: str, assignments: Iterable[str]) -> list[Knob]:
    """Apply `key=value` assignments to a loaded algorithm; returns the knobs as now set."""
    require_kernel()
    current = knobs(name)
    by_name = {k.name: k for k in current}
    raw = {k.name: k.raw for k in current} | _parsed(name, by_name, assignments)
    for chain in ORDERED_KNOBS:
        if all(k in raw for k in chain) and any(raw[a] > raw[b] for a, b in pairwise(chain)):
            shown = ", ".join(f"{k} = {by_name[k].show(raw[k])}" for k in chain)
            raise BpfError(f"{shown}: expected {' <= '.join(chain)}")
    value = b"".join(raw[k.name].to_bytes(4, "little") for k in current)
    _run(
        ["bpftool", "map", "update", "pinned", str(pin_dir(name) / "knobs"), "key", "0", "0", "0", "0"]
        + ["value", *(f"0x{b:02x}" for b in value)],
        f"writing the knobs of {name}",
    )
    return knobs(name)


# ---- scenario parameters as knobs ----


def _flag(value: Any) -> str:
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return str(int(value))


def _integer(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("expected an integer")
    return str(value)


def _ratio(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("expected a number")
    return repr(float(value))


def _in_units(unit_ns: int, unit: str) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        ns = scenarios.duration_ns("value", str(value))
        if ns % unit_ns:
            raise ValueError(f"expected a whole number of {unit} (the knob's unit)")
        return str(ns // unit_ns)

    return convert


def _size(value: Any) -> str:
    return str(scenarios.size_bytes("value", str(value)))


def _apg_eval(value: Any) -> str:
    codes = {"once_per_cycle": "0", "every_cwnd_update": "1"}
    if value not in codes:
        raise ValueError(f"expected one of {', '.join(codes)}")
    return codes[value]


def _gamma_max(value: Any) -> str:
    # The simulator's null (no cap) is the knob's largest value, 16, which no rtt / min_rtt
    # reaches in practice.
    return "16" if value is None else _ratio(value)


_MICROS, _MILLIS = _in_units(1_000, "microseconds"), _in_units(1_000_000, "milliseconds")
ParamKnobs = dict[str, tuple[str, Callable[[Any], str]]]


def _same_name(convert: Callable[[Any], str], *names: str) -> ParamKnobs:
    """Parameters whose knobs have the same name."""
    return {name: (name, convert) for name in names}


_COMMON = _same_name(_flag, "extra_acked")
#: How a flow's `cc_params` (the simulator algorithm's parameters, as in `wificc cc NAME`) reach
#: each variant's knobs: parameter -> (knob, conversion to the knob's text). A parameter not
#: listed has no knob in the BPF program.
PARAM_KNOBS: dict[str, ParamKnobs] = {
    "wbbr": _COMMON,
    "wbbrp": {**_COMMON, **_same_name(_integer, "bbrp_pace")},
    "wbbrn": {
        **_COMMON,
        **_same_name(_ratio, "probe_bw_up_gain", "probe_bw_down_gain", "full_bw_thresh"),
        **_same_name(_integer, "cwnd_min_target", "send_quantum_min_segs"),
        "send_quantum_interval": ("send_quantum_interval_us", _MICROS),
        "send_quantum_max": ("send_quantum_max_bytes", _size),
    },
    "wbbr_apg": {
        **_COMMON,
        **_same_name(_integer, "apg_len_init", "apg_len_min", "apg_len_max", "apg_stride"),
        **_same_name(_ratio, "apg_tolerance"),
        **_same_name(_apg_eval, "apg_eval"),
    },
    "wbbr_pg": {
        **_COMMON,
        **_same_name(_gamma_max, "pg_gamma_max"),
        **_same_name(_integer, "pg_win_extra_rounds"),
        "pg_t_interval": ("pg_t_interval_us", _MICROS),
        "pg_probe_rtt_interval_min": ("pg_probe_rtt_min_ms", _MILLIS),
        "pg_probe_rtt_interval_max": ("pg_probe_rtt_max_ms", _MILLIS),
    },
}


def knob_assignments(name: str, cc_params: Mapping[str, Any], field: str = "cc_params") -> list[str]:
    """The `knob=value` assignments (as `set_knobs` takes them) that give variant `name` a
    flow's `cc_params`. A parameter the program has no knob for, or a value the knob cannot
    hold in its unit, is an error naming `field.PARAM`; the knob's limits are checked when the
    assignments are applied."""
    table = PARAM_KNOBS.get(name)
    if table is None:
        raise BpfError(f"{name}: not a wificc BPF variant; expected one of {', '.join(PARAM_KNOBS)}")
    out = []
    for param, value in cc_params.items():
        if param not in table:
            raise BpfError(
                f"{field}.{param}: the BPF variant {name} has no knob for it; its parameters are "
                f"{', '.join(table)} (the others exist in the simulator only)"
            )
        knob, convert = table[param]
        try:
            out.append(f"{knob}={convert(value)}")
        except ValueError as e:
            raise BpfError(f"{field}.{param} = {value!r}: {e}") from None
    return out


def _knobs_match(name: str, assignments: Iterable[str]) -> None:
    """Check that the loaded variant `name` already has the knob values `assignments` ask for."""
    by_name = {k.name: k for k in knobs(name)}
    for key, want in _parsed(name, by_name, assignments).items():
        knob = by_name[key]
        if want != knob.raw:
            raise BpfError(
                f"{name} is already loaded with {key} = {knob.show()}, and this run asks for "
                f"{knob.show(want)}: a loaded variant has one set of knobs for all its connections. "
                f"Let the runs that use it end, or set it with `wificc bpf set {name} {key}={knob.show(want)}` "
                "and run without the parameter"
            )


# ---- build, load, unload ----


def build() -> list[Path]:
    """Compile every variant against the running kernel's BTF (make -C bpf); returns the objects."""
    require_tools("make", "clang", "bpftool")
    if not BTF_VMLINUX.is_file():
        raise BpfError(f"{BTF_VMLINUX} is missing: the kernel needs CONFIG_DEBUG_INFO_BTF=y")
    _run(["make", "-s", "-C", str(source_dir())], "building the BPF objects")
    return [object_path(name) for name in variants()]


def _register(name: str) -> int:
    """Register one algorithm and pin its maps; returns the struct_ops map id."""
    out = _run(["bpftool", "struct_ops", "register", str(object_path(name))], f"loading {name}")
    match = re.search(rf"Registered tcp_congestion_ops {re.escape(name)} id (\d+)", out)
    ops_id = int(match.group(1)) if match else registered(name)
    if ops_id is None:
        raise BpfError(f"loading {name}: bpftool reported no struct_ops map named {name}")
    where = pin_dir(name)
    where.mkdir(parents=True, exist_ok=True)
    _run(["bpftool", "map", "pin", "id", str(ops_id), str(where / "ops")], f"pinning {name}")
    maps = _maps_of(ops_id)
    for pin, map_name in (("knobs", KNOB_MAP), ("limits", LIMIT_MAP)):
        if map_name not in maps:
            raise BpfError(f"loading {name}: its programs use no map named {map_name}")
        _run(["bpftool", "map", "pin", "id", str(maps[map_name]), str(where / pin)], f"pinning {name}")
    if name not in available():
        raise BpfError(f"loading {name}: registered, yet missing from {AVAILABLE}")
    return ops_id


@contextmanager
def _interruptible() -> Iterator[Callable[[], None]]:
    """While loading, turn SIGTERM and SIGHUP (and SIGINT, unless it is ignored) into exceptions
    so that the clean-up runs. Yields `hold`, which ignores them for the rest of the block so
    that nothing interrupts the clean-up; the first signal also does that."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    stops = [signal.SIGTERM, signal.SIGHUP]
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        stops.append(signal.SIGINT)

    def hold() -> None:
        for s in stops:
            signal.signal(s, signal.SIG_IGN)

    def stop(signum: int, _frame: object) -> None:
        hold()
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    previous = {s: signal.signal(s, stop) for s in stops}
    try:
        yield hold
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def load(names: Iterable[str] = ()) -> list[str]:
    """Build if needed, then register each algorithm. On any failure or interruption (Ctrl-C,
    SIGTERM, SIGHUP) every algorithm this call registered is unloaded again before the error
    propagates."""
    chosen = checked_names(names)
    require_kernel()
    build()
    ensure_bpffs()
    loaded: list[str] = []
    current = None
    with _interruptible() as hold:
        try:
            for name in chosen:
                ops_id = registered(name)
                if ops_id is not None:
                    if _pinned_id(pin_dir(name) / "ops") == ops_id:
                        continue
                    raise BpfError(
                        f"a congestion control named {name} is registered but not pinned by wificc: "
                        f"run `wificc bpf unload {name}` first"
                    )
                current = name
                _register(name)
                loaded.append(name)
                current = None
        except BaseException:
            hold()
            for name in [*loaded, *([current] if current else [])]:
                try:
                    _unload_one(name)
                except BpfError:
                    pass
            raise
    return loaded


def _unload_one(name: str) -> bool:
    """Unregister `name` (the pinned instance, else one found by name) and remove its pins.
    Returns whether anything was there."""
    if DEFAULT_CC.read_text().strip() == name:
        raise BpfError(
            f"{name} is this namespace's default congestion control: "
            "set net.ipv4.tcp_congestion_control to another algorithm first"
        )
    where = pin_dir(name)
    ops_id = _pinned_id(where / "ops")
    if ops_id is None or _state(ops_id) != "INUSE":
        ops_id = registered(name)
    found = ops_id is not None or where.exists()
    if ops_id is not None:
        _run(["bpftool", "struct_ops", "unregister", "id", str(ops_id)], f"unloading {name}")
    if where.exists():
        for pin in where.iterdir():
            pin.unlink()
        where.rmdir()
    deadline = time.monotonic() + UNREGISTER_WAIT_S
    while name in available():
        if time.monotonic() > deadline:
            raise BpfError(f"unloading {name}: still in {AVAILABLE} after {UNREGISTER_WAIT_S:g} s")
        time.sleep(0.05)
    return found


def unload(names: Iterable[str] = ()) -> list[str]:
    """Unregister each algorithm and remove its pins; returns those that were loaded. Tries every
    name even if one fails, then reports the failures together."""
    chosen = checked_names(names)
    require_kernel()
    done, errors = [], []
    for name in chosen:
        try:
            if _unload_one(name):
                done.append(name)
        except BpfError as e:
            errors.append(str(e))
    if PIN_ROOT.exists() and not any(PIN_ROOT.iterdir()):
        PIN_ROOT.rmdir()
    if errors:
        raise BpfError("\n".join(errors))
    return done


# ---- leases of runs ----


@contextmanager
def _lease_lock() -> Iterator[None]:
    LEASE_ROOT.mkdir(parents=True, exist_ok=True)
    with open(LEASE_ROOT / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def lease_token() -> str:
    """A new lease token for this process: its pid and a random part."""
    return f"{os.getpid()}-{secrets.token_hex(4)}"


def _alive(lease: Path) -> bool:
    try:
        os.kill(int(lease.name.split("-", 1)[0]), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def _live_leases(name: str) -> list[Path]:
    """The leases on `name` whose process still runs; the others are removed."""
    where = LEASE_ROOT / name
    if not where.is_dir():
        return []
    live = []
    for lease in where.iterdir():
        if lease.name == RUN_LOADED:
            continue
        if _alive(lease):
            live.append(lease)
        else:
            lease.unlink(missing_ok=True)
    return live


def acquire(token: str, names: Iterable[str], knob_sets: Mapping[str, Iterable[str]] | None = None) -> list[str]:
    """Take lease `token` on each variant, loading those the kernel does not have yet (they are
    unloaded when their last lease ends); returns the names this call loaded.

    `knob_sets` gives some of the variants `knob=value` assignments (`knob_assignments`): a
    variant this call loads gets them; one already loaded must already have those values, or
    nothing is leased or left loaded and the error says which knob differs."""
    chosen = checked_names(names)
    with _lease_lock():
        missing = [name for name in chosen if name not in available()]
        loaded = load(missing) if missing else []
        try:
            for name, assignments in (knob_sets or {}).items():
                if name in loaded:
                    set_knobs(name, assignments)
                else:
                    _knobs_match(name, assignments)
        except BaseException:
            if loaded:  # (unload of no names means all of them)
                unload(loaded)
            raise
        for name in chosen:
            where = LEASE_ROOT / name
            where.mkdir(exist_ok=True)
            if name in loaded:
                (where / RUN_LOADED).touch()
            (where / token).touch()
        return loaded


def release(token: str, names: Iterable[str]) -> list[str]:
    """End lease `token` on each variant and unload those that runs loaded and no live lease
    holds any more; returns the names unloaded. Tries every name, then reports the failures
    together."""
    chosen = checked_names(names)
    done, errors = [], []
    with _lease_lock():
        for name in chosen:
            where = LEASE_ROOT / name
            (where / token).unlink(missing_ok=True)
            if _live_leases(name):
                continue
            if (where / RUN_LOADED).exists():
                try:
                    if _unload_one(name):
                        done.append(name)
                except BpfError as e:
                    errors.append(str(e))
                    continue
                (where / RUN_LOADED).unlink(missing_ok=True)
            # No lease left (a variant loaded by hand included): nothing to keep.
            if where.is_dir() and not any(where.iterdir()):
                where.rmdir()
    if errors:
        raise BpfError("\n".join(errors))
    return done


@dataclass(frozen=True)
class Status:
    name: str
    built: bool
    ops_id: int | None
    pinned: bool
    knobs: tuple[Knob, ...]


def status(names: Iterable[str] = ()) -> list[Status]:
    """What is built, loaded and pinned, with the knobs of what wificc loaded."""
    chosen = checked_names(names)
    require_kernel()
    rows = []
    for name in chosen:
        ops_id = registered(name)
        pinned = (pin_dir(name) / "knobs").exists()
        rows.append(Status(name, object_path(name).is_file(), ops_id, pinned, tuple(knobs(name)) if pinned else ()))
    return rows
