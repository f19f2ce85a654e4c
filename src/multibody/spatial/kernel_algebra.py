"""Scalar spatial algebra for the compiled kernels: the one copy of the
small 3-vector and 6-vector products that every kernel layer inlines.

Conventions (DESIGN.md, Featherstone ch. 2). Spatial vectors are angular
first: a motion vector is ``m = [ω; v_O]`` (angular velocity, then the
velocity of the point at the frame origin O), a force vector is
``f = [n_O; f]`` (moment about O, then the force). A pose ``T = (R, p)``
of a child frame in its parent (``x_parent = R x_child + p``, URDF style)
is stored as a 4x4 array ``[[R, p], [0, 1]]``; Featherstone's transform
from parent to child coordinates is then ``X = ᶜX_p = rot(Rᵀ) xlt(p)``, so
that ``X m`` expresses in the child a motion given in the parent and
``X⁻¹ m`` = ``Ad(T) m`` the reverse.

Everything here is ``@njit(inline="always")`` and works on scalars: vectors
enter as their components and leave as tuples of floats, and poses are
addressed as ``P[k, i]`` inside a stack of poses (``Data.poses``) rather
than passed as views, because a view in a per-body loop costs reference
counting (docs/architecture.md, "Kernels", rules 1–3). Inlining makes a
helper compile to the same code in whichever kernel uses it, so moving
them here changed no kernel's arithmetic: every expression keeps the order
of evaluation it had in its former module (results are bitwise equal).

Helpers that read the model table ``tree`` (``inertia_times``, joint
functions) belong to the layers that define the table (L1 and above) and
live there. L0: this module imports nothing from multibody.
"""
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def cross(a0, a1, a2, b0, b1, b2):
    """The 3-vector cross product ``a × b`` as 3 scalars."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, nogil=True, inline="always")
def rotate(P, k, i, x0, x1, x2):
    """``R x`` for the rotation R of the pose ``P[k, i]``: a vector of the
    child frame expressed in the parent's axes."""
    return (P[k, i, 0, 0] * x0 + P[k, i, 0, 1] * x1 + P[k, i, 0, 2] * x2,
            P[k, i, 1, 0] * x0 + P[k, i, 1, 1] * x1 + P[k, i, 1, 2] * x2,
            P[k, i, 2, 0] * x0 + P[k, i, 2, 1] * x1 + P[k, i, 2, 2] * x2)


@njit(cache=True, nogil=True, inline="always")
def rotate_by(T, x0, x1, x2):
    """``R x`` for the rotation block R of one pose ``T`` (a 4x4 or 3x3
    array): :func:`rotate` for a pose held as its own array (a frame's
    pose computed on the fly) rather than inside a stack of poses."""
    return (T[0, 0] * x0 + T[0, 1] * x1 + T[0, 2] * x2, T[1, 0] * x0 + T[1, 1] * x1 + T[1, 2] * x2,
            T[2, 0] * x0 + T[2, 1] * x1 + T[2, 2] * x2)


@njit(cache=True, nogil=True, inline="always")
def to_child(P, k, i, m0, m1, m2, m3, m4, m5):
    """``Ad(T⁻¹) m`` as 6 scalars, T = ``P[k, i]``: the motion vector m,
    given in the parent, expressed in the child frame whose pose in the
    parent is T (Featherstone ``X m``, Table A.4:
    ``[Rᵀ ω; Rᵀ (v_O − p × ω)]``)."""
    px, py, pz = P[k, i, 0, 3], P[k, i, 1, 3], P[k, i, 2, 3]
    u0 = m3 + m1 * pz - m2 * py
    u1 = m4 + m2 * px - m0 * pz
    u2 = m5 + m0 * py - m1 * px
    return (P[k, i, 0, 0] * m0 + P[k, i, 1, 0] * m1 + P[k, i, 2, 0] * m2,
            P[k, i, 0, 1] * m0 + P[k, i, 1, 1] * m1 + P[k, i, 2, 1] * m2,
            P[k, i, 0, 2] * m0 + P[k, i, 1, 2] * m1 + P[k, i, 2, 2] * m2,
            P[k, i, 0, 0] * u0 + P[k, i, 1, 0] * u1 + P[k, i, 2, 0] * u2,
            P[k, i, 0, 1] * u0 + P[k, i, 1, 1] * u1 + P[k, i, 2, 1] * u2,
            P[k, i, 0, 2] * u0 + P[k, i, 1, 2] * u1 + P[k, i, 2, 2] * u2)


@njit(cache=True, nogil=True, inline="always")
def to_parent(P, k, i, m0, m1, m2, m3, m4, m5):
    """``Ad(T) m`` as 6 scalars, T = ``P[k, i]``: the motion vector m of the
    child frame expressed in the parent (Featherstone ``X⁻¹ m``:
    ``[R ω; R v_O + p × R ω]``)."""
    w0, w1, w2 = rotate(P, k, i, m0, m1, m2)
    l0, l1, l2 = rotate(P, k, i, m3, m4, m5)
    px, py, pz = P[k, i, 0, 3], P[k, i, 1, 3], P[k, i, 2, 3]
    return (w0, w1, w2, l0 + py * w2 - pz * w1, l1 + pz * w0 - px * w2, l2 + px * w1 - py * w0)


@njit(cache=True, nogil=True, inline="always")
def force_to_parent(P, k, i, n0, n1, n2, f0, f1, f2):
    """A force ``[n; f]`` in the child frame (pose ``P[k, i]`` in the parent)
    expressed in the parent: ``^λX_i* f = [R n + p × R f; R f]``
    (Featherstone Eq. 2.27)."""
    a0, a1, a2 = rotate(P, k, i, f0, f1, f2)
    b0, b1, b2 = rotate(P, k, i, n0, n1, n2)
    px, py, pz = P[k, i, 0, 3], P[k, i, 1, 3], P[k, i, 2, 3]
    return (b0 + py * a2 - pz * a1, b1 + pz * a0 - px * a2, b2 + px * a1 - py * a0, a0, a1, a2)


@njit(cache=True, nogil=True, inline="always")
def cross_motion(w0, w1, w2, u0, u1, u2, m0, m1, m2, m3, m4, m5):
    """Spatial motion cross product of ``[ω; v]`` and ``[m; m_O]``, both in
    the same frame: ``[ω × m; ω × m_O + v × m]`` (Featherstone Eq. 2.31,
    ``crm(v) m``)."""
    return (w1 * m2 - w2 * m1, w2 * m0 - w0 * m2, w0 * m1 - w1 * m0,
            w1 * m5 - w2 * m4 + u1 * m2 - u2 * m1,
            w2 * m3 - w0 * m5 + u2 * m0 - u0 * m2,
            w0 * m4 - w1 * m3 + u0 * m1 - u1 * m0)


@njit(cache=True, nogil=True, inline="always")
def cross_force(w0, w1, w2, u0, u1, u2, n0, n1, n2, f0, f1, f2):
    """Spatial force cross product of the motion ``[ω; v]`` and the force
    ``[n; f]``, both in the same frame: ``[ω × n + v × f; ω × f]``
    (Featherstone Eq. 2.32, ``crf(v) f = −crm(v)ᵀ f``)."""
    return (w1 * n2 - w2 * n1 + u1 * f2 - u2 * f1,
            w2 * n0 - w0 * n2 + u2 * f0 - u0 * f2,
            w0 * n1 - w1 * n0 + u0 * f1 - u1 * f0,
            w1 * f2 - w2 * f1, w2 * f0 - w0 * f2, w0 * f1 - w1 * f0)
