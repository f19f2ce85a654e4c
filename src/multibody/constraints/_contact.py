"""Compiled contact stage (L3): the contacts of a configuration, their
rows in joint space, the velocity-level contact problem and its solution
by projected Gauss–Seidel (docs/contact.md).

A contact c joins geometry a (body α) and geometry b (body β) at the world
point p with the frame rows (n, t1, t2), n from a to b. Its three rows are
the velocities of β relative to α at p along n, t1, t2 (Featherstone
§11.2–11.4: a point's velocity ``v_O + ω × p`` from the world motion
subspaces s_k = (ω_k, v_k) of the coordinates supporting the body, at the
world origin):

    J_{d,k} = σ_k (d·v_k + (p × d)·ω_k),   σ_k = +1 on β's chain, −1 on α's

(the common ancestors cancel). With the velocity v⁺ = v_f + X Jᵀλ of the
step (v_f the free velocity, X = (M + h·diag(d))⁻¹ with the joint dampers d
for implicit Euler, X = M⁻¹ for every other step) the row
velocities are ``u = W λ + b``, ``W = J X Jᵀ`` (the Delassus matrix),
``b = J v_f − target``, with targets on the normal rows only:

* restitution: an approach faster than the threshold (``J_n v < −v_th``, v
  the velocity at the start of the step) that reaches the surface within
  the step (``d + h J_n v < 0``) leaves with ``u_n ≥ −e J_n v``
  (Newton's law, Featherstone §11.6);
* otherwise non-penetration at the end of the step: ``u_n ≥ −d/h`` for a
  gap d = dist − margin ≥ 0 (a speculative contact closes exactly: bodies
  approaching faster than the detection distance allows still never
  penetrate), ``u_n ≥ −ε d/h`` for a penetration (ε = ``erp``: the share of
  a penetration removed per step).

Soft contact (``head[SOFT]``; MuJoCo's model, Todorov 2014 and MuJoCo's
documentation, "Computation"; docs/contact.md): MuJoCo's constraint
forces f solve ``(A + R) f + a₀ − a_ref`` ⟂ f over the friction cone, A =
J M⁻¹ Jᵀ, a₀ the rows' free acceleration, R a diagonal regularizer and
``a_ref = −B J v − K·imp·r`` a reference acceleration (r = dist − margin
≤ 0, imp the impedance of solimp at r). Times h, with λ = h f and v_f = v +
h a_free, this is the problem above with ``W + R`` for W and ``b = J v_f −
J v − h a_ref``: R = (1 − imp)/imp · (w_α + w_β) on the normal row and, as
MuJoCo's impratio = 1 gives, the same R on the tangent rows (w the bodies'
translation weights, MuJoCo's body_invweight0), K = 0 on the tangent rows.
No restitution, no ``erp`` and no speculative contacts (distance 0).

Compliant contact (``head[COMPLIANT]``; Drumwright, seed 003, and
:mod:`multibody.solvers.drumwright`; docs/drumwright.md): each row is a
spring–damper whose state is advanced by implicit Euler, in the ERP/CFM
form ``u + cfm·λ + erp·φ ≥ 0`` ⟂ λ ≥ 0 (the max law, eq. 68): W + diag(cfm)
and ``b = J v_f + erp·φ`` with ``erp = K/(hK + B)``, ``cfm = 1/(h(hK + B))``,
φ = d on a normal row (Hertz: K = E*√(r·depth), notes P7; across a gap
d > 0, a speculative contact, no damper, and a Hertz row is rigid: the
bodies reach the undeformed surfaces at most), φ = 0 and
``cfm = 1/(h B_t)`` on the friction rows (memoryless friction, K_t = 0),
the limits' rows with the simulator's limit stiffness and damping. The
velocity-product term Ġv of contact rows is not included (the "penalty"
law, pitfall P2: first-order consistent). Projected Gauss–Seidel on this
problem converges to the normal impulses of the max law and friction
impulses of maximal dissipation in their cone (the P6 fix). No
restitution, no ``erp``.

Impulses λ (N·s) solve the Coulomb problem: 0 ≤ λ_n ⊥ u_n ≥ 0 and
maximal dissipation in the disk ‖λ_t‖ ≤ μλ_n (``friction`` CONE) or the
square |λ_ti| ≤ μλ_n (BOX, ArtiSynth's box friction).
"""
import numpy as np
from collections import namedtuple
from numba import carray, cfunc, njit, types
from numba.extending import overload

from .._compiled import JIT, call_address, f64_pointer, i64_pointer
from .._status import NOT_CONVERGED
from ..collision.detect import detect
from ..collision.narrow import (BOX_BOX, CLOSED_FORM, SUPPORT, TERRAIN, box_box_contacts, closed_form_contacts,
                                collide_pair_by, support_contacts, terrain_contacts)
from ..collision.narrow_workspace import MAX_CONTACTS, WORK_SIZE
from ..dynamics.kernels import ltdl_solve_span
from ..solvers.drumwright import compliant_row
from ..solvers.lemke import box_lcp, pyramid_lcp
from ..solvers.newton import soft_pyramid_newton
from ..solvers.pgs import projected_gauss_seidel_subspace
from ..solvers.pivoting import pivoting
from ..solvers.residual import BOX, CONE, PYRAMID, coupled_velocity  # noqa: F401 (BOX…: head[FRICTION]'s models)

# ------------------------------------------------------------------ the table
# ContactTable.head (int64): sizes, options and results, then the address of every array, in the
# order of ARRAYS; ContactTable (contact.py) allocates them from the same list.
# CAP counts the slots of every per-contact array: CONTACT_CAP for detected contacts, then one for each
# joint-limit row (NLIM: the model's; N_LIM: those in the last step's problem), then MAX_CONTACTS more:
# detection may write one pair's contacts past CONTACT_CAP to learn whether any are lost.
(NG, NPAIR, CAP, NV, NB, NVERT, FRICTION, MAX_ITER, N, N_PREV, ITERATIONS, FLAGS, DROPPED, FAILED_PAIR,
 SELF, DETECT, SOLVER, SOLVE, SIDES, SOFT, CONTACT_CAP, NLIM, N_LIM, LOOPS, COMPLIANT, N_HEAD) = range(26)
PGS, LEMKE, NEWTON, PIVOTING = 0, 1, 2, 3  # head[SOLVER]: the compiled solvers
# ContactTable.scalars (float64): options, then results
(DT, REACH, ERP, THRESHOLD, TOLERANCE, OMEGA, VELOCITY_TOLERANCE, LIMIT_RESTITUTION, LIMIT_STIFFNESS, LIMIT_DAMPING,
 N_SCALARS) = range(11)

