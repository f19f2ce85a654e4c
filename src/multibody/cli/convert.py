"""``multibody convert IN OUT``: the conversions that lose nothing.

Only trajectories convert, between the ``.npz`` file of
:meth:`Trajectory.save` and a CSV text file, both ways; npz → csv → npz
gives back every array bit for bit and the same header (metadata, model
fingerprint, power and actuator names). The CSV holds:

* line 1 ``# multibody-trajectory-csv 1``;
* line 2 ``# `` and the JSON header (``model_fingerprint``,
  ``power_labels``, ``actuator_names``, ``meta``);
* line 3 the column names: ``t``, ``q[i]`` (nq), ``v[i]``, ``tau[i]`` (nv),
  ``kinetic``, ``potential``, ``effort_clamped[i]``, ``velocity_clamped[i]``
  (nv, 0 or 1), ``power[k]`` (one per power label), ``constraint_residual``,
  ``control[i]``, ``activation[i]``, ``actuator_force[i]``;
* one line per sample; numbers written as Python's ``repr`` of the float
  (the shortest text that reads back to the same double).

A trajectory with a contact record or sensor readings is refused: their
arrays have no place in one table (keep the ``.npz``). Model files are
not converted: no conversion between URDF and MJCF is lossless (each
describes things the other cannot: MJCF actuators, tendons and contact
parameters; URDF transmissions and visual materials), and multibody
writes neither format."""
import json
import os

import numpy as np

from ._common import CommandError

MAGIC = "# multibody-trajectory-csv 1"
# columns in file order: (name, dtype kind, width key: None for one column, else a key of the widths)
COLUMNS = (("t", "f", None), ("q", "f", "nq"), ("v", "f", "nv"), ("tau", "f", "nv"), ("kinetic", "f", None),
           ("potential", "f", None), ("effort_clamped", "b", "nv"), ("velocity_clamped", "b", "nv"),
           ("power", "f", "P"), ("constraint_residual", "f", None), ("control", "f", "nu"),
           ("activation", "f", "na"), ("actuator_force", "f", "nu"))


def _kind(path):
    ext = os.path.splitext(path)[1].lower()
    if ext in (".npz", ".csv"):
        return ext[1:]
    if ext in (".urdf", ".xml", ".mjcf"):
        raise CommandError(f"'{path}': model files are not converted (no URDF <-> MJCF conversion is lossless, "
                           "and multibody writes neither); convert handles trajectories: .npz <-> .csv")
    raise CommandError(f"'{path}': convert handles trajectories, .npz <-> .csv (by the file's suffix)")


def convert(source, target, out=print):
    """Convert the trajectory file ``source`` to ``target`` (.npz to .csv or
    .csv to .npz, by their suffixes)."""
    from .. import Trajectory

    kinds = _kind(source), _kind(target)
    if kinds[0] == kinds[1]:
        raise CommandError(f"'{source}' and '{target}' are both .{kinds[0]}: nothing to convert")
    if not os.path.isfile(source):
        raise CommandError(f"no such file '{source}'")
    if kinds == ("npz", "csv"):
        write_csv(Trajectory.load(source), target)
    else:
        read_csv(source).save(target)
    out(f"wrote {target}")


def _widths(traj):
    return {"nq": traj.q.shape[1], "nv": traj.v.shape[1], "P": len(traj.power_labels),
            "nu": traj.control.shape[1], "na": traj.activation.shape[1]}


def _names(widths):
    return [name if w is None else f"{name}[{i}]" for name, _, w in COLUMNS
            for i in ([None] if w is None else range(widths[w]))]


def write_csv(traj, path):
    """Write ``traj`` to the CSV file ``path`` (module docstring); a
    trajectory with contacts or sensors is a CommandError."""
    for what in ("contacts", "sensors"):
        if getattr(traj, what) is not None:
            raise CommandError(f"the trajectory has {what} records, which a CSV table cannot hold without loss: "
                               "keep the .npz")
    header = {"model_fingerprint": traj.model_fingerprint, "power_labels": list(traj.power_labels),
              "actuator_names": list(traj.actuator_names), "meta": traj.meta}
    N = len(traj.t)
    blocks = []
    for name, kind, w in COLUMNS:
        a = np.asarray(getattr(traj, name)).reshape(N, -1)
        blocks.append(a.astype(np.int64) if kind == "b" else a)
    lines = [MAGIC, "# " + json.dumps(header), ",".join(_names(_widths(traj)))]
    rows = [b.tolist() for b in blocks]
    for k in range(N):
        lines.append(",".join(repr(x) for block in rows for x in block[k]))
    try:
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(lines) + "\n")
    except OSError as e:
        raise CommandError(f"cannot write '{path}': {e.strerror or e}") from None


def read_csv(path):
    """The :class:`~multibody.Trajectory` in the CSV file ``path`` written by
    :func:`write_csv`; CommandError naming the file and line otherwise."""
    from .. import Trajectory

    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeError) as e:
        raise CommandError(f"cannot read '{path}': {getattr(e, 'strerror', None) or e}") from None
    if len(lines) < 4 or lines[0] != MAGIC or not lines[1].startswith("# "):
        raise CommandError(f"'{path}' is not a multibody trajectory CSV (line 1 must be '{MAGIC}', line 2 the "
                           "header, line 3 the columns, then at least one sample)")
    try:
        header = json.loads(lines[1][2:])
        fp, labels, names, meta = (header[k] for k in ("model_fingerprint", "power_labels", "actuator_names", "meta"))
    except (ValueError, KeyError, TypeError) as e:
        raise CommandError(f"'{path}' line 2: not the JSON header of a trajectory ({e})") from None
    columns = lines[2].split(",")
    widths = {key: sum(1 for c in columns if c.startswith(prefix + "[")) for key, prefix in
              (("nq", "q"), ("nv", "v"), ("P", "power"), ("nu", "control"), ("na", "activation"))}
    if columns != _names(widths):
        raise CommandError(f"'{path}' line 3: the columns are not those of a trajectory (t, q[i], v[i], tau[i], ...)")
    try:
        data = [[float(x) for x in line.split(",")] for line in lines[3:]]
    except ValueError as e:
        raise CommandError(f"'{path}': a value is not a number ({e})") from None
    bad = next((k for k, row in enumerate(data) if len(row) != len(columns)), None)
    if bad is not None:
        raise CommandError(f"'{path}' line {bad + 4}: {len(data[bad])} values, expected {len(columns)}")
    table = np.array(data, dtype=float).reshape(len(data), len(columns))
    arrays, c = {}, 0
    for name, kind, w in COLUMNS:
        n = 1 if w is None else widths[w]
        block = table[:, c:c + n]
        c += n
        if kind == "b":
            if not np.isin(block, (0.0, 1.0)).all():
                raise CommandError(f"'{path}': {name} must hold 0 or 1")
            block = block.astype(bool)
        arrays[name] = block[:, 0] if w is None else block
    # the Trajectory checks the header's types and the shapes against each other (InputError)
    return Trajectory(meta=meta, power_labels=tuple(labels) if isinstance(labels, list) else labels,
                      model_fingerprint=fp, actuator_names=tuple(names) if isinstance(names, list) else names,
                      **arrays)
