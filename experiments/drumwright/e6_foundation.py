"""Experiment E6 of Drumwright (seed 003, §5.5, Tables 1–2, Fig. 7): a box
on an elastic (Winkler) foundation, with a load circling on its top face.

Setup (notes E6): a rigid 1 m cube of 8 kg (density 8 kg/m³, the inertia
of a uniform cube, m s²/6 about its centre) rests at zero velocity on a
Winkler foundation 1 m deep, initially undeformed: its bottom face at z = 0
on the world's ground plane z = 0. The foundation is a 10 × 10 or 30 × 30
grid of elements under the bottom face (``mb.add_foundation_elements``),
each a spring–damper of stiffness K = E·A_e/depth (E = 10⁷ "rubber" or 10¹¹
"steel" Pa, A_e = 1 m²/count²: 10⁵ / 10⁹ N/m for 100 elements,
1.11·10⁴ / 1.11·10⁸ N/m for 900) and damping B = 1 N·s/m
(``mb.Compliance.winkler``), frictionless. A downward world force of 5 N or
50 N acts at the cube-frame point (s/2)[cos 10t, sin 10t, 1] (from the
centre: circling on the top face, radius 0.5 m, 10 rad/s); g = 9.8 m/s²;
1 s at h = 0.01 s.

Three solvers, as in the paper's Tables 1 and 2:

* ``run_drumwright``: the library's ``contact_solver="drumwright"`` (the max
  law of every element's row, the elements' spring states by implicit
  Euler, the body by semi-implicit Euler; compiled projected Gauss–Seidel
  with subspace steps). The model's body frame has its origin at the
  centre of the bottom face (axes along the edges; the centre of mass at
  (0, 0, s/2)), so that q[2] is minus the sink of that face to full
  precision (a 10⁻¹⁰ m sink beside a 0.5 m coordinate would keep 6
  digits); the load is a Python force element (:class:`CirclingLoad`)
  evaluated at the start of each step.
* ``run_ode(..., method="BDF")`` and ``method="RK45"``: the same system as
  a first-order ODE with 13 states, integrated by
  ``scipy.integrate.solve_ivp`` — BDF ≈ MATLAB's ode15s, RK45 ≈ ode45 (the
  reference). States: the displacement of the centre of mass from its
  initial position (0, 0, s/2) (world, m), the unit quaternion (w, x, y, z)
  of the body→world rotation (normalised in the right-hand side), the
  angular velocity in the body frame (rad/s) and the velocity of the
  centre of mass in the world frame (m/s). Every element i obeys
  λ_i = max(0, −K φ_i − B φ̇_i), φ_i the height of its point of the bottom
  face above the ground (negative when compressed) and φ̇_i its rate;
  the forces are vertical (frictionless plane). The right-hand side is
  vectorised over the elements with NumPy; the Jacobian of BDF is scipy's
  finite differences. The paper forced ode15s to first order; scipy's BDF
  has no such option (its maximum order 5 is a module constant sizing the
  method's arrays), so the BDF column is variable order 1–5: faster than a
  first-order ode15s where the solution is smooth. Each cell has a
  wall-clock limit (``limit`` s): the right-hand side raises when it is
  exceeded and the cell reads "> limit".

The error of Table 2 is the Euclidean norm of the difference of the
generalized coordinates (position of the centre of mass and the unit
quaternion, w first, 7 numbers) after 1 s, against RK45; relative: divided
by the norm of the reference's (≈ √(0.5² + 1) = 1.118: the paper's ratios
abs/rel are 1.117–1.13, so its q was the centre of mass and the
quaternion too).

What it shows (the script prints it beside the paper's numbers): the
simulator's error after 1 s at h = 0.01 s is the lag of the load, θΩh/2
(:func:`lag_estimate`: 1.5e-7 at 5 N and E = 1e7, 1.5e-11 at E = 1e11,
1.6e-6 / 1.6e-10 at 50 N) within 0.88–1.21 in all eight cells — 2 to 6
orders below the paper's Table 2, whose 5 N errors exceed every
displacement of the system; with B = 1 N·s/m the reference keeps ringing
(heave damped at B_tot/2m, 6.25 /s with 100 elements) where implicit
Euler damps at once, so below h ≈ 1e-3 the error stalls at that ringing
(~5e-8 at 5 N); with B = 100 N·s/m it is first order to 4 digits. The
far side lifts under 50 N (11 of 100, 94 of 900 elements), as in the
reference.

Run: ``.venv/bin/python experiments/drumwright/e6_foundation.py [--out DIR]
[--limit SECONDS] [--quick]`` (``--quick``: the 100-element cells only).
"""
import math
import time

