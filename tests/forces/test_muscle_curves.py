"""Muscle curves (forces/muscle_curves.py).

Sueda's E7 cubics: the coefficient tables against the linear systems of
eqs 1.41 (with the (1.7, 1.0) correction), 1.43 and 1.45 solved here; the
check values of the notes at the knots; C¹ at every knot (left and right
pieces); the outside-domain choices; derivatives against central
differences. MuJoCo's curves and activation dynamics against MuJoCo itself
(mju_muscleGain / mju_muscleBias / mju_muscleDynamics, and actuator_force /
act_dot of mj_forward on an MJCF muscle)."""
import numpy as np
import pytest

import multibody as mb
from multibody.forces import muscle_curves as mc
from multibody.forces.muscle_curves import MuJoCoCurves, SuedaCurves, as_curves, hill_tension

S = SuedaCurves()


def cub(x):
    return [x ** 3, x ** 2, x, 1.0]


def dcub(x):
    return [3 * x ** 2, 2 * x, 1.0, 0.0]


def ddcub(x):
    return [6 * x, 2.0, 0.0, 0.0]


def block(row, i, n):
    """Row of a system over n cubics with ``row`` in the columns of cubic i."""
    out = [0.0] * (4 * n)
    out[4 * i:4 * i + 4] = row
    return out


def diff(row_i, row_j, i, j, n):
    a, b = block(row_i, i, n), block(row_j, j, n)
    return [x - y for x, y in zip(a, b)]


