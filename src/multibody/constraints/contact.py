"""Rigid contact with friction (L3): the contact table a simulator's step
reads and writes (docs/contact.md), and the contacts of its last step.

:class:`ContactTable` packs a model's collision geometry
(:class:`~multibody.collision.table.GeometryTable`), the options of the
contact stage and every buffer it needs (contacts, rows, the Delassus
matrix, impulses and the warm start) into arrays reached from one handle;
the compiled stage is :mod:`._contact` (detection, rows, projected
Gauss–Seidel), called by the fused steps of
:mod:`multibody.integrators._kernels`.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..collision.narrow import MAX_CONTACTS, pair_family
from ..collision.table import GeometryTable
from ..errors import InputError
from ..kinematics import forward_kinematics
from ..model.joints import C_NV, C_V
from . import _contact as CF

if TYPE_CHECKING:
    from .._typing import ArrayLike
    from ..model.builder import ModelBuilder
    from ..solvers.contact import ContactResidual

# "none": frictionless (every pair's μ taken as 0; the box model with a zero bound)
FRICTION_MODELS = {"cone": CF.CONE, "box": CF.BOX, "pyramid": CF.PYRAMID, "none": CF.BOX}
# the compiled solvers and the friction models each takes (docs/contact.md)
SOLVERS = {"pgs": (CF.PGS, ("cone", "box", "none")), "lemke": (CF.LEMKE, ("box", "pyramid", "none")),
           "newton": (CF.NEWTON, ("pyramid",)), "pivoting": (CF.PIVOTING, ("none",))}


@dataclass(frozen=True)
class Contact:
    """One contact of the last step (world frame, SI units): geometries
    ``geom1`` and ``geom2`` (names) on bodies ``body1``, ``body2``
    (indices); ``position`` (3,) midway between the surfaces; ``frame``
    (3, 3) rows (normal from geom 1 to geom 2, t1, t2); ``distance`` (m,
    < 0: penetration) at the start of the step; ``impulse`` (3,) (N·s) in
    the contact frame, acting on geom 2 (−impulse on geom 1); ``force`` (3,)
    (N) the mean force over the step in world coordinates, on geom 2."""
    geom1: str
    geom2: str
    body1: int
    body2: int
    position: np.ndarray
    frame: np.ndarray
    distance: float
    impulse: np.ndarray
    force: np.ndarray


def _last_dof(model):
    """(nbodies,) the last coordinate moving each body (−1: none, the world or welded to it)."""
    tree = model.tree
    out = np.full(model.nbodies, -1, np.int64)
    for i in range(1, model.nbodies):
        nv = int(tree[i, C_NV])
        out[i] = int(tree[i, C_V]) + nv - 1 if nv > 0 else out[model.parents[i]]
    return out


def _branches(model):
    """(nbodies,) the branch of the world each body is on: the index of its
    ancestor (or itself) whose parent is the world; −1 for bodies no
    coordinate moves (the world, bodies welded to it): M is block diagonal
    by branch, so contacts on disjoint branches do not couple."""
    last = _last_dof(model)
    out = np.full(model.nbodies, -1, np.int64)
    for i in range(1, model.nbodies):
        p = model.parents[i]
        out[i] = i if p <= 0 else out[p]
    out[last < 0] = -1
    return out


def _spans(model, branch):
    """(nbodies, 2) for each branch (indexed by its root body) its
    coordinates lo .. hi − 1 when they are numbered contiguously, else the
    whole range (0, nv): the span of the contact stage's solves with M."""
    out = np.zeros((model.nbodies, 2), np.int64)
    tree = model.tree
    for g in set(branch[branch >= 0]):
        dofs = [k for i in np.flatnonzero(branch == g) for k in range(int(tree[i, C_V]), int(tree[i, C_V] + tree[i, C_NV]))]
        lo, hi = min(dofs), max(dofs) + 1
        out[g] = (lo, hi) if hi - lo == len(dofs) else (0, model.nv)
    return out


