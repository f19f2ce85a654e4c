"""The contact problem every contact solver answers, and its residual
(docs/contact.md, "Contact solvers").

Per contact ``c = 0..nc-1`` the rows ``3c`` (normal n), ``3c+1``, ``3c+2``
(tangents t1, t2) of ``u = W λ + b``, with W (m, m) symmetric positive
semi-definite (the Delassus matrix ``J M⁻¹ Jᵀ``), b the row velocities
without impulses minus their targets, ``mu`` (nc,) ≥ 0. Normal:
``0 ≤ λ_n ⊥ u_n ≥ 0``; friction: λ_t in the friction set ``μ λ_n F`` and
maximal dissipation, ``λ_t·u_t = min over x ∈ μλ_n F of x·u_t``, where F
is, by ``model``:

* ``CONE``: the unit disk (Coulomb's cone);
* ``BOX``: the square ``|x_1| ≤ 1, |x_2| ≤ 1`` (ArtiSynth's box friction,
  each tangent row on its own);
* ``PYRAMID`` with ``sides = k ≥ 3``: the polygon with the vertices
  ``d_j = (cos 2πj/k, sin 2πj/k)`` (Stewart–Trinkle / Anitescu–Stewart,
  ``λ_t = Σ β_j d_j``, ``β ≥ 0``, ``Σβ ≤ μλ_n``). For k = 4 this is the
  diamond ``|x_1| + |x_2| ≤ 1`` inscribed in the box, not the box: the two
  agree only when λ_t lies on a tangent axis.

The kernels here are compiled (``@njit(cache=True, nogil=True)``) and
allocate nothing.
"""
import numpy as np
from numba import njit

CONE = 0
BOX = 1
PYRAMID = 2

# A row whose diagonal W_ii is at most IMMOVABLE times the largest diagonal entry of W is one
# the Jacobian cannot move (its W row is zero up to round-off): the solvers never divide by it.
IMMOVABLE = 1e-12


@njit(cache=True, nogil=True, inline="always")
def row_velocity(W, b, lam, i):
    """``u_i = b_i + Σ_k W_ik λ_k`` (row i of C-contiguous W: one contiguous pass)."""
    s = b[i]
    for k in range(lam.shape[0]):
        s += W[i, k] * lam[k]
    return s