# (name, dtype, shape in the sizes ng, npair, cap, nv, nb, nvert)
ARRAYS = (
    ("scalars", np.float64, lambda ng, npair, cap, nv, nb, nvert: (N_SCALARS,)),
    ("code", np.int64, lambda ng, npair, cap, nv, nb, nvert: (ng,)),
    ("body", np.int64, lambda ng, npair, cap, nv, nb, nvert: (ng,)),
    ("local", np.float64, lambda ng, npair, cap, nv, nb, nvert: (ng, 4, 4)),
    ("size", np.float64, lambda ng, npair, cap, nv, nb, nvert: (ng, 3)),
    ("radius", np.float64, lambda ng, npair, cap, nv, nb, nvert: (ng,)),
    ("vstart", np.int64, lambda ng, npair, cap, nv, nb, nvert: (ng + 1,)),
    ("vertices", np.float64, lambda ng, npair, cap, nv, nb, nvert: (nvert, 3)),
    ("faces", np.int64, lambda ng, npair, cap, nv, nb, nvert: (0, 3)),
    ("pairs", np.int64, lambda ng, npair, cap, nv, nb, nvert: (npair, 2)),
    ("mu", np.float64, lambda ng, npair, cap, nv, nb, nvert: (npair,)),
    ("restitution", np.float64, lambda ng, npair, cap, nv, nb, nvert: (npair,)),
    ("margin", np.float64, lambda ng, npair, cap, nv, nb, nvert: (npair,)),
    ("last_dof", np.int64, lambda ng, npair, cap, nv, nb, nvert: (nb,)),
    ("R", np.float64, lambda ng, npair, cap, nv, nb, nvert: (ng, 3, 3)),
    ("p", np.float64, lambda ng, npair, cap, nv, nb, nvert: (ng, 3)),
    ("dist", np.float64, lambda ng, npair, cap, nv, nb, nvert: (cap,)),
    ("pos", np.float64, lambda ng, npair, cap, nv, nb, nvert: (cap, 3)),
    ("frame", np.float64, lambda ng, npair, cap, nv, nb, nvert: (cap, 3, 3)),
    ("cpair", np.int64, lambda ng, npair, cap, nv, nb, nvert: (cap,)),
    ("key", np.int64, lambda ng, npair, cap, nv, nb, nvert: (cap,)),
    ("impulse", np.float64, lambda ng, npair, cap, nv, nb, nvert: (3 * cap,)),
    ("prev_key", np.int64, lambda ng, npair, cap, nv, nb, nvert: (cap,)),
    ("prev_impulse", np.float64, lambda ng, npair, cap, nv, nb, nvert: (3 * cap,)),
    ("J", np.float64, lambda ng, npair, cap, nv, nb, nvert: (3 * cap, nv)),
    ("Y", np.float64, lambda ng, npair, cap, nv, nb, nvert: (3 * cap, nv)),
    ("W", np.float64, lambda ng, npair, cap, nv, nb, nvert: (9 * cap * cap,)),  # W of n contacts: (3n, 3n) first
    ("b", np.float64, lambda ng, npair, cap, nv, nb, nvert: (3 * cap,)),
    ("pair_mu", np.float64, lambda ng, npair, cap, nv, nb, nvert: (cap,)),
    ("Mf", np.float64, lambda ng, npair, cap, nv, nb, nvert: (nv, nv)),
    ("work", np.float64, lambda ng, npair, cap, nv, nb, nvert: (WORK_SIZE,)),
    # soft contact (head[SOFT]): per pair, solimp and (K, B); per body, the translation weight
    ("impedance", np.float64, lambda ng, npair, cap, nv, nb, nvert: (npair, 5)),
    ("stiffness_damping", np.float64, lambda ng, npair, cap, nv, nb, nvert: (npair, 2)),
    ("invweight", np.float64, lambda ng, npair, cap, nv, nb, nvert: (nb,)),
    # the Newton solver (head[SOLVER] == NEWTON): the step's matrix A, the free velocity, each
    # contact's edge weight D, and work arrays (solvers/newton.py)
    ("A", np.float64, lambda ng, npair, cap, nv, nb, nvert: (nv, nv)),
    ("vf", np.float64, lambda ng, npair, cap, nv, nb, nvert: (nv,)),
    ("edge_weight", np.float64, lambda ng, npair, cap, nv, nb, nvert: (cap,)),
    ("H", np.float64, lambda ng, npair, cap, nv, nb, nvert: (nv, nv)),
    ("newton_v", np.float64, lambda ng, npair, cap, nv, nb, nvert: (3, nv)),
    ("edges", np.float64, lambda ng, npair, cap, nv, nb, nvert: (2, 4 * cap)),
    ("nz", np.int64, lambda ng, npair, cap, nv, nb, nvert: (cap, nv)),
    ("nnz", np.int64, lambda ng, npair, cap, nv, nb, nvert: (cap,)),
    ("envelope", np.int64, lambda ng, npair, cap, nv, nb, nvert: (2, nv)),
    ("box", np.float64, lambda ng, npair, cap, nv, nb, nvert: (ng, 2, 3)),
    # h times the joint dampers (diagonal, N·m·s/rad): implicit Euler's stage solves through M + h·d
    ("damping", np.float64, lambda ng, npair, cap, nv, nb, nvert: (nv,)),
    # PGS's subspace steps (solvers/pgs.py, subspace_step): two row states and marks, their W, five vectors
    ("sub_rows", np.int64, lambda ng, npair, cap, nv, nb, nvert: (3, 3 * cap)),
    ("sub_W", np.float64, lambda ng, npair, cap, nv, nb, nvert: (9 * cap * cap,)),
    ("sub_v", np.float64, lambda ng, npair, cap, nv, nb, nvert: (5, 3 * cap)),
    # per pair, the address of its family's narrow phase (collide_address; 0 without JIT)
    ("collider", np.int64, lambda ng, npair, cap, nv, nb, nvert: (npair,)),
    # per body, its branch of the world (the ancestor that is a child of the world; −1: no coordinates)
    ("branch", np.int64, lambda ng, npair, cap, nv, nb, nvert: (nb,)),
    # per branch (indexed by its root body), its coordinates lo .. hi−1 (the whole range if they are not contiguous)
    ("span", np.int64, lambda ng, npair, cap, nv, nb, nvert: (nb, 2)),
    # the model's joint-limit rows (at most two per coordinate; head[NLIM] of them): (q index, v index,
    # branch of the coordinate's body) and (sign, bound): φ = sign (q − bound) ≥ 0, row sign·e_v
    ("limit_index", np.int64, lambda ng, npair, cap, nv, nb, nvert: (2 * nv, 3)),
    ("limit_value", np.float64, lambda ng, npair, cap, nv, nb, nvert: (2 * nv, 2)),
    # hard loop constraints (head[LOOPS] != 0): T = X Gᵀ (G X Gᵀ)⁺ G at the step's configuration, which
    # takes out of X Jᵀ what would move the loop rows G (ArtiSynth §0.7's mixed LCP); a work vector
    ("loop_T", np.float64, lambda ng, npair, cap, nv, nb, nvert: (nv, nv)),
    ("loop_work", np.float64, lambda ng, npair, cap, nv, nb, nvert: (nv,)),
    # the model's expanded parent array (solves with the factor of M inside a solver: PIVOTING)
    ("dof_parent", np.int64, lambda ng, npair, cap, nv, nb, nvert: (nv,)),
    # per slot c, the slots whose blocks of W may be nonzero, coupled[ptr[c]:ptr[c + 1]] (PGS's sweeps)
    ("coupled_ptr", np.int64, lambda ng, npair, cap, nv, nb, nvert: (cap + 1,)),
    ("coupled", np.int64, lambda ng, npair, cap, nv, nb, nvert: (cap * cap,)),
    # the slots on each branch of the world, branch_slots[branch_ptr[g]:branch_ptr[g + 1]] (two per slot at most)
    ("branch_ptr", np.int64, lambda ng, npair, cap, nv, nb, nvert: (nb + 1,)),
    ("branch_slots", np.int64, lambda ng, npair, cap, nv, nb, nvert: (2 * cap,)),
    # Drumwright's compliant contact (head[COMPLIANT]): per pair the normal stiffness K (N/m; Hertz: E*, Pa),
    # the normal damping B and the friction damping B_t (N·s/m), and the Hertz radius (m; 0: a linear spring)
    ("compliance", np.float64, lambda ng, npair, cap, nv, nb, nvert: (npair, 4)),
    # per slot of a Hertz contact: the depth its secant stiffness is taken at and the cfm added to W (hertz_round)
    ("secant", np.float64, lambda ng, npair, cap, nv, nb, nvert: (2, cap)),
)
ADDRESS = {name: N_HEAD + k for k, (name, _, _) in enumerate(ARRAYS)}
HEAD_SIZE = N_HEAD + len(ARRAYS)

