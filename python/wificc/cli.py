"""The ``wificc`` command line (typer + rich).

``run`` builds a scenario from a test of the catalog (:mod:`wificc.scenarios`) and options, or
reads one from ``--scenario FILE``, runs it and prints summary tables (``--json``: one JSON
object) and with ``--out`` writes the run's Parquet files. ``check`` prints a scenario with
its defaults filled in, ``cc list`` / ``cc show`` describe the congestion controls (each
parameter's meaning, unit and kernel name), ``schema`` prints the scenario schema and
``reference`` writes the reference pages (:mod:`wificc.reference`), ``bench`` measures the
simulator's speed and ``demo`` compares cubic, reno and bbr on a wired path.

A scenario the core rejects, a bad option or an unreadable file is reported as one line
``error: field: message`` on stderr with exit code 2, never a traceback. Tables go to stdout,
progress bars to stderr, so ``--json`` output stays machine-readable.
"""

from __future__ import annotations

import csv
import json
import os
import textwrap
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from wificc import (
    api,
    bench,
    bpf,
    emu,
    figures,
    flent,
    models,
    reference,
    report,
    reproduce,
    scenarios,
    storage,
    validation,
)
from wificc.result import Result, staging_path
from wificc.sweep import sweep_command

# Exit code of a rejected scenario, option or file (as for a command-line usage error).
EXIT_USER_ERROR = 2
# Congestion controls the demo compares, those the registry has, in this order.
DEMO_CCS = ("cubic", "reno", "bbr")
DEMO_TEST = "tcp_upload"
DEMO_OPTIONS: dict[str, Any] = {"rate": "50mbit", "rtt": "20ms", "buffer": "1bdp", "qdisc": "pfifo"}
DEMO_OUT = Path("results/demo-wired")
# Width of `cc show`'s wrapped parameter meanings (a terminal's).
SHOW_WIDTH = 100
# Name of the bottleneck queue of the wired path (crates/wificc-core/src/scenario.rs).
BOTTLENECK_QUEUE = "bottleneck"

