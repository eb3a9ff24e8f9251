"""Sweeps: grid expansion, run ids, the results directory, resuming, interruption, Dask."""

import gzip
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import distributed
import pandas as pd
import pytest
import typer
import wificc
from rich.console import Console
from typer.testing import CliRunner
from wificc import flent, storage
from wificc.result import PEAK_FIELD, SCENARIO_FILE, TABLE_FILES
from wificc.sweep import SweepError, expand, run_id

sweep_module = sys.modules["wificc.sweep"]

# The columns of runs.parquet that measure the host, not the model: they differ between two
# runs of one scenario.
HOST_COLUMNS = ["wall_s", PEAK_FIELD]

# Short runs: 2 s of TCP between 0.5 s of ping-only time.
SHORT = {"length": "2s", "delay": "0.5s"}
SMALL_GRID = {
    "test": "tcp_upload",
    "repetitions": 2,
    "options": SHORT,
    "grid": {"cc": ["cubic", "bbr"], "path.rate": ["10mbit", "50mbit"]},
}
BASE = {
    "duration": "3s",
    "path": {"kind": "wired", "rate": "20mbit", "rtt": "20ms"},
    "flows": [{"cc": "cubic"}, {"cc": "cubic", "start": "1s"}],
}


def test_product_of_lists_times_repetitions_in_order():
    runs = expand(SMALL_GRID)
    assert [(r.params, r.repetition, r.seed) for r in runs] == [
        ({"cc": cc, "path.rate": rate}, rep, 1 + rep)
        for cc in ("cubic", "bbr")
        for rate in ("10mbit", "50mbit")
        for rep in (0, 1)
    ]
    first = runs[0].scenario
    assert [f["cc"] for f in first["flows"]] == ["cubic"]
    assert first["path"]["rate"] == "10000000bit"
    # Catalog options: 2 s of TCP from 0.5 s, 3 s in all.
    assert first["duration"] == "3000000000ns"
    assert first["flows"][0]["start"] == "500000000ns" and first["flows"][0]["stop"] == "2500000000ns"
    assert runs[5].scenario["flows"][0]["cc"] == "bbr" and runs[5].scenario["seed"] == 2
    # The repetitions argument overrides the grid's.
    assert [r.seed for r in expand(SMALL_GRID, repetitions=3)][:3] == [1, 2, 3]


def test_zip_groups_vary_together_and_repetitions_count_from_the_base_seed():
    grid = {
        "scenario": {**BASE, "seed": 7},
        "repetitions": 3,
        "grid": {"flows[1].cc": ["reno", "bbr"]},
        "zip": [{"path.rate": ["10mbit", "1gbit"], "path.rtt": ["50ms", "10ms"]}],
    }
    runs = expand(grid)
    assert len(runs) == 2 * 2 * 3
    assert [r.params for r in runs[::3]] == [
        {"flows[1].cc": "reno", "path.rate": "10mbit", "path.rtt": "50ms"},
        {"flows[1].cc": "reno", "path.rate": "1gbit", "path.rtt": "10ms"},
        {"flows[1].cc": "bbr", "path.rate": "10mbit", "path.rtt": "50ms"},
        {"flows[1].cc": "bbr", "path.rate": "1gbit", "path.rtt": "10ms"},
    ]
    assert [r.seed for r in runs[:3]] == [7, 8, 9]
    last = runs[-1].scenario
    assert (last["path"]["rate"], last["path"]["rtt"]) == ("1000000000bit", "10000000ns")
    assert [f["cc"] for f in last["flows"]] == ["cubic", "bbr"]


def test_dotted_paths_from_toml_create_missing_tables(tmp_path):
    (tmp_path / "base.json").write_text(json.dumps(BASE))
    text = textwrap.dedent(
        """
        scenario = "base.json"
        [grid]
        stack.tsq = ["1ms", "4ms"]
        "flows[0].cc_params.beta" = [700]
        """
    )
    (tmp_path / "grid.toml").write_text(text)
    runs = expand(tmp_path / "grid.toml")
    assert [r.params for r in runs] == [
        {"stack.tsq": "1ms", "flows[0].cc_params.beta": 700},
        {"stack.tsq": "4ms", "flows[0].cc_params.beta": 700},
    ]
    assert [r.scenario["stack"]["tsq"] for r in runs] == ["1ms", "4ms"]
    assert runs[0].scenario["flows"][0]["cc_params"] == {"beta": 700}
    assert runs[0].scenario["flows"][1]["cc_params"] == {}