import numpy as np

import multibody as mb
from multibody.forces.base import ForceElement, resolve_frame
from multibody.forces.body import _point_force_terms

import drumwright_common

SIDE, MASS, GRAVITY, DEPTH, DAMPING = 1.0, 8.0, 9.8, 1.0, 1.0
OMEGA, H, DURATION, LIMIT = 10.0, 0.01, 1.0, 600.0
INERTIA = np.full(3, MASS * SIDE ** 2 / 6.0)  # a uniform cube about its centre (kg·m²)
COUNTS, LOADS, MODULI = (10, 30), (5.0, 50.0), (1e7, 1e11)
# contact_tolerance (m/s) of the PGS: its default 1e-8 m/s moves a spring by h·1e-8 = 1e-10 m per
# step, 13 % of the 7.8e-10 m sink of the steel foundation; 1e-13 m/s is near the solve's round-off
# there (W + cfm: W of rank 6 with eigenvalues up to ~n²/m, cfm = 1/(h(hK + B)) ~ 1e-5 for 100 steel
# elements: a condition number ~ 1e6)
TOLERANCE = 1e-13
# RK45 (the reference) and BDF tolerances: rtol, and atol as a fraction of each state's natural
# scale (the static sink δ = (mg + F)/(E·A/depth) for the displacements, δ/s for the quaternion
# and δ·√(k/m) for the velocities): the states are all tiny displacements from rest, and an
# absolute 1e-12 would be 0.1 % of the steel cube's 8e-10 m sink
RK45_TOL, BDF_TOL = (1e-10, 1e-8), (1e-6, 1e-4)

# the paper's Table 1 (wall-clock s: constraint-based, ode15s (first order), ode45) and Table 2
# (abs, rel error of the constraint-based method vs ode45 after 1 s at h = 0.01 s), notes E6
PAPER_TABLE1 = {(100, 5.0, 1e7): (0.331, 0.302, 28.0), (100, 5.0, 1e11): (0.286, 0.189, 27.4),
                (100, 50.0, 1e7): (0.332, 9.55, 15.5), (100, 50.0, 1e11): (0.396, 5550.0, 621.0),
                (900, 5.0, 1e7): (7.40, 4.75, 829.0), (900, 5.0, 1e11): (8.23, 1.10, 17100.0),
                (900, 50.0, 1e7): (12.98, 27.3, 346.0), (900, 50.0, 1e11): (26.00, 2.31, 17400.0)}
PAPER_TABLE2 = {(100, 5.0, 1e7): (2.96e-5, 2.65e-5), (100, 5.0, 1e11): (2.91e-7, 2.60e-7),
                (900, 5.0, 1e7): (1.98e-5, 1.77e-5), (900, 5.0, 1e11): (2.71e-9, 2.42e-9),
                (100, 50.0, 1e7): (0.813, 0.724), (100, 50.0, 1e11): (0.814, 0.728),
                (900, 50.0, 1e7): (1.0e-2, 8.87e-3), (900, 50.0, 1e11): (1.0e-2, 8.95e-3)}
PAPER_FINE = {1e7: 3.14e-3, 1e11: 9.22e-5}  # 50 N, 100 elements, h = 1e-3: abs error


# ------------------------------------------------------------------ the model

def element_points(n):
    """(n², 2) the x, y (m) of the elements: the centres of an n × n grid
    on the bottom face, in the order of ``mb.add_foundation_elements``."""
    c = ((np.arange(n) + 0.5) / n - 0.5) * SIDE
    x, y = np.meshgrid(c, c, indexing="ij")
    return np.column_stack([x.ravel(), y.ravel()])


