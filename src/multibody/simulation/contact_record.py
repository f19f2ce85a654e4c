"""The contacts of a rollout, sample by sample (``Simulator.rollout(...,
contacts=True)``; docs/contact.md, "Contacts in trajectories")."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..constraints.contact import Contact

if TYPE_CHECKING:
    from ..constraints.contact import ContactTable


@dataclass
class ContactRecord:
    """The contacts of the step that ended at each sample of a trajectory
    (row 0, the initial state: none), padded to the contact table's
    capacity ``cap``:

    * ``count`` (N,) the number of contacts; entries past it are zero (−1
      for indices);
    * ``geom`` (N, cap, 2) the two geometries (indices into
      ``geometries``, their names), ``body`` (N, cap, 2) their bodies;
    * ``position`` (N, cap, 3) midway between the surfaces, ``frame`` (N,
      cap, 3, 3) rows (normal from geometry 1 to 2, t1, t2), ``distance``
      (N, cap) (m, < 0: penetration), all at the configuration where the
      step started;
    * ``impulse`` (N, cap, 3) (N·s, contact frame, on geometry 2) and
      ``force`` (N, cap, 3) the mean force over the step (N, world, on
      geometry 2; geometry 1 feels the opposite).

    :meth:`at` gives sample k as the :class:`~multibody.constraints.contact.Contact`
    list of ``Simulator.contact.contacts()``."""
    geometries: tuple
    count: np.ndarray
    geom: np.ndarray
    body: np.ndarray
    position: np.ndarray
    frame: np.ndarray
    distance: np.ndarray
    impulse: np.ndarray
    force: np.ndarray

    @classmethod
    def empty(cls, rows: int, table: ContactTable | None) -> ContactRecord:
        """A record of ``rows`` samples for the contact table ``table``
        (:class:`~multibody.constraints.contact.ContactTable`, or None: a
        simulator without contact, whose samples have none)."""
        cap = 0 if table is None else table.capacity
        names = () if table is None else tuple(g.name for g in table.geometry.geometries)
        return cls(names, np.zeros(rows, np.int64), np.full((rows, cap, 2), -1, np.int64),
                   np.full((rows, cap, 2), -1, np.int64), np.zeros((rows, cap, 3)), np.zeros((rows, cap, 3, 3)),
                   np.zeros((rows, cap)), np.zeros((rows, cap, 3)), np.zeros((rows, cap, 3)))

    def capture(self, row: int, table: ContactTable) -> None:
        """Copy the contacts of ``table``'s last step into sample ``row``."""
        last = table.last_step()
        n = len(last["distance"])
        self.count[row] = n
        for name, value in last.items():
            getattr(self, name)[row, :n] = value

    def at(self, k: int) -> list[Contact]:
        """The contacts of sample k as a list of :class:`~multibody.constraints.contact.Contact`."""
        return [Contact(self.geometries[self.geom[k, c, 0]], self.geometries[self.geom[k, c, 1]],
                        int(self.body[k, c, 0]), int(self.body[k, c, 1]), self.position[k, c].copy(),
                        self.frame[k, c].copy(), float(self.distance[k, c]), self.impulse[k, c].copy(),
                        self.force[k, c].copy()) for c in range(self.count[k])]
