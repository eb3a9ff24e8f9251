"""The emulator process: where its binary is, starting and stopping a run of it, its network
namespaces and their clean-up, and the real-time scheduling of the traffic threads."""

from __future__ import annotations

import ctypes
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wificc.emu.kernel import simulator_cc

# SCHED_FIFO priority of the traffic generator's threads: below the emulator's
# (crates/wificc-emu DEFAULT_RT_PRIORITY, 60), above normal tasks.
TRAFFIC_RT_PRIORITY = 50
# Environment variable naming the emulator binary (else target/{release,debug} or PATH).
EMU_BINARY_ENV = "WIFICC_EMU"
REPO_ROOT = Path(__file__).resolve().parents[3]
# Every name the emulator creates starts with this, then the run's tag (crates/wificc-emu/src/netns.rs).
NAME_PREFIX = "wcc-"
TAG_PATTERN = re.compile(r"[a-z0-9]{1,6}")
# Where `ip netns` keeps its namespaces (iproute2 NETNS_RUN_DIR).
NETNS_DIR = Path("/var/run/netns")
# setns(2) namespace type (linux/sched.h).
CLONE_NEWNET = 0x40000000
# Time to wait for the emulator's ready line and for it to stop.
READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0

_libc = ctypes.CDLL(None, use_errno=True)


def unavailable() -> str | None:
    """Why the emulator cannot run on this machine, or None when it can."""
    if os.geteuid() != 0:
        return "the emulator needs root (network namespaces and TUN devices)"
    if not os.path.exists("/dev/net/tun"):
        return "no TUN device (/dev/net/tun)"
    if shutil.which("ip") is None:
        return "iproute2's ip is not installed (scripts/setup-debian.sh installs it)"
    return None


def build_command() -> str:
    """The one command that builds and installs the emulator where :func:`emulator_binary`
    finds it: into this Python environment's ``bin`` (run from a wificc source tree)."""
    return f"cargo install --locked --path crates/wificc-emu --root {sys.prefix}"


def emulator_binary() -> Path:
    """The wificc-emu binary: ``$WIFICC_EMU``; else, in a source tree, its release or debug
    build; else the one beside this Python (``cargo install --root`` of :func:`build_command`);
    else ``wificc-emu`` on PATH."""
    env = os.environ.get(EMU_BINARY_ENV)
    if env:
        if not os.access(env, os.X_OK):
            raise ValueError(f"{EMU_BINARY_ENV}={env}: not an executable file")
        return Path(env)
    candidates = []
    if (REPO_ROOT / "crates" / "wificc-emu").is_dir():
        candidates += [REPO_ROOT / "target" / profile / "wificc-emu" for profile in ("release", "debug")]
    candidates.append(Path(sys.prefix) / "bin" / "wificc-emu")
    for candidate in candidates:
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("wificc-emu")
    if found:
        return Path(found)
    raise ValueError(
        f"wificc-emu: not installed; from a wificc source tree, build it with '{build_command()}' "
        f"(or set {EMU_BINARY_ENV} to its path)"
    )


def cleanup(prefix: str = NAME_PREFIX) -> list[str]:
    """Remove the namespaces and devices whose names start with ``prefix``; returns their names."""
    done = subprocess.run([str(emulator_binary()), "cleanup", "--prefix", prefix], capture_output=True, text=True)
    if done.returncode != 0:
        raise OSError(done.stderr.strip() or f"wificc-emu cleanup exited with {done.returncode}")
    return [line.removeprefix("removed ") for line in done.stdout.splitlines() if line]


_tags = iter(range(36**2))


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def new_tag() -> str:
    """A run tag unique among this machine's concurrent runs: pid and a counter, base 36."""
    return (_base36(os.getpid())[-4:] + _base36(next(_tags)).rjust(2, "0"))[-6:]