@dataclass(frozen=True)
class Compliance:
    """Drumwright's compliant constraints (seed 003; docs/drumwright.md),
    the contact model of ``contact_solver="drumwright"``: every contact
    normal, friction direction and joint limit is a spring–damper in
    constraint space whose state implicit Euler advances, stable at any
    stiffness and step (§4.3; the limits of that claim: pitfall P3).

    Parameters
    ----------
    stiffness : float
        K (N/m) of each contact's normal row (default 1e15); ``math.inf``:
        rigid (ERP = 1, CFM = 0). With ``hertz=True``, E* (Pa) of the Hertz
        law ``f = E*·√r·d^{3/2}`` (the paper's eq. 121, without the
        classical 4/3), r the pair's radius of curvature (a sphere's or
        capsule's radius; ``r₁r₂/(r₁ + r₂)`` for two), applied as the secant
        stiffness ``E*·√(r·d)`` on the usual normal row (notes P7).
    damping : float
        B (N·s/m) of each contact's normal row (default 1).
    friction_damping : float, optional
        B_t (N·s/m) of the friction rows (memoryless Coulomb friction,
        K_t = 0: sliding below the cone's bound is viscous with B_t); None:
        10⁶/h, the paper's "as large as possible" (§6.4); 0: frictionless.
    hertz : bool
        Default False; True: ``stiffness`` is the Hertz law's E*.
    limit_stiffness, limit_damping : float
        The joint limits' rows (N·m/rad and N·m·s/rad for a revolute
        joint, N/m and N·s/m for a prismatic one); default 1e15 and 1.
    loop_stiffness, loop_damping : float
        Every row of the bilateral constraints (loop joints, couplings;
        units of their rows, m or cosines:
        :mod:`~multibody.constraints.loops`); ``math.inf``: hard loops as
        without Drumwright; default 1e15 and 1.
    gdot : bool
        Default True: include the velocity-product term ``−M̂Ġv₀`` of the
        loops' law (eq. 53) and ``hĠv₀`` in their rate; False: the
        "penalty" law (pitfall P2: the explicit term can inject energy at
        large steps). Contact rows never include it.
    formulation : {"max_law", "paper"}
        "max_law" (default: the normal impulses of the max law, eq. 68, and
        friction of maximal dissipation in their cone — pitfall P6's fix —
        by the compiled projected Gauss–Seidel) or "paper": the paper's
        single QP/SOCP (Appendix A; eqs. 99–120 with the weight ``zeta``),
        solved by clarabel from Python every step (a reference mode: its
        λ_n may exceed the max law and a sliding block hops, P6), with
        contacts between touching pairs only (the simulator's
        ``contact_distance`` defaults to 0 for it).
    zeta : float, optional
        The weight of the "paper" formulation; None: 1/h.

    Raises
    ------
    InputError
        If a stiffness or damping is negative or not a number,
        ``loop_stiffness`` is 0, ``zeta`` is not finite and positive, the
        formulation is unknown, or ``hertz=True`` with an infinite
        stiffness.
    """
    stiffness: float = 1e15
    damping: float = 1.0
    friction_damping: float | None = None
    hertz: bool = False
    limit_stiffness: float = 1e15
    limit_damping: float = 1.0
    loop_stiffness: float = 1e15
    loop_damping: float = 1.0
    gdot: bool = True
    formulation: str = "max_law"
    zeta: float | None = None

    def __post_init__(self):
        for name in ("stiffness", "damping", "limit_stiffness", "limit_damping", "loop_stiffness", "loop_damping") + \
                (("friction_damping",) if self.friction_damping is not None else ()):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or not (value >= 0) or (np.isinf(value) and not name.endswith("stiffness")):
                raise InputError(f"Compliance.{name} must be a number >= 0"
                                 f"{' (inf: rigid)' if 'stiffness' in name else ' and finite'}, got {value!r}")
        if self.formulation not in ("max_law", "paper"):
            raise InputError(f"Compliance.formulation must be 'max_law' or 'paper', got {self.formulation!r}")
        if self.zeta is not None and not (isinstance(self.zeta, (int, float)) and 0 < self.zeta < np.inf):
            raise InputError(f"Compliance.zeta must be a finite number > 0 (None: 1/h), got {self.zeta!r}")
        if not self.loop_stiffness > 0:
            raise InputError("Compliance.loop_stiffness must be > 0 (inf: hard loops)")
        if self.hertz and not np.isfinite(self.stiffness):
            raise InputError("Compliance(hertz=True) needs a finite stiffness: the effective modulus E* (Pa)")

    @classmethod
    def winkler(cls, modulus: float, depth: float, element_area: float, damping: float = 1.0,
                **others: Any) -> Compliance:
        """The compliance of a Winkler elastic foundation (notes C13,
        Drumwright §5.5): each element under a face is a spring of stiffness
        ``modulus · element_area / depth`` (N/m; modulus in Pa, depth and
        the element area in m and m²) with ``damping`` (N·s/m); the other
        fields as given. Elements from :func:`add_foundation_elements`."""
        for value, what in ((modulus, "modulus"), (depth, "depth"), (element_area, "element_area")):
            if not (isinstance(value, (int, float)) and 0 < value < np.inf):
                raise InputError(f"Compliance.winkler: {what} must be a finite number > 0, got {value!r}")
        return cls(stiffness=modulus * element_area / depth, damping=damping, **others)

    def friction_damping_at(self, dt: float) -> float:
        """B_t (N·s/m) at the step dt: ``friction_damping``, or 10⁶/dt."""
        return 1e6 / dt if self.friction_damping is None else float(self.friction_damping)


