"""The reference generated from the code: schema, result columns, catalogs, and their pages."""

import copy
import json
import re
from pathlib import Path

import pytest
import wificc
from typer.testing import CliRunner
from wificc import api, cli, reference, result

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

WIRED = {"duration": "1s", "path": {"kind": "wired", "rate": "10mbit", "rtt": "10ms"}}
WIFI = {"duration": "1s", "path": {"kind": "wifi", "rtt": "10ms"}}
SCHEDULE = {"schedule": [{"at": "0s", "rate": "10mbit"}]}
TRACE = {"duration": "1s", "path": {"kind": "trace", "rtt": "10ms", "uplink": SCHEDULE, "downlink": SCHEDULE}}


def invoke(*args: str):
    return runner.invoke(cli.app, list(args))


# -- pages -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", reference.PAGES)
def test_the_checked_in_pages_are_what_the_code_generates(name):
    generated = reference.pages()[name]
    shipped = (ROOT / "docs" / name).read_text()
    assert shipped == generated, f"docs/{name} is out of date: run `{reference.COMMAND}`"


def test_schema_command_prints_the_schema_and_its_page():
    as_json = invoke("schema", "--json")
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout) == reference.scenario_schema()
    as_markdown = invoke("schema", "--markdown")
    assert as_markdown.stdout == reference.scenario_markdown()


def test_reference_command_writes_the_pages(tmp_path):
    out = invoke("reference", "--out", str(tmp_path))
    assert out.exit_code == 0, out.output
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(reference.PAGES)
    assert (tmp_path / "results.md").read_text() == reference.results_markdown()


# -- the scenario schema -----------------------------------------------------------------


def _fields(schema, defs, at="", up=()):
    """(path, property) of every field under ``schema``, following each $ref not on the way."""
    out = []
    ref = schema.get("$ref", "").removeprefix("#/$defs/")
    if ref and ref not in up:
        out += _fields(defs[ref], defs, at, (*up, ref))
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key, []):
            out += _fields(sub, defs, at, up)
    if "items" in schema:
        out += _fields(schema["items"], defs, f"{at}[]", up)
    for name, prop in schema.get("properties", {}).items():
        path = f"{at}.{name}" if at else name
        out.append((path, prop))
        out += _fields(prop, defs, path, up)
    return out


def test_every_scenario_field_is_described_and_on_the_page():
    schema = reference.scenario_schema()
    fields = _fields(schema, schema["$defs"])
    assert len({p for p, _ in fields}) > 150
    page = reference.scenario_markdown()
    rows = set(re.findall(r"^\| `([a-z0-9_.]+)` \|", page, re.MULTILINE))
    for path, prop in fields:
        name = path.rsplit(".", 1)[-1].removesuffix("[]")
        if name == "kind" and "const" in prop:
            continue
        assert prop.get("description", "").strip(), f"{path} has no doc comment"
        leaf = path.split(".")[-1]
        parent_row = ".".join(path.split(".")[-2:])
        assert leaf in rows or parent_row in rows, f"{path} is not on docs/scenario.md"


def test_a_field_without_a_doc_comment_is_caught():
    """The check above fails on a schema with one description removed."""
    schema = copy.deepcopy(reference.scenario_schema())
    del schema["$defs"]["StackSpec"]["properties"]["mss"]["description"]
    missing = [p for p, prop in _fields(schema, schema["$defs"]) if p.endswith("mss") and "description" not in prop]
    assert missing == ["stack.mss"]


# Where each table of the schema can be set, over which base scenario.
TABLES = [
    ("path", WIRED, lambda s: s["$defs"]["PathSpec"]["oneOf"][0]),
    ("path", TRACE, lambda s: s["$defs"]["PathSpec"]["oneOf"][1]),
    ("path", WIFI, lambda s: s["$defs"]["PathSpec"]["oneOf"][2]),
    ("stack", WIRED, lambda s: s["$defs"]["StackSpec"]),
    ("path.uplink", TRACE, lambda s: s["$defs"]["TraceLinkSpec"]),
    *[("path.qdisc", WIRED, lambda s, i=i: s["$defs"]["QdiscSpec"]["oneOf"][i]) for i in range(7)],
    *[("path.radio.txq", WIFI, lambda s, i=i: s["$defs"]["TxqSpec"]["oneOf"][i]) for i in range(2)],
]
# A stack whose MSS fits the smallest MTU, so that the MTU's bounds are tried alone.
SMALL_MSS = {"mss": 500}