class Emulator:
    """A running ``wificc-emu run``: started on entry, stopped and cleaned up on exit.

    ``ready`` is the emulator's ready line (hosts, addresses, clock origin, notes); :meth:`stop`
    ends the run and returns its report (lateness, packet counters, queue summaries and series).
    Whatever happens, leaving the context removes every namespace of the run. ``drop_log``: a
    file the emulator writes, when it stops, with every TCP segment its queues dropped and every
    SYN it read (CSV ``kind,t_ns,src,src_port,dst,dst_port,seq,payload``, kind ``drop`` or
    ``syn``, model time; a SYN's seq is its connection's initial sequence number).
    """

    def __init__(
        self,
        scenario: dict[str, Any],
        *,
        tag: str | None = None,
        spin_us: int | None = None,
        rt_priority: int | None = None,
        drop_log: str | os.PathLike[str] | None = None,
    ):
        if tag is not None and not TAG_PATTERN.fullmatch(tag):
            raise ValueError(f"--tag: got {tag!r}, expected 1 to 6 lowercase letters or digits")
        self.scenario = scenario
        self.tag = tag or new_tag()
        self.spin_us = spin_us
        self.rt_priority = rt_priority
        self.drop_log = drop_log
        self.ready: dict[str, Any] = {}
        self.report: dict[str, Any] | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._errors: Any = None

    def __enter__(self) -> Emulator:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def origin_ns(self) -> int:
        """``CLOCK_MONOTONIC`` nanoseconds of scenario time 0."""
        return int(self.ready["origin_ns"])

    def host(self, role: str, client: int | None = None) -> dict[str, Any]:
        """The ready line's entry for the server or client ``client``."""
        for h in self.ready["hosts"]:
            if h["role"] == role and h["client"] == client:
                return h
        raise ValueError(f"{role} {client}: not a host of this run")

    def _start(self) -> None:
        # The emulator builds the path and the stack; it checks the flows as the simulator does.
        flows = [{**f, "cc": simulator_cc(f["cc"])} for f in self.scenario.get("flows", [])]
        # The scenario goes to the emulator in an anonymous memory file it inherits: no file on
        # disk is left behind however this process ends (a SIGKILL included).
        fd = os.memfd_create("wificc-emu-scenario", 0)
        with os.fdopen(fd, "w", closefd=False) as f:
            json.dump({**self.scenario, "flows": flows}, f)
        name = f"/proc/self/fd/{fd}"
        command = [str(emulator_binary()), "run", name, "--tag", self.tag, "--stdin-control"]
        if self.spin_us is not None:
            command += ["--spin-us", str(self.spin_us)]
        if self.rt_priority is not None:
            command += ["--rt-priority", str(self.rt_priority)]
        if self.drop_log is not None:
            command += ["--drop-log", str(Path(self.drop_log).resolve())]
        self._errors = tempfile.TemporaryFile(mode="w+")
        try:
            self._proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._errors,
                text=True,
                pass_fds=(fd,),
            )
        finally:
            os.close(fd)
        threading.Thread(target=self._read_lines, daemon=True).start()
        line = self._next_line(READY_TIMEOUT_S)
        if line is None:
            raise OSError(f"wificc-emu did not start: {self._stderr()}")
        self.ready = json.loads(line)

    def _read_lines(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _next_line(self, timeout: float) -> str | None:
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def _stderr(self) -> str:
        """The emulator's error output, once it has exited (it is killed if it has not)."""
        assert self._proc is not None and self._errors is not None
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        self._errors.seek(0)
        return self._errors.read().strip() or f"exit code {self._proc.returncode}"

    def check(self) -> None:
        """Raise if the emulator has stopped on its own (signalled, or failed) during the run."""
        assert self._proc is not None
        if self._proc.poll() is not None or not self._lines.empty():
            line = self._next_line(STOP_TIMEOUT_S)
            why = json.loads(line)["stopped_by"] if line else self._stderr()
            raise OSError(f"wificc-emu stopped during the run ({why}); the run is incomplete")

    def stop(self) -> dict[str, Any]:
        """End the run (closing the emulator's standard input) and return its report."""
        assert self._proc is not None and self._proc.stdin is not None
        if self.report is not None:
            return self.report
        self._proc.stdin.close()
        line = self._next_line(STOP_TIMEOUT_S)
        if line is None:
            raise OSError(f"wificc-emu did not report: {self._stderr()}")
        self.report = json.loads(line)
        self._proc.wait(STOP_TIMEOUT_S)
        return self.report

    def close(self) -> None:
        """Stop the emulator however it is, and remove anything of this run left behind.

        The emulator removes its own namespaces whenever it can; what a killed emulator left is
        removed here by the run's name prefix, and only once the emulator had reported ready:
        its namespaces then existed under this tag, so the prefix cannot name another live run.
        """
        proc = self._proc
        if proc is not None and proc.poll() is None:
            if proc.stdin is not None and not proc.stdin.closed:
                proc.stdin.close()
            try:
                proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self._errors is not None:
            self._errors.close()
            self._errors = None
        if proc is not None and self.ready and proc.returncode != 0:
            cleanup(f"{NAME_PREFIX}{self.tag}-")


@contextmanager
def entered(netns: str) -> Iterator[None]:
    """Run the body with this thread inside network namespace ``netns`` (sockets created there
    stay there)."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(NETNS_DIR / netns, os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {netns}")
        try:
            yield
        finally:
            if _libc.setns(own, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back to the original namespace")
    finally:
        os.close(target)
        os.close(own)


@contextmanager
def real_time(priority: int) -> Iterator[None]:
    """Run the body, and the threads it starts, under ``SCHED_FIFO`` at ``priority`` (0: leave
    the scheduler as it is); the calling thread's policy is restored afterwards."""
    if priority == 0:
        yield
        return
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    try:
        yield
    finally:
        os.sched_setscheduler(0, policy, param)
