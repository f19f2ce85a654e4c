"""Derivatives of one simulation step, ``∂(q⁺, v⁺)/∂(q, v, τ)`` — the
transition Jacobians of MuJoCo's ``mjd_transitionFD`` and of Drake's
discrete-system linearization, but exact: the chain rule through the
integrator's own step, with the analytic dynamics derivatives
(:func:`~multibody.dynamics.aba_derivatives`,
:func:`~multibody.dynamics.rnea_derivatives`; Carpentier & Mansard, RSS
2018) and the force elements' exact Jacobians K = ∂f/∂q, D = ∂f/∂v.

Tangent-space convention (docs/derivatives.md, Pinocchio's): a
perturbation of q is ``q ⊕ δq`` (:meth:`Model.integrate`), and the rows
of q⁺ are the tangent vector at q⁺, ``δq⁺ = model.difference(q⁺, q⁺')``
to first order. So ``A`` is 2nv x 2nv and ``B`` 2nv x nv, rows and columns
ordered ``(δq, δv)`` as MuJoCo's ``A``.

Semi-implicit and explicit Euler and RK4 are differentiated exactly (to
round-off). The library's implicit Euler is the linearized one,
``(M − hD − h²K) v⁺ = (M − hD) v + h f``; its derivative needs
``∂(M w)/∂q`` (exact, RNEA derivatives at v = 0) and the second
derivatives of the force elements: zero for the linear joint elements
(joint damping, :class:`~multibody.forces.JointDamper`,
:class:`~multibody.forces.JointSpring` on vector joints), and for every
other element (gravity included) central differences of its Jacobians
along each coordinate with one Richardson extrapolation (truncation
O(ε⁴), ε = 1e-3; the derivatives that use it agree with differences of
the step to ~2e-10 relative, docs/derivatives.md). With contacts in the
step the derivative is central differences of the simulator's own step
(:mod:`multibody.simulation.step_derivatives`).
"""
from __future__ import annotations

import numpy as np

from ..dynamics import aba
from ..dynamics.derivatives import aba_derivatives, rnea_derivatives
from ..errors import InputError
from ..forces import Gravity, generalized_forces
from ..forces.joint import JointDamper, JointSpring

#: the integrators whose step is differentiated analytically
ANALYTIC = ("semi_implicit_euler", "explicit_euler", "rk4", "implicit_euler")
_VECTOR = ("revolute", "prismatic", "helical", "cylindrical", "translational")
# Richardson-extrapolated central differences of the force elements' Jacobians (implicit Euler)
HESSIAN_STEP = 1e-3


