"""Dynamics against Pinocchio: RNEA, bias and gravity forces, CRBA, ABA,
forward dynamics by CRBA + LᵀDL, and H⁻¹, on the example-robot-data robots
and on random trees with every joint type (fixed and floating base, with
and without armature, with external forces, and with bodies kept on fixed
joints). Every comparison is relative to the oracle's magnitude (RTOL).
Conventions are converted at the boundary (helpers.Robot)."""
import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from .helpers import RTOL, FixedBodiesRobot, assert_rel, robot, sym_upper, tree_with_fixed_bodies

NAMES = ["ur5", "panda", "solo12", "talos", "go2", "g1", "tree_fixed", "tree_floating", "tree_fixed_armature",
         "tree_floating_armature", "tree_floating_gravity"]
N_STATES = 10


@pytest.fixture(scope="module", params=NAMES + ["fixed_bodies_floating", "fixed_bodies_fixed"])
def system(request):
    name = request.param
    if name.startswith("fixed_bodies"):
        floating = name.endswith("floating")
        model = tree_with_fixed_bodies(31 if floating else 32, floating=floating).build(merge_fixed=False)
        assert any(j.nv == 0 for j in model.joints[1:])
        return FixedBodiesRobot(name, model)
    return robot(name)


def test_models_match(system):
    """The two models describe the same system (sizes, armature mapped)."""
    assert system.model.nv == system.pm.nv
    if system.name.endswith("armature"):
        assert np.all(system.pm.armature > 0)
    if system.name.startswith("fixed_bodies"):  # armature on every joint but the free base
        assert np.count_nonzero(system.pm.armature) == system.pm.nv - (6 if "floating" in system.name else 0)


def test_rnea_bias_gravity(system):
    r, model, pm = system, system.model, system.pm
    pd = pm.createData()
    pm0 = pin.Model(pm)
    pm0.gravity = pin.Motion.Zero()
    pd0 = pm0.createData()
    data = mb.Data(model)
    for qp, q, vp, v, ap, a, _, _, fe in r.states(N_STATES, seed=1):
        expect = pin.rnea(pm, pd, qp, vp, ap)
        assert_rel(r.v_to_pin(mb.rnea(model, q, v, a)), expect, what="rnea")
        assert_rel(r.v_to_pin(mb.rnea(model, q, v, a, data=data)), expect, what="rnea (data fast path)")
        expect = pin.rnea(pm0, pd0, qp, vp, ap)
        assert_rel(r.v_to_pin(mb.rnea(model, q, v, a, gravity=False)), expect, what="rnea without gravity")
        expect = pin.rnea(pm, pd, qp, vp, ap, r.pin_fext(fe))
        assert_rel(r.v_to_pin(mb.rnea(model, q, v, a, f_ext=fe)), expect, what="rnea with f_ext")
        assert_rel(r.v_to_pin(mb.rnea(model, q, v, a, f_ext=fe, data=data)), expect, what="rnea with f_ext, data")
        assert_rel(r.v_to_pin(mb.bias_forces(model, q, v)), pin.nonLinearEffects(pm, pd, qp, vp),
                   what="bias_forces")
        assert_rel(r.v_to_pin(mb.bias_forces(model, q, v, f_ext=fe)),
                   pin.rnea(pm, pd, qp, vp, np.zeros(pm.nv), r.pin_fext(fe)), what="bias_forces with f_ext")
        assert_rel(r.v_to_pin(mb.gravity_forces(model, q)), pin.computeGeneralizedGravity(pm, pd, qp),
                   what="gravity_forces")


def test_crba_and_inverse(system):
    r, model, pm = system, system.model, system.pm
    pd = pm.createData()
    data = mb.Data(model)
    for qp, q, *_ in r.states(N_STATES, seed=2):
        expect = sym_upper(pin.crba(pm, pd, qp))
        assert_rel(r.mat_to_pin(mb.crba(model, q)), expect, what="crba")
        assert_rel(r.mat_to_pin(mb.crba(model, q, data=data)), expect, what="crba (data)")
        expect = sym_upper(pin.computeMinverse(pm, pd, qp))
        # H⁻¹ is as accurate as cond(H) allows (Featherstone §10.2); both sides are round-off of
        # the same matrix, so the error is bounded by cond(H)·ε relative
        assert_rel(r.mat_to_pin(mb.inverse_inertia(model, q)), expect, what="inverse_inertia")


