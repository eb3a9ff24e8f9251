"""Shared plumbing of the analytic models: registry, parameters, tables, files."""

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from wificc.models import MODELS, _common


def test_registry_names_the_cli_models():
    assert sorted(MODELS) == ["hybrid", "pg-fluid", "startup"]
    for name, run in MODELS.items():
        assert run()["model"] == name


@dataclass(frozen=True)
class Example:
    size: float = 1.0
    values: tuple[float, ...] = (1.0,)


def test_params_from_builds_tuples_and_rejects_unknown_names():
    built = _common.params_from(Example, {"values": [2.0, 3.0]}, "example")
    assert built == Example(values=(2.0, 3.0))
    with pytest.raises(
        ValueError,
        match="unknown parameter 'sise' for model 'example'; expected one of: size, values, extra",
    ):
        _common.params_from(Example, {"sise": 2.0}, "example", extra=("extra",))


def test_numbers_are_checked():
    assert _common.number("x", np.float64(2.5), "x > 0", lambda v: v > 0) == 2.5
    for bad in (False, "1", float("nan"), -1.0):
        with pytest.raises(ValueError, match=f"x: expected x > 0, got {bad!r}"):
            _common.number("x", bad, "x > 0", lambda v: v > 0)
    assert _common.integer("n", np.int64(3), "n >= 1", 1) == 3
    for bad in (True, 2.0, 0):
        with pytest.raises(ValueError, match=f"n: expected n >= 1, got {bad!r}"):
            _common.integer("n", bad, "n >= 1", 1)


def test_records_are_plain_python():
    frame = pd.DataFrame({"k": np.arange(2), "v": [0.5, 1.5], "ok": [True, False]})
    rows = _common.records(frame)
    assert rows == [{"k": 0, "v": 0.5, "ok": True}, {"k": 1, "v": 1.5, "ok": False}]
    assert type(rows[0]["k"]) is int
    assert type(rows[0]["ok"]) is bool
    json.dumps(rows)


def test_saved_figures_are_complete_and_reproducible(tmp_path):
    def draw():
        fig = Figure()
        fig.subplots().plot([1, 2, 3], [1, 4, 9])
        return fig

    first = _common.save_figure(draw(), "title", tmp_path / "a" / "f")
    second = _common.save_figure(draw(), "title", tmp_path / "b" / "f")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["f.png", "f.svg"]
    for one, two in zip(first, second, strict=True):
        assert one.read_bytes() == two.read_bytes()