def add_foundation_elements(builder: ModelBuilder, body: str, center: ArrayLike, size: Sequence[float], count: int, *,
                            radius: float = 1e-6, name: str = "element", **geometry: Any) -> list[str]:
    """Put the elements of a Winkler foundation under a face of ``body``:
    ``count × count`` spheres of ``radius`` (m; points, for practical
    purposes) at the centres of a regular grid on the rectangle of
    ``size`` (a, b) (m) centred at ``center`` in the body frame, in the
    body's x–y plane (the face's normal along the body's z). Each touches
    what the face touches as one spring of
    :meth:`Compliance.winkler`; returns their geometry names
    (``f"{name}{k}"``). ``geometry``: more options of
    :meth:`~multibody.model.ModelBuilder.add_geometry` (friction, ...).

    Parameters
    ----------
    builder : ModelBuilder
        The builder of the model; the spheres are added to it.
    body : str
        The body whose face the foundation is under.
    center : array_like
        The centre (3,) of the rectangle in the body frame (m).
    size : sequence of float
        The sides (a, b) of the rectangle along the body's x and y (m).
    count : int
        Elements per side (>= 1).
    radius : float
        The spheres' radius (m; default 1e-6).
    name : str
        The prefix of the geometry names (default "element").
    **geometry
        More options of :meth:`~multibody.model.ModelBuilder.add_geometry`.

    Returns
    -------
    list of str
        The geometry names of the ``count²`` elements.

    Raises
    ------
    InputError
        If ``count`` is not an integer >= 1.
    """
    if not (isinstance(count, (int, np.integer)) and count >= 1):
        raise InputError(f"count must be an integer >= 1 (elements per side), got {count!r}")
    a, b = (float(x) for x in size)
    names: list[str] = []
    for i in range(count):
        for j in range(count):
            p = np.asarray(center, float) + np.array([(i + 0.5) / count * a - a / 2, (j + 0.5) / count * b - b / 2,
                                                       radius])
            names.append(f"{name}{len(names)}")
            builder.add_geometry(body, "sphere", (radius,), placement=(np.eye(3), p), name=names[-1], **geometry)
    return names


def curvature_radius(g, i):
    """The radius of curvature (m) of geometry i of the table ``g`` at its
    contacts for the Hertz law: a sphere's or a capsule's radius; inf for
    the others (flat faces, edges and corners have no Hertz radius)."""
    from ..collision.shapes import CAPSULE, SPHERE
    return float(g.size[i, 0]) if g.code[i] in (SPHERE, CAPSULE) else np.inf


_EMPTY = None  # ContactTable.empty()

# MuJoCo's bounds on solimp's dmin, dmax and midpoint (mjMINIMP, mjMAXIMP)
MIN_IMPEDANCE, MAX_IMPEDANCE = 1e-4, 0.9999


def translation_weights(model):
    """(nbodies,) MuJoCo's ``body_invweight0[2i]``: the mean diagonal of
    the translational block of ``J M⁻¹ Jᵀ`` (1/kg) for the Jacobian J of
    each body's centre of mass (world-aligned) at the neutral
    configuration; 0 for bodies no coordinate moves. Soft contact's
    regularizer approximates the diagonal of the Delassus matrix by the sum
    of the two bodies' weights, as MuJoCo's does (mj_setConst,
    mj_diagApprox)."""
    from ..dynamics import crba
    from ..kinematics import jacobian
    q0 = model.neutral()
    M = crba(model, q0)
    out = np.zeros(model.nbodies)
    for i in range(1, model.nbodies):
        J = jacobian(model, q0, i, reference="local_world_aligned", point=model.body_com[i])[3:]
        if np.any(J):
            out[i] = np.trace(J @ np.linalg.solve(M, J.T)) / 3.0
    return out