def _bounded(table):
    for name, prop in table["properties"].items():
        prop = {**prop, **next((v for v in prop.get("anyOf", []) if v.get("type") != "null"), {})}
        bounds = reference._FORMAT_BOUNDS.get(prop.get("format", ""), (None, None))
        low = prop.get("minimum") if prop.get("minimum") != bounds[0] else None
        high = prop.get("maximum") if prop.get("maximum") != bounds[1] else None
        if low is not None or high is not None or "exclusiveMaximum" in prop:
            yield name, prop, low, high


def _with(base, where, table, name, value):
    s = copy.deepcopy(base)
    s.setdefault("stack", {}).update(SMALL_MSS)
    target = s
    for key in where.split("."):
        target = target.setdefault(key, {})
    kind = table["properties"].get("kind", {}).get("const")
    if kind is not None and where != "path":
        target.clear()
        target["kind"] = kind
    target[name] = value
    return s


def test_every_stated_range_is_the_one_validation_applies():
    schema = reference.scenario_schema()
    tried = []
    for where, base, table_of in TABLES:
        table = table_of(schema)
        for name, prop, low, high in _bounded(table):
            step = 1 if prop.get("type") == "integer" or "integer" in prop.get("type", []) else 1e-9
            accepted = [v for v in (low, high) if v is not None]
            refused = [
                v for v in (None if low is None else low - step, None if high is None else high + step) if v is not None
            ]
            if "exclusiveMaximum" in prop:
                refused.append(prop["exclusiveMaximum"])
            if low is not None and low - step < 0 and step == 1:
                refused.remove(low - step)  # below an unsigned type: a type error, not a range
            for v in accepted:
                api.validate(_with(base, where, table, name, v))
            for v in refused:
                with pytest.raises(ValueError, match=re.escape(name)):
                    api.validate(_with(base, where, table, name, v))
            tried.append(f"{where}.{name}")
    # The ranges the schema states: none of them may go unchecked.
    for field in ("path.stations", "path.clients", "stack.mtu", "stack.tp", "path.qdisc.flows", "path.radio.txq.flows"):
        assert field in tried, tried


# -- units and cc show -------------------------------------------------------------------


def test_human_units():
    assert reference.human("30000000000ns", "Dur") == "30 s"
    assert reference.human("200000000ns", "Dur") == "200 ms"
    assert reference.human("2048000ns", "Dur") == "2.048 ms"
    assert reference.human("800ns", "Dur") == "800 ns"
    assert reference.human("0ns", "Dur") == "0 s"
    assert reference.human("10000000000bit", "Rate") == "10 Gbit/s"
    assert reference.human("1200000bit", "Rate") == "1.2 Mbit/s"
    assert reference.human("4000bit", "Rate") == "4 kbit/s"
    assert reference.human("33554432b", "Size") == "32 MiB"
    assert reference.human("1514b", "Size") == "1514 B"
    assert reference.human("1000p", "Buf") == "1000 packets"
    assert reference.human("1.5bdp", "Buf") == "1.5 BDP"
    assert reference.human({"kind": "pfifo", "limit": "100p"}, None) == '{kind = "pfifo", limit = 100 packets}'
    assert reference.human(None, None) == "none"


