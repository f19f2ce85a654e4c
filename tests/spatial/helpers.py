"""Shared strategies and oracle adapters for the spatial tests.

Pinocchio puts 6-vectors LINEAR first and stores quaternion coefficients as
(x, y, z, w); we are angular first and (w, x, y, z). The converters below are
the only place where that is reconciled.
"""
import numpy as np
from hypothesis import settings, strategies as st

EPS = np.finfo(float).eps
SETTINGS = settings(max_examples=60, deadline=None)
FEW = settings(max_examples=30, deadline=None)

PERM = np.array([3, 4, 5, 0, 1, 2])  # linear-first <-> angular-first (an involution)


def lf_to_af(v):
    """Pinocchio (linear, angular) 6-vector -> (angular, linear)."""
    return np.asarray(v)[PERM]


def af_to_lf(v):
    return np.asarray(v)[PERM]


def mat_lf_to_af(A):
    """6x6 matrix acting on linear-first vectors -> angular-first."""
    A = np.asarray(A)
    return A[np.ix_(PERM, PERM)]


def pin_motion(xi):
    import pinocchio as pin
    xi = np.asarray(xi, dtype=float)
    return pin.Motion(xi[3:].copy(), xi[:3].copy())


def pin_force(f):
    import pinocchio as pin
    f = np.asarray(f, dtype=float)
    return pin.Force(f[3:].copy(), f[:3].copy())


def hat3(w):
    """Independent skew matrix (not the library's)."""
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def hat4(xi):
    X = np.zeros((4, 4))
    X[:3, :3] = hat3(xi[:3])
    X[:3, 3] = xi[3:]
    return X


def ad6(xi):
    """Independent ad (angular first), from its definition."""
    A = np.zeros((6, 6))
    A[:3, :3] = hat3(xi[:3])
    A[3:, 3:] = hat3(xi[:3])
    A[3:, :3] = hat3(xi[3:])
    return A


def pose(R, p):
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


# ---------------------------------------------------------------- strategies
finite = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)


@st.composite
def unit_vectors(draw):
    v = np.array([draw(st.floats(-1.0, 1.0)) for _ in range(3)])
    n = np.linalg.norm(v)
    if n < 1e-3:
        v = np.array([0.0, 0.0, 1.0]) if draw(st.booleans()) else np.array([0.6, -0.8, 0.0])
        n = 1.0
    return v / n


def angles_near_zero():
    """Angles in [0, 1e-8], with 0 itself and tiny magnitudes likely."""
    return st.one_of(st.just(0.0), st.floats(0.0, 1e-8), st.floats(1e-300, 1e-8).map(float),
                     st.sampled_from([1e-12, 1e-10, 5e-9, 1e-8]))


def angles_near_pi():
    """Angles in [π - 1e-8, π]."""
    return st.one_of(st.just(np.pi), st.floats(0.0, 1e-8).map(lambda d: np.pi - d))


def angles_general():
    return st.floats(0.0, np.pi)


def angles_any():
    """Mix: general angles, near 0, near π, and the Taylor/closed-form switch at 0.5."""
    return st.one_of(angles_general(), angles_near_zero(), angles_near_pi(),
                     st.floats(0.5 - 1e-6, 0.5 + 1e-6), st.floats(1e-5, 1e-2))


@st.composite
def rotvecs(draw, angles=None):
    th = draw(angles if angles is not None else angles_any())
    return th * draw(unit_vectors())


@st.composite
def twists(draw, angles=None, vscale=5.0):
    w = draw(rotvecs(angles))
    v = np.array([draw(st.floats(-vscale, vscale)) for _ in range(3)])
    return np.concatenate([w, v])


@st.composite
def unit_quaternions(draw):
    q = np.array([draw(st.floats(-1.0, 1.0)) for _ in range(4)])
    n = np.linalg.norm(q)
    if n < 1e-3:
        q = np.array([1.0, 0.0, 0.0, 0.0])
        n = 1.0
    return q / n


@st.composite
def rotations(draw):
    """Rotation matrices from scipy (an oracle we did not write)."""
    from scipy.spatial.transform import Rotation
    return Rotation.from_rotvec(draw(rotvecs())).as_matrix()


@st.composite
def vectors3(draw, scale=2.0):
    return np.array([draw(st.floats(-scale, scale)) for _ in range(3)])


@st.composite
def vectors6(draw, scale=2.0):
    return np.array([draw(st.floats(-scale, scale)) for _ in range(6)])


@st.composite
def rigid_inertias(draw):
    """(m, c, Ic) with Ic a physical (triangle-inequality) inertia, rotated."""
    from scipy.spatial.transform import Rotation
    m = draw(st.floats(0.1, 10.0))
    c = draw(vectors3(1.0))
    # principal moments from a random box keeps the triangle inequality
    size = np.array([draw(st.floats(0.05, 2.0)) for _ in range(3)])
    d = m / 12.0 * np.array([size[1]**2 + size[2]**2, size[0]**2 + size[2]**2, size[0]**2 + size[1]**2])
    Q = Rotation.from_rotvec(draw(rotvecs(angles_general()))).as_matrix()
    Ic = Q @ np.diag(d) @ Q.T
    return m, c, 0.5 * (Ic + Ic.T)


# ------------------------------------------------- exact-arithmetic references
def exact_phi1(A, nterms=60):
    """Σ_{k≥0} Aᵏ/(k+1)! evaluated in exact rational arithmetic (fractions) for a
    float matrix A, rounded once to float64: the defining series of dexp,
    independent of any closed form, series switch or cancellation."""
    from fractions import Fraction
    n = A.shape[0]
    Af = [[Fraction(float(A[i, j])) for j in range(n)] for i in range(n)]
    term = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]  # A^k/(k+1)!
    total = [row[:] for row in term]
    for k in range(1, nterms):
        term = [[sum(term[i][m] * Af[m][j] for m in range(n) if Af[m][j]) / (k + 1)
                 for j in range(n)] for i in range(n)]
        total = [[total[i][j] + term[i][j] for j in range(n)] for i in range(n)]
    return np.array([[float(x) for x in row] for row in total])