Contacts = namedtuple("Contacts", ("head",) + tuple(name for name, _, _ in ARRAYS))


@njit(cache=True, nogil=True, inline="always")
def _f(head, name_slot, shape):
    return carray(f64_pointer(head[name_slot]), shape)


@njit(cache=True, nogil=True, inline="always")
def _i(head, name_slot, shape):
    return carray(i64_pointer(head[name_slot]), shape)


@njit(cache=True, nogil=True, inline="always")
def contact_view(handle):
    """The arrays of the contact table behind ``handle`` (ContactTable.handle) as a :data:`Contacts`."""
    head = carray(i64_pointer(handle), (HEAD_SIZE,))
    ng, npair, cap, nv, nb, nvert = head[NG], head[NPAIR], head[CAP], head[NV], head[NB], head[NVERT]
    m = 3 * cap
    return Contacts(head, _f(head, N_HEAD + 0, (N_SCALARS,)), _i(head, N_HEAD + 1, (ng,)),
                    _i(head, N_HEAD + 2, (ng,)), _f(head, N_HEAD + 3, (ng, 4, 4)), _f(head, N_HEAD + 4, (ng, 3)),
                    _f(head, N_HEAD + 5, (ng,)), _i(head, N_HEAD + 6, (ng + 1,)), _f(head, N_HEAD + 7, (nvert, 3)),
                    _i(head, N_HEAD + 8, (0, 3)), _i(head, N_HEAD + 9, (npair, 2)), _f(head, N_HEAD + 10, (npair,)),
                    _f(head, N_HEAD + 11, (npair,)), _f(head, N_HEAD + 12, (npair,)), _i(head, N_HEAD + 13, (nb,)),
                    _f(head, N_HEAD + 14, (ng, 3, 3)), _f(head, N_HEAD + 15, (ng, 3)), _f(head, N_HEAD + 16, (cap,)),
                    _f(head, N_HEAD + 17, (cap, 3)), _f(head, N_HEAD + 18, (cap, 3, 3)),
                    _i(head, N_HEAD + 19, (cap,)), _i(head, N_HEAD + 20, (cap,)), _f(head, N_HEAD + 21, (m,)),
                    _i(head, N_HEAD + 22, (cap,)), _f(head, N_HEAD + 23, (m,)), _f(head, N_HEAD + 24, (m, nv)),
                    _f(head, N_HEAD + 25, (m, nv)), _f(head, N_HEAD + 26, (m * m,)), _f(head, N_HEAD + 27, (m,)),
                    _f(head, N_HEAD + 28, (cap,)), _f(head, N_HEAD + 29, (nv, nv)),
                    _f(head, N_HEAD + 30, (WORK_SIZE,)), _f(head, N_HEAD + 31, (npair, 5)),
                    _f(head, N_HEAD + 32, (npair, 2)), _f(head, N_HEAD + 33, (nb,)), _f(head, N_HEAD + 34, (nv, nv)),
                    _f(head, N_HEAD + 35, (nv,)), _f(head, N_HEAD + 36, (cap,)), _f(head, N_HEAD + 37, (nv, nv)),
                    _f(head, N_HEAD + 38, (3, nv)), _f(head, N_HEAD + 39, (2, 4 * cap)),
                    _i(head, N_HEAD + 40, (cap, nv)), _i(head, N_HEAD + 41, (cap,)), _i(head, N_HEAD + 42, (2, nv)),
                    _f(head, N_HEAD + 43, (ng, 2, 3)), _f(head, N_HEAD + 44, (nv,)),
                    _i(head, N_HEAD + 45, (3, m)), _f(head, N_HEAD + 46, (m * m,)), _f(head, N_HEAD + 47, (5, m)),
                    _i(head, N_HEAD + 48, (npair,)), _i(head, N_HEAD + 49, (nb,)),
                    _i(head, N_HEAD + 50, (nb, 2)), _i(head, N_HEAD + 51, (2 * nv, 3)),
                    _f(head, N_HEAD + 52, (2 * nv, 2)), _f(head, N_HEAD + 53, (nv, nv)), _f(head, N_HEAD + 54, (nv,)),
                    _i(head, N_HEAD + 55, (nv,)), _i(head, N_HEAD + 56, (cap + 1,)), _i(head, N_HEAD + 57, (cap * cap,)),
                    _i(head, N_HEAD + 58, (nb + 1,)), _i(head, N_HEAD + 59, (2 * cap,)),
                    _f(head, N_HEAD + 60, (npair, 4)), _f(head, N_HEAD + 61, (2, cap)))


# ------------------------------------------------------------------ detection and rows
@njit(cache=True, nogil=True, inline="always")
def find_contacts(C, body_poses):
    """Detect the contacts at the world body poses ``body_poses`` (nb, 4,
    4) into the table (``head[N]``, ``dist``, ``pos``, ``frame``, ``cpair``,
    ``key``); returns their number, or a negative status (``head[FAILED_PAIR]``
    names the pair)."""
    end = C.head[CONTACT_CAP] + MAX_CONTACTS  # the capacity and room for one pair (the limit slots, overwritten later)
    n, dropped = detect(body_poses, C.code, C.body, C.local, C.size, C.radius, C.box, C.vstart, C.vertices, C.faces,
                        C.pairs, C.margin, C.scalars[REACH], C.R, C.p, C.dist[:end], C.pos[:end], C.frame[:end],
                        C.cpair[:end], C.key[:end], C.work, C.collider, C.head[SELF])
    C.head[DROPPED] = dropped
    if n < 0:
        C.head[FAILED_PAIR] = -1 - n
        C.head[N] = 0
        return -1
    C.head[N] = n
    return n


def _find_contacts_c(handle, poses, nb):
    """:func:`find_contacts` on the table behind ``handle`` and the body
    poses (nb, 4, 4) at the address ``poses``: the C entry point the steps
    call through a function pointer (:func:`detect_contacts`)."""
    return find_contacts(contact_view(handle), carray(f64_pointer(poses), (nb, 4, 4)))


@njit(cache=True, nogil=True, inline="always")  # into each family's entry point
def _collide_in_table(handle, i, start, colliders):
    """The narrow phase of pair i of the table behind ``handle`` (its
    geometries' world poses already in R, p) by ``colliders``, one family's
    function (:data:`~multibody.collision.narrow.FAMILIES`); contacts from
    row ``start`` on (:func:`~multibody.collision.detect.collide_via`)."""
    C = contact_view(handle)
    a, b = C.pairs[i, 0], C.pairs[i, 1]
    return collide_pair_by(colliders, C.code[a], C.size[a], C.R[a], C.p[a], C.vertices[C.vstart[a]:C.vstart[a + 1]],
                           C.code[b], C.size[b], C.R[b], C.p[b], C.vertices[C.vstart[b]:C.vstart[b + 1]],
                           C.margin[i] + C.scalars[REACH], C.dist, C.pos, C.frame, start,
                           C.head[CONTACT_CAP] + MAX_CONTACTS, C.work)


def _collide_closed_form_c(handle, i, start):
    return _collide_in_table(handle, i, start, closed_form_contacts)


def _collide_box_box_c(handle, i, start):
    return _collide_in_table(handle, i, start, box_box_contacts)


