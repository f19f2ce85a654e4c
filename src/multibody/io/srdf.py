"""SRDF loader: ``load_srdf(model, path_or_string) -> Model``.

The Semantic Robot Description Format (MoveIt; Pinocchio's
``pinocchio.srdf``) accompanies a URDF. Two of its elements are read:

* ``<disable_collisions link1="A" link2="B" reason="..."/>``: no automatic
  contact between the geometries declared on links A and B. Recorded in
  ``model.excluded_link_pairs`` at the level of links, as Pinocchio's
  ``removeCollisionPairs`` does (it matches a geometry's parent frame, the
  link, not the merged body). A pair of links on one body (the same link,
  or links merged through fixed joints) is dropped: geometries of one body
  never collide; a
  link the model does not have is ignored and named in one
  :class:`~multibody.errors.ModelWarning` (Pinocchio skips it silently).
* ``<group_state name="N" group="G"><joint name="J" value="..."/></group_state>``:
  a named posture, ``model.reference_postures["N"]``, a full configuration
  (nq): the model's neutral configuration with the listed joints set, like
  Pinocchio's ``loadReferenceConfigurations``. Values are in Pinocchio's
  layout and converted: a free joint "x y z qx qy qz qw" becomes (x, y, z,
  qw, qx, qy, qz) (multibody: scalar first), a spherical joint "qx qy qz qw"
  becomes (qw, qx, qy, qz), a planar joint "x y cos sin" becomes (x, y,
  atan2(sin, cos)); a revolute, continuous or prismatic joint takes one value.
  Quaternions are normalized. A joint the model does not have is ignored,
  and a value of the wrong length leaves the joint at neutral, both named in
  a ModelWarning (Pinocchio prints them). If a name is defined twice, the
  first definition is kept (as Pinocchio's ``std::map::insert``), with a
  warning.

Other elements (groups, end effectors, virtual joints, passive joints) are
not read. Errors: :class:`~multibody.errors.ModelFileError` naming the file
for malformed XML or a ``<disable_collisions>`` / ``<group_state>`` without
its attributes.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .._typing import Source
from ..errors import InputError, ModelFileError, ModelWarning
from ..model.model import Model
from ._common import read_robot_xml


def load_srdf(model: Model, path_or_string: Source) -> Model:
    """A new :class:`~multibody.model.Model`: ``model`` with the SRDF's
    disabled collisions added to ``excluded_link_pairs`` and its group
    states added to ``reference_postures`` (see the module docstring).
    ``path_or_string``: an SRDF file name or its XML text. ``model`` is
    unchanged.

    Parameters
    ----------
    model : Model
        The model the SRDF describes.
    path_or_string : str or pathlib.Path
        An SRDF file name or its XML text.

    Returns
    -------
    Model
        The new model.

    Raises
    ------
    InputError
        If ``model`` is not a Model.
    ModelFileError
        If the file cannot be read or parsed, or an element lacks a required
        attribute (naming the file and the element).

    Warns
    -----
    ModelWarning
        Naming what is ignored: a link or joint the model lacks, a value of
        the wrong length, a name defined twice.
    """
    if not isinstance(model, Model):
        raise InputError(f"load_srdf: expected a multibody Model, got {type(model).__name__}")
    root, path, src = read_robot_xml(path_or_string, "SRDF")
    notes: list[str] = []
    pairs = _disabled_pairs(model, root, src, notes)
    postures = _group_states(model, root, src, notes)
    for msg in notes:
        warnings.warn(msg, ModelWarning, stacklevel=2)
    known = dict(model.reference_postures)
    for name, q in postures.items():
        known[name] = q  # the SRDF's postures replace the model's of the same name
    return model._evolve(excluded_link_pairs=pairs, reference_postures=_readonly_mapping(known))


def _readonly_mapping(d):
    from ..model.model import ReadOnlyMapping
    out = {}
    for k, v in d.items():
        a = np.array(v, dtype=float)
        a.setflags(write=False)
        out[k] = a
    return ReadOnlyMapping(out)


def _disabled_pairs(model, root, src, notes):
    links = {f.name: f for f in model.frames}
    order = {f.name: k for k, f in enumerate(model.frames)}
    pairs = list(model.excluded_link_pairs)
    seen = set(pairs)
    unknown = []
    for k, el in enumerate(root.findall("disable_collisions")):
        a, b = el.get("link1"), el.get("link2")
        if not a or not b:
            raise ModelFileError(f"{src}: <disable_collisions> {k} needs attributes link1 and link2")
        missing = [n for n in (a, b) if n not in links]
        if missing:
            unknown.append(f"({a}, {b})")
            continue
        if links[a].body == links[b].body:
            continue  # one body (the same link, or links merged by fixed joints): its geometries never collide
        pair = (a, b) if order[a] < order[b] else (b, a)
        if pair not in seen:
            seen.add(pair)
            pairs.append(pair)
    if unknown:
        notes.append(f"{src}: {len(unknown)} <disable_collisions> name link(s) the model does not have, ignored: "
                     + ", ".join(unknown))
    return tuple(pairs)


def _group_states(model, root, src, notes):
    out = {}
    for k, gs in enumerate(root.findall("group_state")):
        name = gs.get("name")
        if not name:
            raise ModelFileError(f"{src}: <group_state> {k} has no name attribute")
        q = model.neutral()
        problems = []
        for el in gs.findall("joint"):
            jn = el.get("name")
            try:
                j = model.joints[model.joint_id(jn)]
            except InputError:
                problems.append(f"joint '{jn}' is not in the model (ignored)")
                continue
            try:
                values = [float(x) for x in (el.get("value") or "").split()]
            except ValueError:
                problems.append(f"joint '{jn}': value {el.get('value')!r} is not numeric (left at neutral)")
                continue
            got = _joint_values(j, values)
            if isinstance(got, str):
                problems.append(f"joint '{jn}': {got} (left at neutral)")
            else:
                q[j.q_slice] = got
        if problems:
            notes.append(f"{src}: <group_state> '{name}': " + "; ".join(problems))
        if name in out:
            notes.append(f"{src}: <group_state> '{name}' is defined more than once; the first is kept")
            continue
        out[name] = q
    return out


def _joint_values(j, values):
    """The joint's q coordinates from the SRDF values (Pinocchio's layout),
    or a message saying why not."""
    n = len(values)
    if not all(map(math.isfinite, values)):
        return f"value {values} is not finite"
    if j.type == "free":
        if n != 7:
            return f"a free joint takes 7 values (x y z qx qy qz qw), got {n}"
        quat = _unit([values[6]] + values[3:6])
        return values[:3] + quat if quat else "its quaternion is zero"
    if j.type == "spherical":
        if n != 4:
            return f"a spherical joint takes 4 values (qx qy qz qw), got {n}"
        quat = _unit([values[3]] + values[:3])
        return quat if quat else "its quaternion is zero"
    if j.type == "planar":
        if n != 4:
            return f"a planar joint takes 4 values (x y cos sin), got {n}"
        return [values[0], values[1], math.atan2(values[3], values[2])]
    if n != j.nq:
        return f"a {j.type} joint takes {j.nq} value(s), got {n}"
    return values


def _unit(quat):
    norm = math.sqrt(sum(x * x for x in quat))
    return [x / norm for x in quat] if norm > 0 else None