# ---------------------------------------------------------------- configuration maps
def _hat(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _ad(jtype, d):
    """The adjoint ``ad_d`` of the joint's Lie algebra in its velocity
    coordinates: so(3) for spherical, se(3) ``[ω; v]`` angular first for
    free, se(2) ``(ω, vx, vy)`` for planar."""
    if jtype == "spherical":
        return _hat(d)
    if jtype == "free":
        a = np.zeros((6, 6))
        a[:3, :3] = a[3:, 3:] = _hat(d[:3])
        a[3:, :3] = _hat(d[3:])
        return a
    w, vx, vy = d
    return np.array([[0.0, 0.0, 0.0], [vy, 0.0, -w], [-vx, w, 0.0]])


def integrate_jacobians(model, q: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(J_q, J_d)``, the derivatives of ``q' = q ⊕ d``
    (:meth:`Model.integrate` with dt = 1) with respect to q and to d, both
    on the tangent space (nv x nv, block diagonal): Pinocchio's
    ``dIntegrate``. For the Lie-group joints (free: SE(3) body twist,
    spherical: SO(3), planar: SE(2); right perturbations)
    ``q ⊕ d = X exp(d)`` gives ``J_q = Ad(exp(−d)) = exp(−ad_d)`` and
    ``J_d = J_r(d) = Σ (−ad_d)ᵏ/(k+1)!``, both read off one matrix
    exponential ``exp([[−ad_d, I], [0, 0]])`` (Van Loan's block form, by
    :func:`_expm`, exact to round-off); identity for the other joints
    (vector addition).

    Parameters
    ----------
    model : Model
    q : ndarray
        (nq,) configuration with unit quaternions.
    d : ndarray
        (nv,) tangent increment (``v·dt``; rad, m).

    Returns
    -------
    J_q, J_d : ndarray
        (nv, nv) each: ``δ(q ⊕ d) = J_q δq + J_d δd``, the result's tangent
        space at ``q ⊕ d``.
    """
    nv = model.nv
    Jq, Jd = np.eye(nv), np.eye(nv)
    for j in model.joints:
        if j.type in ("free", "spherical", "planar"):
            s = j.v_slice
            n = j.nv
            E = np.zeros((2 * n, 2 * n))
            E[:n, :n] = -_ad(j.type, d[s])
            E[:n, n:] = np.eye(n)
            X = _expm(E)
            Jq[s, s], Jd[s, s] = X[:n, :n], X[:n, n:]
    return Jq, Jd


def _expm(E):
    """``exp(E)`` of a small matrix by scaling and squaring its Taylor
    series (norm ≤ ½ after scaling, 20 terms: truncation below 1e-25).
    scipy's expm took ~9 ms per 12 x 12 call on the shared benchmark
    machine (its Padé kernel), this ~30 µs."""
    s = max(0, int(np.ceil(np.log2(max(np.abs(E).sum(axis=1).max(), 1e-300)))) + 1)
    X = E / 2.0 ** s
    out, term = np.eye(len(E)), np.eye(len(E))
    for k in range(1, 21):
        term = term @ X / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


def _quat_left(p):
    w, x, y, z = p
    return np.array([[w, -x, -y, -z], [x, w, -z, y], [y, z, w, -x], [z, -y, x, w]])


def _quat_right(r):
    w, x, y, z = r
    return np.array([[w, -x, -y, -z], [x, w, z, -y], [y, -z, w, x], [z, y, -x, w]])


def _rotation(p):
    w, x, y, z = p
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


_E = np.vstack((np.zeros(3), np.eye(3)))  # (4, 3): a rotation vector as a pure quaternion


def _chart_template(model):
    """``(T, P, joints)``: :func:`_chart`'s matrices with the identity blocks
    of the vector joints (the same at every q) and zeros elsewhere, and the
    (type, iq, iv) of the joints whose blocks depend on q. Kept on the model
    (``_chart_template``; :meth:`Model.with_params` drops it): the loop over
    the joints cost most of an RK4 step derivative (UR5: 12 calls per step)."""
    try:
        return model._chart_template
    except AttributeError:
        pass
    T, P = np.zeros((model.nq, model.nv)), np.zeros((model.nv, model.nq))
    joints = []
    for j in model.joints:
        if j.nv == 0:
            continue
        iq, iv = j.q_slice.start, j.v_slice.start
        if j.type in ("free", "spherical", "planar"):
            joints.append((j.type, iq, iv))
        else:
            T[iq:iq + j.nq, iv:iv + j.nv] = np.eye(j.nv)
            P[iv:iv + j.nv, iq:iq + j.nq] = np.eye(j.nv)
    model._chart_template = (T, P, tuple(joints))
    return model._chart_template


def _chart(model, q, v=None):
    """``(T, P, Tq)`` at a configuration q with unit quaternions, for steps
    in the raw coordinates (RK4): ``T = ∂(q ⊕ δ)/∂δ`` at δ = 0 (nq x nv;
    also ``∂q̇/∂v``, Featherstone's Q(q)), ``P`` (nv x nq) its left inverse
    on the tangent vectors (``P T = I``; ``δ = P dq`` for a dq tangent to
    the unit quaternions), and with ``v``, ``Tq = ∂q̇(q ⊕ δ, v)/∂δ``
    (nq x nv) of :meth:`Model.qdot`."""
    T0, P0, joints = _chart_template(model)
    T, P = T0.copy(), P0.copy()
    Tq = None if v is None else np.zeros_like(T0)
    for jtype, iq, iv in joints:
        if jtype in ("free", "spherical"):
            k = iq + (3 if jtype == "free" else 0)
            quat = q[k:k + 4]
            L = _quat_left(quat)
            T[k:k + 4, iv:iv + 3] = 0.5 * L @ _E
            P[iv:iv + 3, k:k + 4] = 2.0 * _E.T @ L.T
            if v is not None:  # ½ (q ⊗ exp δ) ⊗ (0, ω) along δ
                Tq[k:k + 4, iv:iv + 3] = 0.25 * _quat_right(_E @ v[iv:iv + 3]) @ L @ _E
            if jtype == "free":
                R = _rotation(quat)
                T[iq:iq + 3, iv + 3:iv + 6] = R
                P[iv + 3:iv + 6, iq:iq + 3] = R.T
                if v is not None:  # R exp(δ) v_lin along δ
                    Tq[iq:iq + 3, iv:iv + 3] = -R @ _hat(v[iv + 3:iv + 6])
        else:  # planar
            c, s = np.cos(q[iq + 2]), np.sin(q[iq + 2])
            T[iq:iq + 3, iv:iv + 3] = [[0.0, c, -s], [0.0, s, c], [1.0, 0.0, 0.0]]
            P[iv:iv + 3, iq:iq + 3] = [[0.0, 0.0, 1.0], [c, s, 0.0], [-s, c, 0.0]]
            if v is not None:
                vx, vy = v[iv + 1], v[iv + 2]
                Tq[iq:iq + 2, iv] = -s * vx - c * vy, c * vx - s * vy
    return T, P, Tq


def _normalize_jacobian(model, y):
    """``∂ normalize(y)/∂y`` (nq x nq): ``(I − n nᵀ)/|y|`` on each quaternion."""
    N = np.eye(model.nq)
    for j in model.joints:
        if j.type in ("free", "spherical"):
            k = j.q_slice.start + (3 if j.type == "free" else 0)
            r = np.linalg.norm(y[k:k + 4])
            n = y[k:k + 4] / r
            N[k:k + 4, k:k + 4] = (np.eye(4) - np.outer(n, n)) / r
    return N


# ---------------------------------------------------------------- dynamics
def _acceleration_derivatives(system, t, q, v, tau):
    """``(v̇, ∂v̇/∂q, ∂v̇/∂v, M⁻¹)`` of the system's forward dynamics with
    its force elements and joint damping: ABA's derivatives at the total
    joint force ``τ + f_e`` plus ``M⁻¹K``, ``M⁻¹D`` of the elements."""
    model = system.model
    fe, K, D = system.element_forces(t, q, v, jacobians=True)
    total = tau + fe
    dq, dv, Minv = aba_derivatives(model, q, v, total, gravity=system.gravity)
    a = aba(model, q, v, total, gravity=system.gravity)
    return np.array(a), dq + Minv @ K, dv + Minv @ D, Minv


def _position_rows(model, q, v1, h, dv1):
    """Rows of ``q⁺ = q ⊕ h v⁺``: ``J_q [I 0 0] + h J_d ∂v⁺``."""
    nv = model.nv
    Jq, Jd = integrate_jacobians(model, q, h * v1)
    rows = h * Jd @ dv1
    rows[:, :nv] += Jq
    return rows


def _euler(system, t, q, v, tau, h, semi_implicit):
    model, nv = system.model, system.model.nv
    a, aq, av, Minv = _acceleration_derivatives(system, t, q, v, tau)
    v1 = v + h * a
    dv1 = np.hstack((h * aq, np.eye(nv) + h * av, h * Minv))
    if semi_implicit:
        return model._integrate(q, v1, h), v1, np.vstack((_position_rows(model, q, v1, h, dv1), dv1))
    dv0 = np.hstack((np.zeros((nv, nv)), np.eye(nv), np.zeros((nv, nv))))
    return model._integrate(q, v, h), v1, np.vstack((_position_rows(model, q, v, h, dv0), dv1))


def _rk4(system, t, q, v, tau, h):
    """RK4 as :class:`~multibody.integrators.RK4` steps it (raw coordinates,
    stage quaternions renormalized), differentiated stage by stage: raw
    configuration derivatives ``dq`` (nq x 3nv), velocity ones ``dv``."""
    model, nq, nv = system.model, system.model.nq, system.model.nv
    T0 = _chart(model, q)[0]
    dq0 = np.zeros((nq, 3 * nv))
    dq0[:, :nv] = T0
    dv0 = np.zeros((nv, 3 * nv))
    dv0[:, nv:2 * nv] = np.eye(nv)
    sq, sv = np.zeros(nq), np.zeros(nv)              # Σ bᵢ kᵢ
    dsq, dsv = np.zeros((nq, 3 * nv)), np.zeros((nv, 3 * nv))
    qi, vi, dqi, dvi = q, v, dq0, dv0
    # (stage time offset, weight, coefficient of the next stage's configuration)
    for dt, w, c in ((0.0, 1.0, 0.5), (0.5, 2.0, 0.5), (0.5, 2.0, 1.0), (1.0, 1.0, None)):
        T, P, Tq = _chart(model, qi, vi)
        a, aq, av, Minv = _acceleration_derivatives(system, t + dt * h, qi, vi, tau)
        kq = model.qdot(qi, vi)
        dqt = P @ dqi                                  # the stage's configuration derivative, tangent
        dkq = Tq @ dqt + T @ dvi
        dkv = aq @ dqt + av @ dvi
        dkv[:, 2 * nv:] += Minv
        sq += w * kq
        sv += w * a
        dsq += w * dkq
        dsv += w * dkv
        if c is None:
            break
        y = q + c * h * kq
        qi = model.normalize(y)
        dqi = _normalize_jacobian(model, y) @ (dq0 + c * h * dkq)
        vi = v + c * h * a
        dvi = dv0 + c * h * dkv
    y = q + h / 6.0 * sq
    q1 = model.normalize(y)
    P1 = _chart(model, q1)[1]
    rows_q = P1 @ (_normalize_jacobian(model, y) @ (dq0 + h / 6.0 * dsq))
    return q1, v + h / 6.0 * sv, np.vstack((rows_q, dv0 + h / 6.0 * dsv))


def _constant_jacobians(element, model):
    """Whether an element's K and D do not depend on the state (their
    derivatives are then exactly zero)."""
    if isinstance(element, JointDamper):
        return True
    if isinstance(element, JointSpring):
        return element.bind(model)[0].type in _VECTOR
    return False


def _richardson(f, step):
    """``d/dε f(ε)`` at 0 by central differences at steps ``step`` and
    ``step/2``, Richardson-extrapolated (truncation O(ε⁴))."""
    est = [(f(e) - f(-e)) / (2.0 * e) for e in (step, 0.5 * step)]
    return (4.0 * est[1] - est[0]) / 3.0


def _gravity_directional(model, q, wk):
    """``∂(K wk)/∂q`` (nv x nv) of gravity, ``K = −∂g/∂q`` the RNEA
    derivative at v = a = 0. Its second derivative is symmetric up to the
    Lie bracket of the tangent coordinates, so one derivative along wk
    replaces nv along the axes: with ``q exp(εa) exp(sb) = q exp(sb)
    exp(εa) exp(εs[a, b])`` to second order, column j is
    ``d/ds K(q ⊕ s wk) e_j + K [e_j, wk]``, i.e. ``C − K ad(wk)`` with
    ``ad`` the block-diagonal adjoint of the free, spherical and planar
    joints (the others add vectors: no bracket)."""
    nv = model.nv
    zero = np.zeros(nv)

    def K(qq):
        return -rnea_derivatives(model, qq, zero, zero)[0]

    size = float(np.abs(wk).max())
    if size == 0.0:
        return np.zeros((nv, nv))
    u = wk / size  # the step along wk: HESSIAN_STEP in the largest coordinate
    C = _richardson(lambda e: K(model._integrate(q, e * u, 1.0)), HESSIAN_STEP) * size
    ad = np.zeros((nv, nv))
    for j in model.joints:
        if j.type in ("free", "spherical", "planar"):
            ad[j.v_slice, j.v_slice] = _ad(j.type, wk[j.v_slice])
    return C - K(q) @ ad


def _jacobian_directional(elements, model, t, q, v, wk, wd):
    """``∂(K wk + D wd)/∂(q, v)`` (nv x 2nv) of ``elements`` at fixed wk,
    wd: central differences along ``q ⊕ ε e_k`` and ``v + ε e_k``, one
    Richardson extrapolation (steps ε and ε/2, truncation O(ε⁴)). Gravity
    by :func:`_gravity_directional` (its K depends on q only: its v
    columns are exactly zero)."""
    nv = model.nv
    elements = list(elements)
    others = [e for e in elements if not isinstance(e, Gravity)]
    out = np.zeros((nv, 2 * nv))
    if len(others) < len(elements):
        out[:, :nv] = _gravity_directional(model, q, wk)
    if not others:
        return out

    def F(qq, vv):
        _, K, D = generalized_forces(others, model, qq, vv, t, jacobians=True)
        return K @ wk + D @ wd

    for k in range(2 * nv):
        e = np.zeros(nv)
        e[k % nv] = 1.0
        if k < nv:
            out[:, k] += _richardson(lambda x, e=e: F(model._integrate(q, x * e, 1.0), v), HESSIAN_STEP)
        else:
            out[:, k] += _richardson(lambda x, e=e: F(q, v + x * e), HESSIAN_STEP)
    return out


def _implicit_euler(system, t, q, v, tau, h):
    """The linearized implicit Euler of
    :class:`~multibody.integrators.ImplicitEuler` differentiated:
    ``Â δv⁺ = (M − hD) δv + h δf + δM w − h δD w + h² δK v⁺`` with
    ``Â = M − hD − h²K``, ``w = v − v⁺``, ``δf = (K − ∂c/∂q) δq +
    (D − ∂c/∂v) δv + δτ`` (c the Coriolis terms, RNEA derivatives at a = 0
    without gravity), ``δM w = ∂τ/∂q`` of the RNEA at (v = 0, a = w)."""
    model, nv = system.model, system.model.nv
    M, f, K, D = system.linearization(t, q, v, tau)
    Ahat = M - h * D - h * h * K
    v1 = np.linalg.solve(Ahat, (M - h * D) @ v + h * f)  # as ImplicitEuler.step (velocity_solve)
    w = v - v1
    cq, cv, _ = rnea_derivatives(model, q, v, np.zeros(nv), gravity=False)
    mq = rnea_derivatives(model, q, np.zeros(nv), w, gravity=False)[0]
    rhs = np.hstack((h * (K - cq) + mq, M - h * D + h * (D - cv), h * np.eye(nv)))
    varying = [e for e in system._implicit_forces if not _constant_jacobians(e, model)]
    if varying:
        rhs[:, :2 * nv] += _jacobian_directional(varying, model, t, q, v, h * h * v1, -h * w)
    dv1 = np.linalg.solve(Ahat, rhs)
    return model._integrate(q, v1, h), v1, np.vstack((_position_rows(model, q, v1, h, dv1), dv1))


# ---------------------------------------------------------------- entry point
def step_jacobian(system, integrator: str, t: float, q: np.ndarray, v: np.ndarray, tau: np.ndarray,
                  h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One step of ``integrator`` (a name of :data:`ANALYTIC`) on a
    :class:`~multibody.formulations.ReducedSystem` without constraints,
    and its derivative.

    Parameters
    ----------
    system : ReducedSystem
        The model, force elements, gravity and joint damping.
    integrator : str
        "semi_implicit_euler", "explicit_euler", "rk4" or "implicit_euler".
    t, q, v, tau, h
        Time (s), configuration (nq), velocity (nv), joint forces (nv) held
        over the step, and the step (s).

    Returns
    -------
    q1, v1 : ndarray
        The step: the integrator's Python step (the simulator's fused
        compiled step agrees to round-off).
    J : ndarray
        (2nv, 3nv): ``∂(q⁺, v⁺)/∂(q, v, τ)``, q on the tangent space at q
        (columns) and at q⁺ (rows).

    Raises
    ------
    InputError
        For an integrator not in :data:`ANALYTIC`.
    """
    if integrator == "rk4":
        return _rk4(system, t, q, v, tau, h)
    if integrator == "implicit_euler":
        return _implicit_euler(system, t, q, v, tau, h)
    if integrator in ("semi_implicit_euler", "explicit_euler"):
        return _euler(system, t, q, v, tau, h, integrator == "semi_implicit_euler")
    raise InputError(f"the step of the integrator '{integrator}' is not differentiated (supported: "
                     f"{', '.join(ANALYTIC)})")
