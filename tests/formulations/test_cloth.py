"""A hanging cloth: a mass-spring grid whose top row is attached to a bar on
a revolute joint settles under implicit Euler at h = 10 ms to the shape
that minimizes the potential energy, computed independently (the energy
and its analytic gradient written here, minimized by scipy)."""
import pathlib
import runpy
import sys

import numpy as np
import pytest
from scipy.optimize import minimize

import multibody as mb
from multibody.formulations import ParticleSystem

ROOT = pathlib.Path(__file__).resolve().parents[2]
G = 9.81


SPREAD = 1.15   # the top row is attached 15 % wider than the cloth: horizontal tension, no buckling


def top_row(n, size):
    d = size / (n - 1)
    return np.array([[size / 2 + SPREAD * (i * d - size / 2), 0.0, -0.05] for i in range(n)])


def hanging_cloth(n, k=100.0, bend=5.0, mass=0.1, size=0.3, bar_mass=0.5):
    """The cloth lies flat; its top row is attached to the bar at points spread
    wider than its rest spacing, so that the hanging cloth is in tension across
    (a cloth hung at its rest width compresses sideways under its weight and
    buckles: the flat hanging shape is then a saddle of the energy, which the
    exact-stiffness step leaves after ~1000 steps and the definite one more
    slowly)."""
    b = mb.ModelBuilder("bar")
    b.add_body("bar", "world", "revolute", axis=(1, 0, 0), mass=bar_mass, com=(size / 2, 0, -0.05),
               inertia=np.diag([1e-3, 4e-3, 4e-3]), damping=0.02)
    ps = ParticleSystem(b.build(), particle_damping=4.0)
    d = size / (n - 1)
    idx = ps.add_grid(n, n, (0, 0, -0.05), (d, 0, 0), (0, d, 0), mass=mass, stiffness=k, damping=0.2,
                      bend_stiffness=bend)
    for i, p in enumerate(top_row(n, size)):
        ps.attach(int(idx[i, 0]), "bar", p)
    return ps, idx


def grid_springs(n, size, k, bend):
    """The springs of the grid, written independently: (i, j) in grid
    coordinates, stiffness, rest length."""
    d = size / (n - 1)
    out = []
    for i in range(n):
        for j in range(n):
            for di, dj, kk in ((1, 0, k), (0, 1, k), (1, 1, k), (1, -1, k), (2, 0, bend), (0, 2, bend)):
                a, b = i + di, j + dj
                if 0 <= a < n and 0 <= b < n and kk:
                    out.append(((i, j), (a, b), kk, d * np.hypot(di, dj)))
    return out


def equilibrium(n, k, bend, mass, size, bar_mass, x_guess, theta_guess):
    """Minimize V(θ, X) = Σ ½k(l − r)² + Σ m g z + m_bar g z_com(θ) over the bar
    angle θ and the free particles X (rows j ≥ 1), the top row at
    R_x(θ)(x_i, 0, −0.05)."""
    springs = grid_springs(n, size, k, bend)
    mp = mass / (n * n)
    d = size / (n - 1)
    top = top_row(n, size)

    def unpack(y):
        th = y[0]
        c, s = np.cos(th), np.sin(th)
        R = np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
        X = np.empty((n, n, 3))
        X[:, 0] = top @ R.T
        X[:, 1:] = y[1:].reshape(n, n - 1, 3)
        return th, R, X

    A = np.array([a[0] * n + a[1] for a, _, _, _ in springs])
    B = np.array([b[0] * n + b[1] for _, b, _, _ in springs])
    K = np.array([s[2] for s in springs])
    r0 = np.array([s[3] for s in springs])

    def V_and_grad(y):
        th, R, X = unpack(y)
        P = X.reshape(-1, 3)
        dx = P[B] - P[A]
        l = np.linalg.norm(dx, axis=1)
        V = mp * G * P[:, 2].sum() + bar_mass * G * (-0.05 * np.cos(th)) + 0.5 * K @ (l - r0) ** 2
        gP = np.zeros_like(P)
        gP[:, 2] += mp * G
        fs = (K * (l - r0) / l)[:, None] * dx
        np.add.at(gP, B, fs)
        np.add.at(gP, A, -fs)
        gX = gP.reshape(n, n, 3)
        # θ: the top row turns about x (dX/dθ = e_x × X), the bar's centre of mass too
        gth = bar_mass * G * 0.05 * np.sin(th) + np.sum(gX[:, 0] * np.cross([1.0, 0, 0], X[:, 0]))
        return V, np.concatenate([[gth], gX[:, 1:].ravel()])

    y0 = np.concatenate([[theta_guess], x_guess[:, 1:].ravel()])
    y0[1:] += 1e-3 * np.random.default_rng(0).standard_normal(len(y0) - 1)   # off any symmetric saddle
    res = minimize(V_and_grad, y0, jac=True, method="L-BFGS-B",
                   options={"ftol": 0.0, "gtol": 1e-12, "maxiter": 100000, "maxcor": 50})
    y = res.x
    # polish by Newton-CG (Hessian-vector products: central differences of the analytic gradient); the
    # quasi-Newton line searches stall at |∇V| ~ 1e-7 on the round-off of V
    def hessp(y, p, e=1e-7):
        s = e / max(np.abs(p).max(), 1e-300)
        return (V_and_grad(y + s * p)[1] - V_and_grad(y - s * p)[1]) / (2 * s)
    res = minimize(V_and_grad, y, jac=True, hessp=hessp, method="Newton-CG", options={"xtol": 1e-14, "maxiter": 200})
    y = res.x
    # |∇V| < 1e-9 N: with the softest mode's stiffness (the cloth's pendulum, m g / L ≈ 3 N/m) the
    # point is within ~1e-9 m of the true minimum
    assert np.abs(V_and_grad(y)[1]).max() < 1e-9
    # a minimum, not a saddle: the Hessian (central differences of the gradient) is positive definite
    e, m = 1e-6, min(len(y), 200)           # (the first 200 coordinates on the large cloth)
    E = np.eye(len(y))
    H = np.array([(V_and_grad(y + e * E[c])[1][:m] - V_and_grad(y - e * E[c])[1][:m]) / (2 * e) for c in range(m)])
    assert np.linalg.eigvalsh(0.5 * (H + H.T)).min() > 1e-3
    th, _, X = unpack(y)
    return th, X