def test_catalog_test_over_a_base_scenario_with_options_in_the_grid():
    grid = {
        "test": "tcp_nup",
        "scenario": {"path": {"kind": "wired", "rate": "30mbit", "rtt": "40ms"}},
        "options": {**SHORT, "flows": 2},
        "grid": {"tsq": ["2ms"], "length": ["1s", "3s"], "cc": [["bbr", "cubic"]]},
    }
    runs = expand(grid)
    assert [r.scenario["duration"] for r in runs] == ["2000000000ns", "4000000000ns"]
    first = runs[0].scenario
    assert first["path"]["rate"] == "30000000bit" and first["stack"]["tsq"] == "2ms"
    assert [f["cc"] for f in first["flows"]] == ["bbr", "cubic"]


def test_missing_files_are_named(tmp_path):
    with pytest.raises(ValueError, match=r"^grid: '.*/none.toml' is not a file, expected a grid file"):
        expand(tmp_path / "none.toml")
    (tmp_path / "grid.toml").write_text('scenario = "base.toml"\n')
    with pytest.raises(ValueError, match=r"^scenario: '.*/base.toml' is not a file, expected a scenario file$"):
        expand(tmp_path / "grid.toml")


def test_run_ids_hash_the_resolved_scenario():
    runs = expand(SMALL_GRID)
    for run in runs:
        canonical = json.dumps(run.scenario, sort_keys=True, separators=(",", ":"))
        assert run.id == hashlib.sha256(canonical.encode()).hexdigest()[:16]
        assert run.scenario == wificc.validate(run.scenario)
    assert len({r.id for r in runs}) == len(runs)
    # The same runs from a grid written in another order (and another spelling of a rate).
    other = {**SMALL_GRID, "grid": {"path.rate": ["50000kbit", "10mbit"], "cc": ["bbr", "cubic"]}}
    assert {r.id for r in expand(other)} == {r.id for r in runs}
    assert run_id({"b": 1, "a": [1, 2]}) == run_id({"a": [1, 2], "b": 1})


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ({**SMALL_GRID, "grids": {}}, "(grid): unknown key 'grids', expected one of description, test, "),
        ({"grid": {}}, '(grid): give a base scenario (scenario = "file.toml" or a [scenario] table) or'),
        ({"test": "tcp_uplod"}, 'test: got "tcp_uplod", expected one of tcp_upload, '),
        ({"scenario": 3}, "scenario: got 3, expected a table or a scenario file path"),
        (
            {"scenario": BASE, "options": {"cc": "bbr"}},
            'options: catalog options need a test (test = "tcp_upload", ...)',
        ),
        (
            {"test": "tcp_upload", "options": {"speed": 1}},
            "options.speed: unknown catalog option, expected one of path, ",
        ),
        ({"test": "tcp_upload", "options": {"length": 2}}, "options.length: got 2, expected a string"),
        ({"test": "tcp_upload", "options": {"flows": "2"}}, 'options.flows: got "2", expected an integer'),
        (
            {"test": "tcp_upload", "grid": {"cc": [["bbr", 1]]}},
            'grid point cc=["bbr", 1]: cc: got ["bbr", 1], expected a string or a list of strings',
        ),
        ({"test": "tcp_upload", "options": {"ping": 1}}, "options.ping: got 1, expected true or false"),
        ({"test": "tcp_upload", "options": {"cc_params": 1}}, "options.cc_params: got 1, expected a table"),
        ({"test": "tcp_upload", "repetitions": 0}, "repetitions: got 0, expected an integer of at least 1"),
        (
            {"test": "tcp_upload", "grid": {"cc": "bbr"}},
            'grid.cc: got "bbr", expected a non-empty list of values',
        ),
        ({"test": "tcp_upload", "grid": {"cc": []}}, "grid.cc: got [], expected a non-empty list of values"),
        (
            {"scenario": BASE, "grid": {"cc": ["bbr"]}},
            "grid.cc: 'cc' is a catalog option, which needs a test",
        ),
        (
            {"scenario": BASE, "grid": {"flows[0]cc": ["bbr"]}},
            'grid."flows[0]cc": expected a catalog option or a dotted',
        ),
        (
            {"scenario": BASE, "grid": {"flows[2].cc": ["bbr"]}},
            'grid."flows[2].cc": flows has 2 entries, so no index 2',
        ),
        (
            {"scenario": BASE, "grid": {"pings[0].kind": ["udp"]}},
            'grid."pings[0].kind": pings is not in the scenario, so',
        ),
        (
            {"scenario": BASE, "grid": {"path.rate.max": [1]}},
            'grid.path.rate.max: path.rate is "20mbit", not a table with a field',
        ),
        ({"scenario": BASE, "grid": {"path[0]": [1]}}, 'grid."path[0]": path is {"kind": "wired",'),
        (
            {"scenario": BASE, "grid": {"path.rate": ["1mbit"]}, "zip": [{"path.rate": ["2mbit"]}]},
            "grid.path.rate: given twice (in [grid] and [[zip]], or in two [[zip]] groups)",
        ),
        (
            {"scenario": BASE, "zip": [{"path.rate": ["1mbit", "2mbit"], "path.rtt": ["9ms"]}]},
            "zip[0]: lists of one group must have equal lengths; path.rate has 2, path.rtt has 1",
        ),
        ({"scenario": BASE, "zip": [{}]}, "zip[0]: empty group, expected parameter lists that vary together"),
        (
            {"scenario": BASE, "grid": {"path.rate": ["fast"]}},
            'grid point path.rate=fast: path.rate: got "fast", expected a rate such as "50mbit" or "1gbit"',
        ),
        (
            {"test": "tcp_upload", "grid": {"length": ["0s"]}},
            "grid point length=0s: --length: got '0s', expected a positive duration",
        ),
        ({"test": "tcp_upload", "grid": {"tp": ["2"]}}, 'grid point tp=2: tp: got "2", expected an integer'),
        (
            {"scenario": BASE, "grid": {"path.rate": ["50mbit", "50000kbit"]}},
            "grid: path.rate=50mbit, repetition 0 and path.rate=50000kbit, repetition 0 are the same simulation",
        ),
    ],
)
def test_bad_grids_are_reported_with_the_key_the_value_and_what_is_expected(grid, message):
    with pytest.raises(ValueError) as caught:
        expand(grid)
    assert str(caught.value).startswith(message)