def test_cc_show_gives_meaning_unit_and_kernel_name_in_human_units():
    shown = invoke("cc", "show", "bbr")
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    bbr = next(e for e in wificc.cc_list() if e["name"] == "bbr")
    rows = {r["parameter"]: r for r in reference.cc_parameters(bbr)}
    assert rows["min_rtt_win"]["default"] == "10 s"
    assert rows["min_rtt_win"]["unit"] == "duration"
    assert rows["min_rtt_win"]["kernel"] == "bbr_min_rtt_win_sec"
    assert rows["probe_rtt_mode"]["default"] == "200 ms"
    assert rows["min_tso_rate"]["default"] == "1.2 Mbit/s"
    assert rows["high_gain"]["kernel"] == "bbr_high_gain"
    assert rows["extra_acked"]["unit"] == "on/off"
    assert "Window of the min_rtt filter" in rows["min_rtt_win"]["meaning"]
    assert "ns" not in " ".join(r["default"] for r in rows.values())
    for name in ("min_rtt_win", "10 s", "bbr_min_rtt_win_sec"):
        assert name in text
    assert "10000000000ns" not in shown.stdout


def test_every_cc_parameter_has_a_meaning_and_a_unit():
    for entry in api.cc_list():
        for row in reference.cc_parameters(entry):
            assert row["meaning"], f"{entry['name']}.{row['parameter']}"
            assert row["unit"], f"{entry['name']}.{row['parameter']}"
    cubic = next(e for e in api.cc_list() if e["name"] == "cubic")
    rows = {r["parameter"]: (r["default"], r["unit"], r["kernel"]) for r in reference.cc_parameters(cubic)}
    assert rows["beta"] == ("717", "1/1024", "beta")
    assert rows["hystart_ack_delta_us"] == ("2000", "us", "hystart_ack_delta_us")
    assert rows["hystart_low_window"] == ("16", "packets", "hystart_low_window")
    assert rows["hystart"] == ("true", "on/off", "hystart")


def test_no_help_text_cites_an_unshipped_spec():
    cited = []
    for tree in ("python", "crates", "bpf"):
        for path in (ROOT / tree).rglob("*"):
            if path.suffix in (".py", ".rs", ".c", ".md", ".toml") and "target" not in path.parts:
                for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                    if re.search(r"\bSPEC\b", line):
                        cited.append(f"{path.relative_to(ROOT)}:{n}")
    assert cited == []


# -- result columns ----------------------------------------------------------------------


def _runs():
    wired = {**WIRED, "flows": [{"cc": "bbr"}, {"cc": "cubic"}], "pings": [{}]}
    wifi = {**WIFI, "flows": [{"cc": "cubic"}], "pings": [{"kind": "udp"}]}
    trace = {**TRACE, "flows": [{"cc": "reno", "direction": "down"}], "pings": [{}]}
    return [wificc.run(s) for s in (wired, wifi, trace)]


@pytest.fixture(scope="module")
def runs():
    return _runs()


def test_every_column_of_every_table_has_an_entry_and_every_entry_a_column(runs):
    seen: dict[str, set[str]] = {t: set() for t in result.TABLE_FILES}
    for r in runs:
        parameters = set(r.parameters)
        for table, frame in r.tables().items():
            for column in frame.columns:
                if table == "summary" and column in parameters and column not in result.COLUMNS["summary"]:
                    seen[table].add(result.PARAMETER_COLUMNS)
                    continue
                assert column in result.COLUMNS[table], f"{table}.{column} has no entry in wificc.result.COLUMNS"
                seen[table].add(column)
    for table, columns in result.COLUMNS.items():
        assert set(columns) == seen[table], f"{table}: entries without a column {set(columns) - seen[table]}"
        for column, (_unit, meaning) in columns.items():
            assert meaning.strip(), f"{table}.{column}"
    assert list(result.COLUMNS) == list(result.TABLE_FILES) == list(result.TABLE_ABOUT)


def test_a_column_without_an_entry_is_caught(runs, monkeypatch):
    columns = copy.deepcopy(result.COLUMNS)
    del columns["flows"]["cwnd_mean"]
    monkeypatch.setattr(result, "COLUMNS", columns)
    with pytest.raises(AssertionError, match="flows.cwnd_mean has no entry"):
        test_every_column_of_every_table_has_an_entry_and_every_entry_a_column(runs)


