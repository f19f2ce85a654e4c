"""Every example-robot-data URDF against Pinocchio (issue 10, acceptance).

The URDF files are enumerated from the installed example-robot-data package
(its ``robots/<package>/<folder>/*.urdf``), not hand-listed. For each file,
fixed and floating base:

* if Pinocchio (``pin.buildModelFromUrdf``, with ``pin.JointModelFreeFlyer()``
  for the floating base) refuses it, multibody must refuse it too, with a
  library error;
* a URDF rooted at a link named ``world`` is refused with a clear error when
  asked to float (Pinocchio would float its world link);
* otherwise ``load_urdf`` with its default options must load it, and the
  model must agree with Pinocchio: every body's mass, centre of mass and
  rotational inertia (bodies matched by joint name) — or, where multibody
  repaired an inertia (``inertia="warn"``, the default, repairs only moving
  bodies whose rotational inertia is singular or indefinite), the
  difference must be a mass-free positive semi-definite tensor on a body
  named in a ModelWarning, and Pinocchio is then given the repaired values;
  the world poses of every link frame (1e-9), and rnea, crba and aba at
  random configurations (1e-8 relative to the oracle's magnitude).

Conventions are converted at the boundary (``oracles.Mapping``: continuous
joints are (cos, sin) in Pinocchio, its free-flyer velocity is (v, ω), its
sibling order differs — joints are matched by name).
"""
import glob
import os
import warnings

import numpy as np
import pinocchio as pin
import pytest

import multibody as mb
from multibody.errors import ModelWarning, MultibodyError
from oracles import Mapping, robots_dir

FK_TOL = 1e-9     # absolute, on poses of O(1 m)
DYN_RTOL = 1e-8   # relative to the oracle's largest entry
N_CONF = 3


def _urdfs():
    root = robots_dir()
    files = sorted(glob.glob(os.path.join(root, "*", "*", "*.urdf")))
    return root, [os.path.relpath(f, root) for f in files]


ROOT, URDFS = _urdfs()
#: robots the issue names (they must be in the package); the whole sweep takes ~15 s, so all of it runs
NAMED = {"ur_description/urdf/ur5_robot.urdf", "allegro_hand_description/urdf/allegro_right_hand.urdf",
        "anymal_b_simple_description/robots/anymal.urdf", "bolt_description/robots/bolt.urdf",
        "finger_edu_description/robots/finger_edu.urdf", "go1_description/urdf/go1.urdf",
        "icub_description/robots/icub_reduced.urdf", "romeo_description/urdf/romeo_laas_small.urdf",
        "pr2_description/urdf/pr2.urdf", "tiago_description/robots/tiago.urdf",
        "double_pendulum_description/urdf/double_pendulum_continuous.urdf", "ur_description/urdf/ur3.urdf"}
CASES = [pytest.param(rel, floating, id=f"{rel.split('/')[-1][:-5]}-{'floating' if floating else 'fixed'}")
         for rel in URDFS for floating in (False, True)]


def assert_rel(got, expect, what):
    scale = max(float(np.abs(expect).max(initial=0.0)), 1e-300)
    err = float(np.abs(np.asarray(got) - expect).max(initial=0.0))
    assert err <= DYN_RTOL * scale, f"{what}: max error {err:.3e} > {DYN_RTOL:g} x {scale:.3e}"


def sym_upper(M):
    U = np.triu(M)
    return U + np.triu(U, 1).T


def test_the_package_is_enumerated():
    """The sweep sees the whole package (69 URDF files in example-robot-data 6), not a hand-picked few."""
    assert len(URDFS) >= 60
    assert NAMED <= set(URDFS)


def _root_link(path):
    import xml.etree.ElementTree as ET
    root = ET.parse(path).getroot()
    children = {j.find("child").get("link") for j in root.findall("joint") if j.find("child") is not None}
    roots = [lk.get("name") for lk in root.findall("link") if lk.get("name") not in children]
    return roots[0] if len(roots) == 1 else None


