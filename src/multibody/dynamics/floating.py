"""Floating-base dynamics (Featherstone §9.3–9.5) for a model whose joint 1
is a free joint between the world and the floating base (body 1), with
every other body descending from the base:

* :func:`floating_base_forward_dynamics` — the floating-base
  articulated-body algorithm (Table 9.4);
* :func:`floating_base_inverse_dynamics` — floating-base inverse dynamics
  IDfb (Table 9.6): from the joint accelerations, the base acceleration and
  the joint forces, the base being unactuated.

Conventions: the free joint's ``v[0:6] = [ω; v]`` is the base's spatial
velocity in base coordinates (DESIGN.md), which is Featherstone's choice
``S = 1₆`` in floating-base coordinates (§9.3); so the "base acceleration"
``a_0 = q̈[0:6] = [ω̇; v̇]`` (angular first, base frame, rad/s² and m/s²) is
the time derivative of ``v[0:6]``, with gravity included. Both algorithms
run in floating-base coordinates (see
:mod:`multibody.dynamics.floating_kernels`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError, ModelError, NonFiniteError, SimulationError
from ..model.joints import C_TYPE, FREE
from ..model.checks import as_float_array, finite_result
from . import floating_kernels as FK
from ._common import config, data_for, external_forces, singular_body, velocity
from .inverse import raise_state_status

from .._typing import Array, ArrayLike

if TYPE_CHECKING:
    from ..model.data import Data
    from ..model.model import Model

F64 = np.dtype(np.float64)


def check_floating(model, what):
    """Raise :class:`ModelError` unless joint 1 is a free joint from the world
    and every other body descends from body 1."""
    if model.nbodies < 2 or int(model.tree[1, C_TYPE]) != FREE:  # body 1's parent is the world
        first = model.joints[1] if model.nbodies > 1 else None
        desc = f"joint '{first.name}' is {first.type}" if first else "the model has no joint"
        raise ModelError(f"{what} needs a floating base: joint 1 must be a free joint from the world ({desc})")
    others = [i for i in range(2, model.nbodies) if model.parents[i] == 0]
    if others:
        raise ModelError(f"{what}: body '{model.body_names[others[0]]}' is attached to the world, not to the "
                         f"floating base '{model.body_names[1]}' (every body must descend from the base)")


def _vector(x, name, sizes, q):
    """``x`` as float64 of shape (n,) or (B, n) for n in ``sizes`` (matching q's batch), finite."""
    a = as_float_array(x, name)
    batch = q.shape[:-1]
    if not (a.ndim >= 1 and a.shape[-1] in sizes and a.shape[:-1] in ((), batch)):
        opts = " or ".join(f"({n},)" for n in sizes)
        if batch:
            opts += " or " + " or ".join(f"({batch[0]}, {n})" for n in sizes)
        raise InputError(f"{name} has shape {a.shape}, expected {opts}")
    if not np.isfinite(a).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise NonFiniteError(f"{name} has a non-finite entry at index {bad[0] if a.ndim == 1 else bad}")
    return np.ascontiguousarray(np.broadcast_to(a, batch + a.shape[-1:]))


def _base_and_joints(data, copy):
    """(base acceleration, joint forces) of an inverse dynamics in ``data``: views, or copies."""
    return (data.ddq[:6].copy(), data.tau[6:].copy()) if copy else (data.ddq[:6], data.tau[6:])


def _singular_composite():
    raise SimulationError("floating_base_inverse_dynamics: the composite inertia of the whole system "
                          "(I_0ᶜ, Eq. 9.24) is singular (a massless system?)")


def _raise(model, st, q, what, names):
    if st == FK.NOT_FLOATING:
        check_floating(model, what)
    if st < -FK.ARG:
        if what.endswith("inverse_dynamics"):
            _singular_composite()
        singular_body(model, -st - FK.ARG, what, q)
    raise_state_status(model, q, st, names)


def floating_base_forward_dynamics(model: Model, q: ArrayLike, v: ArrayLike, tau: ArrayLike,
                                   f_ext: ArrayLike | None = None, gravity: bool = True,
                                   data: Data | None = None) -> Array:
    """Forward dynamics of a free-floating system by the floating-base
    articulated-body algorithm (Featherstone §9.4, Table 9.4), O(n).

    ``tau``: the forces of the non-base joints, shape (nv−6,); or (nv,), in
    which case ``tau[0:6]`` is a wrench [n; f] applied to the base through
    its free joint (base frame; zero for a free-floating robot) and the call
    is equivalent to :func:`~multibody.dynamics.forward.aba`. ``f_ext``:
    (nbodies, 6) spatial forces [n; f] in each body frame about its origin
    (as in ``rnea``). Gravity: ``model.gravity`` unless ``gravity=False``;
    armature included.

    Returns ``q̈`` (nv): ``q̈[0:6]`` the base spatial acceleration
    ``[ω̇; v̇]`` in the base frame (gravity included) and ``q̈[6:]`` the joint
    accelerations. Equal to ``aba(q, v, [0₆; tau])`` to round-off (tested
    against Pinocchio's ABA on Talos and Solo12).

    Computed in floating-base coordinates (the base frame at this instant)
    with gravity added to the base acceleration at the end, as in Table 9.4,
    so the accuracy (round-off, ~1e-12 relative) does not depend on how far
    the robot is from the world origin. One state or a batch (leading axis).
    With ``data`` (one state, no ``f_ext``) the model and state are checked
    inside the kernel call and the result is the view ``data.ddq``
    (overwritten by the next call). Raises :class:`~multibody.errors.ModelError` if joint 1 is not a free
    joint from the world or a body does not descend from the base.

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).
    tau : array_like
        The non-base joint forces (nv−6,), or (nv,) with the base wrench first;
        a batch has a leading axis.
    f_ext : array_like, optional
        External spatial forces on the bodies, (nbodies, 6) (or a batch
        (B, nbodies, 6)), angular first (N·m; N), in body coordinates; row 0
        (the world) is ignored. Default: none.
    gravity : bool
        Default True: include the model's gravity.
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.

    Returns
    -------
    numpy.ndarray
        ``q̈``, (nv,) or (B, nv); ``data.ddq`` with ``data``.

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    ModelError
        If joint 1 is not a free joint from the world or a body does not
        descend from the base.
    """
    plain = data is None
    data = data_for(model, data)  # checks the model and the thread
    if f_ext is None:
        try:
            fast = (q.shape == model.q_shape and v.shape == model.v_shape and tau.ndim == 1  # type: ignore[union-attr]
                    and tau.shape[0] in (model.nv - 6, model.nv) and q.dtype == F64 and v.dtype == F64  # type: ignore[union-attr]
                    and tau.dtype == F64)  # type: ignore[union-attr]
        except AttributeError:
            fast = False
        if fast:  # model and state validated inside the kernel call
            st = FK.fb_aba_checked(model._tree, q, v, tau, bool(gravity), data.poses, data.jac, data.spatial,
                                   data.inertia6, data.U, data.Dinv, data.dofs)
            if st:
                _raise(model, st, q, "floating_base_forward_dynamics", ("q", "v", "tau"))
            return finite_result("floating_base_forward_dynamics", data.ddq.copy() if plain else data.ddq)
    check_floating(model, "floating_base_forward_dynamics")
    q = config(model, q)
    v = velocity(model, v, q)
    tau = _vector(tau, "tau", (model.nv - 6, model.nv), q)
    fe = external_forces(model, f_ext, q.shape[0] if q.ndim == 2 else None)
    if q.ndim == 2:
        B = q.shape[0]
        out = np.empty((B, model.nv))
        status = np.zeros(B, dtype=np.int64)
        fb = np.zeros((B, model.nbodies, 6)) if fe is None else np.ascontiguousarray(
            np.broadcast_to(fe, (B, model.nbodies, 6)))
        FK.fb_aba_batch(model._tree, q, v, tau, bool(gravity), fb, fe is not None, out, status)
        if status.any():
            k = int(np.argmax(status != 0))
            singular_body(model, int(status[k]), "floating_base_forward_dynamics", q[k])
        return finite_result("floating_base_forward_dynamics", out)
    if fe is not None:
        data.f[:] = fe
    b = FK.fb_aba_kernel(model._tree, q, v, tau, bool(gravity), fe is not None, data.poses, data.jac,
                         data.spatial, data.inertia6, data.U, data.Dinv, data.dofs)
    if b:
        singular_body(model, b, "floating_base_forward_dynamics", q)
    return finite_result("floating_base_forward_dynamics", data.ddq.copy() if plain else data.ddq)


def floating_base_inverse_dynamics(model: Model, q: ArrayLike, v: ArrayLike, qdd_joints: ArrayLike,
                                   f_ext: ArrayLike | None = None, gravity: bool = True,
                                   data: Data | None = None) -> tuple[Array, Array]:
    """Floating-base inverse dynamics IDfb (Featherstone §9.5, Eqs.
    9.18–9.25, Table 9.6), O(n): given the accelerations of the non-base
    joints, find the base acceleration and the joint forces, with no force
    on the (unactuated) base.

    ``qdd_joints``: (nv−6,) accelerations of the joints after the free
    joint (model v order). ``f_ext``: (nbodies, 6) spatial forces [n; f] in
    each body frame about its origin (as in ``rnea``). Gravity:
    ``model.gravity`` unless ``gravity=False``; armature included.

    Returns ``(a_base, tau_joints)``: ``a_base`` (6,) the base spatial
    acceleration ``[ω̇; v̇]`` in the base frame (gravity included, the
    free joint's q̈), and ``tau_joints`` (nv−6,) the joint forces (N·m / N).
    So ``aba(q, v, [0₆; tau_joints]) == [a_base; qdd_joints]`` and
    ``rnea(q, v, [a_base; qdd_joints])[:6] == 0``.

    Computed in floating-base coordinates with Table 9.6's gravity
    convention ``a_0ʳ = −a_g``: composite inertias ``I_iᶜ`` and bias forces
    ``p_iᶜ``, ``a_0 = −(I_0ᶜ)⁻¹ p_0ᶜ``, ``τ_i = S_iᵀ(I_iᶜ a_0 + p_iᶜ)``.
    Accuracy: round-off (~1e-12 relative). One state or a batch (leading
    axis; then shapes (B, 6) and (B, nv−6)). With ``data`` (one state) the
    results are views into ``data.ddq`` and ``data.tau`` (overwritten by the
    next call). Raises
    :class:`~multibody.errors.ModelError` if joint 1 is not a free joint
    from the world or a body does not descend from the base.

    Parameters
    ----------
    model : Model
        The model.
    q : array_like
        Configuration, (nq,), or a batch (B, nq).
    v : array_like
        Generalized velocity, (nv,) (free joints: angular then linear, body
        frame), or a batch (B, nv).
    qdd_joints : array_like
        Accelerations of the joints after the free joint, (nv−6,) or
        (B, nv−6).
    f_ext : array_like, optional
        External spatial forces on the bodies, (nbodies, 6) (or a batch
        (B, nbodies, 6)), angular first (N·m; N), in body coordinates; row 0
        (the world) is ignored. Default: none.
    gravity : bool
        Default True: include the model's gravity.
    data : Data, optional
        A workspace made for ``model`` (single state only); default: the calling
        thread's cached workspace.

    Returns
    -------
    a_base : numpy.ndarray
        The base spatial acceleration [ω̇; v̇] (rad/s²; m/s²) in the base
        frame, (6,) or (B, 6).
    tau_joints : numpy.ndarray
        The joint forces (N·m, N), (nv−6,) or (B, nv−6).

    Raises
    ------
    InputError
        If an array has the wrong shape or is not finite, or a name is not the
        model's.
    ModelError
        If joint 1 is not a free joint from the world or a body does not
        descend from the base.
    """
    plain = data is None
    data = data_for(model, data)  # checks the model and the thread
    if f_ext is None:
        try:
            fast = (q.shape == model.q_shape and v.shape == model.v_shape and qdd_joints.shape == (model.nv - 6,)  # type: ignore[union-attr]
                    and q.dtype == F64 and v.dtype == F64 and qdd_joints.dtype == F64)  # type: ignore[union-attr]
        except AttributeError:
            fast = False
        if fast:  # model and state validated inside the kernel call
            st = FK.fb_id_checked(model._tree, q, v, qdd_joints, bool(gravity), data.poses, data.jac,
                                  data.spatial, data.inertia6, data.Dinv, data.dofs)
            if st:
                _raise(model, st, q, "floating_base_inverse_dynamics", ("q", "v", "qdd_joints"))
            return finite_result("floating_base_inverse_dynamics", *_base_and_joints(data, plain))
    check_floating(model, "floating_base_inverse_dynamics")
    q = config(model, q)
    v = velocity(model, v, q)
    qdd = _vector(qdd_joints, "qdd_joints", (model.nv - 6,), q)
    fe = external_forces(model, f_ext, q.shape[0] if q.ndim == 2 else None)
    if q.ndim == 2:
        B = q.shape[0]
        qdd_out = np.empty((B, model.nv))
        tau_out = np.empty((B, model.nv))
        status = np.zeros(B, dtype=np.int64)
        fb = np.zeros((B, model.nbodies, 6)) if fe is None else np.ascontiguousarray(
            np.broadcast_to(fe, (B, model.nbodies, 6)))
        FK.fb_id_batch(model._tree, q, v, qdd, bool(gravity), fb, fe is not None, qdd_out, tau_out, status)
        if status.any():
            _singular_composite()
        return finite_result("floating_base_inverse_dynamics", np.ascontiguousarray(qdd_out[:, :6]),
                             np.ascontiguousarray(tau_out[:, 6:]))
    if fe is not None:
        data.f[:] = fe
    if FK.fb_id_kernel(model._tree, q, v, qdd, bool(gravity), fe is not None, data.poses, data.jac,
                       data.spatial, data.inertia6, data.Dinv, data.dofs):
        _singular_composite()
    return finite_result("floating_base_inverse_dynamics", *_base_and_joints(data, plain))
