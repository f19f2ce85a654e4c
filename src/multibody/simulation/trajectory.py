"""A recorded simulation: times, states, applied forces and energies."""
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError


@dataclass
class Trajectory:
    """Samples of a rollout: ``t`` (N,), ``q`` (N, nq), ``v`` (N, nv), ``tau``
    (N, nv) joint forces applied during the step that ended at each sample
    (after effort clamping), ``kinetic`` and ``potential`` energy (N,) (J;
    potential of gravity plus conservative force elements), ``meta`` (model
    name, integrator, dt), ``effort_clamped`` / ``velocity_clamped``
    (N, nv) booleans: which coordinates the simulator clamped in that step,
    ``power`` (N, P): the power (W) of each source named in
    ``power_labels`` (applied τ, each force element, joint damping), and
    ``constraint_residual`` (N,): the largest constraint violation (max |φ|
    of loop joints and couplings, and the largest position-limit violation;
    m, rad or, for angle rows, a cosine)."""
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    tau: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    meta: dict = field(default_factory=dict)
    effort_clamped: np.ndarray = None
    velocity_clamped: np.ndarray = None
    power: np.ndarray = None
    power_labels: tuple = ()
    constraint_residual: np.ndarray = None

    def __post_init__(self):
        N, nv = len(self.t), self.v.shape[1]
        if self.effort_clamped is None:
            self.effort_clamped = np.zeros((N, nv), bool)
        if self.velocity_clamped is None:
            self.velocity_clamped = np.zeros((N, nv), bool)
        if self.power is None:
            self.power = np.zeros((N, len(self.power_labels)))
        if self.constraint_residual is None:
            self.constraint_residual = np.zeros(N)

    @property
    def energy(self):
        """Total mechanical energy ``kinetic + potential`` (J)."""
        return self.kinetic + self.potential

    def save(self, path):
        """Write the trajectory to a ``.npz`` file."""
        np.savez(path, t=self.t, q=self.q, v=self.v, tau=self.tau, kinetic=self.kinetic, potential=self.potential,
                 effort_clamped=self.effort_clamped, velocity_clamped=self.velocity_clamped, power=self.power,
                 power_labels=np.array(self.power_labels, dtype=str), constraint_residual=self.constraint_residual,
                 meta_keys=np.array(list(self.meta.keys()), dtype=str),
                 meta_values=np.array([str(x) for x in self.meta.values()], dtype=str))

    @classmethod
    def load(cls, path):
        """Read a trajectory written by :meth:`save`."""
        try:
            z = np.load(path)
        except (OSError, ValueError) as e:
            raise InputError(f"cannot read trajectory file '{path}': {e}") from None
        meta = dict(zip(z["meta_keys"].tolist(), z["meta_values"].tolist()))
        return cls(z["t"], z["q"], z["v"], z["tau"], z["kinetic"], z["potential"], meta, z["effort_clamped"],
                   z["velocity_clamped"], z["power"], tuple(z["power_labels"].tolist()), z["constraint_residual"])
