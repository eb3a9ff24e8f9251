"""Fluid model of two BBR flows probing in turn against hand-computed values."""

import json
import re
from fractions import Fraction

import numpy as np
import pytest
from wificc.models import pg_fluid
from wificc.models.pg_fluid import PgFluidParams

EXACT = 1e-12
DEFAULT = PgFluidParams()


def test_share_gains_of_the_study():
    # a = 0.5: dA = 0.25 * 0.25 / 1.125 = 1/18 and dB = 0.0625 / (1.25 - 0.125) = 1/18
    assert pg_fluid.share_gain_a(0.5) == pytest.approx(1 / 18, rel=EXACT)
    assert pg_fluid.share_gain_b(0.5) == pytest.approx(1 / 18, rel=EXACT)
    # a = 0.2: dA = 0.25 * 0.16 / 1.05 = 0.04 / 1.05, dB = 0.04 / 1.2: the smaller flow
    # gains more when it probes
    assert pg_fluid.share_gain_a(0.2) == pytest.approx(0.04 / 1.05, rel=EXACT)
    assert pg_fluid.share_gain_b(0.2) == pytest.approx(0.04 / 1.2, rel=EXACT)


def test_general_gain_reduces_to_the_study_formula():
    a = np.linspace(0.01, 0.99, 99)
    study_a = 0.25 * a * (1 - a) / (0.25 * a + 1)
    study_b = 0.25 * a * (1 - a) / (1.25 - 0.25 * a)
    assert np.allclose(pg_fluid.share_gain_a(a, 1.25), study_a, rtol=EXACT, atol=0)
    assert np.allclose(pg_fluid.share_gain_b(a, 1.25), study_b, rtol=EXACT, atol=0)


def test_first_cycle_from_an_even_split():
    # A probes: a' = (1/2 + 1/18) / (1 + 1/18) = (10/18) / (19/18) = 10/19
    # B probes: dB(10/19) = 0.25 (10/19)(9/19) / (1.25 - 0.25 * 10/19)
    #         = (22.5 / 361) / (21.25 / 19) = 22.5 / 403.75 = 18/323
    # a'' = (10/19) / (1 + 18/323) = (10/19)(323/341) = 170/341   (323 = 17 * 19)
    step = pg_fluid.probe_cycle(0.5, DEFAULT)
    assert step.d_a == pytest.approx(1 / 18, rel=EXACT)
    assert step.a_after_a == pytest.approx(10 / 19, rel=EXACT)
    assert step.d_b == pytest.approx(18 / 323, rel=EXACT)
    assert step.a_end == pytest.approx(float(Fraction(170, 341)), rel=EXACT)


def test_first_cycle_from_a_small_share():
    # a = 0.1: dA = 0.25 * 0.09 / 1.025 = 9/410
    # a' = (41/410 + 9/410) / (419/410) = 50/419
    # dB(50/419) = 0.25 (50/419)(369/419) / ((523.75 - 12.5) / 419)
    #            = 4612.5 / (419 * 511.25) = 3690/171371
    # a'' = (50/419)(171371/175061) = 20450/175061   (171371 = 419 * 409)
    step = pg_fluid.probe_cycle(0.1, DEFAULT)
    assert step.d_a == pytest.approx(9 / 410, rel=EXACT)
    assert step.a_after_a == pytest.approx(50 / 419, rel=EXACT)
    assert step.d_b == pytest.approx(3690 / 171371, rel=EXACT)
    assert step.a_end == pytest.approx(20450 / 175061, rel=EXACT)


def test_trajectory_chains_cycles():
    rows = pg_fluid.trajectory(0.5, PgFluidParams(cycles=3))
    assert rows["cycle"].tolist() == [1, 2, 3]
    assert rows.loc[0, "a_end"] == pytest.approx(170 / 341, rel=EXACT)
    assert rows["a_start"].iloc[1:].tolist() == rows["a_end"].iloc[:-1].tolist()
    assert np.allclose(rows["a_end"] + rows["b_end"], 1.0, rtol=0, atol=1e-15)
    # Jain of (a, 1 - a) = 1 / (2 (a^2 + (1 - a)^2));
    # at a = 170/341: 341^2 / (2 (170^2 + 171^2))
    assert rows.loc[0, "jain"] == pytest.approx(341**2 / (2 * (170**2 + 171**2)), rel=EXACT)


