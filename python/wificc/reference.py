"""The reference documentation, generated from the code so that it cannot drift from it.

- ``docs/scenario.md``: every scenario field with its type, unit, default and accepted range,
  rendered from the JSON Schema the core derives from its serde types and their doc comments
  (``wificc._core.scenario_schema``, ``crates/wificc-core/src/schema.rs``).
- ``docs/results.md``: every column of the tables a run writes, from
  :data:`wificc.result.COLUMNS`, and the names of the coded model quantities.
- ``docs/catalog.md``: the congestion controls with each parameter's meaning, unit and default,
  the test catalog, the kernel profiles, the Wi-Fi drivers and the chipset presets.
- ``docs/sweep.md``: the sweep grid format (:data:`wificc.sweep.GRID_KEY_DOCS`, the catalog
  options of :func:`wificc.scenarios.build`) with the example grids of ``examples/``.

``wificc schema --json`` prints the schema, ``--markdown`` its page; ``wificc reference --out
docs`` writes the four pages, and the tests fail when a checked-in page differs from what the
code generates. Defaults are shown in human units ("30 s", "10 Gbit/s") by :func:`human`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from wificc import _core, result, scenarios

# The pages, by file name, and the command that writes them.
PAGES = ("scenario.md", "results.md", "catalog.md", "sweep.md")
COMMAND = "wificc reference --out docs"
# Quantity kinds of the schema's `x-quantity` (crates/wificc-core/src/parse.rs) with the unit
# the reference shows for them.
QUANTITY_UNITS = {"Dur": "duration", "Rate": "bit/s", "Size": "bytes", "Buf": "packets, bytes or BDP"}
# Anchors of the quantity kinds' explanations in scenario.md.
QUANTITY_ANCHORS = {"Dur": "duration", "Rate": "rate", "Size": "size", "Buf": "buffer"}
# Bounds that schemars writes for an integer's machine type: not a range the scenario states.
_FORMAT_BOUNDS = {
    "uint8": (0, 255),
    "uint16": (0, 65535),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "uint": (0, 2**64 - 1),
}


@cache
def scenario_schema() -> dict[str, Any]:
    """The scenario's JSON Schema (draft 2020-12), as the core derives it."""
    return json.loads(_core.scenario_schema())


@cache
def catalogs() -> dict[str, Any]:
    """Kernel profiles, Wi-Fi drivers, chipset presets and the coded model quantities."""
    return json.loads(_core.catalogs())


# -- human units ---------------------------------------------------------------------------


def _number(x: float) -> str:
    """A number without a trailing ".0", at most 6 significant digits."""
    return f"{x:.6g}"


def human_duration(ns: int) -> str:
    """``30_000_000_000`` -> ``"30 s"``, ``200_000_000`` -> ``"200 ms"``, ``800`` -> ``"800 ns"``."""
    if ns == 0:
        return "0 s"
    for unit, scale in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns >= scale:
            return f"{_number(ns / scale)} {unit}"
    return f"{ns} ns"


def human_rate(bps: int) -> str:
    """``10_000_000_000`` -> ``"10 Gbit/s"``, ``1_200_000`` -> ``"1.2 Mbit/s"``."""
    for unit, scale in (("Gbit/s", 10**9), ("Mbit/s", 10**6), ("kbit/s", 10**3)):
        if bps >= scale:
            return f"{_number(bps / scale)} {unit}"
    return f"{bps} bit/s"


