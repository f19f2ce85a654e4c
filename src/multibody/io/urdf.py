"""URDF loader: ``load_urdf(path_or_string) -> Model``.

The file is parsed with the standard library (:mod:`xml.etree.ElementTree`)
and turned into :class:`~multibody.model.ModelBuilder` calls. URDF semantics
(ROS ``urdfdom``, http://wiki.ros.org/urdf/XML) and how they map:

* A URDF *link* becomes a body (or, merged through a fixed joint, a frame of
  its parent body); every link name is a frame of the model. A URDF *joint*
  ``parent -> child`` becomes the joint of body ``child``; its ``<origin>``
  is the pose of the joint frame in the parent link frame, and the child link
  frame coincides with the joint frame at q = 0 (as in multibody).
* ``<origin xyz rpy>``: ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (fixed-axis
  roll-pitch-yaw, :func:`multibody.spatial.euler.rpy_to_rotation`), metres
  and radians.
* Joint types: ``revolute`` and ``continuous`` (an unbounded revolute: one
  angle, no position limit; Pinocchio uses (cos, sin) instead) ->
  "revolute"; ``prismatic``; ``fixed``; ``floating`` -> "free" (q = (p,
  quaternion w,x,y,z), v = (ω, v) in the child frame); ``planar`` ->
  "planar" whose plane normal is ``<axis>`` (q = (x, y, θ); the in-plane
  axes are the builder's default: for normal z they are x and y).
  ``<axis xyz>`` defaults to (1, 0, 0) and is normalized.
* ``<limit>`` (lower/upper in rad or m, velocity, effort) and ``<dynamics>``
  (viscous damping, Coulomb friction) are read for the 1-DoF joints
  (revolute, continuous, prismatic), like Pinocchio: lower/upper default to
  0 when ``<limit>`` is present (URDF spec), a continuous joint has no
  position limit, missing velocity/effort limits are infinite.
* ``<mimic joint multiplier offset>`` -> ``add_coupling(joint, mimicked,
  multiplier (default 1), offset (default 0))``; the mimic joint keeps its
  own coordinate (the coupling is enforced by a constraint, not removed).
  A mimic naming a joint that does not exist is ignored with a
  :class:`~multibody.errors.ModelWarning` (Pinocchio ignores mimics by
  default).
* ``<inertial>``: mass (kg), centre of mass ``<origin xyz>`` and the
  inertia tensor about the centre of mass given in the inertial frame
  rotated by ``<origin rpy>``; it is rotated into the link frame,
  ``I_link = R I Rᵀ``. A link without ``<inertial>`` is massless, and so is
  an explicit mass 0 with an all-zero inertia (as Pinocchio). Always errors:
  a negative or non-finite mass, non-finite numbers, and masses or inertia
  entries above 1e100 (:data:`multibody.spatial.spatial.INERTIA_LIMIT`;
  they overflow the dynamics).
* **Non-physical inertias** (``inertia=`` of :func:`load_urdf`). Real robot
  files often carry inertias no mass distribution has: principal moments
  violating the triangle inequality ``I1 + I2 >= I3`` (Allegro and Alex
  hands, ANYmal C's cameras, PR2's sensor mount, Romeo's arms), slightly
  negative moments (Go1, B1, ANYmal B, HyQ, iCub, Romeo, TIAGo), a mass 0
  with a non-zero inertia (Bolt's feet). Pinocchio keeps them all.

  - ``"warn"`` (default): the values are kept as given (the dynamics then
    agree with Pinocchio's) and one :class:`~multibody.errors.ModelWarning`
    lists each such link and what is wrong. Only where the dynamics cannot
    run are values changed: a *moving* body (a link on a moving joint, or a
    floating root, together with the links fixed to it) whose rotational
    inertia about its centre of mass is singular or indefinite (smallest
    principal moment <= 1e-12 x the largest, or negative: iCub's point-mass
    links, Romeo's hips) gets the smallest
    mass-free positive semi-definite inertia added that lifts its principal
    moments to ``max(1e-6 · largest moment, mass · (1 mm)²)``
    (:func:`~multibody.spatial.spatial.lift_inertia`; the axes and the other
    moments are unchanged), on the moving link itself, and a second
    ModelWarning names the link, the old and the new moments. Bodies fixed to
    the world are never repaired (they do not move). A moving link with no
    mass or inertia in itself or below it (Romeo's fingers) is kept
    massless, as in Pinocchio, and named in a ModelWarning: its forward
    dynamics are singular (``aba`` raises SimulationError).
  - ``"fix"``: every non-physical link inertia is repaired first, like
    MuJoCo's ``<compiler balanceinertia="true">``: principal moments that
    violate the triangle inequality (or are negative) are replaced by their
    mean (the inertia becomes isotropic, its trace is kept; MuJoCo does this
    for the triangle inequality and refuses negative moments); a mass 0 with
    a non-zero inertia loses the inertia (the link becomes massless). Then
    the moving-body repair of ``"warn"``. One ModelWarning lists the repairs.
  - ``"strict"``: non-physical inertias are errors naming the link (mass 0
    with a non-zero inertia, not positive semi-definite, triangle
    inequality), as is a singular inertia on a moving joint; a singular but
    physical inertia (a point mass, a thin rod) on a fixed joint is folded
    into its parent link (parallel-axis theorem; the dynamics are unchanged)
    and on a root fixed to the world it is dropped.
* **Mesh paths are confined** (``allow_mesh_outside=False``): a mesh file is
  only ever resolved inside an allowed root, so that a model file cannot
  make the loader point at arbitrary files. See :func:`resolve_mesh`:
  ``package://P/sub`` is looked up in ``<d>/P/sub`` for ``d`` in
  ``package_dirs`` and ``$ROS_PACKAGE_PATH``, in ``<d>/sub`` for such a
  ``d`` named P, and in the parent folders of the URDF file named P; the
  file must lie inside that package folder (``package://../../etc/passwd``
  or ``package://P/../../x`` are refused with a ModelFileError). Relative
  paths (``meshes/x.stl``, ``file://meshes/x.stl``) are taken relative to the
  URDF file's folder and must stay inside it or inside one of the
  ``package_dirs`` (``../../etc/passwd`` is refused). Absolute paths
  (``/x``, ``file:///x``) are resolved if they lie inside the URDF's
  folder or a package dir; an existing file elsewhere is refused, a
  missing one is kept as the original string (nothing is read; ROS files
  often name meshes of another machine, e.g. Romeo's
  ``file:///usr/Romeo/...``). ``allow_mesh_outside=True`` lifts all
  three restrictions. The loader never opens mesh files; symbolic links
  inside a root are followed (they are the package's own choice).
* ``<visual>`` / ``<collision>``: box (full extents), sphere (radius),
  cylinder and capsule (radius, length; axis z), mesh (file + scale) become
  geometries named after the element's ``name`` or ``<link>_<k>``; a visual's
  ``<material>`` colour (inline or a robot-level material) is its rgba.
  Mesh files are resolved (see :func:`resolve_mesh` and the confinement
  rule above); a mesh that is not found is kept as the original string.
  Pinocchio's extension ``<collision_checking><capsule name="N"/>`` makes
  the collision cylinder named N a capsule, ``<convex name="N"/>`` the mesh
  named N its convex hull even on a static body. Collision geometry gets MuJoCo's
  default contact parameters (URDF has none); a collision mesh is read (``meshes=``), and becomes the "convex"
  hull of its vertices on a moving body, a triangle "mesh" on a body fixed
  to the world (docs/collision.md).
* Root: with ``floating_base=True`` the root link is attached to the world by
  a free joint named ``"root_joint"`` (as Pinocchio); otherwise by a fixed
  joint (also named ``"root_joint"``) and so, when merging, the root link
  becomes a frame of the world body (its inertia is added to the world body,
  where it has no effect on the dynamics, like Pinocchio's universe). A root
  link called ``"world"`` *is* the world.
* **Fixed joints**: ``merge_fixed=True`` (the default) merges the child link
  into its parent body (inertia added, geometry and frames moved) and keeps
  it as a frame of kind "fixed", like Pinocchio; ``merge_fixed=False`` keeps
  it as a body with a 0-DoF joint.
* Order: bodies are numbered depth first from the root, siblings in the
  order their joints appear in the file. (Pinocchio orders siblings by joint
  name, so its q layout may differ; match joints by name.)

Errors: :class:`~multibody.errors.ModelFileError` whose message names the
file and the offending element (link, joint, attribute). Warnings:
:class:`~multibody.errors.ModelWarning` (``warnings.simplefilter("error",
mb.ModelWarning)`` turns them into errors).

Cost: linear in the number of links (a 10,000-link chain loads in 1.8 s of
CPU; docs/loading.md).
"""
from __future__ import annotations

