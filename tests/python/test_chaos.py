"""Results that survive anything: sweeps killed at random points, concurrent writers, damaged
files, full disks, oversized runs, trace files that are no files (issue 17's reproducers).

Every test here checks the results directory afterwards: each run stored exactly once, every
stored run intact against its manifest, no staging entry and no worker process left behind.
"""

import json
import math
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import wificc
from wificc import memory, storage
from wificc.result import load
from wificc.sweep import expand

sweep_module = sys.modules["wificc.sweep"]

# Six runs on two workers.
GRID = {
    "test": "tcp_upload",
    "repetitions": 2,
    # Runs of about 0.3 s each (20 s of 1 Gbit/s): the sweep must outlive its first observations.
    "options": {"length": "20s", "delay": "0s", "rate": "1gbit", "rtt": "10ms"},
    "grid": {"cc": ["cubic", "bbr", "reno"]},
}
# A grid of two 1 s runs, for the tests that need a sweep but no pool.
SMALL = {"test": "tcp_upload", "options": {"length": "1s", "delay": "0s"}, "grid": {"cc": ["cubic", "reno"]}}
WIFICC = [sys.executable, "-c", "from wificc.cli import app; app()"]


def _sweep_process(grid, out: Path, workers: int = 2) -> subprocess.Popen:
    script = f"import wificc; wificc.sweep({grid!r}, {str(out)!r}, workers={workers}, progress=False)"
    return subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)


def _children(pid: int) -> set[int]:
    """PIDs of the processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _assert_intact(out: Path, killed: bool = False) -> set[str]:
    """Every stored run verifies against its manifest; nothing hidden is left in runs/ unless
    its writer was ``killed`` (the next writer removes it); return the stored runs."""
    if not storage.runs_dir(out).exists():
        return set()
    names = {p.name for p in storage.runs_dir(out).iterdir()}
    hidden = {n for n in names if n.startswith(".")}
    assert killed or not hidden, hidden
    names -= hidden
    for name in names:
        assert storage.verify(storage.runs_dir(out) / name) is None, name
    return names


def test_sweeps_killed_at_three_random_points_leave_no_worker_and_no_partial_run(tmp_path):
    runs = expand(GRID)
    rng = random.Random(17)
    out = tmp_path / "out"
    kills = 0
    for point in range(3):
        # Kill once `after` runs are stored (0: while the first runs), plus a random delay.
        after = rng.randrange(0, len(runs) - 2) if point else 0
        pause = rng.uniform(0.0, 0.3)
        before = storage.finished_ids(out) if out.exists() else set()
        process = _sweep_process(GRID, out)
        deadline = time.monotonic() + 120
        workers: set[int] = set()
        while len(storage.finished_ids(out) - before if out.exists() else ()) < after or len(workers) < 2:
            workers |= _children(process.pid)
            if process.poll() is not None:
                break
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(pause)
        workers |= _children(process.pid)
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)  # the front end only: its workers must follow
            kills += 1
        process.wait()
        process.stderr.close()
        # The kernel kills the workers with their parent (PR_SET_PDEATHSIG).
        assert workers, "the sweep had no pool workers"
        deadline = time.monotonic() + 1
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not [w for w in workers if _alive(w)], "pool workers outlived the killed sweep"
        _assert_intact(out, killed=True)
    assert kills == 3
    stored = storage.finished_ids(out)
    calls = []
    simulate = sweep_module.simulate
    sweep_module.simulate = lambda text: calls.append(text) or simulate(text)
    try:
        table = wificc.sweep(GRID, out, workers=1, progress=False)
    finally:
        sweep_module.simulate = simulate
    # Every run once: those the kills left undone ran now, the others were not run again.
    assert len(calls) == len(runs) - len(stored)
    assert table["run_id"].tolist() == [r.id for r in runs]
    assert _assert_intact(out) == {r.id for r in runs}
    assert pd.read_parquet(out / storage.RUNS_TABLE)["run_id"].is_unique


def test_ctrl_c_ends_the_sweep_and_its_workers_within_a_second(tmp_path):
    out = tmp_path / "out"
    script = f"import wificc; wificc.sweep({GRID!r}, {str(out)!r}, workers=2, progress=False)"
    # Its own process group, as a shell job: Ctrl-C sends SIGINT to the whole group.
    process = subprocess.Popen(
        [sys.executable, "-c", script], stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    workers: set[int] = set()
    deadline = time.monotonic() + 60
    while len(workers) < 2:
        workers |= _children(process.pid)
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(0.2)
    os.killpg(process.pid, signal.SIGINT)
    interrupted = time.monotonic()
    process.wait(10)
    deadline = interrupted + 1
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [w for w in workers if _alive(w)], "pool workers outlived Ctrl-C by more than a second"
    assert time.monotonic() - interrupted < 1.5
    assert "KeyboardInterrupt" in process.stderr.read()
    process.stderr.close()
    _assert_intact(out, killed=True)


# A sweep of SMALL whose runs wait while the file HOLD exists: a writer that holds its
# directory for as long as a test needs.
HELD_SWEEP = """
import os, sys, time, wificc, wificc.sweep
module = sys.modules["wificc.sweep"]
simulate = module.simulate
def held(text):
    while os.path.exists({hold!r}):
        time.sleep(0.01)
    return simulate(text)