@pytest.mark.parametrize("rel, floating", CASES)
def test_loads_and_agrees_with_pinocchio(rel, floating):
    path = os.path.join(ROOT, rel)
    try:
        pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    except Exception:  # noqa: BLE001 — Pinocchio refuses this file: so must we, with a library error
        with pytest.raises(MultibodyError):
            mb.load_urdf(path, floating_base=floating)
        return
    if floating and _root_link(path) == "world":
        with pytest.raises(mb.ModelFileError, match="root link is named 'world'.*cannot float"):
            mb.load_urdf(path, floating_base=True)
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = mb.load_urdf(path, floating_base=floating)
    assert all(issubclass(w.category, ModelWarning) for w in caught), [str(w.message) for w in caught]
    repair_msgs = [str(w.message) for w in caught if "repaired" in str(w.message)]
    mp = Mapping(model, pm)
    assert model.nv == pm.nv
    assert sorted(j.name for j, _ in mp.joints) == sorted(pm.names[1:])

    # inertias: kept exactly, or a repair (mass-free, PSD, reported) that Pinocchio is then given
    repaired = []
    for j, pj in mp.joints:
        i, Y = j.child, pm.inertias[pj.id]
        scale = max(1.0, float(Y.mass))
        assert abs(model.body_mass[i] - Y.mass) <= 1e-12 * scale, j.name
        np.testing.assert_allclose(model.body_com[i], Y.lever, atol=1e-12, err_msg=j.name)
        dI = model.body_inertia[i] - Y.inertia
        if np.abs(dI).max() <= 1e-12 * max(np.abs(Y.inertia).max(), 1e-300):
            continue
        body = model.body_names[i]
        assert any(f"added a mass-free inertia to link '{body}'" in m for m in repair_msgs), \
            f"body '{body}': inertia changed without a warning naming it"
        lam = np.linalg.eigvalsh(0.5 * (dI + dI.T))
        assert lam[0] >= -1e-15 * max(lam[-1], 1e-300), f"body '{body}': the repair is not PSD: {lam}"
        new = np.linalg.eigvalsh(model.body_inertia[i])
        assert new[0] > 0.0, f"body '{body}': still not positive definite after the repair: {new}"
        pm.inertias[pj.id] = pin.Inertia(Y.mass, Y.lever, np.array(model.body_inertia[i]))
        repaired.append(body)
    assert len(repaired) == sum(m.count("added a mass-free inertia") for m in repair_msgs)

    pd = pm.createData()
    frames = [(model.frame_id(f.name), k) for k, f in enumerate(pm.frames)
              if f.type == pin.FrameType.BODY and f.name in model.frame_names]
    assert {f.name for f in pm.frames if f.type == pin.FrameType.BODY} <= set(model.frame_names) | {"world"}
    pin.seed(7)
    rng = np.random.default_rng(7)
    lo = np.where(np.isfinite(pm.lowerPositionLimit), pm.lowerPositionLimit, -2.0).clip(-2, 2)
    hi = np.where(np.isfinite(pm.upperPositionLimit), pm.upperPositionLimit, 2.0).clip(-2, 2)
    for _ in range(N_CONF):
        qp = pin.randomConfiguration(pm, lo, hi)
        vp, ap, taup = (rng.normal(size=pm.nv) for _ in range(3))
        q, v, a, tau = mp.q_from_pin(qp), mp.v_from_pin(vp), mp.v_from_pin(ap), mp.v_from_pin(taup)
        pin.framesForwardKinematics(pm, pd, qp)
        F = mb.frame_placements(model, q)
        for ours, theirs in frames:
            np.testing.assert_allclose(F[ours], pd.oMf[theirs].homogeneous, atol=FK_TOL,
                                       err_msg=f"frame {pm.frames[theirs].name}")
        assert_rel(mp.v_to_pin_columns(mb.rnea(model, q, v, a)), pin.rnea(pm, pd, qp, vp, ap), "rnea")
        H = mb.crba(model, q)
        assert_rel(mp.v_to_pin_columns(mp.v_to_pin_columns(H).T), sym_upper(pin.crba(pm, pd, qp)), "crba")
        expect = pin.aba(pm, pd, qp, vp, taup).copy()
        if np.all(np.isfinite(expect)):
            assert_rel(mp.v_to_pin_columns(mb.aba(model, q, v, tau)), expect, "aba")
        else:  # a moving subtree without mass (Romeo's fingers): Pinocchio returns NaN, we raise and warned
            assert any("no mass or inertia" in str(w.message) for w in caught)
            with pytest.raises(mb.SimulationError, match="singular along its joint"):
                mb.aba(model, q, v, tau)