def _collide_support_c(handle, i, start):
    return _collide_in_table(handle, i, start, support_contacts)


def _collide_terrain_c(handle, i, start):  # a height field or mesh's record is its rows of C.vertices
    return _collide_in_table(handle, i, start, terrain_contacts)


_COLLIDERS = {CLOSED_FORM: _collide_closed_form_c, BOX_BOX: _collide_box_box_c, SUPPORT: _collide_support_c,
              TERRAIN: _collide_terrain_c}


def collide_address(family):
    """The address of the C entry point of one family of colliders
    (:data:`~multibody.collision.narrow.FAMILIES`; compiled or loaded from
    the cache on first use; 0 without JIT): a table stores its pairs'
    (``collider``), and compiles only the families it has."""
    return c_address(("collide", family))


# One C entry point per solver (the steps call it through the address in head[SOLVE]): a cold
# compile of all three took ~30 s, and a simulator compiles only the one it uses.
def _solve_pgs_c(handle, n, unused):
    """:func:`solve_pgs` on the table behind ``handle``."""
    return solve_pgs(contact_view(handle), n)


def _solve_lemke_c(handle, n, unused):
    """:func:`solve_lemke` on the table behind ``handle``."""
    return solve_lemke(contact_view(handle), n)


def _solve_newton_c(handle, n, unused):
    """:func:`solve_newton` on the table behind ``handle``."""
    return solve_newton(contact_view(handle), n)


def _solve_pivoting_c(handle, n, unused):
    """:func:`solve_pivoting` on the table behind ``handle``."""
    return solve_pivoting(contact_view(handle), n)


_ENTRY_FUNCTIONS = {"detect": _find_contacts_c, "pgs": _solve_pgs_c, "lemke": _solve_lemke_c,
                    "newton": _solve_newton_c, "pivoting": _solve_pivoting_c}
_ENTRIES = {}


def c_address(name):
    """The address of the compiled C entry point ``name`` ("detect", or a
    solver: "pgs", "lemke", "newton"; compiled or loaded from the cache on
    first use; 0 without JIT). The steps call the detection and the
    solvers through these addresses (:func:`~multibody._compiled.call_address`),
    so that each step kernel does not compile them again."""
    if not JIT:
        return 0
    if name not in _ENTRIES:
        fn = _COLLIDERS[name[1]] if isinstance(name, tuple) else _ENTRY_FUNCTIONS[name]
        _ENTRIES[name] = cfunc(types.int64(types.int64, types.int64, types.int64), cache=True, nopython=True)(fn)
    return _ENTRIES[name].address


def detect_contacts(C, body_poses):
    """:func:`find_contacts`; in compiled code a call through the address
    in ``C.head[DETECT]`` (:func:`~multibody._compiled.call_address`), so
    that the step kernels do not each compile the narrow phase again."""
    return find_contacts(C, body_poses)


@overload(detect_contacts, jit_options=dict(cache=True))
def _detect_contacts_compiled(C, body_poses):
    def impl(C, body_poses):
        return call_address(C.head[DETECT], C.head[SELF], body_poses.ctypes.data, body_poses.shape[0])
    return impl


@njit(cache=True, nogil=True, inline="always")
def _add_chain(jac, last_dof, lam, body, sign, px, py, pz, F, c, row):
    """Add σ (d·v_k + (p × d)·ω_k) along the chain of ``body`` for the three directions of contact c."""
    k = last_dof[body]
    while k >= 0:
        w0, w1, w2, u0, u1, u2 = jac[1, 0, k], jac[1, 1, k], jac[1, 2, k], jac[1, 3, k], jac[1, 4, k], jac[1, 5, k]
        # v_k + ω_k × p: the velocity of the point p due to coordinate k
        a0 = u0 + w1 * pz - w2 * py
        a1 = u1 + w2 * px - w0 * pz
        a2 = u2 + w0 * py - w1 * px
        for d in range(3):
            row[3 * c + d, k] += sign * (F[c, d, 0] * a0 + F[c, d, 1] * a1 + F[c, d, 2] * a2)
        k = lam[k]


@njit(cache=True, nogil=True, inline="always")
def limit_slots(C, q, vf, n):
    """Put the joint limits that the step may reach into the slots after
    the n contacts; returns their number (``head[N_LIM]``). A limit row r,
    φ = sign·(q_k − bound) ≥ 0 with the row ``sign·e_k`` on the velocity
    coordinate k (:class:`~multibody.constraints.limits.JointLimits`), joins
    the contact problem when it is violated or its free step ``φ + h·sign·vf_k``
    comes within the contact distance: limits and contacts are then solved
    together, and neither undoes the other (solved one after the other, the
    end-of-step limit projection moved a limp Talos's links back into the
    ground and the contact correction out again, +0.15 J/s at rest). It is
    a frictionless contact (μ = 0, zero tangent rows, the identity frame)
    with ``cpair = −1 − r`` and the key ``8·npair + r`` (after every
    contact's, for the warm start). Newton's method solves soft contact
    only: its limits stay at the end of the step."""
    nl = 0
    if C.head[SOLVER] != NEWTON:
        h, reach, base = C.scalars[DT], C.scalars[REACH], 8 * C.head[NPAIR]
        for r in range(C.head[NLIM]):
            sign, k = C.limit_value[r, 0], C.limit_index[r, 1]
            phi = sign * (q[C.limit_index[r, 0]] - C.limit_value[r, 1])
            if phi >= 0.0 and phi + h * sign * vf[k] > reach:
                continue
            c = n + nl
            C.cpair[c] = -1 - r
            C.key[c] = base + r
            C.dist[c] = phi
            for e in range(3):
                C.pos[c, e] = 0.0
                for f in range(3):
                    C.frame[c, e, f] = 1.0 if e == f else 0.0
            nl += 1
    C.head[N_LIM] = nl
    return nl


@njit(cache=True, nogil=True, inline="always")
def contact_rows(C, jac, lam, n):
    """The rows J (3N, nv) of the n contacts (module docstring) from the
    world joint Jacobian ``jac[1]`` (CRBA's) at the contacts' configuration,
    then of the ``head[N_LIM]`` limit slots (:func:`limit_slots`: the
    normal row ``sign·e_k``, zero tangent rows)."""
    J = C.J
    nv = J.shape[1]
    for r in range(3 * (n + C.head[N_LIM])):
        for k in range(nv):
            J[r, k] = 0.0
    for c in range(n):
        i = C.cpair[c]
        ba, bb = C.body[C.pairs[i, 0]], C.body[C.pairs[i, 1]]
        px, py, pz = C.pos[c, 0], C.pos[c, 1], C.pos[c, 2]
        _add_chain(jac, C.last_dof, lam, bb, 1.0, px, py, pz, C.frame, c, J)
        _add_chain(jac, C.last_dof, lam, ba, -1.0, px, py, pz, C.frame, c, J)
    for c in range(n, n + C.head[N_LIM]):
        r = -1 - C.cpair[c]
        J[3 * c, C.limit_index[r, 1]] = C.limit_value[r, 0]


