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
* ``<inertial>``: mass (kg), centre of mass ``<origin xyz>`` and the
  inertia tensor about the centre of mass given in the inertial frame
  rotated by ``<origin rpy>``; it is rotated into the link frame,
  ``I_link = R I Rᵀ``. A link without ``<inertial>`` is massless. **Mass
  policy:** an explicit mass 0 with an all-zero inertia is also massless
  (accepted, as Pinocchio does); a mass 0 with a non-zero inertia, a negative
  or non-finite mass, and an inertia that is not positive semi-definite or
  violates the triangle inequality are errors naming the link. A *singular*
  but physical inertia (a point mass or a thin rod, e.g. TALOS's
  force-torque links) is accepted on a link attached by a fixed joint: it is
  folded into its parent link (parallel-axis theorem; the dynamics are
  unchanged) because ModelBuilder requires positive-definite inertias; on a
  moving joint it is an error, and on a root fixed to the world it is
  dropped (the world does not move).
* ``<visual>`` / ``<collision>``: box (full extents), sphere (radius),
  cylinder and capsule (radius, length; axis z), mesh (file + scale) become
  geometries named after the element's ``name`` or ``<link>_<k>``; a visual's
  ``<material>`` colour (inline or a robot-level material) is its rgba.
  Mesh files are resolved (see :func:`resolve_mesh`); an unresolvable mesh
  is kept as the original string, never an error.
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
file and the offending element (link, joint, attribute).
"""
import os
import xml.etree.ElementTree as ET

import numpy as np

from ..errors import ModelError, ModelFileError
from ..model.builder import WORLD, ModelBuilder
from ..spatial import spatial as sp
from ..spatial.euler import rpy_to_rotation
from ._common import pose, read_source, unique_name

#: URDF joint type -> multibody joint type
URDF_JOINT_TYPES = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic",
                    "fixed": "fixed", "floating": "free", "planar": "planar"}
_ONE_DOF = ("revolute", "continuous", "prismatic")


def load_urdf(path_or_string, floating_base=False, package_dirs=None, merge_fixed=True, name=None):
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
        ``<dir>/P/...``, or in ``<dir>/...`` if ``<dir>`` is named P. The
        folders above the URDF file and ``$ROS_PACKAGE_PATH`` are tried next.
    merge_fixed : bool
        Default True: links attached by fixed joints are merged into their
        parent body and kept as frames (kind "fixed"), like Pinocchio. False
        keeps them as bodies with 0-DoF joints.
    name : str, optional
        Model name (default: the ``<robot name>``).

    Returns a Model whose bodies, joints and frames carry the URDF link and
    joint names (SI units: m, rad, kg, kg m², N, N m). See the module
    docstring for the conventions. Raises
    :class:`~multibody.errors.ModelFileError` naming the file and the
    offending element on malformed input.
    """
    text, path = read_source(path_or_string, "URDF")
    src = f"URDF file '{path}'" if path else "URDF string"
    try:
        root = ET.parse(path).getroot() if path else ET.fromstring(text)
    except ET.ParseError as e:
        raise ModelFileError(f"{src} is not well-formed XML: {e}") from None
    except (OSError, ValueError) as e:
        raise ModelFileError(f"{src} cannot be read: {e}") from None
    if root.tag != "robot":
        raise ModelFileError(f"{src}: the root element is <{root.tag}>, expected <robot>")
    base_dir = os.path.dirname(path) if path else None
    return _UrdfParser(root, src, base_dir, package_dirs).build(floating_base, merge_fixed, name)


def resolve_mesh(filename, package_dirs=(), base_dir=None):
    """The local file a URDF mesh reference names, or ``filename`` unchanged
    if no such file is found (a missing mesh is never an error).

    ``package://P/rest`` is looked up as ``<d>/P/rest`` and, if ``d`` is
    named P, ``<d>/rest``, for ``d`` in ``package_dirs``, then ``base_dir``
    (the URDF file's folder) and its parents, then ``$ROS_PACKAGE_PATH``.
    ``file://path`` and plain paths are taken relative to ``base_dir``.
    """
    if filename.startswith("package://"):
        rest = filename[len("package://"):]
        pkg, _, sub = rest.partition("/")
        dirs = list(package_dirs)
        if base_dir:
            d = os.path.abspath(base_dir)
            while True:
                dirs.append(d)
                up = os.path.dirname(d)
                if up == d:
                    break
                d = up
        dirs += [d for d in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if d]
        for d in dirs:
            for cand in (os.path.join(d, pkg, sub),
                         os.path.join(d, sub) if os.path.basename(os.path.normpath(d)) == pkg else None):
                if cand and os.path.isfile(cand):
                    return os.path.abspath(cand)
        return filename
    local = filename[len("file://"):] if filename.startswith("file://") else filename
    if "://" in local:
        return filename
    if not os.path.isabs(local) and base_dir:
        cand = os.path.join(base_dir, local)
        if os.path.isfile(cand):
            return os.path.abspath(cand)
    elif os.path.isfile(local):
        return os.path.abspath(local)
    return filename