def cube_model(n):
    """The cube (body "cube", free joint, 8 kg, body frame at the centre of
    the bottom face, centre of mass at (0, 0, s/2)) with n × n foundation
    elements "element0" … on its bottom face, and the ground plane z = 0
    ("ground"). At ``model.neutral()`` the cube rests on the undeformed
    foundation."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -GRAVITY))
    b.add_body("cube", joint="free", mass=MASS, com=(0.0, 0.0, SIDE / 2), inertia=np.diag(INERTIA))
    b.add_geometry("world", "plane", placement=(np.eye(3), np.zeros(3)), name="ground")
    mb.add_foundation_elements(b, "cube", (0.0, 0.0, 0.0), (SIDE, SIDE), n)
    return b.build()


def load_point(t, centred=False):
    """The point of the load in the frame of the centre of mass (m):
    (s/2)[cos 10t, sin 10t, 1], or the centre of the top face."""
    if centred:
        return np.array([0.0, 0.0, SIDE / 2])
    return SIDE / 2 * np.array([np.cos(OMEGA * t), np.sin(OMEGA * t), 1.0])


class CirclingLoad(ForceElement):
    """A downward world force of ``magnitude`` (N) on the cube at
    :func:`load_point` (t) (the load circles on the top face; ``centred``:
    at the face's centre), evaluated by the simulator at the start of each
    step. τ is that of a force at a point fixed in the body at that
    instant (the point's motion in the body enters only through t)."""

    def __init__(self, magnitude, centred=False, name="load"):
        super().__init__(name)
        self.magnitude, self.centred = float(magnitude), bool(centred)

    def _bind(self, model):
        return resolve_frame(self, model, "cube")

    def _evaluate(self, st, b, jacobians):
        body, place = b
        F = st.pose(body, place)
        x = F[:3, :3] @ (load_point(st.t, self.centred) + [0.0, 0.0, SIDE / 2]) + F[:3, 3]
        tau, K = _point_force_terms(st, st.topo, body, x, np.array([0.0, 0.0, -self.magnitude]), None, False,
                                    jacobians)
        return tau, K, None


def element_stiffness(n, E):
    """K (N/m) of one element: E·A_e/depth."""
    return E * (SIDE * SIDE / n ** 2) / DEPTH


def static_sink(E, load=0.0):
    """(mg + F)·depth/(E·A) (m): the uniform sink under a centred load."""
    return (MASS * GRAVITY + load) * DEPTH / (E * SIDE * SIDE)


def rotation(quat):
    """The rotation matrix of the unit quaternion (w, x, y, z)."""
    w, x, y, z = quat
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def tilt(quat):
    """The angle (rad) between the cube's z axis and the world's (of one
    quaternion (w, x, y, z) or of rows of them), without the cancellation
    of arccos(R₃₃) at small angles."""
    w, x, y, z = np.moveaxis(np.asarray(quat, dtype=float), -1, 0)
    return np.arctan2(np.hypot(2 * (x * z + w * y), 2 * (y * z - w * x)), 1 - 2 * (x * x + y * y))


def critical_damping(n, E):
    """B (N·s/m per element) that damps the cube's heave critically:
    2√(k_tot m)/n², k_tot = E·A/depth."""
    return 2.0 * np.sqrt(E * SIDE * SIDE / DEPTH * MASS) / n ** 2


def com_displacement(q):
    """The displacement (m) of the centre of mass from (0, 0, s/2), from
    the simulator's q (position of the face's centre, quaternion), without
    cancellation: p + (s/2)(R e_z − e_z)."""
    w, x, y, z = q[3:7]
    return q[:3] + SIDE / 2 * np.array([2 * (x * z + w * y), 2 * (y * z - w * x), -2 * (x * x + y * y)])


def coordinate_error(d, quat, d_ref, quat_ref):
    """(abs, rel): the norm of the difference of the generalized
    coordinates (centre-of-mass position, quaternion; the quaternions'
    signs aligned), and that divided by the norm of the reference's."""
    quat, quat_ref = np.asarray(quat), np.asarray(quat_ref)
    if quat @ quat_ref < 0:
        quat = -quat
    err = float(np.sqrt(np.sum((np.asarray(d) - d_ref) ** 2) + np.sum((quat - quat_ref) ** 2)))
    ref = float(np.linalg.norm(np.concatenate([d_ref + [0.0, 0.0, SIDE / 2], quat_ref])))
    return err, err / ref


# ------------------------------------------------------------ the simulator

def run_drumwright(n, E, load, h=H, duration=DURATION, damping=DAMPING, centred=False, tolerance=TOLERANCE):
    """The library's simulator, ``contact_solver="drumwright"``: returns a
    dict with ``t`` (steps + 1,), ``q`` (steps + 1, 7) (the simulator's:
    face centre, quaternion), ``d`` (steps + 1, 3) the centre of mass's
    displacement, ``sink`` (m, minus the height of the bottom face's
    centre), ``tilt`` (rad), ``normal`` Σλ (N, on the cube), ``loaded``
    the number of elements carrying a force > 0, ``min_force`` the smallest
    element force (N; 0 for an element not in contact), ``far_force`` the
    force on the element farthest from the load point (N), ``sweeps``
    (PGS sweeps per step), ``forces`` (n²,) the element forces of the last
    step, ``wall`` (s, in ``sim.step``) and ``setup`` (s, building the
    model and the simulator)."""
    t0 = time.perf_counter()
    model = cube_model(n)
    compliance = mb.Compliance.winkler(E, DEPTH, SIDE * SIDE / n ** 2, damping=damping, friction_damping=0.0)
    sim = mb.Simulator(model, dt=h, q0=model.neutral(), contact_solver="drumwright", contact_model=compliance,
                       max_contacts=n * n, friction="none", forces=[CirclingLoad(load, centred)],
                       contact_tolerance=tolerance)
    names = [g.name for g in sim.contact.geometry.geometries]
    element = np.array([int(s[len("element"):]) if s.startswith("element") else -1 for s in names])
    cube = model.body_names.index("cube")
    points = element_points(n)
    steps = int(round(duration / h))
    out = {k: np.zeros(steps + 1) for k in ("sink", "tilt", "normal", "loaded", "min_force", "far_force",
                                               "sweeps")}
    out["q"], out["d"] = np.zeros((steps + 1, 7)), np.zeros((steps + 1, 3))
    out["q"][0] = model.neutral()
    out["setup"] = time.perf_counter() - t0
    wall = 0.0
    forces = np.zeros(n * n)
    for k in range(1, steps + 1):
        t = time.perf_counter()
        s = sim.step()
        wall += time.perf_counter() - t
        last = sim.contact.last_step()
        forces[:] = 0.0
        on_cube = np.where(last["body"][:, 1] == cube, 1.0, -1.0)  # the force acts on geom 2
        g = np.where(last["body"][:, 1] == cube, last["geom"][:, 1], last["geom"][:, 0])
        np.add.at(forces, element[g], on_cube * last["force"][:, 2])
        out["q"][k], out["d"][k] = s.q, com_displacement(s.q)
        out["sink"][k], out["tilt"][k] = -s.q[2], float(tilt(s.q[3:7]))
        out["normal"][k], out["loaded"][k], out["min_force"][k] = forces.sum(), np.sum(forces > 0), forces.min()
        p = load_point(s.t - h, centred)[:2]  # where the load acted in this step
        out["far_force"][k] = forces[np.argmax(np.sum((points - p) ** 2, axis=1))]
        out["sweeps"][k] = sim.contact.iterations
    out["t"] = np.arange(steps + 1) * h
    out["forces"], out["wall"] = forces.copy(), wall
    return out


# ------------------------------------------------------------ the ODE baselines

class TimeLimit(Exception):
    """Raised from the right-hand side when a cell's wall-clock limit is exceeded."""


def ode_rhs(n, E, load, damping=DAMPING, centred=False):
    """f(t, y) of the 13-state ODE (module docstring: centre-of-mass
    displacement (world), quaternion (w, x, y, z), body angular velocity,
    world centre-of-mass velocity), vectorised over the n² elements.

    With the element i at r_i = (x_i, y_i, −s/2) from the centre of mass
    (body frame) and R the rotation, its height and rate are affine in
    (x_i, y_i): φ_i = d_z + (s/2)(1 − R₃₃) + R₃₁x_i + R₃₂y_i (1 − R₃₃ =
    2(q_x² + q_y²), without cancellation) and φ̇_i = v_z + R₃·(ω × r_i);
    so λ_i = max(0, α + βx_i + γy_i) and the wrench needs only Σλ, Σλx,
    Σλy (one product with the (3, n²) matrix [1; x; y]): the moment in the
    body frame is (Σλ_i r_i) × R₃ᵀ (R₃ = R's third row, the world's z in
    the body) plus r_load × (−F R₃ᵀ)."""
    K, B, half = element_stiffness(n, E), float(damping), SIDE / 2
    xy = element_points(n)
    basis = np.vstack([np.ones(n * n), xy[:, 0], xy[:, 1]])  # (3, n²)
    X, Y = xy[:, 0].copy(), xy[:, 1].copy()
    Ix, Iy, Iz = INERTIA
    weight = MASS * GRAVITY

    def rhs(t, y):
        qn = np.sqrt(y[3] * y[3] + y[4] * y[4] + y[5] * y[5] + y[6] * y[6])
        w, qx, qy, qz = y[3] / qn, y[4] / qn, y[5] / qn, y[6] / qn
        R20, R21, R22 = 2 * (qx * qz - w * qy), 2 * (qy * qz + w * qx), 1 - 2 * (qx * qx + qy * qy)
        ox, oy, oz = y[7], y[8], y[9]
        c0 = y[2] + SIDE * (qx * qx + qy * qy)  # the height of the face's centre (φ at x = y = 0)
        # φ̇ = v_z + R₃·(ω × r) = c1 + a x + b y
        c1 = y[12] + half * (R21 * ox - R20 * oy)
        a, b = R21 * oz - R22 * oy, R22 * ox - R20 * oz
        lam = (-K * c0 - B * c1) + (-K * R20 - B * a) * X + (-K * R21 - B * b) * Y
        np.maximum(lam, 0.0, out=lam)
        S, Sx, Sy = basis @ lam
        Sz = -half * S
        # torque (body): (Sx, Sy, Sz) × (R20, R21, R22) + p × (−F)(R20, R21, R22)
        if centred:
            px, py, pz = 0.0, 0.0, half
        else:
            px, py, pz = half * math.cos(OMEGA * t), half * math.sin(OMEGA * t), half
        fx, fy, fz = -load * R20, -load * R21, -load * R22
        tx = Sy * R22 - Sz * R21 + py * fz - pz * fy
        ty = Sz * R20 - Sx * R22 + pz * fx - px * fz
        tz = Sx * R21 - Sy * R20 + px * fy - py * fx
        # Euler's equations (ω × Iω vanishes for the cube's isotropic inertia; kept general)
        dox = (tx - (oy * Iz * oz - oz * Iy * oy)) / Ix
        doy = (ty - (oz * Ix * ox - ox * Iz * oz)) / Iy
        doz = (tz - (ox * Iy * oy - oy * Ix * ox)) / Iz
        return np.array([y[10], y[11], y[12],
                         0.5 * (-qx * ox - qy * oy - qz * oz), 0.5 * (w * ox + qy * oz - qz * oy),
                         0.5 * (w * oy + qz * ox - qx * oz), 0.5 * (w * oz + qx * oy - qy * ox),
                         dox, doy, doz, 0.0, 0.0, (S - load - weight) / MASS])

    return rhs


def ode_scale(n, E, load):
    """(13,) the natural scale of each state (module docstring, RK45_TOL)."""
    delta = static_sink(E, load)
    omega = np.sqrt(E * SIDE * SIDE / DEPTH / MASS)
    return np.concatenate([np.full(3, delta), np.full(4, delta / SIDE), np.full(6, delta * omega)])


def run_ode(n, E, load, method="RK45", rtol=None, atol=None, limit=LIMIT, duration=DURATION, output=H,
            damping=DAMPING, centred=False):
    """The ODE by ``solve_ivp(method=...)``: a dict with ``t`` (the output
    grid, step ``output``), ``y`` (the 13 states), ``d``, ``quat``,
    ``sink``, ``tilt`` on it, ``wall`` (s; None if the limit was hit),
    ``nfev``, ``status`` ("ok", "> limit" or scipy's message). Tolerances:
    RK45_TOL / BDF_TOL (rtol, atol in units of the states' scales) unless
    given (atol then absolute)."""
    rhs = ode_rhs(n, E, load, damping, centred)
    default = RK45_TOL if method == "RK45" else BDF_TOL
    rtol = default[0] if rtol is None else rtol
    atol = default[1] * ode_scale(n, E, load) if atol is None else atol
    start = time.perf_counter()
    calls = [0]

    def limited(t, y):
        calls[0] += 1
        if time.perf_counter() - start > limit:
            raise TimeLimit
        return rhs(t, y)

    from scipy.integrate import solve_ivp
    grid = np.linspace(0.0, duration, int(round(duration / output)) + 1)
    y0 = np.zeros(13)
    y0[3] = 1.0
    out = {"t": grid, "nfev": None}
    try:
        sol = solve_ivp(limited, (0.0, duration), y0, method=method, t_eval=grid, rtol=rtol, atol=atol)
    except TimeLimit:
        out.update(wall=None, status="> limit", nfev=calls[0])
        return out
    out["wall"] = time.perf_counter() - start
    out["status"] = "ok" if sol.success else sol.message
    out["nfev"] = sol.nfev
    if not sol.success:
        out["wall"] = None
        return out
    Y = sol.y.T
    quat = Y[:, 3:7] / np.linalg.norm(Y[:, 3:7], axis=1)[:, None]
    out["y"], out["d"], out["quat"] = Y, Y[:, :3], quat
    # the bottom face's centre: d_z + (s/2)(1 − R₃₃)
    out["sink"] = -(Y[:, 2] + SIDE * (quat[:, 1] ** 2 + quat[:, 2] ** 2))
    out["tilt"] = tilt(quat)
    return out


def ode_forces(n, E, y, damping=DAMPING):
    """(n²,) the element forces λ_i (N) of the ODE at the state y."""
    K, half = element_stiffness(n, E), SIDE / 2
    w, qx, qy, qz = y[3:7] / np.linalg.norm(y[3:7])
    R = rotation((w, qx, qy, qz))
    xy = element_points(n)
    r = np.column_stack([xy, np.full(n * n, -half)])
    phi = y[2] + R[2, 0] * xy[:, 0] + R[2, 1] * xy[:, 1] + SIDE * (qx * qx + qy * qy)
    phidot = y[12] + np.cross(y[7:10], r) @ R[2]
    return np.maximum(0.0, -K * phi - damping * phidot)


def error(dw, ref, k=-1):
    """(abs, rel) error of the simulator's run ``dw`` vs the ODE run ``ref``
    at 1 s (k = −1; both end there)."""
    return coordinate_error(dw["d"][k], dw["q"][k, 3:7], ref["d"][k], ref["quat"][k])


def lag_estimate(ref, h):
    """The error the simulator should make at 1 s: the load acts at its
    point at the start of each step, and at ωh ≫ 1 implicit Euler puts
    the cube into the quasi-static pose of that load, so the tilt (a vector
    turning with the load at Ω = 10 rad/s) lags by h: |Δθ| ≈ θΩh, a
    difference of θΩh/2 in the quaternion (the centre of mass does not move
    sideways: frictionless). θ: the reference's tilt at 1 s."""
    return 0.5 * float(ref["tilt"][-1]) * OMEGA * h


# ------------------------------------------------------------ the script

def _seconds(x, limit):
    return f"> {limit:g}" if x is None else f"{x:.3g}"


def main(argv=None):
    import warnings
    parser = drumwright_common.parser(__doc__)
    parser.add_argument("--limit", type=float, default=LIMIT, help="wall-clock limit per ODE cell (s)")
    parser.add_argument("--quick", action="store_true", help="only the 100-element cells")
    args = parser.parse_args(argv)
    counts = COUNTS[:1] if args.quick else COUNTS
    warnings.simplefilter("always")  # one line per run when the contact solver reaches its sweep cap

    print("Static check: the load at the centre of the top face, B = critical damping of the heave "
          "(2√(k_tot m)/n² per element), 0.2 s at h = 0.01 s")
    print(f"{'elements':>8} {'E (Pa)':>8} {'F (N)':>6} {'B (N·s/m)':>10} {'sink (m)':>13} {'(mg+F)d/(EA)':>13} "
          f"{'rel err':>9} {'sum f (N)':>14} {'mg + F':>7} {'rel err':>9}")
    for n in counts:
        for E in MODULI:
            for F in LOADS:
                B = critical_damping(n, E)
                r = run_drumwright(n, E, F, centred=True, damping=B, duration=0.2)
                ref, total = static_sink(E, F), MASS * GRAVITY + F
                print(f"{n * n:8d} {E:8.0e} {F:6.0f} {B:10.3g} {r['sink'][-1]:13.6e} {ref:13.6e} "
                      f"{r['sink'][-1] / ref - 1:9.1e} {r['normal'][-1]:14.9f} {total:7.1f} "
                      f"{r['normal'][-1] / total - 1:9.1e}")

    print("\nConsistency (100 elements, E = 1e7, 5 N): the simulator vs RK45, error after 1 s")
    for B in (DAMPING, 100.0):
        ref = run_ode(10, 1e7, 5.0, "RK45", limit=np.inf, damping=B)
        for h in (1e-2, 1e-3, 1e-4):
            dw = run_drumwright(10, 1e7, 5.0, h=h, damping=B)
            a, r = error(dw, ref)
            stride = int(round(H / h))
            print(f"  B = {B:5g} N·s/m, h = {h:6.0e} s: abs {a:.3e} (lag estimate θΩh/2 = "
                  f"{lag_estimate(ref, h):.3e}), rel {r:.3e}; max |Δsink| on the 0.01 s grid "
                  f"{np.abs(dw['sink'][::stride] - ref['sink']).max():.2e} m, max |Δtilt| "
                  f"{np.abs(dw['tilt'][::stride] - ref['tilt']).max():.2e} rad", flush=True)

    cells = [(n, F, E) for n in counts for F in LOADS for E in MODULI]
    results = {}
    for n, F, E in cells:
        dw = run_drumwright(n, E, F)
        fine = run_drumwright(n, E, F, h=1e-3) if n == 10 else None
        bdf = run_ode(n, E, F, "BDF", limit=args.limit)
        rk = run_ode(n, E, F, "RK45", limit=args.limit, output=1e-4)  # fine output for the figure
        results[n * n, F, E] = dict(dw=dw, fine=fine, bdf=bdf, rk=rk)
        sw = dw["sweeps"][1:]
        print(f"cell {n * n} elements, {F:g} N, E = {E:.0e}: drumwright {dw['wall']:.3f} s (setup "
              f"{dw['setup']:.2f} s; PGS sweeps per step mean {np.abs(sw).mean():.1f}, max {np.abs(sw).max():.0f}, "
              f"{int(np.sum(sw < 0))} steps at the cap); BDF {_seconds(bdf['wall'], args.limit)} s ({bdf['status']}, "
              f"{bdf['nfev']} evaluations); RK45 {_seconds(rk['wall'], args.limit)} s ({rk['status']}, "
              f"{rk['nfev']} evaluations)", flush=True)

    print("\nTable 1: wall-clock seconds on this machine [the paper's]; drumwright: the 1/h steps (sim.step)")
    print(f"{'elements':>8} {'load':>5} | {'E = 1e7: drumwright':>20} {'BDF':>16} {'RK45':>16} | "
          f"{'E = 1e11: drumwright':>20} {'BDF':>16} {'RK45':>16}")
    for n in counts:
        for F in LOADS:
            row = f"{n * n:8d} {F:4.0f}N |"
            for E in MODULI:
                c, p = results[n * n, F, E], PAPER_TABLE1[n * n, F, E]
                row += f" {_seconds(c['dw']['wall'], args.limit):>10} [{p[0]:>6.4g}]"
                row += f" {_seconds(c['bdf']['wall'], args.limit):>7} [{p[1]:>6.4g}]"
                row += f" {_seconds(c['rk']['wall'], args.limit):>7} [{p[2]:>6.4g}] |"
            print(row)

    print("\nTable 2: error of the drumwright simulator vs RK45 after 1 s, h = 0.01 s [the paper's]; "
          "lag: the estimate θΩh/2; BDF: scipy BDF's error vs RK45")
    print(f"{'load':>5} {'elements':>8} {'E':>6} | {'abs':>9} {'[paper]':>10} {'rel':>9} {'[paper]':>10} | "
          f"{'lag':>9} {'BDF abs':>9}")
    for F in LOADS:
        for n in counts:
            for E in MODULI:
                c, p = results[n * n, F, E], PAPER_TABLE2[n * n, F, E]
                if c["rk"]["wall"] is None:
                    print(f"{F:4.0f}N {n * n:8d} {E:6.0e} | {'(RK45 > limit)':>20} [{p[0]:8.3g}] {'':>9} "
                          f"[{p[1]:8.3g}] |")
                    continue
                a, r = error(c["dw"], c["rk"])
                bdf = c["bdf"]
                b = f"{'-':>9}"
                if bdf["wall"] is not None:
                    rk = c["rk"]
                    b = f"{coordinate_error(bdf['d'][-1], bdf['quat'][-1], rk['d'][-1], rk['quat'][-1])[0]:9.3g}"
                print(f"{F:4.0f}N {n * n:8d} {E:6.0e} | {a:9.3g} [{p[0]:8.3g}] {r:9.3g} [{p[1]:8.3g}] | "
                      f"{lag_estimate(c['rk'], H):9.3g} {b}")
    print("h = 1e-3 (100 elements):")
    for F in LOADS:
        for E in MODULI:
            c = results[100, F, E]
            if c["rk"]["wall"] is None:
                continue
            a, r = error(c["fine"], c["rk"])
            paper = f" [paper {PAPER_FINE[E]:.3g}]" if F == 50.0 else ""
            print(f"  {F:4.0f} N, E = {E:.0e}: abs {a:.3g}{paper}, rel {r:.3g}, lag estimate "
                  f"{lag_estimate(c['rk'], 1e-3):.3g}; ratio to h = 0.01 s {a / error(c['dw'], c['rk'])[0]:.3f}")
    print("Lift-off (an element carries no force in some step; far side: the element farthest from the load; "
          "RK45 on the 0.01 s grid from 0.1 s on — before, its undamped heave lifts the whole face at 5 N too):")
    for key, c in results.items():
        line = (f"  {key[0]} elements, {key[1]:g} N, E = {key[2]:.0e}: fewest loaded elements in a step "
                f"{int(c['dw']['loaded'][1:].min())} of {key[0]}, far-side force min "
                f"{c['dw']['far_force'][1:].min():.3g} N")
        if c["rk"]["wall"] is not None:
            n = int(round(np.sqrt(key[0])))
            loaded = [np.sum(ode_forces(n, key[2], y) > 0) for y in c["rk"]["y"][1000::100]]
            line += f"; RK45 (0.01 s grid): fewest loaded {min(loaded)}"
        print(line)

    fig, axes = drumwright_common.subplots(2, 4, figsize=(17, 6.5), sharex=True)
    for j, (F, E) in enumerate((F, E) for F in LOADS for E in MODULI):
        c = results[100, F, E]
        for i, (key, unit) in enumerate((("sink", "m"), ("tilt", "rad"))):
            ax = axes[i, j]
            if c["rk"]["wall"] is not None:
                ax.plot(c["rk"]["t"], c["rk"][key], "-", color="0.55", lw=0.5, label="RK45 (reference)")
            ax.plot(c["dw"]["t"], c["dw"][key], "r.--", lw=1.0, ms=3, label="drumwright, h = 0.01 s")
            ax.plot(c["fine"]["t"], c["fine"][key], "b-", lw=0.8, label="drumwright, h = 1e-3 s")
            ax.set(ylabel=f"{key} ({unit})")
            ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
            if i == 0:
                ax.set_title(f"100 elements, {F:g} N, E = {E:.0e} Pa", fontsize=10)
            else:
                ax.set_xlabel("t (s)")
        axes[0, j].legend(fontsize=7, loc="lower right")
    fig.suptitle("E6: a 1 m, 8 kg cube on a Winkler foundation, load circling on the top face (B = 1 N·s/m)")
    drumwright_common.save(fig, args.out, "e6_foundation.png")


if __name__ == "__main__":
    main()