def _soft_parameters(g, dt):
    """Per candidate pair of the geometry table ``g``: the impedance
    parameters (npair, 5) — solimp (dmin, dmax, width, midpoint, power)
    bounded as MuJoCo bounds them — and (stiffness K, damping B) (npair, 2)
    of the reference acceleration ``aref = −B·u − K·imp·r`` (1/s², 1/s)
    from solref: standard (time constant τ, damping ratio ζ; τ raised to at
    least 2 dt as MuJoCo's "refsafe"), K = 1/(dmax² τ² ζ²), B = 2/(dmax τ);
    direct (−stiffness, −damping), K = −solref₀/dmax², B = −solref₁/dmax
    (MuJoCo's mj_makeImpedance). A solref mixing the formats is an
    :class:`~multibody.errors.InputError` naming the pair."""
    imp = np.array(g.solimp, float).reshape(-1, 5)
    imp[:, [0, 1, 3]] = np.clip(imp[:, [0, 1, 3]], MIN_IMPEDANCE, MAX_IMPEDANCE)
    imp[:, 2] = np.maximum(imp[:, 2], 0.0)
    imp[:, 4] = np.maximum(imp[:, 4], 1.0)
    kb = np.zeros((len(imp), 2))
    for k, (ref, dmax) in enumerate(zip(np.asarray(g.solref, float).reshape(-1, 2), imp[:, 1])):
        if (ref[0] > 0) != (ref[1] > 0):
            a, b = g.pairs[k]
            raise InputError(f"geometry pair ({g.geometries[a].name}, {g.geometries[b].name}): solref {tuple(ref)} "
                             f"mixes the standard (positive) and direct (negative) formats")
        if ref[0] > 0:
            tau = max(ref[0], 2.0 * dt)
            kb[k] = 1.0 / max(CF.MIN_VALUE, dmax * dmax * tau * tau * ref[1] * ref[1]), 2.0 / (dmax * tau)
        else:
            kb[k] = -ref[0] / (dmax * dmax), -ref[1] / dmax
    return imp, kb