def settle(ps, steps, tol=1e-11):
    for k in range(steps):
        ps.step(0.01)
        if k > 100 and np.abs(ps._xdf).max() < tol and abs(ps.v[0]) < tol:
            return k
    return steps


@pytest.mark.parametrize("stiffness", ["definite", "exact"])
def test_hanging_cloth_settles_to_the_energy_minimum(stiffness):
    n = 6
    ps, idx = hanging_cloth(n)
    E0 = ps.kinetic_energy() + ps.potential_energy()
    energies = []
    for k in range(1500):
        ps.step(0.01, stiffness=stiffness)
        if k % 50 == 0:
            energies.append(ps.kinetic_energy() + ps.potential_energy())
        if k > 200 and np.abs(ps._xdf).max() < 1e-10 and abs(ps.v[0]) < 1e-10:
            break
    assert np.all(np.diff(energies) < 1e-9) and energies[0] <= E0 + 1e-9      # damped: no energy gain
    X = ps.positions()[idx]
    th, Xmin = equilibrium(n, 100.0, 5.0, 0.1, 0.3, 0.5, X, ps.q[0])
    assert abs(ps.q[0] - th) < 1e-6
    assert np.abs(X - Xmin).max() < 1e-6
    assert X[:, -1, 2].max() < -0.3                           # it hangs


def test_hanging_cloth_in_the_simulator_settles_to_the_energy_minimum():
    """The same cloth stepped by Simulator(particles=...): its trajectory's
    energy (bodies and particles) never rises, and it comes to the same
    minimum of the potential energy."""
    n = 6
    ps, idx = hanging_cloth(n)
    sim = mb.Simulator(ps.model, 0.01, "implicit_euler", particles=ps)
    for _ in range(6):
        traj = sim.rollout(steps=250, record_every=10)
        assert np.all(np.diff(traj.energy) < 1e-9)                # damped: no energy gain
        if np.abs(traj.particle_velocity[-1]).max() < 1e-10 and abs(traj.v[-1, 0]) < 1e-10:
            break
    X = traj.particle_position[-1][idx]
    th, Xmin = equilibrium(n, 100.0, 5.0, 0.1, 0.3, 0.5, X, traj.q[-1, 0])
    assert abs(traj.q[-1, 0] - th) < 1e-6
    assert np.abs(X - Xmin).max() < 1e-6
    assert X[:, -1, 2].max() < -0.3                           # it hangs


def test_cholesky_rollout_equals_lu_rollout():
    """The default solve of the definite step (sparse Cholesky + the bar's
    Schur complement) against SuperLU on the whole reduced matrix, over 2 s
    of a 6 × 6 cloth swinging on the bar and settling: the trajectories agree
    to 1e-9 m / rad (the solves differ by rounding only)."""
    import copy
    ps, idx = hanging_cloth(6)
    ps.v = np.array([3.0])
    a, b = copy.deepcopy(ps), copy.deepcopy(ps)
    ta = a.rollout(2.0, 0.01)
    tb = b.rollout(2.0, 0.01, solver="lu")
    assert np.abs(ta.x - tb.x).max() < 1e-9
    assert np.abs(ta.q - tb.q).max() < 1e-9 and np.abs(ta.v - tb.v).max() < 1e-9
    assert np.ptp(ta.q[:, 0]) > 0.2                            # it swung (0.23 rad)


@pytest.mark.slow
def test_hanging_cloth_30x30():
    n = 30
    k = 20.0 * n
    ps, idx = hanging_cloth(n, k=k, bend=0.05 * k, mass=0.3, size=0.6, bar_mass=1.0)
    for _ in range(3000):
        ps.step(0.01)
        if np.abs(ps._xdf).max() < 1e-10 and abs(ps.v[0]) < 1e-10:
            break
    X = ps.positions()[idx]
    th, Xmin = equilibrium(n, k, 0.05 * k, 0.3, 0.6, 1.0, X, ps.q[0])
    assert abs(ps.q[0] - th) < 1e-6
    assert np.abs(X - Xmin).max() < 1e-6


def test_example_runs_small(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["cloth.py", "--n", "5", "--duration", "0.05", "--out",
                                      str(tmp_path / "cloth.png")])
    runpy.run_path(str(ROOT / "examples" / "cloth.py"), run_name="__main__")
    assert (tmp_path / "cloth.png").stat().st_size > 1000