def test_a_small_sweep_writes_the_results_directory(tmp_path):
    grid_file = tmp_path / "grid.toml"
    grid_file.write_text(
        textwrap.dedent(
            """
            test = "tcp_upload"
            repetitions = 2
            [options]
            length = "2s"
            delay = "0.5s"
            [grid]
            cc = ["cubic", "bbr"]
            "path.rate" = ["10mbit", "50mbit"]
            """
        )
    )
    out = tmp_path / "out"
    table = wificc.sweep(grid_file, out, workers=2, progress=False)
    runs = expand(grid_file)
    assert table["run_id"].tolist() == [r.id for r in runs]
    assert table.columns[:5].tolist() == ["run_id", "cc", "path.rate", "repetition", "seed"]
    for column in ("flow0_goodput_bps", "total_goodput_bps", "jain", "retrans", "bottleneck_drops"):
        assert column in table
    for column in ("ping_p10_ms", "ping_p50_ms", "ping_p90_ms", "ping_p99_ms", "bottleneck_sojourn_p95_ms"):
        assert column in table
    assert table["seed"].tolist() == [1, 2] * 4
    pd.testing.assert_frame_equal(pd.read_parquet(out / storage.RUNS_TABLE), table)
    assert (out / "grid.toml").read_text() == grid_file.read_text()
    assert sorted(p.name for p in (out / storage.RUNS_DIR).iterdir()) == sorted(r.id for r in runs)
    # Each run directory holds the run itself: its tables, scenario and row.
    run = runs[5]
    directory = out / storage.RUNS_DIR / run.id
    assert {p.name for p in directory.iterdir()} == {
        *TABLE_FILES.values(),
        SCENARIO_FILE,
        storage.ROW_FILE,
        storage.MANIFEST_FILE,
    }
    assert json.loads((directory / SCENARIO_FILE).read_text()) == run.scenario
    direct = wificc.run(run.scenario)
    row = table.iloc[5]
    assert row["flow0_goodput_bps"] == direct.flows.loc[0, "goodput_bps"]
    assert row["flow0_skb_segs_mean"] == direct.flows.loc[0, "skb_segs_mean"] > 1
    assert row["ping_p50_ms"] == direct.pings.loc[0, "rtt_p50_ms"]
    assert row["bottleneck_sojourn_p95_ms"] == direct.queues.set_index("name").loc["bottleneck", "sojourn_p95_ms"]
    assert pd.read_parquet(directory / TABLE_FILES["flows"])["goodput_bps"].tolist() == [row["flow0_goodput_bps"]]
    # Goodput within the bottleneck rate.
    rate = table["path.rate"].map({"10mbit": 10e6, "50mbit": 50e6})
    assert ((table["total_goodput_bps"] > 0.3 * rate) & (table["total_goodput_bps"] <= rate)).all()


