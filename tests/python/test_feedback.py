"""Feedback on long work: a command line that starts without the heavy modules, a run's progress
callback, one bar over a reproduction's sweeps with its ETA, and Ctrl-C that stops a run or a
sweep within a second, says what was stored and how to resume, and exits with 130."""

import io
import signal
import subprocess
import sys
import time

import pytest
import wificc
from rich.console import Console
from wificc import api, emu, flent, models, progress, reproduce, scenarios, storage, validation
from wificc.cli import EXIT_INTERRUPTED, kernel, runs, studies

WIFICC = [sys.executable, "-c", "from wificc.cli import app; app()"]
HEAVY = ("pandas", "pyarrow", "matplotlib", "dask", "distributed", "scipy", "numpy", "wificc._core")


def _imported_after(code: str) -> list[str]:
    """Which of HEAVY a fresh interpreter has imported after running ``code``."""
    probe = f"import sys\n{code}\nprint('imported:', *(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return done.stdout.splitlines()[-1].split()[1:]


def test_importing_the_command_line_imports_no_heavy_module():
    assert _imported_after("import wificc.cli") == []


def test_help_and_cc_list_import_only_what_they_need():
    run_app = "from wificc.cli import app\ntry:\n    app({args!r})\nexcept SystemExit:\n    pass"
    assert _imported_after(run_app.format(args=["--help"])) == []
    assert _imported_after(run_app.format(args=["run", "--help"])) == []
    # The registry comes from the core; nothing else is needed to list it.
    assert _imported_after(run_app.format(args=["cc", "list"])) == ["wificc._core"]


def test_the_help_texts_name_what_the_modules_have():
    assert studies.STUDIES == tuple(reproduce.STUDIES)
    assert studies.FLENT_TESTS == flent.TESTS
    assert studies.FLENT_SUFFIX == flent.SUFFIX
    from wificc import report

    assert studies.REPORT_FILE == report.REPORT_FILE
    assert kernel.NAME_PREFIX == emu.NAME_PREFIX
    assert kernel.VALIDATE_CCS == emu.VALIDATE_CCS
    assert kernel.TRAFFIC_RT_PRIORITY == emu.TRAFFIC_RT_PRIORITY
    assert kernel.DEFAULT_ATTEMPTS == validation.DEFAULT_ATTEMPTS
    from wificc import bench

    assert runs.BENCH_LENGTH == bench.BENCH_LENGTH
    assert models.NAMES == tuple(models.MODELS)


def test_a_run_reports_its_simulated_time_every_100ms():
    calls = []
    scenario = scenarios.build("tcp_upload", length="1s", delay="0.2s", cc=["reno"])
    result = api.run(scenario, progress=lambda done, total: calls.append((done, total)))
    # 1.4 s of simulated time: a report at every multiple of 100 ms before the end.
    assert calls == [(k * 100_000_000, 1_400_000_000) for k in range(1, 14)]
    assert result.summary["duration_s"] == 1.4


def test_an_error_in_the_progress_callback_ends_the_run_and_is_raised():
    seen = []

    def fail(done, total):
        seen.append(done)
        if len(seen) == 2:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        api.run(scenarios.build("tcp_upload", length="1s", delay="0s"), progress=fail)
    assert len(seen) == 2


def test_one_bar_over_the_experiments_with_counts_and_eta(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    shown = io.StringIO()
    with progress.SweepBar(runs=5, sweeps=2, console=Console(file=shown, width=150)) as bar:
        bar.begin("constant", 2, 1)
        now[0] = 110.0
        bar.stored("cc=bbr, repetition 2")
        bar.begin("step", 3, 0)
        now[0] = 130.0
        bar.stored("cc=bbr, repetition 1")
    line = shown.getvalue().splitlines()[-1]
    # Two runs in 30 s in this session, two left: 30 s.
    assert line.startswith("experiment 2/2 step: done cc=bbr, repetition 1 "), line
    assert "runs 3/5 ETA 0:00:30" in line, line


def test_the_eta_counts_only_runs_of_this_session(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    shown = io.StringIO()
    with progress.SweepBar(console=Console(file=shown, width=150)) as bar:
        bar.begin("out", 10, 6)
        now[0] = 4.0
        bar.stored("cc=reno")
    line = shown.getvalue().splitlines()[-1]
    # One run in 4 s; three left.
    assert line.startswith("done cc=reno "), line
    assert "runs 7/10 ETA 0:00:12" in line, line


def _wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_ctrl_c_stops_a_single_run_within_a_second():
    child = subprocess.Popen(
        [*WIFICC, "run", "tcp_upload", "--rate", "1gbit", "--rtt", "10ms", "--length", "600s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3)
    assert child.poll() is None, child.communicate()
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=10)
    # Stopped within 100 ms of simulated time; the rest is the interpreter's exit.
    assert time.monotonic() - sent < 2.0
    assert child.returncode == EXIT_INTERRUPTED, err
    assert "interrupted: the run was stopped before its end; nothing was stored" in err
    assert "run it again with: wificc run tcp_upload --rate 1gbit --rtt 10ms --length 600s" in err
    assert "Traceback" not in err and out == ""


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_keeps_the_stored_runs_and_the_printed_command_resumes(tmp_path, workers):
    grid = tmp_path / "grid.toml"
    # Four runs of about a second each (60 s of a 1 Gbit/s path).
    grid.write_text(
        'test = "tcp_upload"\nrepetitions = 2\n[options]\nlength = "60s"\ndelay = "0s"\nrate = "1gbit"\n'
        'rtt = "10ms"\n[grid]\ncc = ["cubic", "reno"]\n'
    )
    out = tmp_path / "out"
    args = ["sweep", str(grid), "--out", str(out), "--workers", str(workers)]
    child = subprocess.Popen([*WIFICC, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for(lambda: storage.finished_ids(out) or child.poll() is not None, 120, "no run was stored")
    assert child.poll() is None, "the sweep ended before it could be interrupted"
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    assert time.monotonic() - sent < 5.0
    assert child.returncode == EXIT_INTERRUPTED, err
    kept = len(storage.finished_ids(out))
    assert 1 <= kept < 4
    assert f"interrupted: {kept} runs are stored in {out / 'runs'}/" in err
    command = next(line for line in err.splitlines() if line.startswith("resume with: "))
    assert command == "resume with: wificc " + " ".join(args)
    assert "Traceback" not in err
    # The printed command, run again, runs only the rest.
    again = subprocess.run([*WIFICC, *args], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"4 runs in {out / storage.RUNS_TABLE}" in again.stdout
    assert len(wificc.sweep(grid, out, workers=1, progress=False)) == 4


def test_ctrl_c_stops_a_reproduction_and_names_what_it_kept_and_the_command(tmp_path):
    out = tmp_path / "bbrp"
    args = ["reproduce", "bbrp", "--quick", "--workers", "1", "--out", str(out)]
    child = subprocess.Popen([*WIFICC, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def stored() -> int:
        return sum(len(storage.finished_ids(d)) for d in out.iterdir() if d.is_dir()) if out.is_dir() else 0

    _wait_for(lambda: stored() > 0 or child.poll() is not None, 120, "no run was stored")
    assert child.poll() is None, "the reproduction ended before it could be interrupted"
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    assert time.monotonic() - sent < 5.0
    assert child.returncode == EXIT_INTERRUPTED, err
    kept = stored()
    assert kept >= 1
    assert f"interrupted: {kept} runs are stored in {out}/<experiment>/runs/" in err
    assert f"resume with: wificc {' '.join(args)}" in err
    assert "Traceback" not in err