import gc
import math
import os
import warnings

from typing import Sequence

import numpy as np

from .._typing import PathLike, Source
from ..errors import InputError, ModelError, ModelFileError, ModelWarning
from ..model.builder import WORLD, ModelBuilder
from ..model.model import Model
from ..spatial import spatial as sp
from ..spatial.euler import rpy_to_rotation
from ._common import pose, read_robot_xml, unique_name
from ..model.meshes import MESH_MODES, MeshError, MeshReader

#: URDF joint type -> multibody joint type
URDF_JOINT_TYPES = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic",
                    "fixed": "fixed", "floating": "free", "planar": "planar"}
_ONE_DOF = ("revolute", "continuous", "prismatic")
INERTIA_MODES = ("warn", "fix", "strict")
_EYE4 = np.eye(4)


def load_urdf(path_or_string: Source, floating_base: bool = False,
              package_dirs: PathLike | Sequence[PathLike] | None = None, merge_fixed: bool = True,
              name: str | None = None, *, inertia: str = "warn", allow_mesh_outside: bool = False,
              meshes: str = "warn", srdf: Source | None = None) -> Model:
    """Load a URDF robot description into a :class:`~multibody.model.Model`.

    Parameters
    ----------
    path_or_string : str or pathlib.Path
        A file name, or the URDF XML itself (a string starting with ``'<'``).
    floating_base : bool
        Attach the root link to the world by a free joint ``"root_joint"``
        (q = (position (m), quaternion (w, x, y, z)), v = (ω, v) in the base
        frame). Default False: the root link is fixed to the world.
    package_dirs : str, pathlib.Path or list of them, optional
        Where ``package://P/...`` mesh references are looked up: in
        ``<dir>/P/...``, or in ``<dir>/...`` if ``<dir>`` is named P;
        ``$ROS_PACKAGE_PATH`` is searched the same way, then the folders
        above the URDF file that are named P. These folders and the URDF's
        own folder are the roots mesh files must lie in (see
        ``allow_mesh_outside``).
    merge_fixed : bool
        Default True: links attached by fixed joints are merged into their
        parent body and kept as frames (kind "fixed"), like Pinocchio. False
        keeps them as bodies with 0-DoF joints.
    name : str, optional
        Model name (default: the ``<robot name>``).
    inertia : {"warn", "fix", "strict"}
        What to do with non-physical ``<inertial>`` data (module docstring,
        "Non-physical inertias"). ``"warn"`` (default) keeps the values as
        given, as Pinocchio does, with a :class:`~multibody.errors.ModelWarning`
        naming each link and what is wrong; only a moving body whose
        rotational inertia is singular or indefinite (the dynamics cannot run)
        gets the smallest positive semi-definite, mass-free inertia added that
        lifts its principal moments to ``max(1e-6 · largest, mass · (1
        mm)²)``, also reported. ``"fix"`` first repairs every non-physical
        link like MuJoCo's ``balanceinertia`` (principal moments violating
        ``I1 + I2 >= I3``, or negative, are replaced by their mean; a mass 0
        loses its inertia), then does the same moving-body repair.
        ``"strict"`` raises a ModelFileError instead.
    allow_mesh_outside : bool
        Default False: mesh paths resolve only inside the allowed roots (the
        package folders found through ``package_dirs``, ``$ROS_PACKAGE_PATH``
        or the URDF's parent folders, and the URDF's own folder); a
        ``package://`` or relative path that climbs out of its root, or an
        absolute path to an existing file outside them, is a
        ModelFileError. True resolves them wherever they point.
    meshes : {"warn", "strict", "skip"}
        Collision mesh files (STL, OBJ, DAE, ...) are read with trimesh,
        scaled, and replaced by their convex hull on moving bodies (kept as
        triangle meshes on bodies fixed to the world); each file is read
        once. ``"warn"`` (default): a mesh that is missing, unreadable or
        degenerate (no volume) is left out of collision — recorded in
        ``model.skipped_geometries`` with the reason — and one
        :class:`~multibody.errors.ModelWarning` names each such geometry and
        file. ``"strict"``: a ModelFileError instead. ``"skip"``: mesh files
        are not opened (fast); every collision mesh goes to
        ``model.skipped_geometries``. Visual meshes are never opened.
    srdf : str or pathlib.Path, optional
        A companion SRDF file (or its XML) read by :func:`~multibody.io.load_srdf`:
        its ``<disable_collisions>`` become ``model.excluded_link_pairs`` and
        its ``<group_state>`` postures ``model.reference_postures``.

    Returns
    -------
    Model
        Its bodies, joints and frames carry the URDF link and joint names (SI
        units: m, rad, kg, kg m², N, N m); see the module docstring for the
        conventions. Collision geometry gets MuJoCo's default contact
        parameters (friction (1, 0.005, 0.0001), condim 3, contype =
        conaffinity = 1, ...; URDF has none): see
        :class:`~multibody.model.Geometry` and docs/collision.md.

    Raises
    ------
    ModelFileError
        Naming the file and the offending element, on malformed input.

    Warns
    -----
    ModelWarning
        For kept or repaired inertias and left-out meshes.
    """
    if inertia not in INERTIA_MODES:
        raise InputError(f"load_urdf: inertia={inertia!r} is not one of {', '.join(map(repr, INERTIA_MODES))}")
    if meshes not in MESH_MODES:
        raise InputError(f"load_urdf: meshes={meshes!r} is not one of {', '.join(map(repr, MESH_MODES))}")
    root, path, src = read_robot_xml(path_or_string, "URDF")
    base_dir = os.path.dirname(path) if path else None
    parser = _UrdfParser(root, src, base_dir, package_dirs, inertia, bool(allow_mesh_outside), meshes)
    # The parse allocates many small objects that all stay alive until the model is built: Python's
    # cyclic collector would traverse them again and again (15% of loading a 10,000-link chain).
    # Paused for the build only, and only if it was running.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        model = parser.build(floating_base, merge_fixed, name)
    finally:
        if was_enabled:
            gc.enable()
    for msg in parser.warnings:
        warnings.warn(msg, ModelWarning, stacklevel=2)
    if srdf is not None:
        from .srdf import load_srdf
        model = load_srdf(model, srdf)
    return model


