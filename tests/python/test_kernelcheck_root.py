"""The kernel checks on the running kernel (root): a one-cell smoke of every suite through the
command line, and what each leaves behind after success, failure and SIGKILL of the front end.

Each run is a child process (``wificc validate-grid --suite NAME --smoke``), so its emulator
runs are tagged from the child's pid (:func:`wificc.emu.new_tag`) and the namespaces and devices
of that tag can be told from those of other emulator users. Nothing may remain: namespaces and
devices of the run (``wcc-<tag>``; ``gsoc-*-<pid>`` of measure.sh, whose htb/tbf qdiscs and veth
pair live in them), the BPF probe's loader and programs, and BPF congestion controls the run
loaded. The smokes take about 1.5 minutes together, the leak tests under a minute.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from test_emu import binary  # noqa: F401 (the fixture building the emulator if missing)
from wificc import bpf, emu

EMULATOR = emu.unavailable()
BPF = bpf.unavailable_reason()
pytestmark = [
    pytest.mark.skipif(EMULATOR is not None, reason=f"kernel checks need root: {EMULATOR}"),
    pytest.mark.usefixtures("binary"),
]
needs_bpf = pytest.mark.skipif(BPF is not None, reason=f"BPF congestion controls unavailable: {BPF}")
# Names of the programs of scripts/gso_charge/gso_charge.bpf.c.
PROBE_PROGRAMS = ("on_queue", "on_dequeue", "on_consume", "on_xmit", "on_kmalloc", "on_kcache")
CLI = "import sys; from wificc.cli import app; app(sys.argv[1:])"


def front_end(suite: str, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CLI, "validate-grid", "--suite", suite, "--smoke", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def tag_prefix(pid: int) -> str:
    """The start of every emulator name of runs made by process ``pid``."""
    return emu.NAME_PREFIX + emu._base36(pid)[-4:]


def names() -> list[str]:
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in netns.splitlines() if line.strip()] + [
        line.split(": ")[1].split("@")[0] for line in links.splitlines()
    ]


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def orphans() -> list[str]:
    """What no live process owns: measure.sh's namespaces whose script is gone, and probe
    programs no process holds."""
    out = []
    for n in names():
        if n.startswith("gsoc-") and n.rsplit("-", 1)[-1].isdigit() and not alive(int(n.rsplit("-", 1)[-1])):
            out.append(n)
    shown = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    if shown.returncode == 0:
        for p in json.loads(shown.stdout or "[]"):
            if p.get("name") in PROBE_PROGRAMS and not p.get("pids"):
                out.append(f"bpf prog {p['id']} {p['name']}")
    return out


def left_by(pid: int, seconds: float = 20.0) -> list[str]:
    """Everything of front end ``pid`` still there once its processes had time to clean up."""
    deadline = time.monotonic() + seconds
    while True:
        left = [n for n in names() if n.startswith(tag_prefix(pid))] + orphans()
        left += [f"process {p} ({comm})" for p, comm in descendants_of_dead(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


_seen_children: dict[int, set[tuple[int, str]]] = {}


def children(pid: int) -> list[tuple[int, str]]:
    """Direct children of ``pid`` as (pid, comm); remembered for :func:`descendants_of_dead`."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids = (task / "children").read_text().split()
        except OSError:
            continue
        for k in kids:
            try:
                found.append((int(k), Path(f"/proc/{k}/comm").read_text().strip()))
            except OSError:
                continue
    _seen_children.setdefault(pid, set()).update(found)
    return found


def descendants_of_dead(pid: int) -> list[tuple[int, str]]:
    """Children seen of ``pid`` that still run (the emulator, the probe loader, measure.sh)."""
    return [(p, c) for p, c in _seen_children.get(pid, ()) if alive(p)]


def wait_for_child(child: subprocess.Popen, comm: str, seconds: float = 60.0) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert child.poll() is None, child.communicate()[0]
        for p, c in children(child.pid):
            if c == comm:
                return p
        time.sleep(0.05)
    raise AssertionError(f"no {comm} child appeared")


def table_rows(out: Path, suite: str) -> list[dict]:
    """The rows of a smoke run of ``suite`` into ``out``."""
    return [json.loads(p.read_text()) for p in sorted((out / f"{suite}-smoke" / "cells").glob("*/row.json"))]


@pytest.fixture(scope="module")
def variants_built():
    if BPF is not None:
        pytest.skip(f"BPF congestion controls unavailable: {BPF}")
    bpf.build()


SMOKES = ["wired", "tsq-completion", "gso-charge", "segments", pytest.param("trace", marks=needs_bpf)]
SMOKES.append(pytest.param("fairness", marks=needs_bpf))


