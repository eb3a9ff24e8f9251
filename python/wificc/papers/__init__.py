"""The published studies' own figures as data, and wificc's headline rows beside them.

Each study that ``wificc reproduce`` runs has a file ``<study>.toml`` here: what its paper
(``../shared/papers/``) reports for the settings of wificc's headline table, entry by entry,
each with the figure or table it comes from. The papers' texts come without their figures, so a
number is only ever one the text states (``how = "stated"``), or one worked out from stated
numbers (``"derived"``, such as the sum of a stated download and upload rate); what a figure
only shows is recorded as the shape the text describes (``"shape"``); ``"plot"`` is kept for a
value read off a plot. Nothing is filled in where the text is silent: a headline row that no
entry matches is "not reported", and ``kind = "none"`` says so explicitly with where it was
looked for.

An entry (``[[entry]]``) names its ``experiment``, the settings it ``match``\\ es (a subset of the
row's ``key=value`` setting; a value may be a list, or ``{min, max}`` on the number inside the
value, such as the 512 of ``static:512p``), the ``metric`` (a column of the metrics table:
:data:`METRICS`), its ``source`` (figure/table and section) and ``how``, the paper's words
(``text``) and a ``note``. Its ``kind``:

- ``value``: ``value`` with ``bound`` ``"~"`` (about), ``"<"`` or ``">"``, or ``range = [lo, hi]``;
- ``ratio``: the row's metric over that of the row with the settings ``to`` replaced, against
  ``value`` and ``bound``;
- ``order``: the paper's ranking of the values of one setting ``key`` (``order``, largest
  first) among rows equal in their other settings; shown once, on the row of the first value;
- ``shape``: the text alone (not checked);
- ``none``: not reported.

``comparable = false`` marks a paper figure that is another statistic than wificc's (a mean over
the whole test with its idle periods, a 95th percentile): shown with its ratio, never judged.

**The rule** (:func:`agrees`): a difference within :data:`TOLERANCE` (15%; for Jain's index 5%,
:data:`TOLERANCES`) counts as agreement.
``~``: ``|wificc / paper - 1| <= 15%``; ``<``: ``wificc <= paper x 1.15``; ``>``: ``wificc >=
paper / 1.15``; a range: ``lo / 1.15 <= wificc <= hi x 1.15``; an order: along the paper's
order no value exceeds the one before it by more than 15% (a smaller gap is a tie, which does
not contradict the paper). Free shapes, missing partners and non-comparable figures: ``n/a``.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

# Where the studies' files are: this package's directory.
DATA_DIR = Path(__file__).parent
# A difference within this fraction is agreement (the module's rule).
TOLERANCE = 0.15
# Metrics with their own tolerance: Jain's index of two flows lies in [0.5, 1], where 15% of a
# value near 0.9 would span a quarter of the whole range; 5% is about a tenth of it.
TOLERANCES = {"jain": 0.05}
# The metrics an entry may name: column of the metrics table -> how the comparison names it.
METRICS = {
    "goodput_mbit": "goodput Mbit/s",
    "ping_p50_ms": "ping p50 ms",
    "jain": "Jain index",
    "ampdu_mean": "mean A-MPDU (frames)",
    "retrans": "retransmissions",
}
# Columns of runs.parquet the metrics table adds to the headline (their medians per setting).
EXTRA_METRICS = ("jain", "ampdu_mean", "retrans")
# Digits each metric is printed with.
DIGITS = {"goodput_mbit": 2, "ping_p50_ms": 1, "jain": 3, "ampdu_mean": 1, "retrans": 0}
KINDS = ("value", "ratio", "order", "shape", "none")
HOWS = ("stated", "derived", "plot", "shape", "not reported")
BOUNDS = ("~", "<", ">")
# The comparison's columns (comparison.csv, in this order).
COLUMNS = ("experiment", "setting", "metric", "wificc", "paper", "source", "how", "ratio", "agrees", "note", "entry")
# The by-entry summary's columns (comparison.md's first table).
SUMMARY_COLUMNS = ("entry", "experiment", "rows", "metric", "paper", "source", "how", "wificc", "agrees")
COMPARISON_CSV = "comparison.csv"
COMPARISON_MD = "comparison.md"
# A setting label's parts: "cc=bbr, rtts=10ms,50ms" splits before each ", key=".
_PART = re.compile(r", (?=[\w.\[\]]+=)")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Entry:
    """One thing a paper reports for some headline rows of one experiment (module doc)."""

    experiment: str
    kind: str
    source: str
    how: str
    match: Mapping[str, Any] = field(default_factory=dict)
    metric: str | None = None
    value: float | None = None
    bound: str = "~"
    range: tuple[float, float] | None = None
    to: Mapping[str, str] = field(default_factory=dict)
    key: str | None = None
    order: tuple[str, ...] = ()
    text: str = ""
    note: str = ""
    comparable: bool = True


@dataclass(frozen=True)
class Paper:
    """A study's paper: its file in ../shared/papers, its citation and its entries."""

    study: str
    file: str
    citation: str
    entries: tuple[Entry, ...]