@njit(cache=True, nogil=True, inline="always")
def coupled_velocity(W, b, lam, i, ptr, idx):
    """``u_i = b_i + Σ_k W_ik λ_k`` over the contacts coupled with row i's
    (``idx[ptr[c]:ptr[c + 1]]`` for its contact c = i // 3: those whose
    blocks of W may be nonzero; all of them when ``ptr`` is empty). Three
    running sums, one per row of a contact block: a single sum is a chain
    of dependent additions that the compiler may not reorder (3–4× slower
    on a 324-row problem)."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    if ptr.shape[0] == 0:
        for j in range(0, lam.shape[0], 3):
            s0 += W[i, j] * lam[j]
            s1 += W[i, j + 1] * lam[j + 1]
            s2 += W[i, j + 2] * lam[j + 2]
    else:
        c = i // 3
        for p in range(ptr[c], ptr[c + 1]):
            j = 3 * idx[p]
            s0 += W[i, j] * lam[j]
            s1 += W[i, j + 1] * lam[j + 1]
            s2 += W[i, j + 2] * lam[j + 2]
    return b[i] + (s0 + s1 + s2)


@njit(cache=True, nogil=True, inline="always")
def normal_residual(w_nn, ln, un):
    """``|min(W_nn λ_n, u_n)|``: the natural map of ``0 ≤ λ_n ⊥ u_n ≥ 0``
    with λ_n scaled by the diagonal (W_nn ≥ 0) so that it is a velocity."""
    return abs(min(w_nn * ln, un))


# a friction impulse within this relative distance of its bound counts as on the boundary (sliding)
ON_BOUNDARY = 1e-9


@njit(cache=True, nogil=True, inline="always")
def disk_slip_residual(l1, l2, u1, u2, r, scale):
    """The velocity residual of a disk friction pair (λ_t, u_t) with radius
    r (the velocity test of :func:`~.pgs.projected_gauss_seidel`):
    ``‖u_t‖`` inside the disk; on its boundary the distance of u_t from the
    ray ``−s λ_t/‖λ_t‖``, s ≥ 0; plus ``scale`` (W_tt's largest diagonal
    entry) times the excess of ‖λ_t‖ over r."""
    n = np.sqrt(l1 * l1 + l2 * l2)
    if n < r * (1.0 - ON_BOUNDARY):
        return np.sqrt(u1 * u1 + u2 * u2)
    e1 = l1 / n
    e2 = l2 / n
    along = u1 * e1 + u2 * e2  # ≤ 0 when the friction opposes the slip
    p1 = u1 - along * e1
    p2 = u2 - along * e2
    return np.sqrt(p1 * p1 + p2 * p2) + max(along, 0.0) + scale * max(n - r, 0.0)


@njit(cache=True, nogil=True, inline="always")
def box_slip_residual(l, u, r, scale):
    """The velocity residual of one box friction row (λ_t, u_t) with bound
    r: ``|u_t|`` inside ``[−r, r]``; at ``+r`` the part of u_t that is not
    ≤ 0, at ``−r`` the part that is not ≥ 0; plus ``scale`` (W_tt) times
    the excess of |λ_t| over r."""
    if abs(l) < r * (1.0 - ON_BOUNDARY):
        return abs(u)
    return (max(u, 0.0) if l > 0.0 else max(-u, 0.0)) + scale * max(abs(l) - r, 0.0)


@njit(cache=True, nogil=True, inline="always")
def _worse(current, value):
    """``max(current, value)`` that keeps a NaN (``value`` wins unless it is ≤ current)."""
    return current if value <= current else value


@njit(cache=True, nogil=True)
def contact_residual(W, b, mu, lam, model, sides):
    """How far ``lam`` is from solving the contact problem of (W, b, mu) with
    the friction set ``model`` (``CONE``, ``BOX`` or ``PYRAMID`` with
    ``sides`` ≥ 3 directions; ``sides`` is read only for ``PYRAMID``).
    With ``u = W λ + b`` and, per contact c, ``r_c = μ_c λ_n``, returns the
    four maxima over the contacts

    * ``normal = max_c |min(W_nn λ_n, u_n)|``: the natural map of
      ``0 ≤ λ_n ⊥ u_n ≥ 0``, λ_n scaled by the diagonal so that it is a
      velocity (0 exactly at a fixed point of the Gauss–Seidel normal step
      ``λ_n = max(0, λ_n − u_n/W_nn)``); it also measures ``λ_n < 0`` and
      ``u_n < 0`` (a row that cannot be moved, W_nn = 0, with u_n < 0
      reports ``|u_n|``: no impulse stops it);
    * ``cone = max_c max(0, g_F(λ_t) − r_c)``: the violation of the
      friction set, with g_F the gauge of F: ``‖λ_t‖`` (cone),
      ``max(|λ_t1|, |λ_t2|)`` (box), ``max_j λ_t·n_j / cos(π/k)`` over the
      outward facet normals ``n_j = (cos (2j+1)π/k, sin (2j+1)π/k)``
      (pyramid);
    * ``complementarity = max_c |λ_n u_n|``;
    * ``dissipation = max_c |λ_t·u_t − r_c σ_F(u_t)|`` with
      ``σ_F(u) = min over x ∈ F of x·u``: ``−‖u‖`` (cone),
      ``−|u_1| − |u_2|`` (box), ``min_j d_j·u`` (pyramid). For λ_t in the
      set this is ≥ 0 and is 0 exactly when λ_t dissipates the most:
      ``λ_t = −μλ_n u_t/‖u_t‖`` when sliding in the cone, any λ_t when
      ``u_t = 0``.

    All four are 0 exactly at a solution (Coulomb's law with maximal
    dissipation for the chosen set); ``normal`` is a velocity,
    ``cone`` an impulse, the other two impulse × velocity. A NaN anywhere
    gives NaN. Returns ``(normal, cone, complementarity, dissipation)``;
    inconsistent sizes give four infinities. Allocates nothing."""
    m = b.shape[0]
    nc = m // 3
    inf = np.inf
    if m != 3 * nc or W.shape[0] != m or W.shape[1] != m or mu.shape[0] != nc or lam.shape[0] != m \
            or (model == PYRAMID and sides < 3) or model < CONE or model > PYRAMID:
        return inf, inf, inf, inf
    normal = 0.0
    cone = 0.0
    comp = 0.0
    diss = 0.0
    check = 0.0  # x·0 is NaN for a non-finite x (min and max may drop a NaN)
    half = np.pi / sides if model == PYRAMID else 0.0
    for c in range(nc):
        i = 3 * c
        un = row_velocity(W, b, lam, i)
        u1 = row_velocity(W, b, lam, i + 1)
        u2 = row_velocity(W, b, lam, i + 2)
        ln = lam[i]
        l1 = lam[i + 1]
        l2 = lam[i + 2]
        normal = _worse(normal, normal_residual(max(W[i, i], 0.0), ln, un))
        comp = _worse(comp, abs(ln * un))
        r = mu[c] * ln
        check += (un + u1 + u2 + r) * 0.0  # u_i is NaN if b_i, a λ_k or a W_ik is not finite
        if model == CONE:
            gauge = np.sqrt(l1 * l1 + l2 * l2)
            support = -np.sqrt(u1 * u1 + u2 * u2)
        elif model == BOX:
            gauge = max(abs(l1), abs(l2))
            support = -abs(u1) - abs(u2)
        else:
            gauge = -inf
            support = inf
            for j in range(sides):
                a = (2 * j + 1) * half
                gauge = max(gauge, (l1 * np.cos(a) + l2 * np.sin(a)) / np.cos(half))
                a = 2 * j * half
                support = min(support, u1 * np.cos(a) + u2 * np.sin(a))
        cone = _worse(cone, max(gauge - r, 0.0))
        diss = _worse(diss, abs(l1 * u1 + l2 * u2 - r * support))
    if check != 0.0:
        return np.nan, np.nan, np.nan, np.nan
    return normal, cone, comp, diss
