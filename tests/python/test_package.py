"""The package on its own: the wheel installed into a fresh environment and used from a directory
outside the source tree (the README's tour after ``pip install``).

The wheel is ``dist/wificc-*.whl`` when ``make wheel`` (which ``make test`` runs) built it, else
it is built here with ``maturin build --release``. The fresh environment gets its dependencies
(pandas, typer, ...) from the test's own environment through a ``.pth`` line, and wificc only from
the wheel. BPF and the emulator need root: without it those checks are skipped, saying so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from wificc import bpf, emu

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist"

pytestmark = pytest.mark.slow

# One opportunity per millisecond (12 Mbit/s of 1500-byte packets) for 1 s, looped by the link:
# small stand-ins for the Mahimahi LTE traces the BBR-APG study replays.
TRACE_NAMES = ("Verizon-LTE-short", "TMobile-LTE-short")


def _wheel(tmp: Path) -> Path:
    built = sorted(DIST.glob("wificc-*.whl"), key=lambda p: p.stat().st_mtime)
    if built:
        return built[-1]
    maturin = shutil.which("maturin", path=str(Path(sys.executable).parent)) or "maturin"
    subprocess.run([maturin, "build", "--release", "-q", "-o", str(tmp)], cwd=ROOT, check=True, timeout=1800)
    return next(tmp.glob("wificc-*.whl"))


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh virtual environment with the wheel installed; returns its bin directory."""
    tmp = tmp_path_factory.mktemp("package")
    wheel = _wheel(tmp / "wheel")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
    )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies come from this environment (appended to sys.path: the wheel's wificc wins).
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


def _wificc(bin_dir: Path, cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 600):
    environment = {k: v for k, v in os.environ.items() if k not in ("WIFICC_BPF_DIR", "WIFICC_EMU", "WIFICC_TRACES")}
    environment.update({"PATH": f"{bin_dir}:/usr/sbin:/usr/bin:/sbin:/bin", **(env or {})})
    return subprocess.run(
        [str(bin_dir / "wificc"), *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout
    )


def test_the_installed_package_comes_from_the_wheel(installed, tmp_path):
    done = subprocess.run(
        [str(installed / "python"), "-c", "import wificc.cli, wificc._core; print(wificc.cli.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.startswith(str(installed.parent)), done.stdout


def test_the_tour_runs_outside_the_source_tree(installed, tmp_path):
    assert (_wificc(installed, tmp_path, "--help")).returncode == 0
    listing = _wificc(installed, tmp_path, "cc", "list")
    assert listing.returncode == 0 and "bbr_apg" in listing.stdout
    run = _wificc(installed, tmp_path, "run", "tcp_upload", "--length", "1s", "--delay", "0.2s", "--json")
    assert run.returncode == 0, run.stderr
    assert '"test": "tcp_upload"' in run.stdout


def test_reproduce_apg_reads_the_traces_from_the_given_directory(installed, tmp_path):
    traces = tmp_path / "traces"
    traces.mkdir()
    for name in TRACE_NAMES:
        for direction in ("up", "down"):
            (traces / f"{name}.{direction}").write_text("".join(f"{ms}\n" for ms in range(1, 1001)))
    out = tmp_path / "apg"
    done = _wificc(installed, tmp_path, "reproduce", "apg", "--quick", "--traces", str(traces), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "skipped" not in done.stdout, done.stdout
    for experiment in ("verizon_lte", "tmobile_lte"):
        assert (out / experiment / "runs.parquet").is_file()
    assert (out / "report.html").is_file()


def test_without_traces_the_trace_experiments_say_where_to_put_them(installed, tmp_path):
    out = tmp_path / "apg"
    data = tmp_path / "data"
    done = _wificc(
        installed, tmp_path, "reproduce", "apg", "--quick", "-e", "verizon_lte", "--out", str(out),
        env={"XDG_DATA_HOME": str(data)},
    )  # fmt: skip
    assert done.returncode == 2
    assert f"not found (looked in {data / 'wificc' / 'traces'}; put Mahimahi's traces" in done.stderr


def test_the_emulator_is_found_beside_the_environment_or_its_build_command_named(installed, tmp_path):
    code = "from wificc import emu; print(emu.emulator_binary())"
    env = {k: v for k, v in os.environ.items() if k != "WIFICC_EMU"}
    env["PATH"] = "/usr/bin:/bin"
    missing = subprocess.run(
        [str(installed / "python"), "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert missing.returncode == 1
    command = f"cargo install --locked --path crates/wificc-emu --root {installed.parent}"
    assert f"wificc-emu: not installed; from a wificc source tree, build it with '{command}'" in missing.stderr
    source = ROOT / "target" / "release" / "wificc-emu"
    if not source.is_file():
        pytest.skip(f"{source} is not built (cargo build --release -p wificc-emu)")
    shutil.copy2(source, installed / "wificc-emu")
    try:
        found = subprocess.run(
            [str(installed / "python"), "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert found.stdout.strip() == str(installed / "wificc-emu"), found.stderr
    finally:
        (installed / "wificc-emu").unlink()


def test_bpf_sources_ship_in_the_package_and_build_in_the_cache(installed, tmp_path):
    packaged = sorted(p.name for p in (installed.parent / "lib").glob("python3*/site-packages/wificc/bpf_sources/*"))
    assert packaged == sorted(p.name for p in (ROOT / "bpf").iterdir() if p.is_file())
    reason = bpf.unavailable_reason() or emu.unavailable()
    if reason is not None:
        pytest.skip(f"building and loading BPF here: {reason}")
    cache = tmp_path / "cache"
    built = _wificc(installed, tmp_path, "bpf", "build", env={"XDG_CACHE_HOME": str(cache)})
    assert built.returncode == 0, built.stderr
    assert f"built {cache / 'wificc' / 'bpf' / 'build' / 'wbbr.bpf.o'}" in built.stdout
    loaded = _wificc(installed, tmp_path, "bpf", "load", "wbbrn", env={"XDG_CACHE_HOME": str(cache)})
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout in ("wbbrn: loaded\n", "wbbrn: already loaded\n")
    if loaded.stdout == "wbbrn: loaded\n":
        # Loaded by this test: unloaded by it (another run's variant is left alone).
        gone = _wificc(installed, tmp_path, "bpf", "unload", "wbbrn", env={"XDG_CACHE_HOME": str(cache)})
        assert gone.stdout == "wbbrn: unloaded\n", gone.stderr
