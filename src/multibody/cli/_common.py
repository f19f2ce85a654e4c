"""What the commands share: finding and loading a model file of either
format, reading configurations written on the command line, and the
command line's own error."""
import os
import re

import numpy as np

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "robots")
SHIPPED = {"mb_arm": "mb_arm.urdf", "delta": "delta.xml", "four_bar": "four_bar.xml"}


class CommandError(Exception):
    """A mistake in the command's arguments or files that the library does
    not report itself (an unknown joint in ``--target``, a conversion that
    would lose data): printed as one line, exit status 1."""


def model_path(name):
    """The absolute path of the model file ``name``: an existing file, or
    the stem of a model shipped with multibody (``mb_arm``, ``delta``,
    ``four_bar``)."""
    if os.path.isfile(name):
        return os.path.abspath(name)
    if name in SHIPPED:
        return os.path.join(DATA, SHIPPED[name])
    if os.path.isdir(name):
        raise CommandError(f"'{name}' is a directory, not a model file")
    raise CommandError(f"no model file '{name}' (a URDF or MJCF file, or a shipped model: {', '.join(SHIPPED)})")


def model_format(path):
    """"urdf" or "mjcf": by the suffix (.urdf; .xml, .mjcf), else by the
    root element of the file (``<robot>`` or ``<mujoco>``)."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".urdf":
        return "urdf"
    if ext == ".mjcf":
        return "mjcf"
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16).decode("utf-8", "replace")
    except OSError as e:
        raise CommandError(f"cannot read model file '{path}': {e.strerror or e}") from None
    # the first element (declarations, comments and processing instructions start with ! or ?)
    m = re.search(r"<\s*([A-Za-z_][\w.-]*)", head)
    if m and m.group(1) in ("robot", "mujoco"):
        return "urdf" if m.group(1) == "robot" else "mjcf"
    raise CommandError(f"'{path}' is neither a URDF (<robot>) nor an MJCF (<mujoco>) file")


def load_model(name, floating_base=False, srdf=None):
    """``(model, path, options)``: the model in file ``name`` (see
    :func:`model_path`) loaded with :func:`multibody.load_urdf` or
    :func:`multibody.load_mjcf`, and the loading options to record with a
    trajectory so that it can be loaded again the same way. The shipped arm
    comes with its SRDF (the self-collision pairs MoveIt would disable)."""
    import multibody as mb

    path = model_path(name)
    kind = model_format(path)
    if kind == "mjcf":
        if floating_base:
            raise CommandError("--floating-base applies to URDF files; an MJCF file declares its own free joints")
        if srdf is not None:
            raise CommandError("--srdf applies to URDF files")
        return mb.load_mjcf(path), path, {"model_file": path, "format": kind}
    if srdf is None and path == os.path.join(DATA, "mb_arm.urdf"):
        srdf = os.path.join(DATA, "mb_arm.srdf")
    elif srdf is not None:
        if not os.path.isfile(srdf):
            raise CommandError(f"no SRDF file '{srdf}'")
        srdf = os.path.abspath(srdf)
    model = mb.load_urdf(path, floating_base=floating_base, srdf=srdf)
    return model, path, {"model_file": path, "format": kind, "floating_base": bool(floating_base), "srdf": srdf}


def parse_configuration(model, items, base, what):
    """The configuration (nq) that ``items`` (command-line words) give:
    either nq numbers (separate words or comma-separated), or
    ``NAME=VALUE`` words naming joints (``elbow=0.5``; a joint of several
    coordinates takes them all, comma-separated: ``root_joint=0,0,1,1,0,0,0``)
    or single coordinates (``root_joint.z=1``, see
    :func:`multibody.viz.plots.coordinate_names`), the others kept from
    ``base``. CommandError if a word is neither, or names nothing in the
    model; InputError (from the model) if the result is not a valid
    configuration (non-finite, non-unit quaternion)."""
    from ..viz.plots import coordinate_names

    if not items:
        raise CommandError(f"{what} needs values")
    if all("=" not in item for item in items):
        q = parse_numbers([w for item in items for w in item.replace(",", " ").split()], what)
        if len(q) != model.nq:
            names = ", ".join(coordinate_names(model))
            raise CommandError(f"{what} has {len(q)} values; model '{model.name}' has nq = {model.nq} "
                               f"({names}); or name the joints: {what} JOINT=VALUE ...")
    else:
        q = np.array(base, dtype=float)
        coords = coordinate_names(model)
        for item in items:
            name, sep, value = item.partition("=")
            if not sep:
                raise CommandError(f"{what}: mix of values and NAME=VALUE words ('{item}'); use one form")
            values = parse_numbers(value.replace(",", " ").split(), f"{what} {name}")
            if name in model.joint_names[1:]:
                s = model.joints[model.joint_id(name)].q_slice
            elif name in coords:
                k = coords.index(name)
                s = slice(k, k + 1)
            else:
                joints = ", ".join(j.name for j in model.joints[1:] if j.nq)
                raise CommandError(f"{what}: model '{model.name}' has no joint or coordinate '{name}' "
                                   f"(joints: {joints})")
            if len(values) != s.stop - s.start:
                raise CommandError(f"{what}: '{name}' takes {s.stop - s.start} value(s), got {len(values)}")
            q[s] = values
    model.check_configuration(q, what)
    return q


def parse_numbers(words, what):
    """The float array of the command-line ``words``; CommandError naming
    ``what`` and the first word that is not a number."""
    try:
        return np.array([float(w) for w in words], dtype=float)
    except ValueError:
        bad = next(w for w in words if not _is_number(w))
        raise CommandError(f"{what}: '{bad}' is not a number") from None


def _is_number(w):
    try:
        float(w)
        return True
    except ValueError:
        return False


def viz_function(name, purpose):
    """``multibody.viz.<name>`` (the viewer, imported on first use), or a
    CommandError naming the extra to install when it cannot be imported."""
    try:
        from .. import viz
        return getattr(viz, name)
    except (ImportError, AttributeError) as e:
        raise CommandError(f"{purpose} needs the viewer: pip install multibody[viz] ({type(e).__name__}: {e})") \
            from None