def test_aba_and_forward_dynamics(system):
    r, model, pm = system, system.model, system.pm
    pd = pm.createData()
    pm0 = pin.Model(pm)
    pm0.gravity = pin.Motion.Zero()
    pd0 = pm0.createData()
    data = mb.Data(model)
    for qp, q, vp, v, _, _, taup, tau, fe in r.states(N_STATES, seed=3):
        expect = pin.aba(pm0, pd0, qp, vp, taup).copy()
        assert_rel(r.v_to_pin(mb.aba(model, q, v, tau, gravity=False)), expect, what="aba without gravity")
        assert_rel(r.v_to_pin(mb.aba(model, q, v, tau, gravity=False, data=data)), expect,
                   what="aba without gravity (data fast path)")
        assert_rel(r.v_to_pin(mb.forward_dynamics(model, q, v, tau, method="crba", gravity=False)), expect,
                   what="forward_dynamics crba without gravity")
        expect = pin.aba(pm, pd, qp, vp, taup).copy()
        assert_rel(r.v_to_pin(mb.aba(model, q, v, tau)), expect, what="aba")
        assert_rel(r.v_to_pin(mb.aba(model, q, v, tau, data=data)), expect, what="aba (data fast path)")
        assert_rel(r.v_to_pin(mb.forward_dynamics(model, q, v, tau, method="crba")), expect,
                   what="forward_dynamics crba")
        assert_rel(r.v_to_pin(mb.forward_dynamics(model, q, v, tau, method="crba", data=data)), expect,
                   what="forward_dynamics crba (data)")
        expect = pin.aba(pm, pd, qp, vp, taup, r.pin_fext(fe)).copy()
        assert_rel(r.v_to_pin(mb.aba(model, q, v, tau, f_ext=fe)), expect, what="aba with f_ext")
        assert_rel(r.v_to_pin(mb.aba(model, q, v, tau, f_ext=fe, data=data)), expect, what="aba with f_ext, data")
        assert_rel(r.v_to_pin(mb.forward_dynamics(model, q, v, tau, f_ext=fe, method="crba")), expect,
                   what="forward_dynamics crba with f_ext")


def test_batches_against_pinocchio(system):
    """The batch kernels (one parallel call) against Pinocchio state by state."""
    r, model, pm = system, system.model, system.pm
    pd = pm.createData()
    states = list(r.states(6, seed=4))
    Q, V, A, T = (np.array([s[k] for s in states]) for k in (1, 3, 5, 7))
    FE = np.array([s[8] for s in states])
    tau, tau_f = mb.rnea(model, Q, V, A), mb.rnea(model, Q, V, A, f_ext=FE)
    H, acc = mb.crba(model, Q), mb.aba(model, Q, V, T, f_ext=FE)
    fd = mb.forward_dynamics(model, Q, V, T, f_ext=FE, method="crba")
    for b, (qp, _, vp, _, ap, _, taup, _, fe) in enumerate(states):
        assert_rel(r.v_to_pin(tau[b]), pin.rnea(pm, pd, qp, vp, ap), what="rnea batch")
        assert_rel(r.v_to_pin(tau_f[b]), pin.rnea(pm, pd, qp, vp, ap, r.pin_fext(fe)), what="rnea batch f_ext")
        assert_rel(r.mat_to_pin(H[b]), sym_upper(pin.crba(pm, pd, qp)), what="crba batch")
        expect = pin.aba(pm, pd, qp, vp, taup, r.pin_fext(fe))
        assert_rel(r.v_to_pin(acc[b]), expect, what="aba batch f_ext")
        assert_rel(r.v_to_pin(fd[b]), expect, what="forward_dynamics crba batch f_ext")


def test_rtol_is_meaningful():
    """The comparison can fail: a perturbation of 10·RTOL of the magnitude is caught."""
    x = np.array([1.0, -3.0, 2.0])
    with pytest.raises(AssertionError):
        assert_rel(x + np.array([0, 0, 30 * RTOL]), x)
