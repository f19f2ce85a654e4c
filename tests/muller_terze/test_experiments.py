"""Müller & Terze's experiments (seed 004; notes/seed-004.md §3 and §5) by
the scripts of experiments/muller_terze/: RKMK4 in maximal coordinates on
SE(3) and SO(3) × R³. Oracles: the motion-subgroup argument (exactness to
round-off), the order of the method (16× per halving), conservation laws
and the paper's initial energies; the paper's own SO(3) × R³ equations of
the heavy top (eq. 41–42) against the notes' reproduction."""
import numpy as np
import pytest

from .experiments import load

common = load("muller_terze_common")


def test_e1_initial_energy_and_the_subgroup_claim():
    """The heavy top: T₀ = 13972.4 J (paper: 13.97 kJ); over 0.25 s at
    h = 1 ms the pivot stays to round-off on SE(3) and drifts on
    SO(3) × R³ — in the centre-of-mass frames (the paper's), while in the
    pivot frames both groups keep it (the twist (ω; 0) lies in the
    subalgebra so(3) for either update)."""
    model, q0, v0 = common.heavy_top()
    se3 = common.run(model, q0, v0, "se3", 1e-3, duration=0.25)
    so3 = common.run(model, q0, v0, "so3xr3", 1e-3, duration=0.25)
    assert se3["kinetic"][0] == pytest.approx(13972.4, abs=0.05)
    assert se3["errors"].max() < 1e-13
    assert so3["errors"].max() > 1e-8
    pivot = common.run(model, q0, v0, "so3xr3", 1e-3, duration=0.25, frames="body")
    assert pivot["errors"].max() < 1e-15


@pytest.mark.slow
def test_e1_drift_orders_over_one_second():
    """1 s at h = 1e-3 and 5e-4: SE(3)'s pivot drift ≤ 1e-12 m; SO(3) × R³'s
    4th order (16× per halving, 14–20 here) — 1.1e-5 m with the library's
    body-axes rows, 9.27e-7 m with the paper's own world-axes equations
    (the notes' 9.3e-7 and 5.8e-8); SE(3)'s energy drift is 4th order
    too. (The paper's "100× less energy drift on SE(3)" is not asserted.)"""
    e1 = load("e1_heavy_top")
    model, q0, v0 = common.heavy_top()
    drift, energy = {}, {}
    for group in ("se3", "so3xr3"):
        for h in e1.STEPS:
            r = common.run(model, q0, v0, group, h)
            drift[group, h] = r["errors"].max()
            energy[group, h] = np.abs(r["kinetic"] - r["kinetic"][0]).max()
    assert drift["se3", 1e-3] <= 1e-12 and drift["se3", 5e-4] <= 1e-12
    assert 14 < drift["so3xr3", 1e-3] / drift["so3xr3", 5e-4] < 20
    assert 14 < energy["se3", 1e-3] / energy["se3", 5e-4] < 20
    paper = [e1.paper_so3xr3(h)[0] for h in e1.STEPS]
    assert paper[0] == pytest.approx(9.3e-7, rel=0.02) and paper[1] == pytest.approx(5.8e-8, rel=0.02)


@pytest.mark.slow
def test_e2_double_pendulum():
    """E₀ = 95.07 J; the ground joint to round-off on SE(3), drifting on
    SO(3) × R³; the joint between the links drifts in both, within 10× of
    each other and more than the ground joint; energy drifts within 10×."""
    model, q0, v0 = common.double_pendulum()
    r = {g: common.run(model, q0, v0, g, 1e-3) for g in ("se3", "so3xr3")}
    assert r["se3"]["energy"][0] == pytest.approx(95.07, abs=0.005)
    g1 = {g: r[g]["errors"][:, 0].max() for g in r}
    g2 = {g: r[g]["errors"][:, 1].max() for g in r}
    dE = {g: np.abs(r[g]["energy"] - r[g]["energy"][0]).max() for g in r}
    assert g1["se3"] < 1e-13 and g1["so3xr3"] > 1e-8
    assert 0.1 < g2["se3"] / g2["so3xr3"] < 10 and g2["se3"] > g1["se3"] and g2["so3xr3"] > g1["so3xr3"]
    assert 0.1 < dE["se3"] / dE["so3xr3"] < 10


def test_e3_floating_pair():
    """E₀ = 0.9908 J; no ground joint: both groups drift alike (joint error
    and energy within 3× of each other), and neither changes the momentum
    by more than 1e-9 (internal forces only) over 0.5 s."""
    model, q0, v0 = common.floating_pair()
    r = {g: common.run(model, q0, v0, g, 1e-3, duration=0.5) for g in ("se3", "so3xr3")}
    assert r["se3"]["energy"][0] == pytest.approx(0.9908, abs=5e-5)
    g2 = [r[g]["errors"][:, 1].max() for g in r]
    dE = [np.abs(r[g]["energy"] - r[g]["energy"][0]).max() for g in r]
    assert 1 / 3 < g2[0] / g2[1] < 3 and 1 / 3 < dE[0] / dE[1] < 3
    for g in r:
        assert np.abs(r[g]["momentum"] - r[g]["momentum"][0]).max() < 1e-9


@pytest.mark.slow
def test_e4_closed_three_bar():
    """The closed spherical 3-bar (joint 3 a loop joint to the ground):
    starts on the constraints; on SE(3) the ground joints 1 and 3 stay to
    round-off (≤ 1e-13 m over 1 s), on SO(3) × R³ they drift (> 1e-10 m);
    the joint between the links drifts in both within 10× of each other."""
    model, q0, v0 = common.three_bar()
    r = {g: common.run(model, q0, v0, g, 1e-3) for g in ("se3", "so3xr3")}
    assert r["se3"]["errors"][0].max() < 1e-15
    ground = {g: r[g]["errors"][:, [0, 2]].max() for g in r}
    between = {g: r[g]["errors"][:, 1].max() for g in r}
    assert ground["se3"] < 1e-13 and ground["so3xr3"] > 1e-10
    assert 0.1 < between["se3"] / between["so3xr3"] < 10 and between["se3"] > ground["se3"]