def _short_grid(n_ccs: int = 2) -> dict:
    return {
        "test": "tcp_upload",
        "repetitions": 2,
        "options": SHORT,
        "grid": {"cc": ["cubic", "bbr", "reno"][:n_ccs]},
    }


def test_a_rerun_skips_finished_runs_and_redoes_only_missing_ones(tmp_path, monkeypatch):
    out = tmp_path / "out"
    shown = io.StringIO()
    first = wificc.sweep(_short_grid(), out, workers=1, console=Console(file=shown, width=100))
    assert shown.getvalue().startswith("done cc=bbr, repetition 1 ") and " 4/4 " in shown.getvalue()
    calls = []
    simulate = sweep_module.simulate
    monkeypatch.setattr(sweep_module, "simulate", lambda text: calls.append(text) or simulate(text))
    shown = io.StringIO()
    again = wificc.sweep(_short_grid(), out, workers=1, console=Console(file=shown, width=100))
    assert calls == []
    assert shown.getvalue().startswith("sweep (4 of 4 already done) ")
    pd.testing.assert_frame_equal(again.drop(columns=HOST_COLUMNS), first.drop(columns=HOST_COLUMNS))
    # Lose one run and the table: only that run is simulated again, the table is rebuilt.
    lost = first["run_id"][2]
    for path in (out / storage.RUNS_DIR / lost).iterdir():
        path.unlink()
    (out / storage.RUNS_DIR / lost).rmdir()
    (out / storage.RUNS_TABLE).unlink()
    third = wificc.sweep(_short_grid(), out, workers=1, progress=False)
    assert [json.loads(text)["seed"] for text in calls] == [1]
    assert third["run_id"].tolist() == first["run_id"].tolist()
    assert third["total_goodput_bps"].tolist() == first["total_goodput_bps"].tolist()
    # A larger grid in the same directory runs only its new runs; runs.parquet holds them all.
    calls.clear()
    bigger = wificc.sweep(_short_grid(3), out, workers=1, progress=False)
    assert len(calls) == 2 and len(bigger) == 6
    assert bigger["run_id"].tolist()[:4] == first["run_id"].tolist()


def test_runs_stored_by_another_simulator_model_are_run_again_and_replaced(tmp_path, monkeypatch):
    out = tmp_path / "out"
    first = wificc.sweep(_short_grid(), out, workers=1, progress=False)
    assert set(first["model"]) == {wificc._core.MODEL}
    assert len(wificc._core.MODEL) == 16 and int(wificc._core.MODEL, 16) >= 0
    # Two runs look as if an older simulator stored them: one names another model, one
    # predates the model column.
    older, unlabelled = first["run_id"][1], first["run_id"][3]
    for run, edit in ((older, lambda row: row.update(model="0" * 16)), (unlabelled, lambda row: row.pop("model"))):
        row_file = out / storage.RUNS_DIR / run / storage.ROW_FILE
        row = json.loads(row_file.read_text())
        edit(row)
        row.update(total_goodput_bps=-1.0)
        row_file.write_text(json.dumps(row))
        # Stored so by that simulator: its manifest vouches for the row.
        storage.write_manifest(row_file.parent)
    calls = []
    simulate = sweep_module.simulate
    monkeypatch.setattr(sweep_module, "simulate", lambda text: calls.append(text) or simulate(text))
    shown = io.StringIO()
    again = wificc.sweep(_short_grid(), out, workers=1, console=Console(file=shown, width=120))
    assert shown.getvalue().startswith(
        f"2 stored runs come from another simulator model than this one ({wificc._core.MODEL}): running them again\n"
    )
    assert sorted(run_id(json.loads(text)) for text in calls) == sorted([older, unlabelled])
    pd.testing.assert_frame_equal(again.drop(columns=HOST_COLUMNS), first.drop(columns=HOST_COLUMNS))
    # Replaced in place: no second copy and no hidden leftover beside the runs.
    assert sorted(p.name for p in (out / storage.RUNS_DIR).iterdir()) == sorted(first["run_id"])
    calls.clear()
    wificc.sweep(_short_grid(), out, workers=1, progress=False)
    assert calls == []