def human_size(n: int) -> str:
    """``1514`` -> ``"1514 B"``, ``33_554_432`` -> ``"32 MiB"``, ``64_000`` -> ``"64 kB"``."""
    for unit, scale in (("MiB", 1 << 20), ("MB", 10**6), ("KiB", 1 << 10), ("kB", 10**3)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def human_buffer(text: str) -> str:
    """``"1000p"`` -> ``"1000 packets"``, ``"1bdp"`` -> ``"1 BDP"``, ``"64000b"`` -> ``"64 kB"``."""
    s = text.strip().lower()
    if s.endswith("bdp"):
        return f"{s[:-3]} BDP"
    if s.endswith("p"):
        return f"{s[:-1]} packets"
    return human_size(scenarios.size_bytes("buffer", s))


def human(value: Any, quantity: str | None) -> str:
    """A value as the reference shows it: quantities (``x-quantity``) in human units, strings
    quoted, tables as inline TOML."""
    if quantity is not None and isinstance(value, str | int | float) and not isinstance(value, bool):
        text = str(value)
        if quantity == "Dur":
            return human_duration(scenarios.duration_ns("default", text))
        if quantity == "Rate":
            return human_rate(scenarios.rate_bps("default", text))
        if quantity == "Size":
            return human_size(scenarios.size_bytes("default", text))
        if quantity == "Buf":
            return human_buffer(text)
    return _toml(value)


# How the core writes a quantity back (parse.rs `quantity!`): "30000000000ns", "50000000bit",
# "1514b", and buffers as "1000p" or "1.5bdp".
_SERIALISED = (
    (re.compile(r"[0-9]+ns"), "Dur"),
    (re.compile(r"[0-9]+bit"), "Rate"),
    (re.compile(r"[0-9]+b"), "Size"),
    (re.compile(r"[0-9]+p|[0-9.e+-]+bdp"), "Buf"),
)


def _toml(value: Any) -> str:
    """A value as inline TOML (the scenario's spelling), quantities the core wrote back in
    human units."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, str):
        for pattern, quantity in _SERIALISED:
            if pattern.fullmatch(value):
                return human(value, quantity)
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


# -- the scenario schema as markdown ------------------------------------------------------


def _ref_name(schema: Mapping[str, Any]) -> str | None:
    ref = schema.get("$ref")
    return ref.removeprefix("#/$defs/") if isinstance(ref, str) else None


def _defs() -> dict[str, Any]:
    return scenario_schema().get("$defs", {})


def _resolve(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """A schema with its ``$ref`` followed (once)."""
    name = _ref_name(schema)
    return _defs()[name] if name is not None else schema


def _variants(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The alternatives of an ``anyOf`` / ``oneOf`` schema, else the schema alone."""
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return list(schema[key])
    return [schema]


def _non_null(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """An ``Option<T>``'s T: the schema without its null alternative."""
    options = [v for v in schema.get("anyOf", []) if v.get("type") != "null"]
    if "anyOf" in schema and len(options) == 1:
        return {**options[0], **{k: v for k, v in schema.items() if k != "anyOf"}}
    types = schema.get("type")
    if isinstance(types, list) and "null" in types and len(types) == 2:
        return {**schema, "type": next(t for t in types if t != "null")}
    return schema


def _quantity(schema: Mapping[str, Any]) -> str | None:
    return _resolve(_non_null(schema)).get("x-quantity")


def _anchor(name: str) -> str:
    return name.lower().replace(" ", "-").replace(".", "").replace("`", "")


def _type(schema: Mapping[str, Any]) -> str:
    """A field's type in words, linking to the section of a table or a quantity."""
    schema = _non_null(schema)
    name = _ref_name(schema)
    if name is not None:
        target = _defs()[name]
        if "x-quantity" in target:
            q = target["x-quantity"]
            return f"[{QUANTITY_ANCHORS[q]}](#{QUANTITY_ANCHORS[q]})"
        return f"[{name}](#{_anchor(name)})"
    if "const" in schema:
        return _toml(schema["const"])
    if "enum" in schema:
        return " | ".join(_toml(v) for v in schema["enum"])
    if "anyOf" in schema or "oneOf" in schema:
        return " or ".join(_type(v) for v in _variants(schema))
    kind = schema.get("type")
    if kind == "array":
        return f"list of {_type(schema.get('items', {}))}"
    if kind == "object":
        return "table" if "properties" in schema else "table (KEY = VALUE)"
    if isinstance(kind, list):
        return " or ".join(kind)
    return str(kind or "any")


def _range(schema: Mapping[str, Any]) -> str:
    """The accepted range the schema states (not the bounds of the machine type alone)."""
    schema = _non_null(schema)
    low, high = schema.get("minimum"), schema.get("maximum")
    bounds = _FORMAT_BOUNDS.get(schema.get("format", ""))
    if bounds is not None:
        low = None if low == bounds[0] else low
        high = None if high == bounds[1] else high
    exclusive = schema.get("exclusiveMaximum")
    if low is not None and exclusive is not None:
        return f"[{_number(low)}, {_number(exclusive)})"
    if low is not None and high is not None:
        return f"{_number(low)} to {_number(high)}"
    if low is not None:
        return f"at least {_number(low)}"
    if high is not None:
        return f"at most {_number(high)}"
    return ""


def _unit(schema: Mapping[str, Any]) -> str:
    schema = _non_null(schema)
    q = _quantity(schema)
    if q is not None:
        return QUANTITY_UNITS[q]
    return str(schema.get("x-unit", ""))


_RUSTDOC_LINK = re.compile(r"\[(`[^`]+`)\]")


def _prose(text: str) -> str:
    """A doc comment as markdown: rustdoc's intra-doc links as plain code."""
    return _RUSTDOC_LINK.sub(r"\1", text.strip())


def _cell(text: str) -> str:
    """Table-cell text: one line, pipes escaped."""
    return " ".join(_prose(str(text)).split()).replace("|", "\\|")


def _field_row(name: str, prop: Mapping[str, Any], required: bool) -> str:
    target = _ref_name(_non_null(prop))
    if required:
        default = "required"
    elif "default" not in prop:
        default = "none"
    elif (
        target is not None
        and _is_table(_defs()[target])
        and isinstance(prop["default"], Mapping)
        and ("kind" not in prop["default"])
    ):
        default = f"each field's default ([{target}](#{_anchor(target)}))"
    else:
        default = human(prop["default"], _quantity(prop))
    cells = [f"`{name}`", _type(prop), _unit(prop), default, _range(prop), prop.get("description", "")]
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _is_table(schema: Mapping[str, Any]) -> bool:
    """Whether a definition is a table (or a table among its alternatives)."""
    return "properties" in schema or any("properties" in v for v in _variants(schema))


FIELD_HEADER = "| field | type | unit | default | range | description |\n|---|---|---|---|---|---|"


def _table(schema: Mapping[str, Any]) -> list[str]:
    """The field table of one object schema."""
    required = set(schema.get("required", []))
    # The tag first, then the fields in alphabetical order (as the schema lists them).
    fields = sorted(schema.get("properties", {}).items(), key=lambda kv: kv[0] != "kind")
    rows = []
    for name, prop in fields:
        rows.append(_field_row(name, prop, name in required))
        # A table defined in place (an interrupt timer set): its fields as rows of their own.
        inline = _non_null(prop)
        for sub, sub_prop in inline.get("properties", {}).items() if "$ref" not in inline else ():
            rows.append(_field_row(f"{name}.{sub}", sub_prop, sub in set(inline.get("required", []))))
    return [FIELD_HEADER, *rows] if rows else ["(no fields)"]


def _tables_of(schema: Mapping[str, Any]) -> Iterator[tuple[str | None, Mapping[str, Any]]]:
    """The object schemas of a definition: itself, or one per alternative (named by its kind)."""
    if "properties" in schema:
        yield None, schema
        return
    for variant in _variants(schema):
        if "properties" in variant:
            kind = variant["properties"].get("kind", {}).get("const")
            yield (f'kind = "{kind}"' if kind is not None else None), variant


def _section(name: str, schema: Mapping[str, Any]) -> list[str]:
    lines = [f"## {name}", ""]
    if schema.get("description"):
        lines += [_prose(schema["description"]), ""]
    variants = _variants(schema)
    names = [v for v in variants if v.get("type") == "string" and "enum" in v]
    tables = [_type(v) for v in variants if "$ref" in v]
    if names and any("properties" in v for v in variants):
        lines += [f"Also written as a bare name: {', '.join(_toml(n) for n in names[0]['enum'])}.", ""]
    elif names and "anyOf" in schema:
        others = [f"{_type(v)} {_range(v)}".strip() for v in variants if "enum" not in v and "$ref" not in v]
        alternatives = ", or ".join(["a name: " + ", ".join(_toml(n) for n in names[0]["enum"]), *others, *tables])
        lines += [f"Written as {alternatives}.", ""]
    for kind, table in _tables_of(schema):
        if kind is not None:
            lines += [f"### {name}: {kind}", ""]
            if table.get("description"):
                lines += [_prose(table["description"]), ""]
        lines += [*_table(table), ""]
    if "enum" in schema or "oneOf" in schema and not any("properties" in v for v in schema["oneOf"]):
        lines += _enum_values(schema)
    return lines


def _enum_values(schema: Mapping[str, Any]) -> list[str]:
    """The values of a string enum, each with its description where the schema has one."""
    out = []
    for v in schema.get("oneOf", []):
        value = v.get("const", v.get("enum", [None])[0] if v.get("enum") else None)
        out.append(f"- {_toml(value)}: {' '.join(v.get('description', '').split())}")
    if "enum" in schema:
        out.append("Values: " + ", ".join(_toml(v) for v in schema["enum"]) + ".")
    return [*out, ""]


def _definition_order() -> list[str]:
    """The definitions with tables or values, in the order a reader meets them from the top."""
    order: list[str] = []

    def walk(schema: Any) -> None:
        if isinstance(schema, Mapping):
            name = _ref_name(schema)
            if name is not None and name not in order:
                order.append(name)
                walk(_defs()[name])
            for value in schema.values():
                walk(value)
        elif isinstance(schema, list):
            for value in schema:
                walk(value)

    walk({k: v for k, v in scenario_schema().items() if k != "$defs"})
    return [n for n in order if "x-quantity" not in _defs()[n]]


def scenario_markdown() -> str:
    """``docs/scenario.md``: the scenario schema as tables, one section per table type."""
    schema = scenario_schema()
    defs = _defs()
    lines = [
        "# Scenario reference",
        "",
        f"Generated by `{COMMAND}` (or `wificc schema --markdown`) from the simulator's serde types "
        "and their doc comments (`crates/wificc-core/src/scenario.rs` and the specs it includes); "
        "do not edit it by hand. `wificc schema --json` prints the same as a JSON Schema (draft "
        "2020-12) for editors and validators. A scenario is a TOML or JSON document; unknown keys "
        "are refused at every level, and an invalid value is reported with its field path, the "
        "value and what is expected. Ranges that depend on other fields (an MSS below the MTU) "
        "are in the descriptions. See also [the results](results.md) and [the "
        "catalogs](catalog.md).",
        "",
        "```toml",
        'duration = "30s"',
        "[path]",
        'kind = "wired"',
        'rate = "50mbit"',
        'rtt = "20ms"',
        'buffer = "1bdp"',
        "[[flows]]",
        'cc = "bbr"',
        "[[pings]]",
        "```",
        "",
        "## Quantities",
        "",
    ]
    for q, anchor in QUANTITY_ANCHORS.items():
        text = " ".join(defs[q]["description"].split()) if q in defs else ""
        lines += [f"### {anchor}", "", text, ""]
    lines += ["## Scenario", "", *_table(schema), ""]
    for name in _definition_order():
        lines += _section(name, defs[name])
    return "\n".join(lines).rstrip() + "\n"


# -- the result tables --------------------------------------------------------------------


def results_markdown() -> str:
    """``docs/results.md``: every column of every table a run writes, and the model's codes."""
    lines = [
        "# Result tables",
        "",
        f"Generated by `{COMMAND}` from `wificc.result.COLUMNS` (python/wificc/result.py); do not "
        "edit it by hand. `wificc.run(...)` returns a `Result` whose tables are pandas DataFrames "
        "(`r.flows`, `r.flow_series`, ...); `Result.save(DIR)` and `wificc run --out DIR` write "
        "each as `DIR/<table>.parquet` beside `scenario.json` (the scenario with every default "
        "filled in), and `wificc.result.load(DIR)` reads them back. Series are long tables: one "
        "row per entity (flow, ping, queue, Wi-Fi node) per sample, so select an entity before "
        'plotting, e.g. `r.flow_series.pivot(index="t", columns="name", values="cwnd").plot()`.',
        "",
    ]
    for table, about in result.TABLE_ABOUT.items():
        lines += [f"## {table}", "", about, "", "| column | unit | meaning |", "|---|---|---|"]
        for column, (unit, meaning) in result.COLUMNS[table].items():
            lines.append(f"| `{column}` | {_cell(unit)} | {_cell(meaning)} |")
        lines.append("")
    lines += [
        "## Coded model quantities",
        "",
        "A few quantities of `model_series` are codes; their `label` column names them:",
        "",
        "| congestion controls | quantity | codes |",
        "|---|---|---|",
    ]
    for entry in catalogs()["model_codes"]:
        codes = ", ".join(f"{code} = {name}" for code, name in entry["codes"].items())
        lines.append(f"| {', '.join(entry['cc'])} | `{entry['quantity']}` | {codes} |")
    return "\n".join(lines).rstrip() + "\n"


# -- the catalogs -------------------------------------------------------------------------


def cc_parameters(entry: Mapping[str, Any]) -> list[dict[str, str]]:
    """The parameters of a congestion control (an entry of ``wificc.api.cc_list``) as the
    reference and ``wificc cc show`` print them: name, default in human units, unit, meaning
    and kernel name (the constant or module parameter its description cites in parentheses)."""
    rows = []
    schema = entry.get("param_schema", {})
    for key, default in entry["params"].items():
        prop = schema.get(key, {})
        description = " ".join(prop.get("description", "").split())
        quantity = prop.get("x-quantity")
        rows.append(
            {
                "parameter": key,
                "default": human(default, quantity),
                "unit": QUANTITY_UNITS.get(quantity, "") if quantity else _plain_unit(prop),
                "meaning": description,
                "kernel": _kernel_name(description),
            }
        )
    return rows


def _plain_unit(prop: Mapping[str, Any]) -> str:
    """A parameter's unit: its ``x-unit``, "on/off" for a switch, "name" for a choice."""
    prop = _non_null(prop)
    if "x-unit" in prop:
        return str(prop["x-unit"])
    if prop.get("type") == "boolean":
        return "on/off"
    if "enum" in prop or "oneOf" in prop:
        return "name"
    return ""


# A backticked name inside parentheses: how the parameters' doc comments cite the kernel's
# constant or module parameter ("(`bbr_high_gain`, 2/ln 2 rounded up)", "(v2 `bbr_beta` 30%)").
_KERNEL_NAME = re.compile(r"\([^()`]*`([A-Za-z_][A-Za-z0-9_]*(?:\[[0-9]+\])?)`")


def _kernel_name(description: str) -> str:
    """The kernel constant or module parameter a parameter's description cites, if any."""
    match = _KERNEL_NAME.search(description)
    return match.group(1) if match else ""


def catalog_markdown() -> str:
    """``docs/catalog.md``: congestion controls, tests, kernel profiles, drivers, chipsets."""
    from wificc import api

    cat = catalogs()
    lines = [
        "# Catalogs",
        "",
        f"Generated by `{COMMAND}` from the simulator's registries; do not edit it by hand. The "
        "same facts are printed by `wificc cc list`, `wificc cc show NAME` and `wificc tests "
        "NAME`. Field names refer to [the scenario reference](scenario.md).",
        "",
        "## Congestion controls",
        "",
        "A flow's `cc` names one; `cc_params` (or `--cc-param KEY=VALUE`) changes its parameters. "
        "Each parameter's kernel name is the constant or module parameter of the source it "
        "follows.",
        "",
    ]
    for entry in api.cc_list():
        lines += [f"### {entry['name']}", "", entry["summary"] + ".", "", f"Source: {entry['source']}.", ""]
        rows = cc_parameters(entry)
        if not rows:
            lines += ["No parameters.", ""]
            continue
        lines += ["| parameter | default | unit | kernel name | meaning |", "|---|---|---|---|---|"]
        for r in rows:
            cells = [
                f"`{r['parameter']}`",
                r["default"],
                r["unit"],
                f"`{r['kernel']}`" if r["kernel"] else "",
                r["meaning"],
            ]
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        lines.append("")
    lines += ["## Tests", "", "`wificc run TEST` builds the scenario of a test of the catalog:", ""]
    lines += ["| test | description |", "|---|---|"]
    lines += [f"| `{name}` | {_cell(text)} |" for name, text in scenarios.catalog()]
    lines += ["", "`wificc tests NAME` describes one in full (flows, series, pings, path, options).", ""]
    lines += _kernel_section(cat) + _driver_section(cat) + _chipset_section(cat)
    return "\n".join(lines).rstrip() + "\n"


def _kernel_section(cat: Mapping[str, Any]) -> list[str]:
    kernels = cat["kernels"]
    fields = [k for k in cat["profile_schema"] if k != "kernel"]
    lines = [
        "## Kernel profiles",
        "",
        f"`stack.kernel` (`--kernel`) picks the hosts' Linux release; default {cat['kernel_default']}. "
        "Its profile fills every version-dependent setting a scenario leaves open; the commit "
        "behind each value is in `crates/wificc-core/src/kernel.rs` and docs/fidelity.md.",
        "",
        "| setting | " + " | ".join(k["name"] for k in kernels) + " | meaning |",
        "|---|" + "---|" * len(kernels) + "---|",
    ]
    for f in fields:
        values = [_toml(k["profile"][f]) for k in kernels]
        meaning = cat["profile_schema"][f].get("description", "")
        lines.append(f"| `{f}` | " + " | ".join(values) + f" | {_cell(meaning)} |")
    return [*lines, ""]


def _driver_section(cat: Mapping[str, Any]) -> list[str]:
    drivers = cat["drivers"]
    keys = [k for k in drivers[0]["defaults"] if k != "kind"]
    lines = [
        "## Wi-Fi drivers",
        "",
        "`path.radio.driver` (`--driver`, `--driver-param KEY=VALUE`) picks a family and changes "
        "any of its values; default the chipset's. Sources of every default: "
        "`crates/wificc-core/src/net/wifi/driver.rs` and docs/fidelity.md.",
        "",
    ]
    lines += [f"- `{d['name']}`: {d['about']}." for d in drivers]
    lines += ["", "| value | " + " | ".join(d["name"] for d in drivers) + " |", "|---|" + "---|" * len(drivers)]
    for k in keys:
        lines.append(f"| `{k}` | " + " | ".join(_cell(_driver_value(d["defaults"][k])) for d in drivers) + " |")
    return [*lines, ""]


def _driver_value(value: Any) -> str:
    """A driver default: interrupt timers in human units."""
    if isinstance(value, Mapping) and set(value) == {"delay", "last", "first"}:
        shown = [f"{k} {human(v, 'Dur')}" for k, v in value.items() if v != "0ns"]
        return ", ".join(shown) if shown else "immediate"
    return _toml(value)


def _chipset_section(cat: Mapping[str, Any]) -> list[str]:
    lines = [
        "## Chipset presets",
        "",
        "`path.radio.chipset` (`--chipset`): a preset, or a custom PHY table.",
        "",
        "| chipset | standard | width | streams | MCS | guard interval | driver | aggregates VO | about |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cat["chipsets"]:
        p = c["phy"]
        cells = [
            f"`{c['name']}`",
            p["standard"],
            f"{p['width_mhz']} MHz",
            str(p["streams"]),
            str(p["mcs"]),
            human(p["guard_interval"], "Dur"),
            c["driver"],
            "yes" if c["aggregates_vo"] else "no",
            c["about"],
        ]
        lines.append("| " + " | ".join(_cell(x) for x in cells) + " |")
    return [*lines, ""]


# -- the sweep grid format ----------------------------------------------------------------

# The example grids the page shows, in this order (the tests run them).
GRID_EXAMPLES = ("grid.toml", "grid-scenario.toml")


def examples_dir() -> Path:
    """The source tree's examples/ directory."""
    return Path(__file__).resolve().parents[2] / "examples"


def sweep_markdown() -> str:
    """``docs/sweep.md``: the grid document's keys, its catalog options, and the examples."""
    from wificc.sweep import GRID_KEY_DOCS, OPTION_ALIASES, _expected, _option_hints

    lines = [
        "# Sweep grids",
        "",
        f"Generated by `{COMMAND}` from `wificc.sweep` and `examples/`; do not edit it by hand. "
        "`wificc sweep GRID --out DIR` runs every point of a grid (in parallel, resumable: the same "
        "command continues a killed sweep), `wificc plot DIR` and `wificc report DIR` draw it. A grid "
        "is a TOML or JSON document with these keys:",
        "",
        "| key | meaning |",
        "|---|---|",
        *[f"| `{k}` | {_cell(v)} |" for k, v in GRID_KEY_DOCS.items()],
        "",
        "## Grid keys",
        "",
        "A key of `[grid]` or `[[zip]]` is either a catalog option of the test (below), or a scenario "
        'field by its dotted path (docs/scenario.md): `"stack.tsq"`, `"path.radio.txq.target"`, '
        '`"flows[0].cc_params.bbrp_pace"` (a list index in brackets; a key with brackets is quoted, '
        "a bare dotted key such as `stack.tsq = [...]` reads the same). Each grid point is resolved in "
        "this order: the test is built from its options "
        "(`[options]` overridden by the point's option values) over the base scenario, then the point's "
        "dotted paths are set on the result; the core then validates the point and fills every default "
        "in. A run's id is a hash of this resolved scenario, so two spellings of one setting "
        '("50mbit", "50000kbit") are one run.',
        "",
        "## Catalog options",
        "",
        "The keyword options of a test (`wificc.scenarios.build`), as `[options]` keys and grid keys; "
        "each is the `wificc run` option of the same name with `-` for `_` (`wificc run --help` says "
        "what each does). A string stands for a list of one where a list is expected.",
        "",
        "| option | value |",
        "|---|---|",
    ]
    aliases = {name: key for key, name in OPTION_ALIASES.items()}
    for name, hint in _option_hints().items():
        lines.append(f"| `{aliases.get(name, name)}` | {_cell(_expected(hint))} |")
    # The examples of the source tree (an installed package without them leaves them out).
    found = [name for name in GRID_EXAMPLES if (examples_dir() / name).is_file()]
    lines += ["", "## Examples", ""] if found else []
    for name in found:
        text = (examples_dir() / name).read_text()
        lines += [f"`examples/{name}`:", "", "```toml", text.rstrip(), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def pages() -> dict[str, str]:
    """Every generated page by file name."""
    return {
        "scenario.md": scenario_markdown(),
        "results.md": results_markdown(),
        "catalog.md": catalog_markdown(),
        "sweep.md": sweep_markdown(),
    }


def write(directory: str | Path) -> list[Path]:
    """Write the generated pages into ``directory``; returns their paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in pages().items():
        path = out / name
        path.write_text(text)
        written.append(path)
    return written