app = typer.Typer(
    help="wificc: TCP congestion control over Wi-Fi, simulated.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
cc_app = typer.Typer(help="The congestion controls and their parameters.", no_args_is_help=True)
app.add_typer(cc_app, name="cc")

out_console = Console(highlight=False, markup=False)
err_console = Console(stderr=True, highlight=False, markup=False)


@contextmanager
def user_errors() -> Iterator[None]:
    """Report a rejected input (ValueError, OSError) as one line and exit with code 2.

    A multi-line message (the TOML parser's) is joined with "; " into that line.
    """
    try:
        yield
    except (ValueError, OSError) as e:
        message = "; ".join(line.strip() for line in str(e).splitlines() if line.strip())
        typer.echo(f"error: {message}", err=True)
        raise typer.Exit(EXIT_USER_ERROR) from None


def _mbit(bps: float | None) -> str:
    return "-" if bps is None else f"{bps / 1e6:.2f}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _table(title: str, columns: list[str], rows: list[list[str]], numbers: bool = True) -> Table:
    """A table whose first column names the row; the others are right-aligned ``numbers``."""
    table = Table(title=title, title_justify="left")
    for i, column in enumerate(columns):
        table.add_column(column, justify="right" if numbers and i > 0 else "left")
    for row in rows:
        table.add_row(*row)
    return table


def summary_tables(result: Result) -> list[Table]:
    """Per flow goodput, retransmissions and RTOs; per ping p50/p90; per queue drops, sojourn."""
    raw = result.raw
    return [
        _table(
            "Flows",
            ["flow", "cc", "goodput Mbit/s", "retrans", "RTOs"],
            [
                [f["name"], f["cc"], _mbit(f["goodput_bps"]), str(f["retrans"]), str(f["rto_count"])]
                for f in raw["flows"]
            ],
        ),
        _table(
            "Pings",
            ["ping", "p50 ms", "p90 ms"],
            [[p["name"], _ms(p["rtt_p50_ms"]), _ms(p["rtt_p90_ms"])] for p in raw["pings"]],
        ),
        _table(
            "Queues",
            ["queue", "drops", "p95 sojourn ms", "utilisation"],
            [
                [q["name"], str(q["dropped"]), _ms(q["sojourn_p95_ms"]), _percent(q["utilization"])]
                for q in raw["queues"]
            ],
        ),
        *(
            [
                _table(
                    "Wi-Fi nodes",
                    ["node", "A-MPDU mean", "A-MPDU p50", "airtime", "collisions", "MPDU retries"],
                    [
                        [
                            w["name"],
                            _num(w["ampdu_mean"]),
                            _num(w["ampdu_p50"]),
                            _percent(w["airtime"]),
                            str(w["collisions"]),
                            str(w["mpdu_retries"]),
                        ]
                        for w in raw["wifi"]
                    ],
                )
            ]
            if raw.get("wifi")
            else []
        ),
    ]


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def run_report(test: str | None, result: Result, out: Path | None) -> dict[str, Any]:
    """The ``--json`` object of a run: parameters, summaries, and where it was written."""
    raw = result.raw
    return {
        "test": test,
        "parameters": result.parameters,
        "summary": raw["summary"],
        "flows": raw["flows"],
        "pings": raw["pings"],
        "queues": raw["queues"],
        "wifi": raw.get("wifi", []),
        "profile": raw.get("profile"),
        "out": None if out is None else str(out),
    }


@app.command(epilog="Tests: " + ", ".join(scenarios.TESTS) + ". See 'wificc tests NAME'.")
def run(
    test: Annotated[
        str | None, typer.Argument(help=f"Test to run: {', '.join(scenarios.TESTS)}.", show_default=False)
    ] = None,
    scenario_file: Annotated[
        Path | None,
        typer.Option("--scenario", help="Scenario file (TOML/JSON): run as written, or the base of TEST."),
    ] = None,
    path: Annotated[str | None, typer.Option("--path", help="Path preset: wired, wifi, hybrid or trace.")] = None,
    chipset: Annotated[
        str | None,
        typer.Option(help="Wi-Fi chipset preset: ath9k-htc, ath9k, ath10k-1x1, ath10k, qca9377, ax201."),
    ] = None,
    backhaul: Annotated[str | None, typer.Option(help="Wi-Fi path: AP <-> server wired rate.")] = None,
    stations: Annotated[int | None, typer.Option(help="Wi-Fi path: number of stations.")] = None,
    driver: Annotated[
        str | None,
        typer.Option(help="Wi-Fi driver model: ath9k, ath9k_htc, ath10k, iwlwifi or generic (default: the chipset's)."),
    ] = None,
    driver_param: Annotated[
        list[str] | None,
        typer.Option(
            "--driver-param",
            help="KEY=VALUE of the Wi-Fi driver, e.g. tx_status.delay=0, rx.last=0, ring=64, tso=true, wake=per_burst.",
        ),
    ] = None,
    mcs: Annotated[
        str | None, typer.Option(help="Wi-Fi MCS per stream of every link (7), or of each station's (7,3).")
    ] = None,
    rate: Annotated[str | None, typer.Option(help="Bottleneck rate, e.g. 50mbit.")] = None,
    rtt: Annotated[str | None, typer.Option(help="Base round-trip time, e.g. 20ms.")] = None,
    buffer: Annotated[str | None, typer.Option(help="Bottleneck buffer: 100p, 64kb or 1bdp.")] = None,
    qdisc: Annotated[str | None, typer.Option(help="Bottleneck qdisc: pfifo, fq_codel, ...")] = None,
    cc: Annotated[list[str] | None, typer.Option("--cc", help="Congestion control; repeat for one flow each.")] = None,
    cc_param: Annotated[
        list[str] | None,
        typer.Option(
            "--cc-param",
            help="KEY=VALUE for every flow's congestion control; CC.KEY=VALUE for the flows running CC "
            "(cubic.beta=0.8); N:KEY=VALUE for flow N, from 1 (2:high_gain=3).",
        ),
    ] = None,
    flows: Annotated[int | None, typer.Option(help="Number of flows (tcp_nup, tcp_ndown).")] = None,
    flows_per_station: Annotated[
        int | None,
        typer.Option(
            help="tcp_nup, tcp_ndown on Wi-Fi: M flows from each station (N x M, station by station in turn)."
        ),
    ] = None,
    txq: Annotated[
        str | None,
        typer.Option(help="Wi-Fi path: the mac80211 TXQ of the AP and every station, fq_codel or pfifo[:LIMIT]."),
    ] = None,
    print_scenario: Annotated[
        bool, typer.Option("--print-scenario", help="Print the resolved scenario (TOML) and exit without running.")
    ] = False,
    tsq: Annotated[
        str | None,
        typer.Option(
            help="TCP Small Queues: default (1 ms; on a Wi-Fi station mac80211's 4 or 8 ms), "
            "1ms..1024ms, off, static:<N>p."
        ),
    ] = None,
    tp: Annotated[int | None, typer.Option(help="Pacing multiplier (TP rate) 1..10.")] = None,
    kernel: Annotated[
        str | None,
        typer.Option(help="Linux release the hosts run: 4.19, 5.4, 5.10, 5.13, 5.15, 6.1, 6.6, 6.12 (default), 6.18."),
    ] = None,
    length: Annotated[str | None, typer.Option(help="TCP time (Flent LENGTH), default 30s.")] = None,
    delay: Annotated[
        str | None, typer.Option(help="Ping-only time before and after (Flent DELAY), default 5s.")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of every random stream.")] = None,
    warmup: Annotated[str | None, typer.Option(help="Time the summaries ignore at the start.")] = None,
    step: Annotated[str | None, typer.Option(help="Sampling and ping interval, default 200ms.")] = None,
    ping: Annotated[bool | None, typer.Option("--ping/--no-ping", help="ICMP ping for the whole test.")] = None,
    direction: Annotated[str | None, typer.Option(help="Direction of the TCP flows: up or down.")] = None,
    tsq_packets: Annotated[int | None, typer.Option(help="bottleneck_curve: static TSQ limit, packets.")] = None,
    rtts: Annotated[str | None, typer.Option(help="rtt_fairness: each flow's base RTT, e.g. 10ms,50ms.")] = None,
    against: Annotated[str | None, typer.Option(help="inter_protocol: the competing CCA (cubic).")] = None,
    trace_up: Annotated[Path | None, typer.Option(help="Trace path: Mahimahi trace of the uplink.")] = None,
    trace_down: Annotated[Path | None, typer.Option(help="Trace path: Mahimahi trace of the downlink.")] = None,
    rates: Annotated[str | None, typer.Option(help="Trace path: rate schedule, e.g. 12mbit,24mbit.")] = None,
    step_at: Annotated[str | None, typer.Option(help="Trace path: when the later rates start, e.g. 3s.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    out: Annotated[Path | None, typer.Option(help="Write the run's Parquet files into this directory.")] = None,
    memory_limit: Annotated[
        str | None,
        typer.Option(help="Refuse a run estimated to need more memory (e.g. 4000mb; default half the RAM)."),
    ] = None,
) -> None:
    """Run a test (tcp_upload, tcp_download, tcp_nup, tcp_ndown) or a scenario file."""
    with user_errors():
        options = {
            **scenarios.path_options(path, chipset, backhaul, stations, rate, rtt, buffer, qdisc, length, delay),
            "driver": driver,
            "mcs": mcs,
            "driver_params": scenarios.parse_cc_params(driver_param, "--driver-param") if driver_param else None,
            "cc": cc,
            "cc_params": scenarios.parse_cc_params(cc_param) if cc_param else None,
            "flows": flows,
            "flows_per_station": flows_per_station,
            "txq": txq,
            "tsq": tsq,
            "tp": tp,
            "kernel": kernel,
            "seed": seed,
            "warmup": warmup,
            "step": step,
            "ping": ping,
            "direction": direction,
            "tsq_packets": tsq_packets,
            "rtts": rtts,
            "against": against,
            "trace_up": trace_up,
            "trace_down": trace_down,
            "rates": rates,
            "step_at": step_at,
        }
        scenario = scenario_of(test, scenario_file, {k: v for k, v in options.items() if v is not None})
        if print_scenario:
            typer.echo(scenarios.to_toml(api.validate(scenario)), nl=False)
            return
        # One writer per --out directory, from before the run until its files are stored.
        with storage.locked(out) if out is not None else nullcontext():
            result = api.run(scenario, memory_limit=memory_limit)
            if out is not None:
                result.save(out)
    if json_output:
        print(json.dumps(run_report(test, result, out)))
        return
    s = result.summary
    typer.echo(
        f"{test or scenario_file}: {s['duration_s']:g} s simulated in {s['wall_s']:.3g} s "
        f"({s['events']} events), total goodput {_mbit(s['total_goodput_bps'])} Mbit/s"
    )
    for table in summary_tables(result):
        out_console.print(table)
    if out is not None:
        typer.echo(f"wrote {out}")


def scenario_of(test: str | None, scenario_file: Path | None, options: dict[str, Any]) -> Any:
    """The scenario ``run`` runs: TEST with options over the file (or the defaults), or the file."""
    if test is not None:
        base = scenarios.load(scenario_file) if scenario_file is not None else None
        return scenarios.build(test, base=base, **options)
    if scenario_file is None:
        raise ValueError(f"TEST: give a test ({', '.join(scenarios.TESTS)}) or --scenario FILE")
    if options:
        key = next(iter(options))
        flag = "cc-param" if key == "cc_params" else key.replace("_", "-")
        raise ValueError(f"--{flag}: needs a TEST; a scenario file without a test runs as written")
    return scenario_file


@app.command("check")
def check(file: Annotated[Path, typer.Argument(help="Scenario file (TOML or JSON).")]) -> None:
    """Check a scenario file and print it with every default filled in (JSON)."""
    with user_errors():
        normalised = api.validate(file)
    print(json.dumps(normalised, indent=2))


def _registry() -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in api.cc_list()}


@cc_app.command("list")
def cc_list() -> None:
    """List the congestion controls."""
    rows = [[e["name"], e["summary"]] for e in _registry().values()]
    out_console.print(_table("Congestion controls", ["name", "summary"], rows, numbers=False))


@cc_app.command("show")
def cc_show(name: Annotated[str, typer.Argument(help="Congestion control, e.g. cubic.")]) -> None:
    """Show a congestion control: summary, source, parameters with their defaults."""
    registry = _registry()
    with user_errors():
        if name not in registry:
            raise ValueError(f"cc: unknown congestion control {name!r}; expected one of {', '.join(registry)}")
    entry = registry[name]
    typer.echo(f"{entry['name']}: {entry['summary']}")
    typer.echo(f"source: {entry['source']}")
    params = reference.cc_parameters(entry)
    if not params:
        typer.echo("no parameters")
        return
    typer.echo("parameters (--cc-param KEY=VALUE), each with its default, unit and kernel name:")
    for p in params:
        about = ", ".join(x for x in (p["unit"], f"kernel {p['kernel']}" if p["kernel"] else "") if x)
        typer.echo(f"  {p['parameter']} = {p['default']}" + (f"  ({about})" if about else ""))
        typer.echo(textwrap.fill(p["meaning"], width=SHOW_WIDTH, initial_indent=" " * 6, subsequent_indent=" " * 6))


@app.command("schema")
def schema_command(
    markdown: Annotated[
        bool, typer.Option("--markdown/--json", help="The reference page (docs/scenario.md) or the JSON Schema.")
    ] = False,
) -> None:
    """Print the scenario schema: every field with its type, unit, default and range."""
    if markdown:
        typer.echo(reference.scenario_markdown(), nl=False)
    else:
        print(json.dumps(reference.scenario_schema(), indent=2))


@app.command("reference")
def reference_command(
    out: Annotated[Path, typer.Option(help="Directory of the pages.")] = Path("docs"),
) -> None:
    """Write the reference pages generated from the code: scenario.md, results.md, catalog.md, sweep.md."""
    with user_errors():
        written = reference.write(out)
    for path in written:
        typer.echo(f"wrote {path}")


@app.command("bench")
def bench_command(
    length: Annotated[str, typer.Option(help="Simulated time.")] = bench.BENCH_LENGTH,
    seed: Annotated[int, typer.Option(help="Seed of every random stream.")] = 1,
) -> None:
    """Measure the simulator: one cubic flow, 1 Gbit/s, 10 ms RTT, 1 BDP pfifo."""
    with user_errors():
        figures = bench.run(length, seed)
    rows = [
        ["simulated", f"{figures['simulated_s']:g} s"],
        ["wall clock", f"{figures['wall_s']:.3f} s"],
        ["simulated s / wall s", f"{figures['speed']:.2f}"],
        ["events", f"{figures['events']:,}"],
        ["events / wall s", f"{figures['events_per_s']:,.0f}"],
        ["goodput", f"{_mbit(figures['goodput_bps'])} Mbit/s"],
    ]
    p = bench.BENCH_PATH
    typer.echo(f"bench: one {bench.BENCH_CC} flow, {p['rate']}, {p['rtt']} RTT, {p['buffer']} {p['qdisc']['kind']}")
    out_console.print(_table("", ["figure", "value"], rows))


def run_all(scenario_list: list[Any], label: Callable[[int], str]) -> list[Result]:
    """Run several scenarios on a thread pool (the core releases the GIL), with a progress bar."""
    results: dict[int, Result] = {}
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True) as progress:
        task = progress.add_task("running", total=len(scenario_list))
        with ThreadPoolExecutor(max_workers=max(1, min(len(scenario_list), os.cpu_count() or 1))) as pool:
            futures = {pool.submit(api.run, s): i for i, s in enumerate(scenario_list)}
            for future in as_completed(futures):
                i = futures[future]
                results[i] = future.result()
                progress.update(task, advance=1, description=f"done {label(i)}")
    return [results[i] for i in range(len(scenario_list))]


def demo_row(cc: str, result: Result) -> dict[str, Any]:
    """The comparison figures of one demo run."""
    raw = result.raw
    flow = raw["flows"][0]
    ping = raw["pings"][0]
    queue = next(q for q in raw["queues"] if q["name"] == BOTTLENECK_QUEUE)
    return {
        "cc": cc,
        "goodput_bps": flow["goodput_bps"],
        "retrans": flow["retrans"],
        "rto_count": flow["rto_count"],
        "ping_p50_ms": ping["rtt_p50_ms"],
        "ping_p90_ms": ping["rtt_p90_ms"],
        "bottleneck_drops": queue["dropped"],
        "bottleneck_sojourn_p95_ms": queue["sojourn_p95_ms"],
        "bottleneck_utilization": queue["utilization"],
    }


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write rows (the union of their keys as columns) to ``path`` atomically."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    staging = staging_path(path)
    try:
        with open(staging, "x", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
        os.replace(staging, path)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="Directory of the results.")] = DEMO_OUT,
    length: Annotated[str, typer.Option(help="TCP time of each run.")] = scenarios.DEFAULT_LENGTH,
    delay: Annotated[str, typer.Option(help="Ping-only time before and after.")] = scenarios.DEFAULT_DELAY,
) -> None:
    """Compare cubic, reno and bbr: one upload + ping each, 50 Mbit/s, 20 ms RTT, 1 BDP pfifo."""
    registry = _registry()
    ccs = [cc for cc in DEMO_CCS if cc in registry]
    for cc in DEMO_CCS:
        if cc not in registry:
            typer.echo(f"note: {cc} is not in this build's registry; skipped", err=True)
    with user_errors():
        scenario_list = [scenarios.build(DEMO_TEST, cc=[cc], length=length, delay=delay, **DEMO_OPTIONS) for cc in ccs]
        results = run_all(scenario_list, lambda i: ccs[i])
        out.mkdir(parents=True, exist_ok=True)
        rows = []
        paths = []
        for cc, result in zip(ccs, results, strict=True):
            paths.append(result.save(out / cc))
            rows.append({**demo_row(cc, result), **result.summary_row()})
        summary_csv = out / "summary.csv"
        write_csv(summary_csv, rows)
    setup = ", ".join(DEMO_OPTIONS.values())
    typer.echo(f"{DEMO_TEST}: {setup}, {length} of TCP (goodput Mbit/s, times ms)")
    table = _table(
        "",
        ["cc", "goodput", "retrans", "RTOs", "ping p50", "ping p90", "sojourn p95", "util"],
        [
            [
                r["cc"],
                _mbit(r["goodput_bps"]),
                str(r["retrans"]),
                str(r["rto_count"]),
                _ms(r["ping_p50_ms"]),
                _ms(r["ping_p90_ms"]),
                _ms(r["bottleneck_sojourn_p95_ms"]),
                _percent(r["bottleneck_utilization"]),
            ]
            for r in rows
        ],
    )
    out_console.print(table)
    for path in paths:
        typer.echo(f"wrote {path}/ (Parquet tables, scenario.json)")
    typer.echo(f"wrote {summary_csv}")