def test_fixed_point_of_equal_gains():
    a_star = pg_fluid.fixed_point(DEFAULT)
    assert pg_fluid.probe_cycle(a_star, DEFAULT).a_end == pytest.approx(a_star, abs=1e-15)
    assert 0.4864 < a_star < 0.4865
    for a0 in (0.1, 0.5, 0.9):
        late = pg_fluid.trajectory(a0, PgFluidParams(cycles=400))["a_end"].iloc[-1]
        assert late == pytest.approx(a_star, abs=1e-9)


def test_drift_is_monotone_toward_the_fixed_point():
    a_star = pg_fluid.fixed_point(DEFAULT)
    rising = pg_fluid.trajectory(0.1, DEFAULT)["a_end"]
    falling = pg_fluid.trajectory(0.9, DEFAULT)["a_end"]
    assert np.all(np.diff(rising) > 0)
    assert rising.iloc[-1] < a_star
    assert np.all(np.diff(falling) < 0)
    assert falling.iloc[-1] > a_star


def test_log_odds_drift_ends():
    # a = 0: A's probe adds ln 1.5, B's share is 1 so its probe removes nothing;
    # a = 1: A's probe adds ln 1.5 - ln 1.5 = 0, B's removes ln 2
    p = PgFluidParams(gain_a=1.5, gain_b=2.0)
    assert pg_fluid.log_odds_drift(0.0, p) == pytest.approx(np.log(1.5), rel=EXACT)
    assert pg_fluid.log_odds_drift(1.0, p) == pytest.approx(-np.log(2.0), rel=EXACT)


def test_larger_probing_gain_takes_the_larger_share():
    assert pg_fluid.fixed_point(PgFluidParams(gain_a=1.5)) > 0.5
    assert pg_fluid.fixed_point(PgFluidParams(gain_b=1.5)) < 0.5


def test_fixed_point_for_extreme_gains():
    for gain_a, gain_b in ((1 + 1e-12, 2.0), (2.0, 1 + 1e-12), (1e6, 1e6)):
        p = PgFluidParams(gain_a=gain_a, gain_b=gain_b)
        a_star = pg_fluid.fixed_point(p)
        assert 0 < a_star < 1
        assert pg_fluid.probe_cycle(a_star, p).a_end == pytest.approx(a_star, rel=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"starts": (0.0,)}, "starts: expected shares of flow A in"),
        ({"starts": (0.5, 0.5)}, "starts: expected distinct shares"),
        ({"cycles": 0}, "cycles: expected at least 1 probing cycle, got 0"),
        ({"gain_a": 1.0}, "gain_a: expected a probing gain > 1, got 1.0"),
        ({"gain_b": "fast"}, "gain_b: expected a probing gain > 1, got 'fast'"),
    ],
)
def test_bad_parameters_are_named(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        PgFluidParams(**kwargs)


def test_run_returns_json_ready_tables():
    result = pg_fluid.run(starts=[0.2, 0.7], cycles=5)
    json.dumps(result, allow_nan=False)
    assert [(row["a0"], row["cycle"]) for row in result["cycles"]] == [(a, n) for a in (0.2, 0.7) for n in range(1, 6)]
    assert result["fixed_point"] == pg_fluid.fixed_point(DEFAULT)
    a = result["fixed_point"]
    assert result["fixed_point_jain"] == pytest.approx(1 / (2 * (a * a + (1 - a) ** 2)))


def test_figure_writes_png_and_svg(tmp_path):
    paths = pg_fluid.figure(DEFAULT, tmp_path / "pg")
    assert paths[0].read_bytes().startswith(b"\x89PNG")
    assert b"<svg" in paths[1].read_bytes()