def test_flent_files_for_new_runs_and_for_runs_stored_without_one(tmp_path):
    out = tmp_path / "out"
    grid = {**_short_grid(1), "repetitions": 1}
    first = wificc.sweep(grid, out, workers=1, progress=False)
    (run_dir,) = [out / storage.RUNS_DIR / i for i in first["run_id"]]
    assert not list(run_dir.glob("*" + flent.SUFFIX))
    # The grid's own switch: the stored run gets its file from its tables, the new one (bbr)
    # as it is stored; each equal to the export of the run directory.
    wider = {**_short_grid(2), "repetitions": 1, "flent": True}
    table = wificc.sweep(wider, out, workers=1, progress=False)
    for run_id_ in table["run_id"]:
        directory = out / storage.RUNS_DIR / run_id_
        written = directory / f"tcp_upload{flent.SUFFIX}"
        assert sorted(p.name for p in directory.glob("*" + flent.SUFFIX)) == [written.name]
        again = flent.export(directory, tmp_path / f"again{flent.SUFFIX}", test="tcp_upload")
        doc, expected = (json.loads(gzip.decompress(p.read_bytes())) for p in (written, again))
        for d in (doc, expected):
            d["metadata"].pop("DATA_FILENAME")
        assert doc == expected


def test_flent_files_need_runs_that_are_flent_tests(tmp_path):
    # Two uploads and a download: no Flent test has that traffic.
    three = {**BASE, "flows": [*BASE["flows"], {"cc": "cubic", "direction": "down"}]}
    grid = {"scenario": three, "flent": True, "grid": {"flows[2].cc": ["reno"]}}
    with pytest.raises(ValueError, match=r"flent: flows\[2\].cc=reno, repetition 0: flows: a run of 2 upload and 1"):
        wificc.sweep(grid, tmp_path / "out", workers=1, progress=False)
    assert not (tmp_path / "out" / storage.RUNS_DIR).exists()
    with pytest.raises(ValueError, match='flent: got "yes", expected true or false'):
        expand({**grid, "flent": "yes"})


def _fails(simulate, text):
    raise RuntimeError("core failure")


def _other_model(simulate, text):
    # A Dask worker with another build returns documents of another model.
    text, peak = simulate(text)
    document = json.loads(text)
    document["summary"]["model"] = "f" * 16
    return json.dumps(document), peak


@pytest.mark.parametrize(
    ("worker", "message"),
    [(_fails, "core failure"), (_other_model, "simulated by model ffffffffffffffff, not this one")],
)
def test_a_failed_run_is_reported_and_the_others_are_stored(tmp_path, monkeypatch, worker, message):
    simulate = sweep_module.simulate
    monkeypatch.setattr(
        sweep_module,
        "simulate",
        lambda text: worker(simulate, text) if json.loads(text)["seed"] == 2 else simulate(text),
    )
    out = tmp_path / "out"
    runs = expand(_short_grid())
    with pytest.raises(SweepError, match=rf"^2 of 4 runs failed: .*{message}"):
        wificc.sweep(_short_grid(), out, workers=1, progress=False)
    assert storage.finished_ids(out) == {r.id for r in runs if r.seed == 1}
    assert len(pd.read_parquet(out / storage.RUNS_TABLE)) == 2