@app.command("tests")
def tests_command(
    name: Annotated[str | None, typer.Argument(help="Test to describe in full.")] = None,
) -> None:
    """List the test catalog, or describe one test: flows, series, pings, path and options."""
    with user_errors():
        text = scenarios.describe(name) if name is not None else None
    if text is not None:
        typer.echo(text)
        return
    rows = [[test, description] for test, description in scenarios.catalog()]
    out_console.print(_table("Tests", ["test", "description"], rows, numbers=False))


@app.command("model")
def model_command(
    name: Annotated[str, typer.Argument(help=f"Analytic model: {', '.join(models.MODELS)}.")],
    json_output: Annotated[bool, typer.Option("--json", help="Print the tables as JSON.")] = False,
    out: Annotated[Path | None, typer.Option(help="Write the model's figures (PNG, SVG) here.")] = None,
) -> None:
    """Analytic models: the Wi-Fi 6 hybrid bottleneck (Grazia 2021), BBR startup gains, BBR-PG fluid shares."""
    with user_errors():
        if name not in models.MODELS:
            raise ValueError(f"model: got {name!r}, expected one of {', '.join(models.MODELS)}")
        result = models.MODELS[name]()
        written = models.FIGURES[name](Path(out) / name) if out is not None else []
    if json_output:
        print(json.dumps(result))
        return
    tables = {k: v for k, v in result.items() if isinstance(v, list) and v and isinstance(v[0], dict)}
    for table_name, rows in tables.items():
        columns = list(rows[0])
        shown = rows if len(rows) <= 40 else rows[:: max(1, len(rows) // 40)]
        body = [[_cell(row[c]) for c in columns] for row in shown]
        out_console.print(_table(f"{name}: {table_name}", columns, body))
    for path in written:
        typer.echo(f"wrote {path}")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


app.command("sweep")(sweep_command)
app.command("reproduce")(reproduce.reproduce_cmd)
app.command("plot")(figures.plot_cmd)
app.command("report")(report.report_cmd)
app.command("flent")(flent.flent_cmd)
app.command("validate")(emu.validate_cmd)
app.command("validate-grid")(validation.grid_cmd)
app.add_typer(emu.app, name="emu", help="Real-time emulator: the kernel's own TCP through the simulator's link models.")
app.add_typer(bpf.app, name="bpf", help="BBR variants as BPF struct_ops congestion controls for real kernels.")