@njit(cache=True, nogil=True, inline="always")
def _chain_dots(J, r, y, last_dof, lam, ba, bb):
    """``(J_r·y, J_{r+1}·y, J_{r+2}·y)`` over the coordinates of the chains
    of bodies ``bb`` and ``ba`` (the only nonzero columns of a contact's
    rows; the common ancestors' columns are 0 and are visited twice)."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    for body in (bb, ba):
        k = last_dof[body]
        while k >= 0:
            x = y[k]
            s0 += J[r, k] * x
            s1 += J[r + 1, k] * x
            s2 += J[r + 2, k] * x
            k = lam[k]
    return s0, s1, s2


MIN_VALUE = 1e-15  # MuJoCo's mjMINVAL: the smallest regularizer R
# a compliant row with neither spring nor damper (a Hertz contact touching or across a gap the step does not
# close, B = 0) gets cfm = INERT times its diagonal of W: its impulse stays below 1e-6 of a rigid row's, and
# the solvers' test for immovable rows (relative to W's largest diagonal entry) still sees the others
INERT = 1e6


@njit(cache=True, nogil=True, inline="always")
def _newton_structure(C, lam, n):
    """What the Newton solver takes besides the rows: each contact's
    coordinates (the union of its two bodies' chains, increasing) in
    ``C.nz``/``C.nnz``, and the row envelopes of CRBA's M (a coordinate's
    row is zero before the root of its chain) in ``C.envelope[0]``."""
    for c in range(n):
        i = C.cpair[c]
        ka, kb = C.last_dof[C.body[C.pairs[i, 0]]], C.last_dof[C.body[C.pairs[i, 1]]]
        m = 0
        while ka >= 0 or kb >= 0:  # both chains decrease: merge them, the common part once
            if ka > kb:
                x = ka
                ka = lam[ka]
            elif kb > ka:
                x = kb
                kb = lam[kb]
            else:
                x = ka
                ka = lam[ka]
                kb = lam[kb]
            C.nz[c, m] = x
            m += 1
        for j in range(m // 2):
            C.nz[c, j], C.nz[c, m - 1 - j] = C.nz[c, m - 1 - j], C.nz[c, j]
        C.nnz[c] = m
    for k in range(lam.shape[0]):
        C.envelope[0, k] = k if lam[k] < 0 else C.envelope[0, lam[k]]


@njit(cache=True, nogil=True, inline="always")
def impedance(solimp, r):
    """MuJoCo's impedance imp ∈ (0, 1) at the constraint violation r (m)
    for solimp = (dmin, dmax, width, midpoint, power), already bounded
    (contact.py): dmin at r = 0 rising to dmax at |r| ≥ width along two
    power-law pieces joined at the midpoint (MuJoCo's getimpedance)."""
    d0, d1, width, mid, power = solimp[0], solimp[1], solimp[2], solimp[3], solimp[4]
    if d0 == d1 or width <= MIN_VALUE:
        return 0.5 * (d0 + d1)
    x = abs(r) / width
    if x >= 1.0:
        return d1
    if x <= 0.0:
        return d0
    if power == 1.0:
        y = x
    elif x <= mid:
        y = x ** power / mid ** (power - 1.0)
    else:
        y = 1.0 - (1.0 - x) ** power / (1.0 - mid) ** (power - 1.0)
    return d0 + y * (d1 - d0)


@njit(cache=True, nogil=True, inline="always")
def slot_response(C, lam, M, c, rows):
    """Rows ``3c .. 3c + rows − 1`` of Y = X Jᵀ for slot c (a contact, or a
    limit after the contacts), with M holding the LᵀDL factor of X⁻¹ (the
    sparse factorization, Featherstone Table 6.3; ``lam``: the expanded
    parent array): the solves run over the branches of the world of the
    slot's bodies only (M is block diagonal by branch)."""
    i = C.cpair[c]
    if i >= 0:
        ga, gb = C.branch[C.body[C.pairs[i, 0]]], C.branch[C.body[C.pairs[i, 1]]]
    else:  # a limit slot: the branch of its coordinate
        ga = gb = C.limit_index[-1 - i, 2]
    for r in range(3 * c, 3 * c + rows):
        y = C.Y[r]
        y[:] = C.J[r]
        if ga >= 0:
            ltdl_solve_span(lam, M, y, C.span[ga, 0], C.span[ga, 1])
        if gb >= 0 and gb != ga:
            ltdl_solve_span(lam, M, y, C.span[gb, 0], C.span[gb, 1])


@njit(cache=True, nogil=True, inline="always")
def _hold_loops_row(C, r):
    """Row r of Y becomes ``y − T y`` (:func:`project_out_loops`)."""
    T, y, Y = C.loop_T, C.loop_work, C.Y[r]
    nv = y.shape[0]
    for i in range(nv):
        s = 0.0
        for k in range(nv):
            s += T[i, k] * Y[k]
        y[i] = s
    for i in range(nv):
        Y[i] -= y[i]


@njit(cache=True, nogil=True, inline="always")
def project_out_loops(C, slots):
    """Replace the rows y of Y = X Jᵀ of the ``slots`` contacts and limits
    by ``y − T y`` with ``T = X Gᵀ (G X Gᵀ)⁺ G`` (``C.loop_T``, set at the
    step's configuration by the simulator for hard loop constraints G):
    ``(X − X Gᵀ (G X Gᵀ)⁺ G X) Jᵀ``, the response of the velocity to the
    impulses with the loops held (ArtiSynth §0.7: the mixed LCP's bilateral
    rows eliminated by their Schur complement). Then W = J Y'ᵀ is the
    Delassus matrix of the constrained system, and ``v⁺ = v_f + Y'ᵀλ`` keeps
    ``G v⁺ = G v_f``: the contact impulses never pull the loops apart, and
    the projection after the step takes nothing back from them."""
    for r in range(3 * slots):
        _hold_loops_row(C, r)


@njit(cache=True, nogil=True, inline="always")
def _slot_branches(C, c):
    """The branches of the world (``C.branch``) of slot c's two bodies, or
    twice its coordinate's for a limit slot (−1: no coordinates)."""
    i = C.cpair[c]
    if i < 0:
        g = C.limit_index[-1 - i, 2]
        return g, g
    return C.branch[C.body[C.pairs[i, 0]]], C.branch[C.body[C.pairs[i, 1]]]


@njit(cache=True, nogil=True, inline="always")
def slots_coupled(ga, gb, ha, hb, loops):
    """Whether two slots on the branches (ga, gb) and (ha, hb) may have
    a nonzero block of W: M is block diagonal by branch, so slots on
    disjoint branches do not couple (hard loops may join branches: then
    every pair)."""
    return loops or (ga >= 0 and (ga == ha or ga == hb)) or (gb >= 0 and (gb == ha or gb == hb))


@njit(cache=True, nogil=True)
def _coupling(C, slots, loops):
    """Each slot's coupled slots, for PGS's sweeps:
    ``C.coupled[C.coupled_ptr[c]:C.coupled_ptr[c + 1]]``, the slots on one
    of its branches of the world (:func:`slots_coupled`; every slot with
    hard loops), by a count of the slots on each branch: linear in their
    number (a pile of 27 free boxes: 108 contacts of which each couples
    with about 9)."""
    ptr, out = C.coupled_ptr, C.coupled
    ptr[0] = 0
    if loops:
        for c in range(slots):
            for d in range(slots):
                out[c * slots + d] = d
            ptr[c + 1] = (c + 1) * slots
        return
    bp, bs = C.branch_ptr, C.branch_slots
    nb = bp.shape[0] - 1
    for g in range(nb + 1):
        bp[g] = 0
    for c in range(slots):  # counts, then offsets, then the lists in slot order
        ga, gb = _slot_branches(C, c)
        if ga >= 0:
            bp[ga + 1] += 1
        if gb >= 0 and gb != ga:
            bp[gb + 1] += 1
    for g in range(nb):
        bp[g + 1] += bp[g]
    for c in range(slots):
        ga, gb = _slot_branches(C, c)
        if ga >= 0:
            bs[bp[ga]] = c
            bp[ga] += 1
        if gb >= 0 and gb != ga:
            bs[bp[gb]] = c
            bp[gb] += 1
    for g in range(nb, 0, -1):  # the fill moved each offset to the next branch's start: back
        bp[g] = bp[g - 1]
    bp[0] = 0
    e = 0
    for c in range(slots):
        ga, gb = _slot_branches(C, c)
        if ga >= 0:
            for k in range(bp[ga], bp[ga + 1]):
                out[e] = bs[k]
                e += 1
        if gb >= 0 and gb != ga:
            for k in range(bp[gb], bp[gb + 1]):
                d = bs[k]
                ha, hb = _slot_branches(C, d)
                if not (ga >= 0 and (ha == ga or hb == ga)):  # not already listed from ga's branch
                    out[e] = d
                    e += 1
        ptr[c + 1] = e


@njit(cache=True, nogil=True)
def _coupled_blocks(C, lam, n, nl):
    """W's blocks of the coupled slots (``C.coupled``, :func:`_coupling`),
    both triangles, for the n contacts and nl limits: a contact pair's by
    the products of its rows over its two chains (:func:`_chain_dots`), a
    limit's row ``sign·e_k`` by entries of Y's rows, its tangent rows 0.
    The blocks of uncoupled slots are left as they are: PGS and its
    subspace steps read only coupled ones (the dense build of
    :func:`contact_problem` wrote all m² entries and mirrored them, most of
    a 27-box pile's problem build)."""
    m = 3 * (n + nl)
    J, Y, W = C.J, C.Y, C.W[:m * m].reshape((m, m))
    for c in range(n + nl):
        r = 3 * c
        i = C.cpair[c]
        for e in range(C.coupled_ptr[c], C.coupled_ptr[c + 1]):
            d = C.coupled[e]
            if d > c:
                continue
            for s in range(3 * d, 3 * d + 3):
                if i >= 0:
                    w0, w1, w2 = _chain_dots(J, r, Y[s], C.last_dof, lam, C.body[C.pairs[i, 0]],
                                             C.body[C.pairs[i, 1]])
                else:
                    w0, w1, w2 = C.limit_value[-1 - i, 0] * Y[s, C.limit_index[-1 - i, 1]], 0.0, 0.0
                W[r, s] = w0
                W[r + 1, s] = w1
                W[r + 2, s] = w2
                W[s, r] = w0
                W[s, r + 1] = w1
                W[s, r + 2] = w2


@njit(cache=True, nogil=True, inline="always")
def rigid_target(e, un, d, h, erp, vth):
    """The least normal velocity (m/s) of a rigid contact row at the end of
    the step (module docstring): ``−e·un`` for an approach ``un`` faster
    than ``vth`` that reaches the surface within the step (restitution),
    else ``−d/h`` for a gap d ≥ 0 (speculative), ``−erp·d/h`` for a
    penetration."""
    if e > 0.0 and un < -vth and d + h * un < 0.0:
        return -e * un
    if d >= 0.0:
        return -d / h
    return -erp * d / h


@njit(cache=True, nogil=True)
def contact_problem(C, lam, n, v, vf):
    """Delassus matrix W = J Yᵀ (Y = rows of X Jᵀ, already in ``C.Y``) and
    b = J v_f − target (module docstring; soft contact: W + R and its b)
    for the n contacts, with v the velocity at the start of the step; the warm start from the previous
    step's impulses of the contacts with the same key. The products with a
    contact's rows run over its two chains only (:func:`_chain_dots`;
    ``lam``: the expanded parent array): W costs m² times the chains'
    length instead of m² nv, and only for the pairs of contacts on a common
    branch of the world (``C.branch``; the others' blocks are 0: a pile of
    27 free boxes, 324 rows, took ~0.8 ms for all pairs)."""
    nl = C.head[N_LIM]
    m = 3 * (n + nl)
    J, Y, W, b = C.J, C.Y, C.W[:m * m].reshape((m, m)), C.b
    h, erp, vth = C.scalars[DT], C.scalars[ERP], C.scalars[THRESHOLD]
    newton = C.head[SOLVER] == NEWTON  # the primal method needs no W (and takes no limits)
    loops = C.head[LOOPS] != 0
    on_demand = newton or C.head[SOLVER] == PIVOTING  # principal pivoting computes W's columns itself
    if not on_demand:
        _coupling(C, n + nl, loops)
    coupled_only = C.head[SOLVER] == PGS  # PGS reads W's coupled blocks only: the others are not written
    if coupled_only:
        _coupled_blocks(C, lam, n, nl)
    for c in range(n if not (on_demand or coupled_only) else 0):
        i = C.cpair[c]
        ba, bb = C.body[C.pairs[i, 0]], C.body[C.pairs[i, 1]]
        ga, gb = C.branch[ba], C.branch[bb]
        r = 3 * c
        for d in range(c + 1):  # the lower triangle and the contact's own block (contacts: before the limits)
            j = C.cpair[d]
            ha, hb = C.branch[C.body[C.pairs[j, 0]]], C.branch[C.body[C.pairs[j, 1]]]
            coupled = slots_coupled(ga, gb, ha, hb, loops)
            for s in range(3 * d, 3 * d + 3):
                w0 = w1 = w2 = 0.0
                if coupled:
                    w0, w1, w2 = _chain_dots(J, r, Y[s], C.last_dof, lam, ba, bb)
                W[r, s] = w0
                W[r + 1, s] = w1
                W[r + 2, s] = w2
    for c in range(n, n + nl if not (on_demand or coupled_only) else n):  # a limit's row: entries of Y's rows
        r, k, sign = 3 * c, C.limit_index[-1 - C.cpair[c], 1], C.limit_value[-1 - C.cpair[c], 0]
        for s in range(r + 3):
            W[r, s] = 0.0
            W[r + 1, s] = 0.0
            W[r + 2, s] = 0.0
        for s in range(3 * n):
            W[r, s] = sign * Y[s, k]
        for d in range(n, c + 1):
            W[r, 3 * d] = sign * Y[3 * d, k]
    for r in range(m if not (on_demand or coupled_only) else 0):  # the upper triangle from the lower: W symmetric
        for s in range(r):
            W[s, r] = W[r, s]
    if newton or C.head[COMPLIANT] != 0:  # compliant: kept for the reference mode (ContactTable.compliant_rows)
        C.vf[:] = vf
    if newton:
        _newton_structure(C, lam, n)
    soft = C.head[SOFT] != 0
    compliant = C.head[COMPLIANT] != 0
    for c in range(n):
        i = C.cpair[c]
        r = 3 * c
        C.pair_mu[c] = C.mu[i]
        d = C.dist[c] - C.margin[i]
        ba, bb = C.body[C.pairs[i, 0]], C.body[C.pairs[i, 1]]
        if compliant:  # Drumwright's law (module docstring): W + cfm, b = J v_f + erp·φ
            b[r], b[r + 1], b[r + 2] = _chain_dots(J, r, vf, C.last_dof, lam, ba, bb)
            K, B, Bt, radius = C.compliance[i, 0], C.compliance[i, 1], C.compliance[i, 2], C.compliance[i, 3]
            if radius > 0.0:  # Hertz: the secant stiffness E*·√(r·depth) of the force E*·√r·depth^3/2 (notes P7);
                # across a gap rigid: the bodies reach the undeformed surfaces at most (the secant of a depth the
                # step might reach is no stiffness: a free-velocity guess left a column of falling spheres
                # interpenetrating, a sphere stopped below while the next came on)
                K = K * np.sqrt(radius * max(-d, 0.0)) if d <= 0.0 else np.inf
            if d > 0.0:  # a gap: the spring acts on the deformation the step predicts, no damper before touching
                B = 0.0
            erp, cfm = compliant_row(K, B, h)
            cfm = min(cfm, INERT * W[r, r])
            W[r, r] += cfm
            b[r] += erp * d
            C.secant[0, c], C.secant[1, c] = max(-d, 0.0), cfm
            if Bt > 0.0:  # memoryless friction (K_t = 0) with the damper B_t, bounded by the cone
                cfm = compliant_row(0.0, Bt, h)[1]
                W[r + 1, r + 1] += cfm
                W[r + 2, r + 2] += cfm
            else:
                C.pair_mu[c] = 0.0
            continue
        un, ut1, ut2 = _chain_dots(J, r, v, C.last_dof, lam, ba, bb)
        if soft:  # the module docstring: imp, K, B and R of the pair at the violation d
            imp = impedance(C.impedance[i], d)
            K, B = C.stiffness_damping[i, 0], C.stiffness_damping[i, 1]
            R = max(MIN_VALUE, (1.0 - imp) * (C.invweight[ba] + C.invweight[bb]) / imp)
            if newton:  # MuJoCo's pyramid: the rows' targets J v + h a_ref (edges: c_n ± μ c_tk), one weight 1/R_py
                mu = C.mu[i]
                if mu > 0.0:
                    R = 2.0 * mu * mu * max(MIN_VALUE, R * (1.0 + mu * mu))
                C.edge_weight[c] = 1.0 / R
                b[r] = (1.0 - h * B) * un - h * K * imp * d
                b[r + 1] = (1.0 - h * B) * ut1
                b[r + 2] = (1.0 - h * B) * ut2
                continue
            b[r], b[r + 1], b[r + 2] = _chain_dots(J, r, vf, C.last_dof, lam, ba, bb)  # W + R, b = J v_f − J v − h a_ref
            W[r, r] += R
            W[r + 1, r + 1] += R
            W[r + 2, r + 2] += R
            b[r] += h * (B * un + K * imp * d) - un
            b[r + 1] += (h * B - 1.0) * ut1
            b[r + 2] += (h * B - 1.0) * ut2
            continue
        b[r], b[r + 1], b[r + 2] = _chain_dots(J, r, vf, C.last_dof, lam, ba, bb)
        b[r] -= rigid_target(C.restitution[i], un, d, h, erp, vth)
    for c in range(n, n + nl):  # the limits: speculative like a contact, restitution from the simulator
        i = -1 - C.cpair[c]
        r, k, sign = 3 * c, C.limit_index[i, 1], C.limit_value[i, 0]
        C.pair_mu[c] = 0.0
        if compliant:  # Drumwright's range-of-motion limit (§5.4): the law of a unilateral row
            B = C.scalars[LIMIT_DAMPING] if C.dist[c] <= 0.0 else 0.0
            erp_l, cfm = compliant_row(C.scalars[LIMIT_STIFFNESS], B, h)
            W[r, r] += min(cfm, INERT * W[r, r])
            b[r] = sign * vf[k] + erp_l * C.dist[c]
        else:
            b[r] = sign * vf[k] - rigid_target(C.scalars[LIMIT_RESTITUTION], sign * v[k], C.dist[c], h, erp, vth)
        b[r + 1] = 0.0
        b[r + 2] = 0.0
    # warm start: the previous impulse of the contact with the same key (both key lists are
    # increasing: detect writes pairs in order), kept as a world vector and projected onto this
    # step's frame — a frame's tangents may turn or swap between steps (box–box contacts whose
    # reference face changes), and impulses kept in the old frame would then start the solver far
    # from the solution (a stack of boxes at rest: 500 sweeps instead of one)
    j = 0
    nprev = C.head[N_PREV]
    for c in range(n + nl):
        key = C.key[c]
        while j < nprev and C.prev_key[j] < key:
            j += 1
        if j < nprev and C.prev_key[j] == key:
            for d in range(3):
                C.impulse[3 * c + d] = C.frame[c, d, 0] * C.prev_impulse[3 * j] \
                    + C.frame[c, d, 1] * C.prev_impulse[3 * j + 1] + C.frame[c, d, 2] * C.prev_impulse[3 * j + 2]
        else:
            for d in range(3):
                C.impulse[3 * c + d] = 0.0


@njit(cache=True, nogil=True, inline="always")
def finish_contacts(C, n, vf, v_out):
    """``v_out = v_f + Yᵀλ`` (Newton's method: its minimizer, the same
    velocity) and the impulses kept as the next step's warm start (world vectors ``Σ_d λ_d F_d``, F the contact's frame rows)."""
    nv = vf.shape[0]
    if C.head[SOLVER] == NEWTON:  # the minimizer itself (Y is not formed for it)
        for k in range(nv):
            v_out[k] = C.newton_v[0, k]
    else:
        for k in range(nv):
            v_out[k] = vf[k]
        for r in range(3 * n):
            x = C.impulse[r]
            if x != 0.0:
                for k in range(nv):
                    v_out[k] += C.Y[r, k] * x
    for c in range(n):
        C.prev_key[c] = C.key[c]
        for e in range(3):
            C.prev_impulse[3 * c + e] = C.frame[c, 0, e] * C.impulse[3 * c] + C.frame[c, 1, e] * C.impulse[3 * c + 1] \
                + C.frame[c, 2, e] * C.impulse[3 * c + 2]
    C.head[N_PREV] = n


def solve_problem(C, n):
    """Solve the contact problem of the n contacts in the table (W, b, μ;
    the impulses hold the warm start) by the table's solver
    (``head[SOLVER]``): :func:`solve_pgs`, :func:`solve_lemke` or
    :func:`solve_newton`. Returns the solver's status (contact family of
    :mod:`multibody._status`). Compiled steps call the solver's own C entry
    point instead (:func:`solve_via_address`)."""
    solver = C.head[SOLVER]
    if solver == PIVOTING:
        return solve_pivoting(C, n)
    return (solve_newton if solver == NEWTON else solve_lemke if solver == LEMKE else solve_pgs)(C, n)


@njit(cache=True, nogil=True, inline="always")
def solve_pgs(C, n):
    """Projected Gauss–Seidel with PGS-SM's subspace steps
    (:func:`~multibody.solvers.pgs.projected_gauss_seidel_subspace`, cone
    or box friction) on the table's W, b, μ from the warm start in the
    impulses."""
    m = 3 * n
    return projected_gauss_seidel_subspace(C.W[:m * m].reshape((m, m)), C.b[:m], C.pair_mu[:n], C.impulse[:m],
                                           C.head[FRICTION], C.scalars[TOLERANCE], C.head[MAX_ITER],
                                           C.scalars[OMEGA], C.scalars[VELOCITY_TOLERANCE], C.sub_rows, C.sub_W,
                                           C.sub_v, C.coupled_ptr[:n + 1], C.coupled)


@njit(cache=True, nogil=True, inline="always")
def solve_lemke(C, n):
    """Lemke's method on the box or k-sided pyramid LCP
    (:func:`~multibody.solvers.lemke.box_lcp`,
    :func:`~multibody.solvers.lemke.pyramid_lcp`)."""
    m = 3 * n
    W, b, mu, lam = C.W[:m * m].reshape((m, m)), C.b[:m], C.pair_mu[:n], C.impulse[:m]
    if C.head[FRICTION] == BOX:
        return box_lcp(W, b, mu, lam, C.head[MAX_ITER])
    return pyramid_lcp(W, b, mu, C.head[SIDES], lam, C.head[MAX_ITER])


@njit(cache=True, nogil=True)
def _normal_dot(C, c, y):
    """``J_n y`` for the normal row of slot c: over the chains of its two
    bodies (a contact) or ``sign·y_k`` (a limit)."""
    i = C.cpair[c]
    if i < 0:
        return C.limit_value[-1 - i, 0] * y[C.limit_index[-1 - i, 1]]
    J, r, s = C.J, 3 * c, 0.0
    for body in (C.body[C.pairs[i, 1]], C.body[C.pairs[i, 0]]):
        k = C.last_dof[body]
        while k >= 0:
            s += J[r, k] * y[k]
            k = C.dof_parent[k]
    return s


@njit(cache=True, nogil=True)
def pivot_column(C, j, out):
    """Column j of the frictionless LCP's matrix, the normal block of W =
    J X Jᵀ, computed when principal pivoting first needs it (ArtiSynth
    §0.8): the normal row of Y for slot j (:func:`slot_response`, one solve
    with the factor of M in ``C.Mf``; with hard loops held,
    :func:`_hold_loops_row`), then its products with the normal rows of the
    ``len(out)`` slots."""
    slot_response(C, C.dof_parent, C.Mf, j, 1)
    if C.head[LOOPS]:
        _hold_loops_row(C, 3 * j)
    y = C.Y[3 * j]
    for c in range(out.shape[0]):
        out[c] = _normal_dot(C, c, y)


@njit(cache=True, nogil=True, inline="always")
def solve_pivoting(C, n):
    """The frictionless LCP of the normal rows of the n slots (contacts and
    limits) by principal pivoting with columns on demand
    (:func:`~multibody.solvers.pivoting.pivoting`,
    :func:`pivot_column`; W's normal block is built column by column in
    ``C.W``, only for the contacts that press or are driven); tangent
    impulses 0. No warm start (the method starts from the empty set)."""
    b, z, w, x, dz = C.sub_v[0, :n], C.sub_v[1, :n], C.sub_v[2, :n], C.sub_v[3, :n], C.sub_v[4, :n]
    done, clamped, cols = C.sub_rows[0, :n], C.sub_rows[1, :n], C.sub_rows[1, n:2 * n]
    for c in range(n):
        b[c] = C.b[3 * c]
        done[c] = 0
    st = pivoting(pivot_column, C, b, z, w, C.W[:n * n].reshape((n, n)), done, clamped, cols,
                  C.sub_W[:n * n].reshape((n, n)), x, dz, C.head[MAX_ITER])
    if st >= 0:
        for c in range(n):
            C.impulse[3 * c] = z[c]
            C.impulse[3 * c + 1] = 0.0
            C.impulse[3 * c + 2] = 0.0
    return st


@njit(cache=True, nogil=True, inline="always")
def solve_newton(C, n):
    """Newton's method on soft contact's primal problem with MuJoCo's
    pyramid (:func:`~multibody.solvers.newton.soft_pyramid_newton`; the
    step's matrix in ``A``, b holding the rows' targets)."""
    m = 3 * n
    return soft_pyramid_newton(C.A, C.vf, C.J[:m], C.pair_mu[:n], C.edge_weight[:n], C.b[:m], C.impulse[:m],
                               C.newton_v[0], C.H, C.newton_v[1], C.newton_v[2], C.edges[0], C.edges[1], C.nz,
                               C.nnz, C.envelope, C.head[MAX_ITER], C.scalars[VELOCITY_TOLERANCE])


# Hertz contacts (hertz_round): fixed-point rounds on the secant's depth, and their tolerance on it
HERTZ_ROUNDS, HERTZ_TOL = 20, 1e-3


@njit(cache=True, nogil=True)
def hertz_round(C, n, slots):
    """One round of the implicit Hertz law on the solved problem: the
    spring of a penetrating Hertz contact is the secant ``E*√(r·δ)`` of its
    force ``E*√r·δ^{3/2}`` at a depth δ; the contact stage first takes δ
    at the start of the step (explicit, as the paper's Hertz form lags),
    and then, here, moves δ halfway to the depth the solution reaches at
    the end of the step, ``d + h·u_n`` (u_n the row's velocity without its
    compliance terms), updating the row's cfm and erp·d; returns whether
    any δ changed by more than ``HERTZ_TOL`` relative. Converged, the force
    is the Hertz force at the end of the step — implicit Euler on the
    nonlinear spring. The lagged stiffness alone let a column of 50
    falling spheres interpenetrate by centimetres where a contact just
    touching (δ ≈ 0: no stiffness) met the impact, and the stiffness of
    that depth, a step later, threw spheres metres up."""
    m = 3 * slots
    W, b, lam = C.W[:m * m].reshape((m, m)), C.b, C.impulse
    ptr, idx = C.coupled_ptr[:slots + 1], C.coupled
    h = C.scalars[DT]
    changed = False
    for c in range(n):
        i = C.cpair[c]
        radius = C.compliance[i, 3]
        d = C.dist[c] - C.margin[i]
        if radius <= 0.0 or d > 0.0:
            continue
        r = 3 * c
        E, B = C.compliance[i, 0], C.compliance[i, 1]
        depth, cfm = C.secant[0, c], C.secant[1, c]
        erp = compliant_row(E * np.sqrt(radius * depth), B, h)[0]
        u = coupled_velocity(W, b[:m], lam[:m], r, ptr, idx) - cfm * lam[r] - erp * d
        new = 0.5 * (depth + max(-(d + h * u), 0.0))
        if abs(new - depth) <= HERTZ_TOL * max(new, depth):
            continue
        erp_new, cfm_new = compliant_row(E * np.sqrt(radius * new), B, h)
        cfm_new = min(cfm_new, INERT * (W[r, r] - cfm))
        W[r, r] += cfm_new - cfm
        b[r] += (erp_new - erp) * d
        C.secant[0, c], C.secant[1, c] = new, cfm_new
        changed = True
    return changed


def solve_via_address(C, n):
    """:func:`solve_problem`; in compiled code a call through the address
    in ``C.head[SOLVE]``."""
    return solve_problem(C, n)


@overload(solve_via_address, jit_options=dict(cache=True))
def _solve_via_address_compiled(C, n):
    def impl(C, n):
        return call_address(C.head[SOLVE], C.head[SELF], n, 0)
    return impl


@njit(cache=True, nogil=True)
def solve_contacts(C, lam, n, v, vf, v_out):
    """Build the problem of the n detected contacts and the limit slots
    after them (rows J and Y = X Jᵀ already in the table), solve it (:func:`solve_problem`), write
    ``v_out``; returns the solver's status (``head[ITERATIONS]`` too): ≥ 0
    done; NOT_CONVERGED (PGS's cap: the velocity is still written from its
    last iterate); other negative values: no solution (nothing written)."""
    contact_problem(C, lam, n, v, vf)
    slots = n + C.head[N_LIM]
    it = solve_via_address(C, slots)
    if C.head[COMPLIANT] != 0:  # the Hertz contacts' secant at the end of the step (hertz_round)
        for _ in range(HERTZ_ROUNDS):
            if (it < 0 and it != NOT_CONVERGED) or not hertz_round(C, n, slots):
                break
            again = solve_via_address(C, slots)
            it = again if again < 0 else (it + again if it >= 0 else it)
    C.head[ITERATIONS] = it
    if it >= 0 or it == NOT_CONVERGED:
        finish_contacts(C, slots, vf, v_out)
    return it