@pytest.mark.parametrize("suite", SMOKES)
def test_smoke_of_each_suite_runs_one_cell_and_leaves_nothing(request, suite, tmp_path):
    if suite in ("trace", "fairness"):
        request.getfixturevalue("variants_built")
    child = front_end(suite, tmp_path)
    while child.poll() is None:
        children(child.pid)
        time.sleep(0.2)
    output = child.communicate()[0]
    assert child.returncode == 0, output
    rows = table_rows(tmp_path, suite)
    assert len(rows) == 1, output
    assert (tmp_path / f"{suite}-smoke" / "table.md").read_text().count("\n|") >= 2
    row = rows[0]
    if suite == "gso-charge":
        # Exact, whatever the load: every checked segment's charge is the simulator's.
        assert row["segments_checked"] > 100 and row["segments_exact"] == row["segments_checked"], row
        assert row["wmem_delta_exact"] == row["wmem_delta_checked"] > 0, row
    else:
        assert 0 < row["lateness_within_100us"] <= 1, row
    if suite == "segments":
        assert row["skbs"] > 0 and row["gap_p50_us"] > 0, row
    if suite == "tsq-completion":
        assert row["kernel_below_tcp_p50"] > 0 and row["kernel_segs_per_skb"] >= 1, row
    assert left_by(child.pid) == []


def test_a_failing_run_leaves_nothing(tmp_path):
    # The emulator dies under the tsq-completion smoke (htb on the sender's device, the BPF
    # probe and the sock_diag sampler running): the suite fails, stores no cell, and cleans up.
    child = front_end("tsq-completion", tmp_path)
    try:
        wait_for_child(child, "gso_charge")
        emulator_pid = wait_for_child(child, "wificc-emu")
        os.kill(emulator_pid, signal.SIGKILL)
        output = child.communicate(timeout=60)[0]
        assert child.returncode != 0, output
        assert "error: " in output, output
        assert table_rows(tmp_path, "tsq-completion") == []
        assert left_by(child.pid) == []
    finally:
        child.kill()


@pytest.mark.parametrize(
    ("suite", "running"),
    [("tsq-completion", "gso_charge"), ("gso-charge", "bash"), pytest.param("fairness", "wificc-emu", marks=needs_bpf)],
)
def test_sigkill_of_the_front_end_leaves_nothing(request, suite, running, tmp_path):
    if suite == "fairness":
        request.getfixturevalue("variants_built")
        before = bpf.available()
    child = front_end(suite, tmp_path)
    try:
        wait_for_child(child, running)
        if suite == "gso-charge":
            deadline = time.monotonic() + 30
            while not any(n.startswith("gsoc-") for n in names()) and time.monotonic() < deadline:
                time.sleep(0.05)
        time.sleep(1.0)
        os.kill(child.pid, signal.SIGKILL)
        child.communicate(timeout=30)
        assert left_by(child.pid, 40.0) == []
        # The probe's scratch directories of the killed front end go with the next run's.
        from wificc.kernelcheck import probe

        shutil.rmtree(probe.scratch("test"))
        assert not list(Path(tempfile.gettempdir()).glob(f"{probe.SCRATCH_PREFIX}{child.pid}-*"))
        if suite == "fairness" and "wbbr_pg" not in before:
            deadline = time.monotonic() + 30
            while "wbbr_pg" in bpf.available() and time.monotonic() < deadline:
                time.sleep(0.2)
            assert "wbbr_pg" not in bpf.available()
    finally:
        child.kill()


def send_over_loopback(port: int, size: int = 1 << 20) -> None:
    """One TCP connection to ``port`` on this namespace's loopback carrying ``size`` bytes."""
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", port))

    def drain() -> None:
        conn, _ = server.accept()
        with conn:
            while conn.recv(1 << 16):
                pass

    reader = threading.Thread(target=drain)
    reader.start()
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.sendall(b"x" * size)
    reader.join(10)
    server.close()


def test_the_probe_records_only_the_sockets_of_its_namespace():
    # Other runs on the machine use the same ports in their own namespaces: a recording tied to
    # a namespace sees none of this (root) namespace's traffic; one without sees it.
    from wificc.kernelcheck import probe

    port = 47000 + os.getpid() % 1000
    ns = f"wcc-probe-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        with probe.built() as built:
            with probe.recording(built, port, ns) as other:
                send_over_loopback(port)
            with probe.recording(built, port) as any_ns:
                send_over_loopback(port + 1000)
                send_over_loopback(port)
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=True)
    assert not [e for e in other.events if e["kind"] == "QUEUE"]
    assert [e for e in any_ns.events if e["kind"] == "QUEUE"]
    with pytest.raises(OSError, match=f"network namespace '{ns}'"):
        probe.netns_inode(ns)


def test_the_probe_loads_only_the_programs_of_the_kinds_asked_for():
    # tsq-completion asks for QUEUE alone: the slab programs take a call stack of every
    # allocation while a GSO skb waits, which made the emulator late at 100 Mbit/s.
    from wificc.kernelcheck import probe

    port = 45000 + os.getpid() % 1000
    with probe.built() as built:
        with probe.recording(built, port, kinds=("QUEUE",)) as queued:
            send_over_loopback(port)
        with probe.recording(built, port) as everything:
            send_over_loopback(port)
        bad = subprocess.run(
            [str(built.loader), "-p", str(port), "-o", "/dev/null/x", "-k", "queue,slab"],
            capture_output=True,
            text=True,
        )
    assert {e["kind"] for e in queued.events} == {"QUEUE"}
    assert {"QUEUE", "XMIT"} <= {e["kind"] for e in everything.events}
    assert bad.returncode == 2
    assert "unknown kind slab" in bad.stderr
