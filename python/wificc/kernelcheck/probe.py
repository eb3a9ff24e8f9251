"""The BPF probe of ``scripts/gso_charge`` (BTF tracepoints on ``net_dev_queue``,
``qdisc_dequeue``, ``consume_skb``, ``net_dev_start_xmit`` and the slab allocators, for the TCP
sockets of one destination port), built by ``measure.sh -b`` and run from Python.

:func:`recording` runs the loader for the duration of a ``with`` block and returns its events.
The loader gets ``PR_SET_PDEATHSIG``: if the front end is killed, the kernel sends it SIGTERM and
it detaches its programs (they are attached through its file descriptors, so they also go when it
dies in any other way). Its event files live in a temporary directory removed afterwards, or,
if the front end was killed, by the next run (:func:`scratch`).
"""

from __future__ import annotations

import csv
import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wificc import emu

SCRIPT_DIR = emu.REPO_ROOT / "scripts" / "gso_charge"
MEASURE = SCRIPT_DIR / "measure.sh"
# The loader's CSV columns (gso_charge.c, analyze.py FIELDS).
FIELDS = (
    "kind ts cpu skb truesize len headlen payload nr_frags gso_size gso_segs end "
    "headroom seq thlen wmem stackid a b name"
).split()
TEXT_FIELDS = {"kind", "skb", "name"}
# The loader's event kinds (gso_charge.c kind_name), one BPF program each.
KINDS = ("QUEUE", "DEQ", "GSOFREE", "XMIT", "KMALLOC", "KCACHE")
READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
PR_SET_PDEATHSIG = 1
# Longest recording the loader is asked for; the block normally ends it first.
MAX_RECORDING_S = 600


@dataclass
class Probe:
    """A built loader: its directory, with the kernel's constants (``constants``)."""

    directory: Path
    constants: dict[str, Any] = field(default_factory=dict)

    @property
    def loader(self) -> Path:
        return self.directory / "gso_charge"


def parse_constants(text: str) -> dict[str, Any]:
    """measure.sh's ``constants`` file: ``name=value`` lines, ``kmalloc`` a list of sizes."""
    out: dict[str, Any] = {}
    for line in text.splitlines():
        key, _, value = line.strip().partition("=")
        if not key or not value:
            continue
        out[key] = sorted(int(v) for v in value.split()) if key == "kmalloc" else int(value)
    return out


def build(directory: Path) -> Probe:
    """Build the probe into ``directory`` (``measure.sh -b``)."""
    done = subprocess.run(["bash", str(MEASURE), "-b", str(directory)], capture_output=True, text=True)
    if done.returncode != 0:
        raise OSError(f"{MEASURE} -b: {done.stderr.strip() or done.stdout.strip()}")
    return Probe(directory, parse_constants((directory / "constants").read_text()))


@contextmanager
def built() -> Iterator[Probe]:
    """A probe built into a temporary directory, removed afterwards."""
    directory = scratch("build")
    try:
        yield build(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


SCRATCH_PREFIX = "wificc-probe-"


def scratch(kind: str, base: Path | None = None) -> Path:
    """A fresh temporary directory ``wificc-probe-<pid>-<kind>-*`` of this process. Those of
    processes that no longer run (a front end killed with SIGKILL cannot remove its own) are
    removed first."""
    base = Path(tempfile.gettempdir()) if base is None else base
    for old in base.glob(f"{SCRATCH_PREFIX}*"):
        owner = old.name.removeprefix(SCRATCH_PREFIX).split("-", 1)[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-{kind}-", dir=base))


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def parse_events(path: Path) -> list[dict[str, Any]]:
    """The loader's CSV as dicts (numbers as int), in time order; malformed lines skipped."""
    events = []
    with open(path, newline="") as f:
        for parts in csv.reader(f):
            if len(parts) != len(FIELDS):
                continue
            try:
                event = {k: (v if k in TEXT_FIELDS else int(v)) for k, v in zip(FIELDS, parts, strict=True)}
            except ValueError:
                continue
            events.append(event)
    events.sort(key=lambda e: e["ts"])
    return events


def netns_inode(name: str) -> int:
    """The inode of network namespace ``name`` (its ``/run/netns`` mount), the kernel's
    ``net->ns.inum``."""
    try:
        return os.stat(Path("/run/netns") / name).st_ino
    except OSError as e:
        raise OSError(f"network namespace {name!r}: {e.strerror}") from e


class Recording:
    """What one run of the loader recorded (``events``, filled when the block ends)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []


@contextmanager
def recording(
    probe: Probe, port: int, netns: str | None = None, kinds: Sequence[str] | None = None
) -> Iterator[Recording]:
    """Record the events of TCP sockets with destination ``port`` while the block runs; with
    ``netns`` (a namespace name, as ``ip netns`` knows it), only those of that namespace: other
    runs on the machine use the same ports in their own namespaces, and the probe sees them all.
    With ``kinds`` (names of :data:`KINDS`), only those events: the loader does not load the
    other programs. The slab programs (``KMALLOC``, ``KCACHE``) take a call stack of every
    allocation on a CPU while a GSO skb waits for its segmentation, which delays the packets of
    the run they observe; a check that needs none of their events leaves them out."""
    if kinds is not None:
        unknown = [k for k in kinds if k not in KINDS]
        if unknown or not kinds:
            raise ValueError(f"kinds {list(kinds)!r}: expected a non-empty list of {', '.join(KINDS)}")
    work = scratch("run")
    prefix = work / "events"
    out = Recording()
    command = [str(probe.loader), "-p", str(port), "-o", str(prefix), "-t", str(MAX_RECORDING_S)]
    if netns is not None:
        command += ["-n", str(netns_inode(netns))]
    if kinds is not None:
        command += ["-k", ",".join(kinds)]
    errors = open(work / "loader.log", "w+")
    proc = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=errors,
        preexec_fn=_die_with_parent,
    )
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not Path(f"{prefix}.ready").exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                errors.seek(0)
                raise OSError(f"BPF probe did not attach: {errors.read().strip() or proc.returncode}")
            time.sleep(0.05)
        yield out
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        errors.close()
        csv_path = Path(f"{prefix}.csv")
        if csv_path.exists():
            out.events = parse_events(csv_path)
        shutil.rmtree(work, ignore_errors=True)
