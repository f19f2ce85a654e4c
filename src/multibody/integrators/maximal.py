"""Stepping a model in maximal coordinates while the simulator keeps joint
coordinates: the simulator's ``formulation="maximal"``.

The state that evolves is the maximal one — every body's pose and body
twist (:class:`~multibody.formulations.MaximalSystem`, Sueda §1.6–1.12) —
advanced by Sueda's velocity-level step with post-stabilization
(``semi_implicit_euler``: :meth:`MaximalSystem.step`, the linearly implicit
Euler of §1.9 for the force elements) or by Munthe-Kaas RK4 on SE(3) or
SO(3) × R³ (``rkmk4``: :meth:`RKMK.step_maximal`). The simulator's (q, v)
are read off it after every step (:meth:`MaximalSystem.coordinates`, on the
branch of the previous q) and it continues from the maximal state it kept,
unless something else changed (q, v) in between — the simulator's
position-limit or contact impulses, a projection, a reset — in which case
the maximal state is rebuilt from (q, v) (:meth:`MaximalSystem.state`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._typing import Array
from ..errors import InputError
from ..formulations.maximal import MaximalSystem
from ..formulations.maximal_forces import body_wrenches
from .base import Integrator
from .lie import RKMK

METHODS = ("semi_implicit_euler", "rkmk4")


class MaximalStepper(Integrator):
    """The simulator's step in maximal coordinates (module docstring).
    ``method``: "semi_implicit_euler" (Sueda's step; ``stabilization`` as
    :meth:`MaximalSystem.step`, with the velocities projected onto the rows
    after the post-stabilization, so the bodies' twists are always those
    of joint velocities and reading (q, v) off the bodies — or rebuilding
    the bodies from (q, v) after the simulator's projection — loses
    nothing) or "rkmk4" (``lie_group`` "se3" or "so3xr3"). The model's
    joint damping enters as joint forces ``−b v`` from the velocities at
    the start of the step (explicit)."""
    order = 1

    def __init__(self, method: str = "semi_implicit_euler", lie_group: str | Sequence[str] | None = None,
                 stabilization: str = "post") -> None:
        if method not in METHODS:
            raise InputError(f"the maximal formulation steps with {' or '.join(METHODS)}, not '{method}'")
        if lie_group is not None and method != "rkmk4":
            raise InputError(f"lie_group is an option of the rkmk4 integrator, not of '{method}'")
        self.method = method
        self.name = method
        self.stabilization = stabilization
        self.rkmk = RKMK(lie_group="se3" if lie_group is None else lie_group) if method == "rkmk4" else None
        self.order = 4 if self.rkmk is not None else 1
        self.maximal: Any = None  # the MaximalSystem that check builds
        self._kept: Any = None  # (q, v, C, V) after the last step

    def check(self, system: Any) -> None:
        """Build the maximal system of ``system``'s model (with its loop
        joints and connect/weld equalities as rows when ``system`` has
        constraints: the simulator gives only the model's own); refuse what
        it does not represent, naming it."""
        model = system.model
        loops = system.constraints is not None
        if loops and system.soft:
            raise InputError("the maximal formulation takes hard loop constraints only (compliance = 0)")
        self.maximal = MaximalSystem(model, gravity=system.gravity, loops=loops)
        if self.rkmk is not None and system.forces:
            raise InputError(f"the maximal formulation with rkmk4 takes no force elements (got "
                             f"{system.forces[0]!r}); use integrator='semi_implicit_euler'")
        if system.forces:  # refused by name now, not at the first step
            C, V = self.maximal.state(model.neutral(), np.zeros(model.nv))
            body_wrenches(self.maximal, system.forces, C, V, jacobians=False)
        self._kept = None

    def internal_state(self) -> tuple:
        """The maximal state kept after the last step, ``(q, v, C, V)``
        (copies), or ``()``."""
        return () if self._kept is None else tuple(x.copy() for x in self._kept)

    def set_internal_state(self, state: tuple) -> None:
        self._kept = tuple(np.array(x, dtype=float) for x in state) if state else None

    def step(self, system: Any, t: float, q: Array, v: Array, tau: Array, dt: float) -> tuple[Array, Array]:
        ms = self.maximal
        kept = self._kept
        if kept is not None and np.array_equal(kept[0], q) and np.array_equal(kept[1], v):
            C, V = kept[2], kept[3]
        else:
            C, V = ms.state(q, v)
        if system._damped:
            tau = tau - system.damping * v
        # near=q: the joint forces act through the coordinates the simulator holds (a pose of an
        # exponential or Euler joint has several)
        if self.rkmk is not None:
            C1, V1 = self.rkmk.step_maximal(ms, C, V, tau, dt, near=q)
        else:
            C1, V1 = ms.step(C, V, tau, dt, forces=system.forces, stabilization=self.stabilization, t=t, near=q,
                             project_velocities=True)
        q1, v1 = ms.coordinates(C1, V1, near=q)
        self._kept = (q1.copy(), v1.copy(), C1, V1)
        return q1, v1