def test_model_series_names_the_coded_quantities(runs):
    wired = runs[0]
    model = wired.model_series
    flows = wired.flows.set_index("id")["cc"]
    modes = model[(model["name"] == "mode") & (model["flow"].map(flows) == "bbr")]
    assert len(modes) > 0
    names = {0.0: "STARTUP", 1.0: "DRAIN", 2.0: "PROBE_BW", 3.0: "PROBE_RTT"}
    assert (modes["label"] == modes["value"].map(names)).all()
    # A one-second bbr flow starts in STARTUP and leaves it.
    assert modes["label"].iloc[0] == "STARTUP"
    assert set(modes["label"]) - {"STARTUP"}
    hystart = model[(model["name"] == "hystart_exit")]
    assert set(hystart["label"]) <= {"none", "ack_train", "delay"} and len(hystart) > 0
    assert (model[~model["name"].isin(["mode", "hystart_exit"])]["label"] == "").all()


def test_saved_runs_keep_the_labels(runs, tmp_path):
    saved = result.load(runs[0].save(tmp_path / "run"))
    assert list(saved.model_series["label"]) == list(runs[0].model_series["label"])


# -- examples ----------------------------------------------------------------------------

EXAMPLES = ROOT / "examples"
SCENARIO_EXAMPLES = sorted(p for p in EXAMPLES.glob("*.toml") if p.name not in reference.GRID_EXAMPLES)


def test_there_is_an_example_scenario_per_path_kind():
    kinds = {wificc.scenarios.load(p)["path"]["kind"] for p in SCENARIO_EXAMPLES}
    assert kinds == {"wired", "wifi", "trace"}


@pytest.mark.parametrize("path", SCENARIO_EXAMPLES, ids=lambda p: p.name)
def test_each_example_scenario_runs(path):
    scenario = wificc.scenarios.load(path)
    scenario["duration"] = "2s"
    scenario.pop("warmup", None)
    r = wificc.run(scenario)
    assert len(r.flows) == len(scenario["flows"]) > 0
    assert (r.flows["goodput_bps"] > 0).all(), r.flows[["name", "goodput_bps"]]
    assert (r.pings["received"] > 0).all()


@pytest.mark.parametrize("name", reference.GRID_EXAMPLES)
def test_each_example_grid_runs(name, tmp_path):
    document, root = _grid(EXAMPLES / name)
    document["repetitions"] = 1
    if "options" in document:
        document["options"] = {**document["options"], "length": "1s", "delay": "0.2s"}
    else:
        document["scenario"] = {**wificc.scenarios.load(root / document["scenario"]), "duration": "2s", "warmup": "0s"}
    from wificc.sweep import expand, parse_grid, sweep

    runs = expand(parse_grid(document, root))
    assert len(runs) == {"grid.toml": 2 * 2 * 2, "grid-scenario.toml": 2 * 2}[name]
    table = sweep(document, tmp_path / "out", workers=1, progress=False)
    assert len(table) == len(runs)
    assert (table["total_goodput_bps"] > 0).all()


def _grid(path):
    import tomllib

    return tomllib.loads(path.read_text()), path.parent


def test_the_sweep_page_shows_the_example_grids():
    page = reference.sweep_markdown()
    blocks = re.findall(r"```toml\n(.*?)```", page, re.DOTALL)
    assert [b.rstrip() for b in blocks] == [(EXAMPLES / n).read_text().rstrip() for n in reference.GRID_EXAMPLES]
    for option in ("cc", "tsq", "length", "rtts"):
        assert f"| `{option}` |" in page


def test_a_document_without_flow_ids_gets_no_labels(runs):
    """The emulator's documents name their flows without ids: the model is kept, unlabelled."""
    raw = json.loads(runs[0].to_json())
    for flow in raw["flows"]:
        del flow["id"]
    r = result.Result.from_json(json.dumps(raw))
    assert len(r.model_series) == len(runs[0].model_series)
    assert (r.model_series["label"] == "").all()