# Eight runs of about 0.3 s each: slow enough to be killed part-way.
INTERRUPTED_GRID = {
    "test": "tcp_upload",
    "repetitions": 2,
    "options": {"length": "4s", "delay": "0s", "rate": "1gbit", "rtt": "10ms"},
    "grid": {"cc": ["cubic", "bbr", "reno", "bbr2"]},
}


def test_a_killed_sweep_resumes_and_finds_every_run_exactly_once(tmp_path):
    out = tmp_path / "out"
    runs = expand(INTERRUPTED_GRID)
    script = f"import wificc; wificc.sweep({INTERRUPTED_GRID!r}, {str(out)!r}, workers=2, progress=False)"
    process = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(storage.finished_ids(out)) < 2:
            assert process.poll() is None, "the sweep ended before it could be killed"
            assert time.monotonic() < deadline, "no run finished in time"
            time.sleep(0.02)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    finished = storage.finished_ids(out)
    assert 2 <= len(finished) < len(runs)
    # What the killed sweep left is whole: every visible run directory is complete.
    for run_id_ in finished:
        names = {p.name for p in (out / storage.RUNS_DIR / run_id_).iterdir()}
        assert names == {*TABLE_FILES.values(), SCENARIO_FILE, storage.ROW_FILE, storage.MANIFEST_FILE}
    table = wificc.sweep(INTERRUPTED_GRID, out, workers=2, progress=False)
    assert table["run_id"].tolist() == [r.id for r in runs]
    entries = sorted(p.name for p in (out / storage.RUNS_DIR).iterdir())
    assert entries == sorted(r.id for r in runs)
    assert sorted(p.name for p in out.iterdir()) == ["grid.json", storage.RUNS_DIR, storage.RUNS_TABLE]
    stored = pd.read_parquet(out / storage.RUNS_TABLE)
    assert sorted(stored["run_id"]) == sorted(r.id for r in runs)
    assert stored["run_id"].is_unique
    assert (stored["total_goodput_bps"] > 0).all()


def test_dask_local_cluster_gives_the_same_table_as_the_local_pool(tmp_path):
    local = wificc.sweep(_short_grid(), tmp_path / "local", workers=1, progress=False)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        table = wificc.sweep(_short_grid(), tmp_path / "dask", scheduler=cluster.scheduler_address, progress=False)
    columns = [c for c in local if c not in HOST_COLUMNS]
    pd.testing.assert_frame_equal(table[columns], local[columns])
    assert storage.finished_ids(tmp_path / "dask") == set(local["run_id"])


def test_sweep_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError, match=r"^workers: got 0, expected an integer of at least 1$"):
        wificc.sweep(_short_grid(), tmp_path, workers=0)
    with pytest.raises(ValueError, match=r"^workers: a Dask cluster has its own workers"):
        wificc.sweep(_short_grid(), tmp_path, workers=2, scheduler="tcp://127.0.0.1:1")
    with pytest.raises(ValueError, match=r"^repetitions: got -1, expected an integer of at least 1$"):
        wificc.sweep(_short_grid(), tmp_path, repetitions=-1)
    assert not (tmp_path / storage.RUNS_DIR).exists()


def _cli() -> typer.Typer:
    from wificc.cli import app

    return app


def test_cli_sweep_runs_a_grid_file_and_reports_errors_in_one_line(tmp_path):
    grid_file = tmp_path / "g.toml"
    grid_file.write_text('test = "tcp_upload"\n[options]\nlength = "1s"\ndelay = "0s"\n[grid]\ncc = ["reno"]\n')
    out = tmp_path / "out"
    result = CliRunner().invoke(_cli(), ["sweep", str(grid_file), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert f"1 runs in {out / storage.RUNS_TABLE}" in result.output
    assert len(pd.read_parquet(out / storage.RUNS_TABLE)) == 1
    grid_file.write_text('test = "tcp_upload"\n[grid]\ncc = "reno"\n')
    result = CliRunner().invoke(_cli(), ["sweep", str(grid_file), "--out", str(out)])
    assert result.exit_code == 2
    assert 'error: grid.cc: got "reno", expected a non-empty list of values' in result.output
    assert "Traceback" not in result.output