def test_tables_solve_the_printed_conditions():
    """Eq. 1.41 (passive; the right cubic through (1.7, 1.0), erratum 3),
    1.43 (active) and 1.45 (velocity) solved here equal the tables."""
    A = [block(cub(1.0), 0, 2), block(cub(1.3), 0, 2), block(cub(1.7), 1, 2), block(dcub(1.0), 0, 2),
         block(dcub(1.3), 0, 2), block(dcub(1.7), 1, 2), diff(cub(1.3), cub(1.3), 0, 1, 2),
         diff(dcub(1.3), dcub(1.3), 0, 1, 2)]
    b = [0, 0.126110265892917, 1.0, 0, 1.07051016402631, 2.85714285714286, 0, 0]
    assert np.allclose(np.linalg.solve(A, b).reshape(2, 4), mc.PASSIVE_COEFFS, rtol=1e-10, atol=1e-10)
    A = [block(cub(0.4), 0, 3), block(dcub(0.4), 0, 3), block(cub(1.0), 1, 3), block(dcub(1.0), 1, 3),
         block(cub(1.81), 2, 3), block(dcub(1.81), 2, 3), diff(cub(0.7), cub(0.7), 0, 1, 3),
         diff(dcub(0.7), dcub(0.7), 0, 1, 3), diff(cub(1.2), cub(1.2), 1, 2, 3), diff(dcub(1.2), dcub(1.2), 1, 2, 3),
         block(cub(0.7), 0, 3), block(cub(1.2), 1, 3)]
    b = [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0.767020368396388, 0.89]
    assert np.allclose(np.linalg.solve(A, b).reshape(3, 4), mc.ACTIVE_COEFFS, rtol=1e-10, atol=1e-10)
    A = [block(cub(-1.0), 0, 3), block(dcub(-1.0), 0, 3), block(ddcub(-1.0), 0, 3), block(cub(1.0), 2, 3),
         block(dcub(1.0), 2, 3), block(ddcub(1.0), 2, 3), diff(cub(-0.05), cub(-0.05), 0, 1, 3),
         diff(dcub(-0.05), dcub(-0.05), 0, 1, 3), diff(cub(0.05), cub(0.05), 1, 2, 3),
         diff(dcub(0.05), dcub(0.05), 1, 2, 3), block(cub(0.0), 1, 3), block(dcub(0.0), 1, 3)]
    b = [0, 0, 0, 1.4, 0, 0, 0, 0, 0, 0, 1.0, 5.0]
    assert np.allclose(np.linalg.solve(A, b).reshape(3, 4), mc.VELOCITY_COEFFS, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("curve,x,value,slope", [
    ("passive_length", 1.0, 0.0, 0.0), ("passive_length", 1.3, 0.126110265892917, 1.07051016402631),
    ("passive_length", 1.7, 1.0, 2.85714285714286),
    ("active_length", 0.4, 0.0, 0.0), ("active_length", 0.7, 0.767020368396388, None),
    ("active_length", 1.0, 1.0, 0.0), ("active_length", 1.2, 0.89, None), ("active_length", 1.81, 0.0, 0.0),
    ("velocity", -1.0, 0.0, 0.0), ("velocity", 0.0, 1.0, 5.0), ("velocity", 1.0, 1.4, 0.0),
    ("velocity", -0.05, 0.784715447154471, 2.478048780487805),
    ("velocity", 0.05, 1.171382113821138, 0.721951219512195)])
def test_values_at_the_knots(curve, x, value, slope):
    """The check values of notes E7 (from the 15-digit printed coefficients:
    agreement to ~1e-12)."""
    f, df = getattr(S, curve)(x)
    assert abs(f - value) < 1e-12
    if slope is not None:
        assert abs(df - slope) < 1e-11


KNOTS = [("passive_length", x) for x in (1.0, 1.3, 1.7)] + [("active_length", x) for x in (0.4, 0.7, 1.2, 1.81)] + \
        [("velocity", x) for x in (-1.0, -0.05, 0.05, 1.0)]


@pytest.mark.parametrize("curve,x", KNOTS)
def test_c1_at_every_knot(curve, x):
    """Left and right limits of value and slope agree at the knots (between
    cubics, to the printed digits; at the domain ends, where the extensions
    start, exactly)."""
    fl, dl = getattr(S, curve)(np.nextafter(x, -np.inf))
    fr, dr = getattr(S, curve)(np.nextafter(x, np.inf))
    assert abs(fl - fr) < 1e-12, (fl, fr)
    assert abs(dl - dr) < 1e-10, (dl, dr)


def test_outside_the_domains():
    """f_L = 0 outside [0.4, 1.81]; f_P = 0 below 1 and the tangent (value 1,
    slope 20/7) above 1.7; f_V = 0 below −1 and 1.4 above 1."""
    for x in (-3.0, 0.0, 0.39, 1.82, 5.0):
        assert S.active_length(x) == (0.0, 0.0)
    for x in (-1.0, 0.5, 0.999):
        assert S.passive_length(x) == (0.0, 0.0)
    for x in (1.8, 2.5):
        f, df = S.passive_length(x)
        assert abs(f - (1.0 + 20 / 7 * (x - 1.7))) < 1e-12 and abs(df - 20 / 7) < 1e-12
    for x in (-5.0, -1.01):
        f, df = S.velocity(x)
        assert f == 0.0 and df == 0.0
    for x in (1.01, 7.0):
        f, df = S.velocity(x)
        assert f == 1.4 and df == 0.0


@pytest.mark.parametrize("curves", [SuedaCurves(), MuJoCoCurves(), MuJoCoCurves(0.3, 1.9, 0.8, 1.6)])
def test_derivatives_against_central_differences(curves):
    rng = np.random.default_rng(0)
    h = 1e-6
    for name, lo, hi in (("active_length", 0.0, 2.2), ("passive_length", 0.8, 2.5), ("velocity", -1.3, 1.3)):
        fun = getattr(curves, name)
        x = rng.uniform(lo, hi, 400)
        f, df = fun(x)
        fd = (fun(x + h)[0] - fun(x - h)[0]) / (2 * h)
        # away from the knots (where the second derivative jumps, central differences are O(h) off)
        assert np.abs(df - fd).max() < 1e-4
        assert np.median(np.abs(df - fd)) < 1e-8
        assert f.shape == x.shape


def test_invariants():
    """f_L ≤ 1 on its domain, maximum 1 at l̃ = 1; f_V non-decreasing; f_P ≥ 0
    non-decreasing (notes §5 item 17)."""
    for c in (SuedaCurves(), MuJoCoCurves()):
        x = np.linspace(-0.5, 2.5, 20001)
        fl = c.active_length(x)[0]
        assert fl.max() <= 1.0 + 1e-12 and abs(c.active_length(1.0)[0] - 1.0) < 1e-12
        fv, dfv = c.velocity(np.linspace(-2, 2, 20001))
        assert np.all(np.diff(fv) >= -1e-14) and np.all(dfv >= -1e-12)   # the cubic ends at 1.4 + 4e-16
        fp, dfp = c.passive_length(x)
        assert np.all(fp >= 0) and np.all(np.diff(fp) >= -1e-15)


def test_curve_sets_and_errors():
    assert isinstance(as_curves("Sueda"), SuedaCurves) and isinstance(as_curves("mujoco"), MuJoCoCurves)
    c = MuJoCoCurves()
    assert as_curves(c) is c
    for bad in ("opensim", 3, None):
        with pytest.raises(mb.ModelError, match="curves"):
            as_curves(bad)
    for kw, msg in ((dict(lmin=1.2), "lmin"), (dict(lmax=0.9), "lmax"), (dict(fpmax=-1), "fpmax"),
                    (dict(fvmax=1.0), "fvmax"), (dict(lmin="x"), "lmin"), (dict(fvmax=np.inf), "fvmax")):
        with pytest.raises(mb.ModelError, match=msg):
            MuJoCoCurves(**kw)


def test_hill_tension_partials():
    """∂f/∂l, ∂f/∂l̇, ∂f/∂a of the tension against central differences (the
    l̇ partial has f_L, not the f_L' of Sueda eq. 1.56)."""
    rng = np.random.default_rng(1)
    for c in (SuedaCurves(), MuJoCoCurves()):
        for _ in range(50):
            P = (c.code, c.prm, 300.0, 0.12, 0.2, 8.0)
            l, ld, a = rng.uniform(0.25, 0.45), rng.uniform(-1.5, 1.5), rng.uniform(0, 1)
            f, fl, fld, fa, lt, vt = hill_tension(*P, l, ld, a)
            h = 1e-7
            assert abs(fl - (hill_tension(*P, l + h, ld, a)[0] - hill_tension(*P, l - h, ld, a)[0]) / (2 * h)) \
                < 1e-4 * max(1, abs(fl))
            assert abs(fld - (hill_tension(*P, l, ld + h, a)[0] - hill_tension(*P, l, ld - h, a)[0]) / (2 * h)) \
                < 1e-4 * max(1, abs(fld))
            assert abs(fa - (hill_tension(*P, l, ld, a + h)[0] - hill_tension(*P, l, ld, a - h)[0]) / (2 * h)) \
                < 1e-5 * max(1, abs(fa))
            assert abs(lt - (l - 0.2) / 0.12) < 1e-15 and abs(vt - ld / (0.12 * 8.0)) < 1e-15


# ------------------------------------------------------------------ MuJoCo

mujoco = pytest.importorskip("mujoco")


def mj_prm(r=(0.75, 1.05), force=-1.0, scale=200.0, lmin=0.5, lmax=1.6, vmax=1.5, fpmax=1.3, fvmax=1.2):
    return np.array([r[0], r[1], force, scale, lmin, lmax, vmax, fpmax, fvmax], dtype=float)


@pytest.mark.parametrize("params", [dict(), dict(lmin=0.3, lmax=1.9, fpmax=0.7, fvmax=1.6, vmax=3.0, r=(0.6, 1.4))])
def test_mujoco_curves_equal_mju_muscle_gain_and_bias(params):
    """Our f_opt(a f_L f_V + f_P) with MuJoCo's curves and normalization is
    −(gain·act + bias) of mju_muscleGain / mju_muscleBias, over lengths and
    velocities that cover every branch."""
    prm = mj_prm(force=250.0, **params)
    curves = MuJoCoCurves(prm[4], prm[5], prm[7], prm[8])
    lr = np.array([0.3, 0.5])
    L0, LT, F0 = mc.mujoco_muscle_parameters(lr, prm[:2], prm[2])
    rng = np.random.default_rng(2)
    for _ in range(300):
        length = rng.uniform(0.15, 0.75)
        vel = rng.uniform(-2.0, 2.0) * L0 * prm[6]
        act = rng.uniform(0, 1)
        gain = mujoco.mju_muscleGain(length, vel, lr, 0.0, prm)
        bias = mujoco.mju_muscleBias(length, lr, 0.0, prm)
        f = hill_tension(curves.code, curves.prm, F0, L0, LT, prm[6], length, vel, act)[0]
        assert abs(-f - (gain * act + bias)) <= 1e-10 * max(1.0, abs(f))


def test_mujoco_activation_dynamics_equal_mju_muscle_dynamics():
    rng = np.random.default_rng(3)
    for smooth in (0.0, 0.3):
        dyn = np.array([0.01, 0.04, smooth])
        for _ in range(300):
            ctrl, act = rng.uniform(-0.2, 1.2), rng.uniform(-0.1, 1.1)
            ref = mujoco.mju_muscleDynamics(ctrl, act, dyn)
            rate, dc, da = mc.mujoco_activation_rate(ctrl, act, 0.01, 0.04, smooth)
            assert abs(rate - ref) <= 1e-12 * max(1.0, abs(ref))
            h = 1e-7
            if smooth > 0 or abs(min(max(ctrl, 0), 1) - act) > 1e-3:     # the hard switch has a jump at u = a
                fdc = (mc.mujoco_activation_rate(ctrl + h, act, 0.01, 0.04, smooth)[0]
                       - mc.mujoco_activation_rate(ctrl - h, act, 0.01, 0.04, smooth)[0]) / (2 * h)
                fda = (mc.mujoco_activation_rate(ctrl, act + h, 0.01, 0.04, smooth)[0]
                       - mc.mujoco_activation_rate(ctrl, act - h, 0.01, 0.04, smooth)[0]) / (2 * h)
                if min(abs(ctrl), abs(ctrl - 1), abs(act), abs(act - 1)) > 1e-3:
                    assert abs(dc - fdc) < 1e-5 * max(1, abs(dc)) and abs(da - fda) < 1e-5 * max(1, abs(da))


MJCF = """
<mujoco>
  <option gravity="0 0 0"/>
  <worldbody>
    <site name="origin" pos="0 0.05 0.3"/>
    <body name="upper" pos="0 0 0">
      <joint name="shoulder" type="hinge" axis="1 0 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03" mass="1"/>
      <site name="via" pos="0 0.04 -0.25"/>
      <body name="lower" pos="0 0 -0.3">
        <joint name="elbow" type="hinge" axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.025" mass="0.8"/>
        <site name="insertion" pos="0 0.03 -0.08"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <spatial name="flexor">
      <site site="origin"/><site site="via"/><site site="insertion"/>
    </spatial>
  </tendon>
  <actuator>
    <muscle name="m_joint" joint="elbow" gear="0.04" lengthrange="-0.06 0.06" force="120" range="0.7 1.1"
            lmin="0.4" lmax="1.7" vmax="2.0" fpmax="1.1" fvmax="1.3" timeconst="0.02 0.05"/>
    <muscle name="m_tendon" tendon="flexor" lengthrange="0.55 0.75" scale="300" tausmooth="0.2"/>
  </actuator>
</mujoco>
"""


def dense(values, rownnz, rowadr, colind, nv):
    """MuJoCo's compressed sparse rows as a dense matrix."""
    out = np.zeros((len(rownnz), nv))
    for r, (n, a) in enumerate(zip(rownnz, rowadr)):
        out[r, colind[a:a + n]] = values[a:a + n]
    return out


def test_mujoco_actuator_force_and_tendon_against_mj_forward():
    """An MJCF with a joint muscle (explicit force) and a tendon muscle on a
    spatial tendon through three sites (force from scale/acc0): MuJoCo's
    actuator_force equals our tension along our transmissions (a
    JointTransmission with the gear, a Path through the same sites of the
    model loaded by mb.load_mjcf), acc0 is ours (mujoco_acc0), the Path's
    length and moment arm are MuJoCo's ten_length and ten_J, and act_dot is
    our activation rate."""
    import warnings

    from multibody.forces import HillMuscle, Path
    from multibody.forces.muscles import mujoco_acc0
    from multibody.forces.transmission import JointTransmission
    m = mujoco.MjModel.from_xml_string(MJCF)
    d = mujoco.MjData(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.load_mjcf(MJCF)
    path = Path([("origin", [0, 0, 0]), ("via", [0, 0, 0]), ("insertion", [0, 0, 0])])
    joint = JointTransmission("elbow", 0.04)
    muscles = []
    for i, tr in enumerate((joint, path)):
        g, b = m.actuator_gainprm[i], m.actuator_biasprm[i]
        assert np.array_equal(g[:9], b[:9])
        acc0 = mujoco_acc0(model, tr)
        assert abs(acc0 - m.actuator_acc0[i]) < 1e-10 * m.actuator_acc0[i]
        muscles.append(HillMuscle.from_mujoco(tr, m.actuator_lengthrange[i], range=g[:2], force=g[2], scale=g[3],
                                              lmin=g[4], lmax=g[5], vmax=g[6], fpmax=g[7], fvmax=g[8], acc0=acc0))
    rng = np.random.default_rng(4)
    for _ in range(40):
        q = rng.uniform(-1.2, 1.2, 2)
        v = rng.uniform(-3, 3, 2)
        act = rng.uniform(0, 1, 2)
        ctrl = rng.uniform(-0.1, 1.1, 2)
        d.qpos[:], d.qvel[:], d.act[:], d.ctrl[:] = q, v, act, ctrl
        mujoco.mj_forward(m, d)
        ts = path.evaluate(model, q, v)
        assert abs(ts.length - d.ten_length[0]) < 1e-12
        assert np.allclose(ts.moment, dense(d.ten_J, m.ten_J_rownnz, m.ten_J_rowadr, m.ten_J_colind, m.nv)[0],
                           atol=1e-12)
        moments = dense(d.actuator_moment, d.moment_rownnz, d.moment_rowadr, d.moment_colind, m.nv)
        for i, mus in enumerate(muscles):
            mus.activation = act[i]
            tau = mus.evaluate(model, q, v)[0]
            force, tol = d.actuator_force[i], 1e-10 * max(1, abs(d.actuator_force[i]))
            assert abs(mus.state(model, q, v)["tension"] + force) < tol
            assert np.allclose(tau, moments[i] * force, atol=tol)     # MuJoCo: qfrc_actuator = moment · actuator_force
            dyn = m.actuator_dynprm[i]
            rate = mc.mujoco_activation_rate(ctrl[i], act[i], dyn[0], dyn[1], dyn[2])[0]
            assert abs(rate - d.act_dot[i]) < 1e-10 * max(1, abs(rate))