module.simulate = held
wificc.sweep({grid!r}, {out!r}, workers=1, progress=False)
"""


def test_a_second_writer_is_refused_and_the_first_is_unharmed(tmp_path):
    out, hold = tmp_path / "out", tmp_path / "hold"
    hold.touch()
    script = HELD_SWEEP.format(hold=str(hold), grid=SMALL, out=str(out))
    first = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (storage.lock_path(out).exists() and storage.lock_path(out).read_text()):
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        message = (
            f"{out}: in use by another writer (pid {first.pid} on {os.uname().nodename}); wait for it to "
            "finish or write into another directory"
        )
        with pytest.raises(storage.DirectoryLocked) as refused:
            wificc.sweep(SMALL, out, workers=1, progress=False)
        assert str(refused.value) == message
        # `wificc run --out` into it is refused the same way, with one line and exit code 2.
        cli = subprocess.run(
            [*WIFICC, "run", "tcp_upload", "--length", "1s", "--out", str(out)], capture_output=True, text=True
        )
        assert (cli.returncode, cli.stderr) == (2, f"error: {message}\n")
        assert first.poll() is None
    finally:
        hold.unlink()
    assert first.wait(120) == 0, first.stderr.read()
    first.stderr.close()
    assert _assert_intact(out) == {r.id for r in expand(SMALL)}


def test_concurrent_run_outs_into_one_directory_one_writes_the_others_are_refused(tmp_path):
    out = tmp_path / "run"
    command = [*WIFICC, "run", "tcp_upload", "--length", "1s", "--delay", "0s", "--out", str(out)]
    processes = [
        subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(4)
    ]
    codes = [p.wait(120) for p in processes]
    errors = [p.stderr.read() for p in processes]
    for p in processes:
        p.stderr.close()
    # Runs that find the directory free (before or after another's) may write it in turn; at
    # least one writes, and every refused one says why: the holder's pid, or "another process"
    # when it is refused between the holder's lock and the holder writing its pid there.
    assert 0 in codes
    for code, error in zip(codes, errors, strict=True):
        named = "in use by another writer (pid " in error or "in use by another writer (another process)" in error
        assert code == 0 or (code == 2 and named), error
    assert load(out).summary["duration_s"] == 1.0


@pytest.mark.parametrize(
    ("damage", "what"),
    [
        (
            lambda d: os.truncate(d / "flow_series.parquet", (d / "flow_series.parquet").stat().st_size // 2),
            "flow_series.parquet has",
        ),
        (lambda d: os.truncate(d / "scenario.json", 10), "scenario.json has 10 bytes"),
        (lambda d: os.truncate(d / storage.ROW_FILE, 20), "row.json has 20 bytes"),
        (lambda d: os.truncate(d / storage.MANIFEST_FILE, 30), "manifest.json unreadable"),
        (lambda d: (d / storage.MANIFEST_FILE).unlink(), "no manifest.json"),
    ],
)
def test_a_damaged_run_is_reported_by_path_and_run_again(tmp_path, damage, what):
    import io

    from rich.console import Console

    out = tmp_path / "out"
    first = wificc.sweep(SMALL, out, workers=1, progress=False)
    damaged = first["run_id"][1]
    damage(storage.runs_dir(out) / damaged)
    calls = []
    simulate = sweep_module.simulate
    sweep_module.simulate = lambda text: calls.append(text) or simulate(text)
    shown = io.StringIO()
    try:
        again = wificc.sweep(SMALL, out, workers=1, console=Console(file=shown, width=400))
    finally:
        sweep_module.simulate = simulate
    line = shown.getvalue().splitlines()[0]
    assert line.startswith(f"{storage.runs_dir(out) / damaged}: damaged ({what}")
    assert line.endswith("); running it again")
    assert len(calls) == 1
    assert again["run_id"].tolist() == first["run_id"].tolist()
    assert again["total_goodput_bps"].tolist() == first["total_goodput_bps"].tolist()
    assert _assert_intact(out) == set(first["run_id"])


needs_mount = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")


@needs_mount
# Room for nothing, for part of the first run, for about one run (a run is ~15 files, ~150 KB
# on tmpfs).
@pytest.mark.parametrize("size_kb", [16, 96, 192])
def test_a_full_disk_fails_in_one_line_and_resumes_cleanly(tmp_path, size_kb):
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(disk)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        out = disk / "out"
        grid_file = disk.parent / "grid.json"
        grid_file.write_text(json.dumps(SMALL))
        command = [*WIFICC, "sweep", str(grid_file), "--out", str(out), "--workers", "1"]
        full = subprocess.run(command, capture_output=True, text=True)
        # One line: the error, after the progress bar's.
        assert full.returncode == 2
        errors = [line for line in full.stderr.splitlines() if "error" in line.lower()]
        assert len(errors) == 1 and full.stderr.endswith(errors[0] + "\n"), full.stderr
        assert errors[0].startswith("error: ") and "No space left on device" in errors[0]
        # No partial run: what is stored is intact (maybe nothing), no staging entry is left.
        if storage.runs_dir(out).exists():
            _assert_intact(out)
        assert not [p for p in disk.rglob(".*") if p.name != storage.lock_path(out).name]
        # More room: the sweep resumes and completes.
        subprocess.run(["mount", "-o", "remount,size=64m", str(disk)], check=True)
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert _assert_intact(out) == {r.id for r in expand(SMALL)}
        # Full again: the complete sweep resumes without writing anything.
        filler = disk / "filler"
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True)
        again = subprocess.run(command, capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        assert "2 runs in" in again.stdout
    finally:
        subprocess.run(["umount", "-l", str(disk)])


def test_a_run_over_the_memory_limit_is_refused_before_it_starts():
    # Issue 17: 1 s at a 1 us step with 4 flows aborted the process; now a named error, at once.
    scenario = {
        "duration": "1s",
        "step": "1us",
        "path": {"kind": "wired", "rate": "50mbit", "rtt": "20ms"},
        "flows": [{"cc": "bbr"}] * 4,
    }
    normalised = wificc.validate(scenario)
    # 10^6 samples x (4 flows x 5000 + 2 queues x 500) + 200 MB.
    assert memory.estimate(normalised) == 1_000_000 * (4 * 5000 + 2 * 500) + 200_000_000
    started = time.monotonic()
    with pytest.raises(memory.MemoryLimitError) as refused:
        wificc.run(scenario, memory_limit="8000mb")
    assert time.monotonic() - started < 5
    assert str(refused.value) == (
        "(scenario): a run of 1 s sampled every 1e-06 s with 4 flows is estimated to need 21200 MB, more than "
        "the memory limit of 8000 MB; expected a longer step or a shorter run, or a higher limit (memory_limit, "
        "WIFICC_MEMORY_LIMIT or --memory-limit)"
    )
    # The limit is settable: the same estimate under a higher one passes the check.
    assert memory.check(normalised, 22_000_000_000) == memory.estimate(normalised)


def test_peak_memory_is_in_the_summary_and_the_runs_table(tmp_path):
    result = wificc.run({"duration": "0.5s", "path": {"kind": "wired", "rate": "10mbit", "rtt": "10ms"}, "flows": [{}]})
    # The process's resident peak during the run: at least the interpreter with its libraries.
    assert 50_000_000 < result.summary["peak_rss_bytes"] < 4_000_000_000
    table = wificc.sweep(SMALL, tmp_path / "out", workers=1, progress=False)
    assert (table["peak_rss_bytes"] > 50_000_000).all()


@pytest.mark.parametrize(
    ("trace", "error"),
    [
        ("/dev/zero", "not a regular file (expected a Mahimahi trace file)"),
        ("fifo", "not a regular file (expected a Mahimahi trace file)"),
        ("/etc/passwd", "a line of"),
    ],
)
def test_trace_files_are_read_only_from_regular_files_and_never_echoed(tmp_path, trace, error):
    if trace == "fifo":
        trace = str(tmp_path / "fifo")
        os.mkfifo(trace)
    link = {"trace": trace}
    scenario = {
        "duration": "1s",
        "path": {"kind": "trace", "rtt": "10ms", "uplink": link, "downlink": link},
        "flows": [{}],
    }
    started = time.monotonic()
    with pytest.raises(ValueError) as refused:
        wificc.run(scenario)
    assert time.monotonic() - started < 5
    assert error in str(refused.value)
    assert "root:" not in str(refused.value)


FAKE_EMULATOR = """#!{python}
import json, sys
scenario = json.load(open(sys.argv[2]))
print(json.dumps({{"origin_ns": 0, "hosts": [], "flows": len(scenario["flows"])}}), flush=True)
sys.stdin.read()
"""


def test_a_killed_emulator_front_end_leaves_no_scenario_file(tmp_path):
    # Issue 17: each SIGKILLed `emu run` front end left /tmp/wificc-emu-XXXX.json. The scenario
    # now reaches the emulator through an anonymous memory file. A stand-in emulator reads it
    # and reports; the front end is killed while the run is up.
    fake = tmp_path / "fake-emu"
    fake.write_text(FAKE_EMULATOR.format(python=sys.executable))
    fake.chmod(0o755)
    # Its own TMPDIR, where a temporary scenario file would go (other processes use /tmp).
    private = tmp_path / "tmp"
    private.mkdir()
    script = (
        "import json, time; from wificc.emu import Emulator\n"
        "with Emulator({'flows': [{'cc': 'cubic'}, {'cc': 'bbr'}]}) as e:\n"
        "    print(json.dumps(e.ready), flush=True); time.sleep(60)\n"
    )
    front = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "WIFICC_EMU": str(fake), "TMPDIR": str(private)},
    )
    assert json.loads(front.stdout.readline()) == {"origin_ns": 0, "hosts": [], "flows": 2}
    front.send_signal(signal.SIGKILL)
    front.wait()
    front.stdout.close()
    assert [p.name for p in private.iterdir() if p.name.startswith("wificc-emu-")] == []


def test_mutated_documents_through_the_api_get_named_errors_only():
    # `make fuzz` runs 3,000 with a fresh seed; here 300 with a fixed one, in a capped process.
    fuzz = subprocess.run(
        [sys.executable, "-m", "wificc.fuzz", "--cases", "300", "--seed", "20261124", "--memory-mb", "6000"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert fuzz.returncode == 0, fuzz.stdout + fuzz.stderr
    assert fuzz.stdout.startswith("300 documents: ") and fuzz.stdout.endswith(" 0 failures\n")


def _deep(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


WIRED = {"kind": "wired", "rate": "10mbit", "rtt": "10ms"}


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        # Issue 17, 6: a RecursionError, "invalid JSON ... column 87", an IsADirectoryError.
        (
            {"path": WIRED, "flows": [{"cc_params": _deep(2000)}]},
            "flows[0].cc_params" + ".a" * 29 + ": nested more than 32 tables or arrays deep, expected a scenario",
        ),
        ({"path": {**WIRED, "loss": math.nan}}, "path.loss: got NaN, expected a finite number"),
        (
            {"path": WIRED, "flows": [{"cc_params": {"beta": -math.inf}}]},
            "flows[0].cc_params.beta: got -inf, expected a finite number",
        ),
        ("", "scenario: got an empty string, expected a dict, a file path or TOML text"),
        (".", "scenario: '.' is a directory, expected a scenario file (TOML or JSON)"),
        # Issue 17, 5: read by position, ignored keys, 8x off rates.
        (
            {"path": WIRED, "flows": [["myname", "bbr", {}, "down"]]},
            "flows[0]: got an array, expected a table of named fields",
        ),
        ({"path": {**WIRED, "rate": "50MB/s"}}, 'path.rate: got "50MB/s", expected a rate unit of bit, kbit'),
        (
            {"path": {"kind": "wifi", "rtt": "10ms", "radio": {"mac": {"kind": "edca", "t_oh": "5ms", "bogus": 1}}}},
            "path.radio.mac.bogus: unknown field, expected one of: kind",
        ),
    ],
)
def test_malformed_documents_get_named_errors(scenario, message):
    with pytest.raises(ValueError) as refused:
        wificc.run(scenario)
    assert str(refused.value).startswith(message)


def test_rates_follow_tc():
    # "mbps" is megabytes per second in tc: 50mbps = 400 Mbit/s, not 50.
    rates = {"50mbps": 400_000_000, "50MBps": 400_000_000, "50mbit": 50_000_000, "50Mbit/s": 50_000_000}
    for text, bps in rates.items():
        assert wificc.validate({"path": {**WIRED, "rate": text}})["path"]["rate"] == f"{bps}bit"