def _norm(path):
    """Absolute, lexically normalized path (``..`` folded; links not followed)."""
    return os.path.normpath(os.path.abspath(path))


def _inside(path, root):
    """True if ``path`` lies in folder ``root`` (lexically, after normalization)."""
    path, root = _norm(path), _norm(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _climbs(rel):
    """True if the relative path ``rel`` leaves the folder it starts from
    (``..`` beyond its start) or is absolute."""
    if os.path.isabs(rel):
        return True
    n = os.path.normpath(rel)
    return n == ".." or n.startswith(".." + os.sep)


def resolve_mesh(filename: str, package_dirs: Sequence[str] = (), base_dir: str | None = None,
                 allow_outside: bool = False) -> str:
    """The local file a URDF mesh reference names, or ``filename`` unchanged
    if no such file is found (a missing mesh is not an error).

    Roots: a mesh file is only resolved inside an allowed root.

    * ``package://P/sub`` is looked up as ``<d>/P/sub`` (root ``<d>/P``) and,
      if ``d`` is named P, ``<d>/sub`` (root ``d``), for ``d`` in
      ``package_dirs`` then ``$ROS_PACKAGE_PATH``; then in the folders above
      ``base_dir`` (the URDF file's folder) that are named P. Empty segments
      after ``package://`` are skipped (``package:///P/sub``). ``sub`` must
      stay inside the package: ``package://../x`` or ``package://P/../../x``
      raise :class:`~multibody.errors.ModelFileError`.
    * A relative path (``x/y.stl`` or ``file://x/y.stl``) is taken relative
      to ``base_dir`` and must stay inside ``base_dir`` or one of
      ``package_dirs`` (else ModelFileError); without ``base_dir`` (a URDF
      string) it is returned unchanged.
    * An absolute path (``/x`` or ``file:///x``) is resolved if it lies inside
      ``base_dir`` or one of ``package_dirs``; an existing file elsewhere
      raises ModelFileError, a missing one is returned unchanged.
    * Other URI schemes are returned unchanged.

    ``allow_outside=True`` lifts the confinement (paths are resolved wherever
    they point). Containment is lexical (``..`` folded, symbolic links inside
    a root followed). Returns an absolute path or ``filename``.
    """
    pkg_dirs = list(package_dirs) + [d for d in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if d]
    if filename.startswith("package://"):
        rest = filename[len("package://"):].lstrip("/")
        pkg, _, sub = rest.partition("/")
        if not allow_outside and (pkg in (".", "..") or _climbs(sub)):
            raise ModelFileError(f"mesh '{filename}' leaves its package folder (pass allow_mesh_outside=True "
                                 "to resolve it anyway)")
        cands = []  # (candidate, root it must lie in)
        for d in pkg_dirs:
            cands.append((os.path.join(d, pkg, sub), os.path.join(d, pkg)))
            if os.path.basename(os.path.normpath(d)) == pkg:
                cands.append((os.path.join(d, sub), d))
        if base_dir:
            d = _norm(base_dir)
            while True:
                if os.path.basename(d) == pkg:
                    cands.append((os.path.join(d, sub), d))
                up = os.path.dirname(d)
                if up == d:
                    break
                d = up
        for cand, root in cands:
            if os.path.isfile(cand) and (allow_outside or _inside(cand, root)):
                return _norm(cand)
        return filename
    local = filename[len("file://"):] if filename.startswith("file://") else filename
    if "://" in local:
        return filename
    roots = ([base_dir] if base_dir else []) + list(package_dirs)
    if not os.path.isabs(local):
        if not base_dir:
            return filename
        cand = os.path.join(base_dir, local)
        if not allow_outside and not any(_inside(cand, r) for r in roots):
            raise ModelFileError(f"mesh '{filename}' resolves to '{_norm(cand)}', outside the URDF's folder "
                                 f"'{_norm(base_dir)}' and the package_dirs (add its folder to package_dirs or "
                                 "pass allow_mesh_outside=True)")
        return _norm(cand) if os.path.isfile(cand) else filename
    if not os.path.isfile(local):
        return filename
    if not allow_outside and not any(_inside(local, r) for r in roots):
        raise ModelFileError(f"mesh '{filename}' is an absolute path outside the URDF's folder and the "
                             "package_dirs (add its folder to package_dirs or pass allow_mesh_outside=True)")
    return _norm(local)


def _fmt(values):
    """Numbers for messages, 6 significant digits: ``[1, 2.5e-07, 3]``."""
    return "[" + ", ".join(f"{float(x):.6g}" for x in values) + "]"


def _dirs(package_dirs):
    """``package_dirs`` (None, one path or several) as a list of str."""
    if package_dirs is None:
        return []
    if isinstance(package_dirs, (str, os.PathLike)):
        package_dirs = [package_dirs]
    return [os.fspath(d) for d in package_dirs]


class _UrdfParser:
    """Turns a parsed ``<robot>`` element into ModelBuilder calls (one use)."""

    def __init__(self, root, src, base_dir, package_dirs, inertia="warn", allow_mesh_outside=False, meshes="warn"):
        """``root``: the <robot> element; ``src``: how messages name the input;
        ``inertia``: "warn", "fix" or "strict"; ``meshes``: "warn", "strict"
        or "skip" (see :func:`load_urdf`)."""
        self.root, self.src, self.base_dir = root, src, base_dir
        self.package_dirs = _dirs(package_dirs)
        self.mode, self.allow_mesh_outside = inertia, allow_mesh_outside
        self.meshes, self.reader = meshes, MeshReader()
        self.warnings = []  # messages load_urdf emits as ModelWarning
        self.mesh_problems = []  # collision meshes left out ("warn" mode)

    def collision_mesh(self, what, filename, scale):
        """Builder keywords of a collision mesh: its vertices and faces, or
        ``skip`` (the reason) if it is not read or not usable (see the
        ``meshes`` option of :func:`load_urdf`)."""
        if self.meshes == "skip":
            return {"skip": "not read (meshes='skip')"}
        try:
            V, F, hull = self.reader.read(filename, scale)
        except MeshError as e:
            if self.meshes == "strict":
                raise self.err(f"{what}: {e}") from None
            self.mesh_problems.append(f"{what}: {e}")
            return {"skip": str(e)}
        return {"vertices": V, "faces": F, "hull": hull, "warn_nonconvex": False}

    def err(self, msg):
        """A ModelFileError whose message starts with the file (or 'URDF string')."""
        return ModelFileError(f"{self.src}: {msg}")

    # ----------------------------------------------------------- attributes
    def numbers(self, el, attr, n, default, what):
        """``n`` floats from attribute ``attr`` of ``el`` (``default`` if absent;
        an error if absent and ``default`` is None)."""
        s = el.get(attr)
        if s is None:
            if default is None:
                raise self.err(f"{what}: missing attribute '{attr}'")
            return np.array(default, dtype=float).reshape(-1) if n > 1 else float(default)
        if n == 1:  # fast path (a 10,000-link file has ~180,000 attributes)
            try:
                v = float(s)
            except ValueError:
                pass
            else:
                if math.isfinite(v):
                    return v
        try:
            vals = [float(x) for x in s.split()]
        except ValueError:
            raise self.err(f"{what}: attribute {attr}=\"{s}\" is not numeric") from None
        if len(vals) != n:
            raise self.err(f"{what}: attribute {attr}=\"{s}\" must have {n} number(s)")
        if not all(map(math.isfinite, vals)):  # (np.isfinite per attribute cost 10% of a large load)
            raise self.err(f"{what}: attribute {attr}=\"{s}\" is not finite")
        return np.array(vals) if n > 1 else vals[0]

    def origin(self, el, what):
        """4x4 pose of the ``<origin xyz rpy>`` child of ``el`` (identity if absent)."""
        o = el.find("origin")
        if o is None:
            return _EYE4.copy()
        xyz = self.numbers(o, "xyz", 3, (0.0, 0.0, 0.0), f"{what} <origin>")
        rpy = self.numbers(o, "rpy", 3, (0.0, 0.0, 0.0), f"{what} <origin>")
        return pose(rpy_to_rotation(rpy) if rpy.any() else None, xyz)

    # --------------------------------------------------------------- parts
    def inertial(self, link, lname):
        """Builder keywords (mass, com, inertia) of a link; {} if massless."""
        el = link.find("inertial")
        what = f"link '{lname}' <inertial>"
        if el is None:
            return None
        T = self.origin(el, what)
        m_el = el.find("mass")
        if m_el is None:
            raise self.err(f"{what}: missing <mass>")
        mass = self.numbers(m_el, "value", 1, None, f"{what} <mass>")
        i_el = el.find("inertia")
        iw = f"{what} <inertia>"
        comps = {k: (self.numbers(i_el, k, 1, 0.0, iw) if i_el is not None else 0.0)
                 for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        I = np.array([[comps["ixx"], comps["ixy"], comps["ixz"]],
                      [comps["ixy"], comps["iyy"], comps["iyz"]],
                      [comps["ixz"], comps["iyz"], comps["izz"]]])
        if mass < 0.0:
            raise self.err(f"{what}: mass must be positive, got {mass}")
        biggest = max(abs(x) for x in comps.values())
        if mass > sp.INERTIA_LIMIT or biggest > sp.INERTIA_LIMIT:
            raise self.err(f"{what}: mass {mass:g} kg or inertia entries up to {biggest:g} kg m² exceed "
                           f"{sp.INERTIA_LIMIT:g} (they would overflow the dynamics)")
        if mass == 0.0 and biggest == 0.0:
            return None
        if mass == 0.0 and self.mode == "strict":
            raise self.err(f"{what}: mass is 0 but the inertia is not zero (a massless link "
                           "must have a zero inertia; inertia='warn' keeps it, as Pinocchio does)")
        R = T[:3, :3]
        if R[0, 0] == 1.0 and R[1, 1] == 1.0 and R[2, 2] == 1.0:  # no rpy: already in the link frame
            I_link = I
        else:
            I_link = R @ I @ R.T
            I_link = 0.5 * (I_link + I_link.T)
        if self.mode == "strict":
            self.singular(mass, I_link, what)  # raises on non-physical data
        return {"mass": mass, "com": T[:3, 3].copy(), "inertia": I_link}

    def singular(self, mass, I, what):
        """False for a valid inertia (:func:`~multibody.spatial.spatial.check_inertia`),
        True for a singular but physical one (a point mass or a thin rod:
        positive semi-definite, triangle inequality holds); raises otherwise."""
        try:
            sp.check_inertia(mass, I, what)
            return False
        except ModelError as e:
            ev = sp.principal_moments(I)[0]
            tol = 1e-12 * max(float(np.max(np.abs(ev))), 0.0)
            if (np.all(np.isfinite(I)) and np.allclose(I, I.T, rtol=0, atol=1e-9 * np.max(np.abs(I)))
                    and ev[0] >= -tol and ev[0] + ev[1] >= ev[2] - 1e-9 * np.sum(np.abs(ev))):
                return True
            raise self.err(str(e)) from None

    def fold_singular(self, order, base, parent_joint, joints, inert, floating_base):
        """Fold links with a singular inertia (point masses) attached by fixed
        joints into their parent link, whose composite inertia then usually is
        positive definite (the dynamics are unchanged: the links are rigidly
        attached). ModelBuilder rejects singular inertias."""
        for ln in reversed(order):
            d = inert.get(ln)
            if not d or not self.singular(d["mass"], d["inertia"], f"link '{ln}' <inertial>"):
                continue
            what = f"link '{ln}' <inertial>"
            moments = sp.principal_moments(d["inertia"])[0].tolist()
            if ln == base:
                if floating_base:
                    raise self.err(f"{what}: the floating root link has a singular inertia (principal moments "
                                   f"{moments}): it needs a positive-definite rotational inertia")
                inert[ln] = None  # fixed to the world: its inertia has no effect
                continue
            jel = joints[parent_joint[ln]]
            if jel.get("type") != "fixed":
                raise self.err(f"{what}: singular inertia (principal moments {moments}, a point mass or a "
                               f"thin rod) on the moving joint '{parent_joint[ln]}': multibody needs a "
                               "positive-definite rotational inertia for a moving body (inertia='warn' "
                               "repairs it minimally)")
            T = self.origin(jel, f"joint '{parent_joint[ln]}'")
            par = jel.find("parent").get("link")
            R, p = T[:3, :3], T[:3, 3]
            m2, c2, I2 = d["mass"], R @ d["com"] + p, R @ d["inertia"] @ R.T
            host = inert.get(par)
            if not host:
                inert[par] = {"mass": m2, "com": c2, "inertia": I2}
            else:
                m1, c1, I1 = host["mass"], host["com"], host["inertia"]
                m = m1 + m2
                c = (m1 * c1 + m2 * c2) / m
                shift = lambda r: r @ r * np.eye(3) - np.outer(r, r)  # noqa: E731
                inert[par] = {"mass": m, "com": c,
                              "inertia": I1 + m1 * shift(c1 - c) + I2 + m2 * shift(c2 - c)}
            inert[ln] = None

    def lenient(self, order, base, parent_joint, joints, inert, floating_base):
        """The "warn" and "fix" policies (see :func:`load_urdf`): report (warn)
        or repair (fix) each non-physical link inertia, then lift the
        rotational inertia of moving bodies whose composite (the link with the
        links fixed to it) is singular or indefinite. Updates ``inert`` in
        place and appends the messages to ``self.warnings``."""
        kept, repaired = [], []
        for ln in self.suspects([ln for ln in order if inert[ln]], inert):
            d = inert[ln]
            defects = sp.inertia_defects(d["mass"], d["inertia"])
            if not defects:
                continue
            moments = _fmt(sp.principal_moments(d["inertia"])[0])
            if self.mode == "warn":
                kept.append(f"link '{ln}' (mass {d['mass']:.6g}, principal moments {moments}): {', '.join(defects)}")
            elif d["mass"] == 0.0:
                inert[ln] = None
                repaired.append(f"link '{ln}': mass 0 with a non-zero rotational inertia -> inertia dropped "
                                "(massless link)")
            else:
                d["inertia"] = sp.balance_inertia(d["inertia"])
                repaired.append(f"link '{ln}' (principal moments {moments}): {', '.join(defects)} -> moments set "
                                f"to their mean {d['inertia'][0, 0]:.6g} (as MuJoCo's balanceinertia)")
        # moving bodies: each link's host is the nearest link at or above it on a moving joint (or the
        # floating root); links fixed to the world have none. T[ln]: pose of ln in its host's frame.
        host, T, groups = {}, {}, {}
        for ln in order:  # parents first
            if ln == base:
                host[ln], T[ln] = (ln if floating_base and ln != WORLD else None), _EYE4
            else:
                jel = joints[parent_joint[ln]]
                par = jel.find("parent").get("link")
                if jel.get("type") == "fixed":
                    host[ln] = host[par]
                    T[ln] = T[par] @ self.origin(jel, f"joint '{parent_joint[ln]}'")
                else:
                    host[ln], T[ln] = ln, _EYE4  # shared, never written
            if host[ln] is not None and inert[ln]:
                groups.setdefault(host[ln], []).append(ln)
        comps = {}
        for h, members in groups.items():
            if members == [h]:  # the usual case: no link fixed to it
                d = inert[h]
                comps[h] = (d["mass"], d["com"], d["inertia"])
                continue
            parts = [(inert[ln]["mass"], T[ln][:3, :3] @ inert[ln]["com"] + T[ln][:3, 3],
                      T[ln][:3, :3] @ inert[ln]["inertia"] @ T[ln][:3, :3].T) for ln in members]
            m = sum(p[0] for p in parts)
            c = sum(p[0] * p[1] for p in parts) / m if m > 0.0 else parts[0][1]
            Ic = sum(p[2] + p[0] * ((p[1] - c) @ (p[1] - c) * np.eye(3) - np.outer(p[1] - c, p[1] - c))
                     for p in parts)
            if not (np.isfinite(m) and np.isfinite(c).all() and np.isfinite(Ic).all()):
                raise self.err(f"link '{h}': the inertia of the moving body with the links fixed to it is not "
                               f"finite (mass {m!r}): the values overflow")
            comps[h] = (m, c, Ic)
        hosts = list(comps)
        lams = sp.principal_moments(np.array([comps[h][2] for h in hosts]).reshape(-1, 3, 3))[0]
        for k in np.nonzero(~(lams[:, 0] > sp.INERTIA_RTOL * lams[:, 2]))[0]:  # not positive definite
            h = hosts[k]
            members = groups[h]
            m, c, Ic = comps[h]
            what = f"link '{h}'" + (f" (moving joint '{parent_joint[h]}')" if h in parent_joint else
                                    " (floating root)")
            if m == 0.0 and not np.any(Ic):
                continue  # massless, accepted as given
            lam = sp.principal_moments(Ic)[0]
            new, dI = sp.lift_inertia(m, Ic)
            if inert[h]:
                inert[h] = dict(inert[h], inertia=inert[h]["inertia"] + dI)
            else:
                inert[h] = {"mass": 0.0, "com": c, "inertia": dI}
            others = [ln for ln in members if ln != h]
            with_fixed = f" with the fixed link(s) {', '.join(map(repr, others))}" if others else ""
            repaired.append(f"{what}: the rotational inertia of the moving body{with_fixed} is "
                            f"{'singular' if lam[0] >= -sp.INERTIA_RTOL * abs(lam[2]) else 'indefinite'} "
                            f"(principal moments {_fmt(lam)}): added a mass-free inertia to link '{h}' raising "
                            f"them to {_fmt(sp.principal_moments(new)[0])}")
        if kept:
            self.warnings.append(f"{self.src}: {len(kept)} link inertia(s) kept as given although no physical "
                                 "mass distribution has them (Pinocchio keeps them too; inertia='fix' repairs "
                                 "them, inertia='strict' refuses them): " + "; ".join(kept))
        if repaired:
            self.warnings.append(f"{self.src}: {len(repaired)} inertia(s) repaired (inertia='{self.mode}'): "
                                 + "; ".join(repaired))

    @staticmethod
    def suspects(names, inert):
        """The links among ``names`` whose inertia may be non-physical (one batched
        eigen-decomposition instead of one per link); :func:`sp.inertia_defects`
        then decides for these few."""
        if not names:
            return []
        I = np.array([inert[ln]["inertia"] for ln in names])
        m = np.array([inert[ln]["mass"] for ln in names])
        lam = sp.principal_moments(I)[0]
        # looser than inertia_defects' tests (no tolerances), so that no defective link is missed
        bad = (lam[:, 0] < 0.0) | (lam[:, 0] + lam[:, 1] < lam[:, 2] * (1.0 + 1e-12)) | (m == 0.0)
        return [names[k] for k in np.nonzero(bad)[0]]

    def massless_subtrees(self, order, base, parent_joint, joints, children, inert, floating_base):
        """Warn about moving links whose whole subtree has no mass and no inertia
        (e.g. Romeo's fingers, links without <inertial>): they are kept as given,
        but the joint-space inertia is then singular, so forward dynamics fail."""
        has = {}
        for ln in reversed(order):
            d = inert.get(ln)
            has[ln] = bool(d and (d["mass"] > 0.0 or d["inertia"].any())) or any(has[c] for c in children[ln])
        covered, found = {}, []
        for ln in order:  # parents first: report only the top of each massless moving subtree
            if ln == base:
                moving = floating_base and ln != WORLD
                up = False
            else:
                moving = joints[parent_joint[ln]].get("type") != "fixed"
                up = covered[joints[parent_joint[ln]].find("parent").get("link")]
            covered[ln] = up or (moving and not has[ln])
            if covered[ln] and not up:
                found.append(f"'{ln}'" + (f" (joint '{parent_joint[ln]}')" if ln in parent_joint else " (floating root)"))
        if found:
            self.warnings.append(f"{self.src}: moving link(s) with no mass or inertia in themselves or any link below "
                                 f"them: {', '.join(found)}; the joint-space inertia is singular, so forward "
                                 "dynamics (aba) will raise a SimulationError (Pinocchio returns NaN); give them "
                                 "an <inertial>")

    def materials(self):
        """rgba of the robot-level ``<material name><color rgba/></material>`` entries."""
        out = {}
        for m in self.root.findall("material"):
            c = m.find("color")
            if m.get("name") and c is not None:
                out[m.get("name")] = tuple(self.numbers(c, "rgba", 4, None, f"material '{m.get('name')}' <color>"))
        return out

    def geometries(self, link, lname, tag, materials):
        """(name, shape, size, placement, mesh, scale, rgba) of each ``<tag>``."""
        out = []
        for k, el in enumerate(link.findall(tag)):
            what = f"link '{lname}' <{tag}> {k}"
            T = self.origin(el, what)
            g = el.find("geometry")
            shapes = list(g) if g is not None else []
            if not shapes:
                raise self.err(f"{what}: no <geometry> shape")
            s = shapes[0]
            mesh, scale = None, (1.0, 1.0, 1.0)
            if s.tag == "box":
                size = tuple(self.numbers(s, "size", 3, None, f"{what} <box>"))
            elif s.tag == "sphere":
                size = (self.numbers(s, "radius", 1, None, f"{what} <sphere>"),)
            elif s.tag in ("cylinder", "capsule"):
                size = (self.numbers(s, "radius", 1, None, f"{what} <{s.tag}>"),
                        self.numbers(s, "length", 1, None, f"{what} <{s.tag}>"))
            elif s.tag == "mesh":
                fn = s.get("filename")
                if not fn:
                    raise self.err(f"{what} <mesh>: missing attribute 'filename'")
                try:
                    mesh = resolve_mesh(fn, self.package_dirs, self.base_dir, self.allow_mesh_outside)
                except ModelFileError as e:
                    raise self.err(f"{what} <mesh>: {e}") from None
                sc = s.get("scale")
                if sc is not None and len(sc.split()) == 1:
                    scale = (self.numbers(s, "scale", 1, None, f"{what} <mesh>"),) * 3
                else:
                    scale = tuple(self.numbers(s, "scale", 3, (1.0, 1.0, 1.0), f"{what} <mesh>"))
                size = ()
            else:
                raise self.err(f"{what}: unknown geometry <{s.tag}>")
            rgba = None
            mat = el.find("material")
            if mat is not None:
                c = mat.find("color")
                if c is not None:
                    rgba = tuple(self.numbers(c, "rgba", 4, None, f"{what} <material>"))
                else:
                    rgba = materials.get(mat.get("name"))
            out.append((el.get("name") or f"{lname}_{k}", s.tag, size, T, mesh, scale, rgba))
        if tag == "collision":
            # Pinocchio's extension <collision_checking><capsule name="N"/></collision_checking>: the
            # cylinder named N is a capsule of the same radius and length; <convex name="N"/>: the mesh
            # named N is its convex hull (every mesh on a moving body is, but this one also when static)
            checking = link.findall("collision_checking")
            capsules = {c.get("name") for cc in checking for c in cc.findall("capsule")}
            convex = {c.get("name") for cc in checking for c in cc.findall("convex")}
            out = [(o[0], "capsule") + o[2:] if o[1] == "cylinder" and o[0] in capsules else
                   (o[0], "convex") + o[2:] if o[1] == "mesh" and o[0] in convex else o for o in out]
        return out

    # -------------------------------------------------------------- topology
    def build(self, floating_base, merge_fixed, name):
        """Check the topology (one tree of links), then add bodies, geometry and couplings and build."""
        root = self.root
        links = {}
        for el in root.findall("link"):
            ln = el.get("name")
            if not ln:
                raise self.err("a <link> has no name attribute")
            if ln in links:
                raise self.err(f"duplicate link '{ln}'")
            links[ln] = el
        if not links:
            raise self.err("the robot has no <link>")
        joints = {}          # name -> element, document order
        parent_joint = {}    # child link -> joint name
        children = {ln: [] for ln in links}
        for el in root.findall("joint"):
            jn = el.get("name")
            if not jn:
                raise self.err("a <joint> has no name attribute")
            if jn in joints:
                raise self.err(f"duplicate joint '{jn}'")
            jt = el.get("type")
            if jt not in URDF_JOINT_TYPES:
                raise self.err(f"joint '{jn}' has unknown type '{jt}' (URDF types: "
                               f"{', '.join(URDF_JOINT_TYPES)})")
            ends = []
            for tag in ("parent", "child"):
                e = el.find(tag)
                if e is None or not e.get("link"):
                    raise self.err(f"joint '{jn}': missing <{tag} link=...>")
                if e.get("link") not in links:
                    raise self.err(f"joint '{jn}': {tag} link '{e.get('link')}' does not exist")
                ends.append(e.get("link"))
            par, chi = ends
            if chi in parent_joint:
                raise self.err(f"link '{chi}' is the child of two joints: '{parent_joint[chi]}' and '{jn}'")
            parent_joint[chi] = jn
            children[par].append(chi)
            joints[jn] = el
        roots = [ln for ln in links if ln not in parent_joint]
        if not roots:
            raise self.err(f"kinematic cycle: every link is the child of a joint (links: "
                           f"{', '.join(repr(n) for n in links)})")
        if len(roots) > 1:
            raise self.err(f"several root links (links that are no joint's child): "
                           f"{', '.join(repr(n) for n in roots)}; a URDF must be one tree")
        base = roots[0]
        order, stack = [], [base]
        while stack:
            ln = stack.pop()
            order.append(ln)
            stack.extend(reversed(children[ln]))
        if len(order) != len(links):
            cyc = [repr(n) for n in links if n not in set(order)]
            raise self.err(f"kinematic cycle among links {', '.join(cyc)} (not connected to the root "
                           f"link '{base}')")
        if WORLD in links and base != WORLD:
            raise self.err(f"link '{WORLD}' is reserved for the fixed world and must be the root link")
        if base == WORLD and floating_base:
            raise self.err(f"the root link is named '{WORLD}' (the fixed world): it cannot float "
                           "(floating_base=True)")

        b = ModelBuilder(name or root.get("name") or "urdf")
        materials = self.materials()
        taken = set(joints)
        root_joint = unique_name("root_joint", taken)
        inertials = {ln: self.inertial(links[ln], ln) for ln in order}
        if self.mode == "strict":
            self.fold_singular(order, base, parent_joint, joints, inertials, floating_base)
        else:
            self.lenient(order, base, parent_joint, joints, inertials, floating_base)
        self.massless_subtrees(order, base, parent_joint, joints, children, inertials, floating_base)
        for ln in order:
            link = links[ln]
            inert = inertials[ln] or {}
            if ln == WORLD:
                pass  # the world body exists already; its inertia has no effect
            elif ln == base:
                self.add_body(b, f"link '{ln}'", ln, parent=WORLD, joint="free" if floating_base else "fixed",
                              joint_name=root_joint, **inert)
            else:
                jn = parent_joint[ln]
                self.add_body(b, f"joint '{jn}'", ln, **self.joint_kwargs(joints[jn], jn), **inert)
            for tag in ("collision", "visual"):
                for gname, shape, size, T, mesh, scale, rgba in self.geometries(link, ln, tag, materials):
                    what = f"link '{ln}' <{tag}> '{gname}'"
                    kw = (self.collision_mesh(what, mesh, scale) if tag == "collision" and shape in ("mesh", "convex")
                          else {})
                    try:
                        b.add_geometry(ln, shape, size, T, name=gname, mesh=mesh, scale=scale, rgba=rgba,
                                       collision=tag == "collision", visual=tag == "visual", **kw)
                    except ModelError as e:
                        raise self.err(str(e)) from e
        if self.mesh_problems:
            self.warnings.append(f"{self.src}: {len(self.mesh_problems)} collision mesh(es) left out of collision "
                                 "(model.skipped_geometries; meshes='strict' refuses them): "
                                 + "; ".join(self.mesh_problems))
        dangling = []
        for jn, el in joints.items():
            mim = el.find("mimic")
            if mim is None:
                continue
            if el.get("type") == "fixed":
                continue  # a fixed joint has no coordinate to couple (Pinocchio ignores it too)
            what = f"joint '{jn}' <mimic>"
            other = mim.get("joint")
            if not other:
                raise self.err(f"{what}: missing attribute 'joint'")
            if other not in joints:
                # Pinocchio ignores <mimic> unless asked; a dangling one (alex_psyonic_hands names
                # 'index_q1' for 'Left_index_q1') must not refuse a robot it loads
                dangling.append(f"joint '{jn}' mimics '{other}'")
                continue
            for j in (jn, other):
                if joints[j].get("type") not in _ONE_DOF:
                    raise self.err(f"{what}: joint '{j}' is of type '{joints[j].get('type')}'; only "
                                   f"revolute, continuous and prismatic joints can mimic or be mimicked")
            b.add_coupling(jn, other, self.numbers(mim, "multiplier", 1, 1.0, what),
                           self.numbers(mim, "offset", 1, 0.0, what))
        if dangling:
            self.warnings.append(f"{self.src}: <mimic> of joints that do not exist, ignored (no coupling): "
                                 + ", ".join(dangling))
        try:
            return b.build(merge_fixed=merge_fixed)
        except ModelFileError:
            raise
        except ModelError as e:
            raise self.err(str(e)) from e

    def add_body(self, b, what, *args, **kw):
        """``b.add_body`` with builder errors re-raised as ModelFileError naming ``what``
        (lenient modes: the builder accepts the inertias this loader kept)."""
        try:
            b.add_body(*args, physical_inertia=self.mode == "strict", **kw)
        except ModelFileError:
            raise
        except ModelError as e:
            raise self.err(f"{what}: {e}") from e

    def joint_kwargs(self, el, jn):
        """Builder keywords of the body attached by URDF joint ``el``."""
        jt = el.get("type")
        what = f"joint '{jn}'"
        kw = dict(parent=el.find("parent").get("link"), joint=URDF_JOINT_TYPES[jt], joint_name=jn,
                  placement=self.origin(el, what))
        if jt in ("revolute", "continuous", "prismatic", "planar"):
            ax = el.find("axis")
            axis = (np.array([1.0, 0.0, 0.0]) if ax is None else
                    self.numbers(ax, "xyz", 3, (1.0, 0.0, 0.0), f"{what} <axis>"))
            norm = math.hypot(*axis.tolist())  # overflow-safe like np.linalg.norm, 10x cheaper
            if norm < 1e-12:
                raise self.err(f"{what}: <axis xyz> is zero")
            kw["axis"] = axis / norm
        if jt in _ONE_DOF:
            lim = el.find("limit")
            if lim is not None:
                lw = f"{what} <limit>"
                if jt != "continuous":
                    kw["lower"] = self.numbers(lim, "lower", 1, 0.0, lw)
                    kw["upper"] = self.numbers(lim, "upper", 1, 0.0, lw)
                    if kw["lower"] > kw["upper"]:
                        raise self.err(f"{lw}: lower {kw['lower']} exceeds upper {kw['upper']}")
                kw["velocity_limit"] = self.numbers(lim, "velocity", 1, np.inf, lw)
                kw["effort_limit"] = self.numbers(lim, "effort", 1, np.inf, lw)
                for k in ("velocity_limit", "effort_limit"):
                    if kw[k] < 0:
                        raise self.err(f"{lw}: {k.split('_')[0]} must be non-negative, got {kw[k]}")
            dyn = el.find("dynamics")
            if dyn is not None:
                dw = f"{what} <dynamics>"
                kw["damping"] = self.numbers(dyn, "damping", 1, 0.0, dw)
                kw["friction"] = self.numbers(dyn, "friction", 1, 0.0, dw)
                for k in ("damping", "friction"):
                    if kw[k] < 0:
                        raise self.err(f"{dw}: {k} must be non-negative, got {kw[k]}")
        return kw