def _dirs(package_dirs):
    """``package_dirs`` (None, one path or several) as a list of str."""
    if package_dirs is None:
        return []
    if isinstance(package_dirs, (str, os.PathLike)):
        package_dirs = [package_dirs]
    return [os.fspath(d) for d in package_dirs]


class _UrdfParser:
    """Turns a parsed ``<robot>`` element into ModelBuilder calls (one use)."""

    def __init__(self, root, src, base_dir, package_dirs):
        """``root``: the <robot> element; ``src``: how messages name the input."""
        self.root, self.src, self.base_dir = root, src, base_dir
        self.package_dirs = _dirs(package_dirs)

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
        try:
            vals = [float(x) for x in s.split()]
        except ValueError:
            raise self.err(f"{what}: attribute {attr}=\"{s}\" is not numeric") from None
        if len(vals) != n:
            raise self.err(f"{what}: attribute {attr}=\"{s}\" must have {n} number(s)")
        if not np.all(np.isfinite(vals)):
            raise self.err(f"{what}: attribute {attr}=\"{s}\" is not finite")
        return np.array(vals) if n > 1 else vals[0]

    def origin(self, el, what):
        """4x4 pose of the ``<origin xyz rpy>`` child of ``el`` (identity if absent)."""
        o = el.find("origin")
        if o is None:
            return np.eye(4)
        xyz = self.numbers(o, "xyz", 3, (0.0, 0.0, 0.0), f"{what} <origin>")
        rpy = self.numbers(o, "rpy", 3, (0.0, 0.0, 0.0), f"{what} <origin>")
        return pose(rpy_to_rotation(np.asarray(rpy, dtype=float)), xyz)

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
        comps = {k: (self.numbers(i_el, k, 1, 0.0, f"{what} <inertia>") if i_el is not None else 0.0)
                 for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        I = np.array([[comps["ixx"], comps["ixy"], comps["ixz"]],
                      [comps["ixy"], comps["iyy"], comps["iyz"]],
                      [comps["ixz"], comps["iyz"], comps["izz"]]])
        if mass < 0.0:
            raise self.err(f"{what}: mass must be positive, got {mass}")
        if mass == 0.0:
            if np.any(I):
                raise self.err(f"{what}: mass is 0 but the inertia is not zero (a massless link "
                               "must have a zero inertia)")
            return None
        R = T[:3, :3]
        I_link = R @ I @ R.T
        I_link = 0.5 * (I_link + I_link.T)
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
            ev = np.linalg.eigvalsh(0.5 * (I + I.T))
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
            moments = np.linalg.eigvalsh(d["inertia"]).tolist()
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
                               "positive-definite rotational inertia for a moving body")
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
                mesh = resolve_mesh(fn, self.package_dirs, self.base_dir)
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
        self.fold_singular(order, base, parent_joint, joints, inertials, floating_base)
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
                    b.add_geometry(ln, shape, size, T, name=gname, mesh=mesh, scale=scale, rgba=rgba,
                                   collision=tag == "collision", visual=tag == "visual")
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
                raise self.err(f"{what}: mimicked joint '{other}' does not exist")
            for j in (jn, other):
                if joints[j].get("type") not in _ONE_DOF:
                    raise self.err(f"{what}: joint '{j}' is of type '{joints[j].get('type')}'; only "
                                   f"revolute, continuous and prismatic joints can mimic or be mimicked")
            b.add_coupling(jn, other, self.numbers(mim, "multiplier", 1, 1.0, what),
                           self.numbers(mim, "offset", 1, 0.0, what))
        try:
            return b.build(merge_fixed=merge_fixed)
        except ModelFileError:
            raise
        except ModelError as e:
            raise self.err(str(e)) from e

    def add_body(self, b, what, *args, **kw):
        """``b.add_body`` with builder errors re-raised as ModelFileError naming ``what``."""
        try:
            b.add_body(*args, **kw)
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
            if np.linalg.norm(axis) < 1e-12:
                raise self.err(f"{what}: <axis xyz> is zero")
            kw["axis"] = axis / np.linalg.norm(axis)
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
