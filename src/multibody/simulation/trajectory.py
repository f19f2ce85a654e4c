"""A recorded simulation: times, states, applied forces and energies."""
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError


@dataclass
class Trajectory:
    """Samples of a rollout: ``t`` (N,), ``q`` (N, nq), ``v`` (N, nv), ``tau``
    (N, nv) applied joint forces, ``kinetic`` and ``potential`` energy (N,)
    (J; potential of gravity plus conservative force elements), and
    ``meta`` (model name, integrator, dt)."""
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    tau: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    meta: dict = field(default_factory=dict)

    @property
    def energy(self):
        """Total mechanical energy ``kinetic + potential`` (J)."""
        return self.kinetic + self.potential

    def save(self, path):
        """Write the trajectory to a ``.npz`` file."""
        np.savez(path, t=self.t, q=self.q, v=self.v, tau=self.tau, kinetic=self.kinetic, potential=self.potential,
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
        return cls(z["t"], z["q"], z["v"], z["tau"], z["kinetic"], z["potential"], meta)