def _fail(where: str, field_name: str, value: Any, expected: str) -> ValueError:
    return ValueError(f"{where}: {field_name}: got {value!r}, expected {expected}")


def _number(where: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _fail(where, name, value, "a finite number")
    return float(value)


def _match(where: str, name: str, raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise _fail(where, name, raw, "a table of setting = value")
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, str):
            out[key] = value
        elif isinstance(value, int) and not isinstance(value, bool):
            out[key] = str(value)
        elif isinstance(value, list) and value and all(isinstance(v, str | int) for v in value):
            out[key] = tuple(str(v) for v in value)
        elif isinstance(value, dict) and set(value) == {"min", "max"}:
            out[key] = (
                _number(where, f"{name}.{key}.min", value["min"]),
                _number(where, f"{name}.{key}.max", value["max"]),
            )
        else:
            raise _fail(where, f"{name}.{key}", value, "a value, a list of values or {min, max}")
    return out


def parse_entry(raw: Mapping[str, Any], where: str) -> Entry:
    """One ``[[entry]]`` table, checked field by field."""
    known = {f for f in Entry.__dataclass_fields__}
    for name in raw:
        if name not in known:
            raise _fail(where, name, raw[name], f"no such field (fields: {', '.join(sorted(known))})")
    for name in ("experiment", "kind", "source", "how"):
        if not isinstance(raw.get(name), str) or not raw[name]:
            raise _fail(where, name, raw.get(name), "a non-empty string")
    kind, how = raw["kind"], raw["how"]
    if kind not in KINDS:
        raise _fail(where, "kind", kind, f"one of {', '.join(KINDS)}")
    if how not in HOWS:
        raise _fail(where, "how", how, f"one of {', '.join(HOWS)}")
    metric = raw.get("metric")
    if metric is not None and metric not in METRICS:
        raise _fail(where, "metric", metric, f"one of {', '.join(METRICS)}")
    if kind in ("value", "ratio", "order") and metric is None:
        raise _fail(where, "metric", None, f"a metric for a {kind} entry")
    bound = raw.get("bound", "~")
    if bound not in BOUNDS:
        raise _fail(where, "bound", bound, f"one of {' '.join(BOUNDS)}")
    value = _number(where, "value", raw["value"]) if "value" in raw else None
    span = None
    if "range" in raw:
        r = raw["range"]
        if not isinstance(r, list) or len(r) != 2:
            raise _fail(where, "range", r, "[low, high]")
        span = (_number(where, "range[0]", r[0]), _number(where, "range[1]", r[1]))
        if span[0] > span[1]:
            raise _fail(where, "range", r, "low <= high")
    if kind == "value" and (value is None) == (span is None):
        raise _fail(where, "value", raw.get("value"), "a value or a range (one of them) for a value entry")
    if kind == "ratio" and (value is None or value <= 0 or not raw.get("to")):
        raise _fail(where, "value/to", (raw.get("value"), raw.get("to")), "a positive value and the settings `to`")
    if kind == "ratio" and span is not None:
        raise _fail(where, "range", raw["range"], "no range on a ratio entry")
    order = raw.get("order", [])
    if kind == "order":
        if not isinstance(raw.get("key"), str) or not isinstance(order, list) or len(order) < 2:
            raise _fail(where, "key/order", (raw.get("key"), order), "a setting key and at least two of its values")
    if kind == "shape" and not raw.get("text"):
        raise _fail(where, "text", raw.get("text"), "the paper's words for a shape entry")
    for name in ("text", "note"):
        if not isinstance(raw.get(name, ""), str):
            raise _fail(where, name, raw[name], "a string")
    comparable = raw.get("comparable", True)
    if not isinstance(comparable, bool):
        raise _fail(where, "comparable", comparable, "true or false")
    return Entry(
        experiment=raw["experiment"],
        kind=kind,
        source=raw["source"],
        how=how,
        match=_match(where, "match", raw.get("match", {})),
        metric=metric,
        value=value,
        bound=bound,
        range=span,
        to=_match(where, "to", raw.get("to", {})),
        key=raw.get("key"),
        order=tuple(str(v) for v in order),
        text=raw.get("text", ""),
        note=raw.get("note", ""),
        comparable=comparable,
    )


def load(study: str, directory: Path = DATA_DIR) -> Paper:
    """The paper figures of ``study`` (``<directory>/<study>.toml``), validated."""
    path = Path(directory) / f"{study}.toml"
    if not path.is_file():
        raise ValueError(f"study: got {study!r}, expected a study with a papers file ({path} not found)")
    try:
        doc = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: {e}") from e
    for name in ("study", "paper", "citation"):
        if not isinstance(doc.get(name), str) or not doc[name]:
            raise _fail(str(path), name, doc.get(name), "a non-empty string")
    if doc["study"] != study:
        raise _fail(str(path), "study", doc["study"], f"{study!r} (the file's name)")
    raw = doc.get("entry", [])
    if not isinstance(raw, list) or not raw:
        raise _fail(str(path), "entry", raw, "at least one [[entry]]")
    entries = tuple(parse_entry(e, f"{path} entry {i + 1}") for i, e in enumerate(raw))
    return Paper(doc["study"], doc["paper"], doc["citation"], entries)


# ---------------------------------------------------------------------------------------------
# Settings


def parse_setting(label: str) -> dict[str, str]:
    """``"cc=bbr, rtts=10ms,50ms"`` -> ``{"cc": "bbr", "rtts": "10ms,50ms"}`` (``all``: none)."""
    if label == "all":
        return {}
    return dict(part.split("=", 1) for part in _PART.split(label))


def _value_matches(wanted: Any, value: str) -> bool:
    if isinstance(wanted, str):
        return value == wanted
    if isinstance(wanted, tuple) and wanted and isinstance(wanted[0], float):
        found = _NUMBER.search(value)
        return found is not None and wanted[0] <= float(found.group()) <= wanted[1]
    return value in wanted


def matches(entry: Entry, setting: Mapping[str, str]) -> bool:
    """Whether a row's setting has every value the entry's ``match`` names."""
    return all(k in setting and _value_matches(v, setting[k]) for k, v in entry.match.items())


def check(paper: Paper, grids: Mapping[str, Mapping[str, Sequence[Any]]]) -> None:
    """Every entry names an experiment of ``grids`` (experiment -> setting key -> its values,
    keys by their short names) and only settings and values it has."""
    for i, e in enumerate(paper.entries):
        where = f"{paper.study} entry {i + 1}"
        if e.experiment not in grids:
            raise _fail(where, "experiment", e.experiment, f"one of {', '.join(grids)}")
        grid = {k: [str(v) for v in values] for k, values in grids[e.experiment].items()}
        keys = [*e.match, *e.to, *([e.key] if e.key else [])]
        for key in keys:
            if key not in grid:
                raise _fail(where, "setting", key, f"a setting of {e.experiment}: {', '.join(grid) or '(none)'}")
        for name, table in (("match", e.match), ("to", e.to)):
            for key, wanted in table.items():
                if not any(_value_matches(wanted, v) for v in grid[key]):
                    raise _fail(where, f"{name}.{key}", wanted, f"values of {e.experiment}: {', '.join(grid[key])}")
        for value in e.order:
            if value not in grid[e.key]:  # type: ignore[index]
                raise _fail(where, "order", value, f"values of {e.key}: {', '.join(grid[e.key])}")  # type: ignore[index]


# ---------------------------------------------------------------------------------------------
# Comparison


def tolerance(metric: str | None) -> float:
    """The fraction within which a difference in ``metric`` counts as agreement."""
    return TOLERANCES.get(metric or "", TOLERANCE)


def agrees(wificc: float, entry: Entry) -> bool:
    """The module's rule for a number (a metric, or a ratio of two for a ratio entry) against
    the entry's figure, with the tolerance of the entry's metric."""
    tol = tolerance(entry.metric)
    if entry.range is not None and entry.kind == "value":
        low, high = entry.range
        return low / (1 + tol) <= wificc <= high * (1 + tol)
    target = entry.value
    assert target is not None
    if entry.bound == "<":
        return wificc <= target * (1 + tol)
    if entry.bound == ">":
        return wificc >= target / (1 + tol)
    return abs(wificc / target - 1) <= tol


def ordered(values: Sequence[float], metric: str | None = None) -> bool:
    """The rule for an order: along the paper's order no value exceeds the one before it by
    more than the metric's tolerance."""
    tol = tolerance(metric)
    return all(b <= a * (1 + tol) for a, b in zip(values, values[1:], strict=False))


def _fmt(metric: str | None, value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{DIGITS.get(metric or '', 2)}f}"


def _paper_figure(e: Entry) -> str:
    if e.kind == "none":
        return "not reported" + (f": {e.text}" if e.text else "")
    if e.kind == "value":
        if e.range is not None:
            figure = f"{e.range[0]:g}-{e.range[1]:g}"
        else:
            figure = ("" if e.bound == "~" else e.bound + " ") + f"{e.value:g}"
    elif e.kind == "ratio":
        to = ", ".join(f"{k}={v}" for k, v in e.to.items())
        figure = ("" if e.bound == "~" else e.bound + " ") + f"{e.value:g} x ({to})"
    elif e.kind == "order":
        figure = " > ".join(f"{e.key}={v}" for v in e.order)
    else:
        figure = ""
    return f"{figure}: {e.text}" if figure and e.text else figure or e.text


def _key_of(setting: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(setting.items()))


def _verdict(ok: bool | None, entry: Entry) -> str:
    if ok is None:
        return "n/a"
    if not entry.comparable:
        return "n/a (other statistic)"
    return "yes" if ok else "no"


def compare(table: pd.DataFrame, paper: Paper) -> pd.DataFrame:
    """The side-by-side table: for every row of a metrics table (``experiment``, ``setting`` and
    the :data:`METRICS` columns it has), one line per paper entry that matches it, or one
    "not reported" line; columns :data:`COLUMNS`."""
    rows = [(r["experiment"], r["setting"], parse_setting(r["setting"]), r) for _, r in table.iterrows()]
    index = {(exp, _key_of(setting)): r for exp, _, setting, r in rows}
    out: list[dict[str, Any]] = []
    for exp, label, setting, row in rows:
        found = False
        for number, e in enumerate(paper.entries, start=1):
            if e.experiment != exp or not matches(e, setting):
                continue
            if e.kind == "order" and setting.get(e.key or "") != e.order[0]:
                continue
            found = True
            line = {
                "experiment": exp,
                "setting": label,
                "metric": METRICS.get(e.metric or "", "-"),
                "wificc": "-",
                "paper": _paper_figure(e),
                "source": e.source,
                "how": e.how,
                "ratio": "-",
                "agrees": "n/a",
                "note": e.note,
                "entry": number,
            }
            mine = float(row[e.metric]) if e.metric and e.metric in row and pd.notna(row[e.metric]) else None
            if e.kind in ("value", "shape") and mine is not None:
                line["wificc"] = _fmt(e.metric, mine)
            if e.kind == "value" and mine is not None:
                reference = e.value if e.range is None else sum(e.range) / 2
                if reference:
                    line["ratio"] = f"{mine / reference:.2f}"
                line["agrees"] = _verdict(agrees(mine, e), e)
            elif e.kind == "ratio":
                partner = index.get((exp, _key_of({**setting, **e.to})))
                theirs = partner[e.metric] if partner is not None and e.metric in partner else None
                if mine is not None and theirs is not None and pd.notna(theirs) and theirs != 0:
                    quotient = mine / float(theirs)
                    line["wificc"] = f"{quotient:.2f} x ({_fmt(e.metric, mine)} / {_fmt(e.metric, float(theirs))})"
                    line["ratio"] = f"{quotient / e.value:.2f}"  # type: ignore[operator]
                    line["agrees"] = _verdict(agrees(quotient, e), e)
            elif e.kind == "order":
                values = []
                for v in e.order:
                    other = index.get((exp, _key_of({**setting, e.key: v})))  # type: ignore[dict-item]
                    if other is None or e.metric not in other or pd.isna(other[e.metric]):
                        break
                    values.append(float(other[e.metric]))
                if len(values) == len(e.order):
                    line["wificc"] = " > ".join(
                        f"{v}: {_fmt(e.metric, x)}" for v, x in zip(e.order, values, strict=True)
                    )
                    line["agrees"] = _verdict(ordered(values, e.metric), e)
            out.append(line)
        if not found:
            out.append(
                {
                    "experiment": exp,
                    "setting": label,
                    "metric": "-",
                    "wificc": f"{_fmt('goodput_mbit', row.get('goodput_mbit'))} Mbit/s, "
                    f"{_fmt('ping_p50_ms', row.get('ping_p50_ms'))} ms",
                    "paper": "not reported",
                    "source": "-",
                    "how": "not reported",
                    "ratio": "-",
                    "agrees": "n/a",
                    "note": "",
                    "entry": 0,
                }
            )
    return pd.DataFrame(out, columns=list(COLUMNS))


def _rows_text(e: Entry) -> str:
    if not e.match:
        return "every row"
    parts = []
    for key, wanted in e.match.items():
        if isinstance(wanted, str):
            parts.append(f"{key}={wanted}")
        elif wanted and isinstance(wanted[0], float):
            parts.append(f"{key}={wanted[0]:g}..{wanted[1]:g}")
        else:
            parts.append(f"{key}={'|'.join(wanted)}")
    return ", ".join(parts)


def summary(frame: pd.DataFrame, paper: Paper) -> pd.DataFrame:
    """One line per paper entry of a comparison (:func:`compare`): the rows it covers, the
    paper's figure, wificc's figures (each, or their span over more than three lines) and how
    many of the judged lines agree ("2 of 3"; n/a when none is judged)."""
    out = []
    for number, e in enumerate(paper.entries, start=1):
        lines = frame[frame["entry"] == number]
        if lines.empty:
            continue
        cells = [c for c in lines["wificc"] if c != "-"]
        numbers = [float(c.split()[0]) for c in cells if _NUMBER.fullmatch(c.split()[0])]
        if len(cells) <= 3:
            mine = "; ".join(cells) or "-"
        elif e.kind in ("value", "ratio", "shape") and len(numbers) == len(cells):
            mine = f"{_fmt(e.metric, min(numbers))} .. {_fmt(e.metric, max(numbers))} ({len(cells)} rows)"
            if e.kind == "ratio":
                mine = f"{min(numbers):.2f} .. {max(numbers):.2f} x ({len(cells)} rows)"
        else:
            mine = f"{len(cells)} rows"
        yes, no = int((lines["agrees"] == "yes").sum()), int((lines["agrees"] == "no").sum())
        out.append(
            {
                "entry": number,
                "experiment": e.experiment,
                "rows": _rows_text(e),
                "metric": METRICS.get(e.metric or "", "-"),
                "paper": _paper_figure(e),
                "source": e.source,
                "how": e.how,
                "wificc": mine,
                "agrees": f"{yes} of {yes + no}" if yes + no else "n/a",
            }
        )
    return pd.DataFrame(out, columns=list(SUMMARY_COLUMNS))


def _table(frame: pd.DataFrame) -> list[str]:
    lines = ["| " + " | ".join(frame.columns) + " |", "|---" * len(frame.columns) + "|"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |")
    return lines


def rule_text() -> str:
    """The agreement rule in one paragraph (the comparison's header)."""
    pct = round(TOLERANCE * 100)
    return (
        f"**agrees?**: a difference within {pct}% counts as agreement. About a value (~): "
        f"|wificc / paper - 1| <= {pct}%; below a bound (<): wificc <= {1 + TOLERANCE:g} x paper; above "
        f"a bound (>): wificc >= paper / {1 + TOLERANCE:g}; a range: within it widened by {pct}% each side; "
        f"a ratio x (settings): wificc's ratio of this row to the row with those settings, by the same rules; "
        f"an ordering (largest first): along it no value exceeds the one before it by more than {pct}%. "
        + "".join(
            f"For the {METRICS[m]} the tolerance is {round(t * 100)}% in place of {pct}%. "
            for m, t in TOLERANCES.items()
        )
        + "n/a: the paper gives only a shape, the partner row is missing, or the paper's figure is "
        "another statistic. ratio: wificc / paper."
    )


def comparison_markdown(frame: pd.DataFrame, paper: Paper, title: str) -> str:
    """The side-by-side table as a Markdown document (``comparison.md``): the rule, the lines by
    paper entry (:func:`summary`), then every line by headline row."""
    counts = frame["agrees"].value_counts()
    judged = int(counts.get("yes", 0) + counts.get("no", 0))
    counts_text = f"yes: {counts.get('yes', 0)}, no: {counts.get('no', 0)}, n/a: {len(frame) - judged}"
    lines = [
        f"# {title}: wificc beside the paper",
        "",
        f"Paper: {paper.citation} (`{paper.file}`).",
        "",
        rule_text(),
        "",
        f"Lines: {len(frame)} ({counts_text}).",
        "",
        "## By paper entry",
        "",
        *_table(summary(frame, paper)),
        "",
        "## By headline row",
        "",
        *_table(frame),
    ]
    return "\n".join(lines) + "\n"
