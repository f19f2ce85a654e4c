"""Contact problems for the solver tests: random Delassus matrices and a
rigid box on a plane, whose answers are known in closed form."""
import itertools

import numpy as np

G = 9.81


def spd(rng, n, low=0.5, high=2.0):
    """A random symmetric matrix with eigenvalues in [low, high]."""
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (Q * rng.uniform(low, high, n)) @ Q.T


def delassus(rng, nc, nv):
    """``W = J M⁻¹ Jᵀ`` for a random J (3nc, nv) and mass matrix M (nv, nv):
    singular (positive semi-definite) when nv < 3nc. Returns (W, J, M⁻¹)."""
    J = rng.normal(size=(3 * nc, nv))
    Minv = np.linalg.inv(spd(rng, nv))
    W = J @ Minv @ J.T
    return 0.5 * (W + W.T), J, Minv


class BoxOnPlane:
    """A rigid box (mass m, half extents a, b, c) resting on the plane z = 0
    with its 4 bottom corners in contact, normal z, tangents t1 = x,
    t2 = y. Generalized velocity ν = (v of the centre, ω), both in world
    axes, M = diag(m I, I_c). Velocity-level step of length dt under
    gravity from the velocity ν0: ``b = J ν_free``, ``ν_free = ν0 + dt g``.
    12 rows of rank 6: W is singular, the per-corner impulses are not
    unique, the resultant ``Jᵀλ`` (and ν⁺) is."""

    def __init__(self, v0=(1.0, 0.0, 0.0), mass=2.0, half=(0.2, 0.15, 0.05), dt=0.01):
        a, b, c = half
        self.mass, self.dt = mass, dt
        inertia = mass / 3.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
        self.Minv = np.zeros((6, 6))
        self.Minv[:3, :3] = np.eye(3) / mass
        self.Minv[3:, 3:] = np.linalg.inv(inertia)
        rows = []
        for sx, sy in itertools.product((1, -1), (1, -1)):
            r = np.array([sx * a, sy * b, -c])
            for d in np.eye(3)[[2, 0, 1]]:  # n = z, t1 = x, t2 = y
                rows.append(np.concatenate([d, np.cross(r, d)]))
        self.J = np.array(rows)
        self.W = self.J @ self.Minv @ self.J.T
        self.W = 0.5 * (self.W + self.W.T)
        self.nu_free = np.concatenate([v0, np.zeros(3)]) + dt * np.array([0, 0, -G, 0, 0, 0])
        self.b = self.J @ self.nu_free

    def velocity(self, lam):
        """ν⁺ = ν_free + M⁻¹Jᵀλ."""
        return self.nu_free + self.Minv @ self.J.T @ lam

    def coulomb_velocity(self, mu):
        """ν⁺ under Coulomb's law (isotropic cone), in closed form: the box
        stays on the plane without rotating (4 corners, u_n = 0), the
        normal impulse is m g dt, the friction impulse ``μ m g dt`` opposes
        the sliding velocity, or stops it if that is enough (valid while
        the friction torque cannot tip the box: μ c < a, b)."""
        v = self.nu_free[:2]
        speed = np.linalg.norm(v)
        stop = mu * G * self.dt
        out = np.zeros(6)
        if speed > stop:
            out[:2] = v * (1.0 - stop / speed)
        return out