class ContactTable:
    """The contact stage's table for ``model`` with time step ``dt`` (s).

    Options: ``solver`` "pgs" (projected Gauss–Seidel, default), "lemke"
    (Lemke's method on the friction LCP), "pivoting" (the frictionless LCP
    by principal pivoting with columns on demand, ArtiSynth §0.8) or
    "newton" (Newton's method on soft contact with MuJoCo's pyramid,
    MuJoCo's default solver; ``soft`` only); ``friction`` "cone"
    (Coulomb's disk, default; PGS), "box" (ArtiSynth's box friction),
    "pyramid" (the ``sides``-sided Stewart–Trinkle pyramid; Lemke; soft:
    MuJoCo's, Newton) or "none" (frictionless: every pair's μ taken as 0;
    PGS, Lemke, pivoting);
    ``max_contacts`` (default 8 per candidate
    pair, at most 256); ``distance`` (m, default 0.01): contacts are made
    between geometries closer than their pair margin plus ``distance``
    (speculative contacts: a contact closes its gap within one step but not
    faster, so bodies approaching at up to ``distance``/dt never
    penetrate); ``erp``: the share of a penetration removed per step
    (default 0.2); ``restitution_threshold`` (m/s): approach speeds below it
    do not bounce; ``tolerance``, ``velocity_tolerance`` and
    ``max_iterations`` of projected Gauss–Seidel: it stops when the
    impulses change by at most ``tolerance`` (relative, default 1e-10) in
    a sweep or when the contact velocities meet the contact conditions to
    ``velocity_tolerance`` (m/s, default 1e-8: a position error of 1e-11 m
    per millisecond step), after 500 sweeps at most
    (:func:`~multibody.solvers.pgs.projected_gauss_seidel`); Lemke's pivot
    cap (default 500 + 50 per candidate contact row); Newton's iteration
    cap (default 100, as MuJoCo's) and its stop on a step of at most
    ``velocity_tolerance``.

    ``limits``: the simulator's :class:`~multibody.constraints.limits.JointLimits`
    (or None). In a step with contacts, the limits it may reach join the
    contact problem as frictionless rows (:func:`~._contact.limit_slots`),
    with Newton restitution ``limit_restitution`` above
    ``restitution_threshold`` (rad/s or m/s), so that contacts and limits are
    solved together; not with the Newton solver (soft contact), whose
    limits stay at the end of the step. The slots of the contact arrays
    are ``max_contacts`` contacts, then one per limit row.

    ``soft``: MuJoCo's soft contact (docs/contact.md, "Soft contact")
    instead of rigid contact: every pair's solref and solimp give each
    contact a regularizer R and a reference velocity, restitution and
    ``erp`` are not used, and ``distance`` must be 0 (a soft contact acts
    only within its margin, as MuJoCo's)."""
    # set by the simulator on a table solved by a reference solver (solvers.solve_contact)
    reference: str | None
    reference_friction: str

    def __init__(self, model, dt, solver="pgs", friction="cone", sides=4, max_contacts=None, distance=0.01,
                 erp=0.2, restitution_threshold=1e-2, tolerance=1e-10, velocity_tolerance=1e-8,
                 max_iterations=None, soft=False, limits=None, limit_restitution=0.0, compliance=None):
        if solver not in SOLVERS:
            raise InputError(f"contact_solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
        if friction not in SOLVERS[solver][1]:
            raise InputError(f"friction must be one of {', '.join(SOLVERS[solver][1])} with the {solver} contact "
                             f"solver, got {friction!r}")
        if friction == "pyramid" and not (isinstance(sides, int) and sides >= 3):
            raise InputError(f"a friction pyramid needs sides >= 3 (an integer), got {sides!r}")
        if solver == "newton" and not (soft and sides == 4):
            raise InputError("the newton contact solver solves soft contact with MuJoCo's 4-sided pyramid: "
                             "contact_model='soft', friction='pyramid'")
        if soft and solver == "pivoting":
            raise InputError("the pivoting contact solver solves the rigid frictionless LCP: contact_model='rigid'")
        if soft and friction == "pyramid" and solver != "newton":
            raise InputError("soft contact with a friction pyramid is MuJoCo's pyramidal cone, solved by "
                             "contact_solver='newton'")
        if compliance is not None:
            if not isinstance(compliance, Compliance):
                raise InputError(f"compliance must be a multibody.Compliance, got {compliance!r}")
            if soft or solver != "pgs":
                raise InputError("compliant contact (Drumwright) is solved by projected Gauss–Seidel: "
                                 "solver='pgs', soft=False")
        self.model = model
        self.geometry = g = GeometryTable(model)
        npair = len(g)
        cap = min(8 * npair, 256) if max_contacts is None else int(max_contacts)
        if cap < 1 and npair:
            raise InputError(f"max_contacts must be >= 1, got {max_contacts}")
        self.capacity = cap
        nlim = 0 if limits is None or solver == "newton" else len(limits)
        if max_iterations is None:
            max_iterations = {"pgs": 500, "newton": 100}.get(solver, 500 + 150 * (cap + nlim))
        sizes = (len(g.code), npair, cap + nlim + MAX_CONTACTS, model.nv, model.nbodies, len(g.vertices))
        self._allocate(sizes)
        a, head = self.arrays, self.head
        head[CF.CONTACT_CAP], head[CF.NLIM] = cap, nlim
        for name in ("code", "body", "local", "size", "radius", "box", "vstart", "vertices", "pairs", "mu",
                     "restitution", "margin"):
            a[name][...] = getattr(g, name)
        if friction == "none":
            a["mu"][:] = 0.0
        a["dof_parent"][:] = model.dof_parent
        a["last_dof"][:] = _last_dof(model)
        a["branch"][:] = _branches(model)
        a["span"][...] = _spans(model, a["branch"])
        if nlim:
            body_of_dof = np.repeat(np.arange(model.nbodies), [j.nv for j in model.joints])
            a["limit_index"][:nlim] = np.column_stack(
                (limits.q_index, limits.v_index, a["branch"][body_of_dof[limits.v_index]]))
            a["limit_value"][:nlim] = np.column_stack((limits.sign, limits.bound))
        if soft:
            if distance != 0.0:
                raise InputError(f"soft contact acts only within the pair margins (MuJoCo's): contact_distance must "
                                 f"be 0, got {distance}")
            a["impedance"][...], a["stiffness_damping"][...] = _soft_parameters(g, dt)
            a["invweight"][:] = translation_weights(model)
        head[CF.SOFT] = int(bool(soft))
        self.soft = bool(soft)
        self.compliance = compliance
        if compliance is not None:
            head[CF.COMPLIANT] = 1
            table = a["compliance"]
            table[:, 0], table[:, 1], table[:, 2] = compliance.stiffness, compliance.damping, \
                compliance.friction_damping_at(dt)
            a["scalars"][[CF.LIMIT_STIFFNESS, CF.LIMIT_DAMPING]] = compliance.limit_stiffness, compliance.limit_damping
            if compliance.hertz:
                for k, (i, j) in enumerate(g.pairs):
                    ri, rj = curvature_radius(g, i), curvature_radius(g, j)
                    if np.isinf(ri) and np.isinf(rj):
                        raise InputError(f"the Hertz law needs a curved surface: the pair ({g.geometries[i].name}, "
                                         f"{g.geometries[j].name}) has neither a sphere nor a capsule")
                    table[k, 3] = rj if np.isinf(ri) else ri if np.isinf(rj) else ri * rj / (ri + rj)
        a["scalars"][[CF.DT, CF.REACH, CF.ERP, CF.THRESHOLD, CF.TOLERANCE, CF.OMEGA, CF.VELOCITY_TOLERANCE,
                      CF.LIMIT_RESTITUTION]] = \
            dt, distance, erp, restitution_threshold, tolerance, 1.0, velocity_tolerance, limit_restitution
        head[CF.FRICTION] = FRICTION_MODELS[friction]
        head[CF.SOLVER] = SOLVERS[solver][0]
        head[CF.SIDES] = sides
        head[CF.MAX_ITER] = max_iterations
        if npair:  # compiling detection and the solvers takes minutes cold: only for a table that uses them
            head[CF.DETECT] = CF.c_address("detect")
            family = getattr(pair_family, "py_func", pair_family)  # the Python function: nothing to compile
            families = [family(*sorted((g.code[i], g.code[j]))) for i, j in g.pairs]
            a["collider"][:] = [CF.collide_address(f) if f >= 0 else 0 for f in families]
        if self.stage:
            head[CF.SOLVE] = CF.c_address(solver)
        self.friction = friction
        self.solver = solver
        self.max_iterations = int(max_iterations)

    def _allocate(self, sizes):
        """The arrays of the table for the sizes (ng, npair, cap, nv, nb,
        nvert), and its head with their addresses."""
        self.arrays = {name: np.zeros(shape(*sizes), dtype) for name, dtype, shape in CF.ARRAYS}
        self.head = head = np.zeros(CF.HEAD_SIZE, np.int64)
        head[[CF.NG, CF.NPAIR, CF.CAP, CF.NV, CF.NB, CF.NVERT]] = sizes
        for name, _, _ in CF.ARRAYS:
            head[CF.ADDRESS[name]] = self.arrays[name].ctypes.data
        self.handle = int(head.ctypes.data)
        head[CF.SELF] = self.handle

    @classmethod
    def empty(cls):
        """The table of no pairs that the fused steps of a system without
        contact take (their contact stage returns at once): one compiled
        step serves systems with and without contact. Shared, never
        written."""
        global _EMPTY
        if _EMPTY is None:
            _EMPTY = cls.__new__(cls)
            _EMPTY._allocate((0,) * 6)
            _EMPTY.head.flags.writeable = False
        return _EMPTY

    def view(self):
        """The table as the :data:`~._contact.Contacts` tuple the kernels
        take (what ``contact_view(handle)`` rebuilds in compiled code; used
        as is without JIT)."""
        return CF.Contacts(self.head, *(self.arrays[name] for name, _, _ in CF.ARRAYS))

    def __len__(self):
        """The number of candidate pairs."""
        return len(self.geometry)

    @property
    def stage(self) -> bool:
        """Whether the step needs the contact stage: there are candidate
        pairs, or compliant joint limits (solved there in every step)."""
        return bool(self.head[CF.NPAIR]) or bool(self.head[CF.COMPLIANT] and self.head[CF.NLIM])

    @property
    def count(self) -> int:
        """The number of contacts of the last step."""
        return int(self.head[CF.N])

    @property
    def limit_count(self) -> int:
        """The number of joint-limit rows in the last step's problem (limits and contacts together: the docstring)."""
        return int(self.head[CF.N_LIM])

    @property
    def iterations(self) -> int:
        """The solver's sweeps in the last step (negative: it hit its cap)."""
        return int(self.head[CF.ITERATIONS])

    def residual(self) -> ContactResidual:
        """How far the last step's impulses are from solving its contact
        problem: a :class:`~multibody.solvers.contact.ContactResidual`
        (normal, cone, complementarity, dissipation; definitions in
        :func:`~multibody.solvers.residual.contact_residual`, all 0 at a
        solution) over its contacts and limit rows, with the table's
        friction set (the reference modes' impulses against the problem
        they were given). For principal pivoting (frictionless, W formed
        only where needed) from the LCP's own row velocities. Newton's
        method solves soft contact's primal problem, whose measure is its
        iteration count (it ends at the exact minimizer when its active set
        repeats): :class:`InputError`. All zeros without contacts, NaN
        after a solver that found no solution (the step raised)."""
        from ..solvers.contact import ContactResidual
        from ..solvers.residual import contact_residual
        if self.solver == "newton":
            raise InputError("the newton contact solver works on soft contact's primal problem: its iteration count "
                             "(sim.contact.iterations) is its measure; residual() measures the dual problems of the "
                             "other solvers")
        a, head = self.arrays, self.head
        n = int(head[CF.N] + head[CF.N_LIM])
        if n == 0:
            return ContactResidual(0.0, 0.0, 0.0, 0.0)
        if head[CF.ITERATIONS] < 0 and head[CF.ITERATIONS] != CF.NOT_CONVERGED:  # no solution was found
            return ContactResidual(np.nan, np.nan, np.nan, np.nan)
        if self.solver == "pivoting":
            z, w = a["sub_v"][1, :n], a["sub_v"][2, :n]
            return ContactResidual(float(max(0.0, -w.min())), 0.0, float(np.abs(z * w).max()), 0.0)
        m = 3 * n
        reference = getattr(self, "reference", None)
        model = FRICTION_MODELS[self.reference_friction] if reference else int(head[CF.FRICTION])
        return ContactResidual(*contact_residual(self.delassus(), a["b"][:m], a["pair_mu"][:n], a["impulse"][:m],
                                                 model, int(head[CF.SIDES])))

    def delassus(self) -> np.ndarray:
        """The Delassus matrix W (3N, 3N) of the last step's problem, its N
        contacts and limit rows (a copy; soft contact: W + R): PGS builds
        only the blocks of slots on a common branch of the world, the others
        are 0 (docs/contact.md, "The contact stage"). Not formed by Newton's
        method and principal pivoting (:class:`InputError`)."""
        if self.solver in ("newton", "pivoting"):
            raise InputError(f"the {self.solver} contact solver does not form the Delassus matrix")
        a, head = self.arrays, self.head
        n = int(head[CF.N] + head[CF.N_LIM])
        m = 3 * n
        W = a["W"][:m * m].reshape(m, m).copy()
        if self.solver == "pgs":  # the blocks it did not write
            ptr, idx = a["coupled_ptr"], a["coupled"]
            coupled = np.zeros((n, n), bool)
            for c in range(n):
                coupled[c, idx[ptr[c]:ptr[c + 1]]] = True
            W[~np.kron(coupled, np.ones((3, 3), bool))] = 0.0
        return W

    @property
    def flags(self) -> int:
        """The last step's contact flags (CONTACT_NOT_CONVERGED, CONTACTS_DROPPED of multibody._status)."""
        return int(self.head[CF.FLAGS])

    def reset(self, warm_start=()):
        """Forget the contacts of the last step; the solver's warm start
        becomes ``warm_start`` (from :meth:`warm_start`; default: none)."""
        self.head[CF.N] = 0
        self.head[CF.N_PREV] = 0
        if len(warm_start):
            keys, impulses = warm_start
            n = min(len(keys), int(self.head[CF.CAP]))
            self.arrays["prev_key"][:n] = keys[:n]
            self.arrays["prev_impulse"][:3 * n] = impulses[:3 * n]
            self.head[CF.N_PREV] = n

    def warm_start(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, impulses) of the last step's contacts: the next step's warm
        start (copies; the impulses as world vectors, N·s, three per contact)."""
        n = int(self.head[CF.N_PREV])
        return self.arrays["prev_key"][:n].copy(), self.arrays["prev_impulse"][:3 * n].copy()

    def last_step(self) -> dict[str, Any]:
        """The contacts of the last step as arrays (copies) over its n
        contacts: ``geom`` (n, 2) and ``body`` (n, 2) indices, ``position``
        (n, 3), ``frame`` (n, 3, 3), ``distance`` (n,), ``impulse`` (n, 3)
        and ``force`` (n, 3), as :class:`Contact` describes them."""
        a, g, n = self.arrays, self.geometry, self.count
        pairs = g.pairs[a["cpair"][:n]]
        frame = a["frame"][:n].copy()
        lam = a["impulse"][:3 * n].reshape(n, 3).copy()
        return dict(geom=pairs, body=g.body[pairs], position=a["pos"][:n].copy(), frame=frame,
                    distance=a["dist"][:n].copy(), impulse=lam,
                    force=np.einsum("cij,ci->cj", frame, lam) / a["scalars"][CF.DT])  # Fᵀλ/h per contact

    def contacts(self) -> list[Contact]:
        """The contacts of the last step: a list of :class:`Contact`."""
        s, names = self.last_step(), [g.name for g in self.geometry.geometries]
        return [Contact(names[s["geom"][c, 0]], names[s["geom"][c, 1]], int(s["body"][c, 0]), int(s["body"][c, 1]),
                        s["position"][c], s["frame"][c], float(s["distance"][c]), s["impulse"][c], s["force"][c])
                for c in range(len(s["distance"]))]

    def detect(self, q: ArrayLike) -> int:
        """Detect the contacts at configuration ``q`` (the narrow phase of
        the step, without solving anything); they replace the last step's
        in :meth:`contacts` (with zero impulses). Returns their number.
        :class:`~multibody.errors.InputError` if the narrow phase fails on a
        pair (named)."""
        poses = np.ascontiguousarray(forward_kinematics(self.model, q), dtype=np.float64)
        self.head[CF.N] = 0
        if self.head[CF.NPAIR] == 0:  # nothing can collide (and no detection was compiled)
            return 0
        if CF.JIT:
            entry = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)(
                int(self.head[CF.DETECT]))
            n = entry(self.handle, poses.ctypes.data, poses.shape[0])
        else:
            n = CF.find_contacts(self.view(), poses)
        if n < 0:
            a, b = self.failed_pair()
            raise InputError(f"the narrow phase failed on the geometry pair ({a}, {b})")
        self.arrays["impulse"][:3 * n] = 0.0
        return int(n)

    def compliant_rows(self):
        """The last step's problem's rows before Drumwright's law is applied
        (compliant tables; the reference mode ``formulation="paper"``):
        ``(W, b, kind, phi, stiffness, damping, mu)`` with W = J X Jᵀ (all
        blocks), b = J v_f, per row its
        kind ("normal"/"tangent" for contacts, "unilateral" for limits, whose
        two placeholder rows get K = B = 0), φ (the normal rows' distance,
        the limits' φ), K (Hertz: the secant E*√(r·depth)), B (0 across a
        gap) and μ — the laws of :func:`~._contact.contact_problem`."""
        if self.compliance is None:
            raise InputError("compliant_rows() is for a table with compliant contact (contact_solver='drumwright')")
        a, head = self.arrays, self.head
        n, nl = int(head[CF.N]), int(head[CF.N_LIM])
        slots, m = n + nl, 3 * (n + nl)
        J, Y = a["J"][:m], a["Y"][:m]
        W = J @ Y.T
        b = J @ a["vf"]
        kind = np.array(["normal", "tangent", "tangent"] * n + ["unilateral"] * (3 * nl))
        phi, K, B, mu = np.zeros(m), np.zeros(m), np.zeros(m), np.zeros(m)
        for c in range(slots):
            r = 3 * c
            i = int(a["cpair"][c])
            if i >= 0:
                d = a["dist"][c] - a["margin"][i]
                k, damping, bt, radius = a["compliance"][i]
                if radius > 0:  # at the depth now; across a gap rigid
                    k = k * np.sqrt(radius * max(-d, 0.0)) if d <= 0 else np.inf
                phi[r], K[r], B[r] = d, k, (damping if d <= 0 else 0.0)
                if bt > 0:
                    B[r + 1] = B[r + 2] = bt
                    mu[r] = a["pair_mu"][c]
            else:
                phi[r] = a["dist"][c]
                K[r] = a["scalars"][CF.LIMIT_STIFFNESS]
                B[r] = a["scalars"][CF.LIMIT_DAMPING] if phi[r] <= 0 else 0.0
        return W, b, kind, phi, K, B, mu

    def hold_loops(self, constraints, q, cfm=0.0):
        """Make the next contact stage hold the loop constraints
        ``constraints`` (a :class:`~multibody.constraints.loops.Constraints`,
        or None: no loops) at the configuration q where it starts: with G
        their rows at q and X the stage's inverse mass matrix (M(q) plus the
        table's dampers), ``T = X Gᵀ (G X Gᵀ + cfm·I)⁻¹ G`` takes out of the
        impulses' effect X Jᵀ what the loops' impulses answer with
        (:func:`~._contact.project_out_loops`: the mixed LCP of ArtiSynth
        §0.7 with the loops eliminated by their Schur complement). Hard
        loops (``cfm = 0``): ⁺ with redundant rows dropped, and G v is
        held; soft ones (``cfm > 0``, the regularization of
        :meth:`~multibody.formulations.ReducedSystem.loop_regularization`):
        the contacts and the compliant loops are one problem, whose loop
        part the integrator's velocity step has already solved for the free
        velocity. Not for the Newton solver, which works on the primal
        problem: its hard loops are restored by the projection after the
        step."""
        if constraints is None or not len(constraints) or self.solver == "newton":
            self.head[CF.LOOPS] = 0
            return
        from ..dynamics import crba
        G = constraints.evaluate(q)[1]
        P = np.linalg.solve(crba(self.model, q) + np.diag(self.arrays["damping"]), G.T)
        if cfm > 0.0:
            S = np.linalg.solve(G @ P + cfm * np.eye(len(G)), G)
        else:
            S = np.linalg.pinv(G @ P, rcond=1e-10, hermitian=True) @ G
        self.arrays["loop_T"][...] = P @ S
        self.head[CF.LOOPS] = 1

    def failed_pair(self) -> tuple[str, str]:
        """The names of the geometries of the pair the narrow phase failed on."""
        a, b = self.geometry.pairs[self.head[CF.FAILED_PAIR]]
        return self.geometry.geometries[a].name, self.geometry.geometries[b].name
