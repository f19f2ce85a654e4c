"""MJCF loader: ``load_mjcf(path_or_string) -> Model``.

The MJCF file is compiled by MuJoCo itself (``mujoco.MjModel.from_xml_path``
/ ``from_xml_string``: defaults, classes, ``<include>``, ``inertiafromgeom``,
angle units and frames are all resolved by MuJoCo's compiler), and the
compiled ``MjModel`` is converted. No MJCF is parsed here. The ``mujoco``
package is an optional dependency (``pip install multibody[mjcf]``).

Conversion (SI units; MuJoCo's compiled angles are radians):

* Bodies. MuJoCo body ``B`` (``body_pos``, ``body_quat`` (w, x, y, z) in its
  parent at ``qpos0``) with joints ``j1 .. jn`` moves as
  ``T_B = T_parent · T_B0 · J1(q1) · ... · Jn(qn)`` where each hinge / ball
  turns about the anchor ``jnt_pos`` and axis ``jnt_axis`` given in B's frame
  (``Jk = Trans(p_k) · Rot_k(q_k) · Trans(-p_k)``; a slide translates along
  its axis and its anchor is irrelevant).
* **Joint position.** In multibody a joint turns about its joint frame's
  origin and the child body frame coincides with the joint frame at q = 0,
  so a joint becomes a body whose frame sits at the joint anchor. Rule: if a
  body has one joint whose anchor is B's origin (the common case), the
  multibody body ``B`` carries that joint and ``B``'s frame is MuJoCo's body
  frame. Otherwise each joint ``jk`` gets a massless body ``"<B>_<jk>"`` (its
  frame at the anchor, axes parallel to B's at that joint; an unnamed joint
  is called ``"<B>_joint<k>"``, k its rank in B, and so is its body), chained in
  MuJoCo's joint order, and ``B`` is attached to the last one by a fixed joint
  at ``Trans(-p_n)`` — so, merged (the default), ``B`` is a frame of kind
  "fixed" of the body ``"<B>_<jn>"``, which carries B's inertia and geoms.
  Either way **the frame named after a MuJoCo body always has MuJoCo's body
  pose** (``xpos``, ``xmat``) and inertias, geoms, sites, child bodies and
  equality data keep MuJoCo's body-frame coordinates.
* **Several joints on one body** are chained through the massless
  intermediate bodies ``"<B>_<joint>"`` described above (the last joint is
  carried by ``B`` itself if its anchor is at B's origin).
* Coordinates: ``q`` equals MuJoCo's ``qpos`` for every joint (a hinge /
  slide ``ref`` is folded into the joint placement: MuJoCo moves by
  ``qpos - qpos0``); ball: quaternion (w, x, y, z); free: (position,
  quaternion) of the body in the world. Velocities equal ``qvel`` except for
  a free joint: MuJoCo's ``qvel = (v_world, ω_body)``, multibody's
  ``v = (ω_body, Rᵀ v_world)``.
* Joint types: hinge -> revolute, slide -> prismatic, ball -> spherical,
  free -> free. A body without joints (including mocap bodies, at their
  compiled pose) is welded to its parent (a fixed joint ``"<B>_fixed"``),
  merged into it when ``merge_fixed`` (default True).
* Limits: ``jnt_range`` of limited hinges and slides (a ball's cone limit is
  not represented); ``effort_limit`` = max |``jnt_actfrcrange``| when
  ``actuatorfrclimited``. Per dof: ``dof_damping`` -> damping,
  ``dof_frictionloss`` -> friction, ``dof_armature`` -> armature (free-joint
  dofs permuted to angular first). Stiffness, tendons, actuators, contact
  parameters are not converted.
* Inertia: ``body_mass``, ``body_ipos`` and the principal moments
  ``body_inertia`` in the frame ``body_iquat``, rotated into the body frame
  (``I = R diag(I_p) Rᵀ``). Mass 0 with zero inertia is massless.
* Geoms -> geometries (collision if ``contype`` or ``conaffinity`` is
  non-zero; all visual), placement ``geom_pos``/``geom_quat``, sizes
  converted from MuJoCo's half sizes: box full extents, sphere (radius),
  capsule / cylinder (radius, full length), ellipsoid (semi-axes), plane
  (full extents; 0 = infinite), mesh (the asset's file and scale, placed so
  that the file's vertices map to MuJoCo's recentred mesh), hfield / sdf
  (MuJoCo's ``geom_size``). Named sites become frames of kind "user".
* Gravity ``opt.gravity``. Active equality constraints are recorded with
  ``add_equality(kind, name, obj1, obj2, eq_data)``: kind "connect", "weld",
  "joint", "tendon", "flex", ...; ``obj1``/``obj2`` are the names of the
  MuJoCo objects (bodies or sites for connect / weld — frames of the model —
  joints, tendons), ``None`` if absent; ``data`` is MuJoCo's ``eq_data``.
"""
import numpy as np

from ..errors import ModelError, ModelFileError
from ..model.builder import WORLD, ModelBuilder
from ._common import axis_angle_rotation, pose, quat_to_rotation, read_source, unique_name

_FREE_DOF_ORDER = [3, 4, 5, 0, 1, 2]  # MuJoCo free-joint dofs (lin, ang) -> multibody (ang, lin)


def _import_mujoco():
    """The ``mujoco`` module, or an ImportError telling how to install it."""
    try:
        import mujoco
    except ImportError as e:
        raise ImportError("load_mjcf needs the 'mujoco' package: pip install multibody[mjcf] "
                          "(or pip install mujoco)") from e
    return mujoco


def load_mjcf(path_or_string, name=None, merge_fixed=True):
    """Load a MuJoCo MJCF model into a :class:`~multibody.model.Model`.

    Parameters
    ----------
    path_or_string : str, pathlib.Path, mujoco.MjModel or mujoco.MjSpec
        An MJCF file name, the MJCF XML itself (a string starting with
        ``'<'``), or an already built MuJoCo model / spec.
    name : str, optional
        Model name (default: MuJoCo's model name).
    merge_fixed : bool
        Default True: bodies welded to their parent (no joints) are merged
        into it and kept as frames, like the URDF loader.

    The compiled model is converted as the module docstring says; in short,
    ``q`` = MuJoCo ``qpos``, ``v`` = ``qvel`` except free joints (angular
    first, linear in the body frame), and the frame named after each MuJoCo
    body has MuJoCo's body pose. Raises :class:`~multibody.errors.ModelFileError`
    (with MuJoCo's message) if the file is missing or MuJoCo cannot compile it,
    and ImportError if ``mujoco`` is not installed.
    """
    mujoco = _import_mujoco()
    if isinstance(path_or_string, mujoco.MjModel):
        m, src = path_or_string, "MjModel"
    elif isinstance(path_or_string, mujoco.MjSpec):
        src = "MjSpec"
        try:
            m = path_or_string.compile()
        except Exception as e:  # MuJoCo raises ValueError and friends
            raise ModelFileError(f"MuJoCo could not compile the {src}: {' '.join(str(e).split())}") from None
    else:
        text, path = read_source(path_or_string, "MJCF")
        src = f"MJCF file '{path}'" if path else "MJCF string"
        try:
            m = mujoco.MjModel.from_xml_path(path) if path else mujoco.MjModel.from_xml_string(text)
        except Exception as e:
            raise ModelFileError(f"{src}: MuJoCo could not load it: {' '.join(str(e).split())}") from None
    return _Converter(mujoco, m, src).build(name, merge_fixed)


class _Converter:
    """Turns a compiled ``mujoco.MjModel`` into ModelBuilder calls (one use)."""

    def __init__(self, mujoco, m, src):
        """``mujoco``: the module; ``m``: the MjModel; ``src``: how messages name the input."""
        self.mj, self.m, self.src = mujoco, m, src

    def err(self, msg):
        """A ModelFileError whose message starts with the source."""
        return ModelFileError(f"{self.src}: {msg}")

    def name(self, objtype, i, default):
        """Name of MuJoCo object ``i`` of ``objtype``; ``default`` if unnamed, None if ``i < 0``."""
        if i < 0:
            return None
        s = self.mj.mj_id2name(self.m, objtype, int(i))
        return s if s else default

    def add_body(self, b, what, *args, **kw):
        """``b.add_body`` with builder errors re-raised as ModelFileError naming ``what``."""
        try:
            b.add_body(*args, **kw)
        except ModelError as e:
            raise self.err(f"{what}: {e}") from e

    def build(self, name, merge_fixed):
        """Bodies and joints (see the module docstring), then geoms, sites, equalities."""
        mj, m = self.mj, self.m
        O = mj.mjtObj
        model_name = name or bytes(m.names).split(b"\0")[0].decode() or "mjcf"
        b = ModelBuilder(model_name, gravity=np.array(m.opt.gravity, dtype=float))
        body_names = [WORLD] + [self.name(O.mjOBJ_BODY, i, f"body{i}") for i in range(1, m.nbody)]
        taken_bodies = set(body_names)
        jnt_names = [self.name(O.mjOBJ_JOINT, j, None) for j in range(m.njnt)]
        named = [bool(n) for n in jnt_names]
        taken_joints = {n for n in jnt_names if n}
        for j in range(m.njnt):
            if not named[j]:  # "<body>_joint<k>", k = the joint's rank in its body
                bj = int(m.jnt_bodyid[j])
                jnt_names[j] = unique_name(f"{body_names[bj]}_joint{j - int(m.body_jntadr[bj])}", taken_joints)
        JT = mj.mjtJoint
        for i in range(1, m.nbody):
            B, P = body_names[i], body_names[m.body_parentid[i]]
            T0 = pose(quat_to_rotation(m.body_quat[i]), m.body_pos[i])
            inert = self.inertial(i, B)
            parent, T = P, T0  # next joint frame: pose T in the frame of body `parent`
            done = False
            jadr, jnum = int(m.body_jntadr[i]), int(m.body_jntnum[i])
            for k in range(jnum):
                j = jadr + k
                jt, jn = int(m.jnt_type[j]), jnt_names[j]
                kw = self.joint_kwargs(j, jt)
                if jt == JT.mjJNT_FREE:
                    if jnum != 1 or P != WORLD:  # MuJoCo's compiler forbids these already
                        raise self.err(f"body '{B}': a free joint must be the only joint of a top-level body")
                    self.add_body(b, f"body '{B}'", B, WORLD, "free", None, joint_name=jn, **kw, **inert)
                    done = True
                    break
                axis = np.array(m.jnt_axis[j], dtype=float)
                qpos0 = m.qpos0[m.jnt_qposadr[j]]
                if jt == JT.mjJNT_HINGE:
                    p, Tref = np.array(m.jnt_pos[j], dtype=float), pose(axis_angle_rotation(axis, -qpos0))
                elif jt == JT.mjJNT_SLIDE:
                    p, Tref = np.zeros(3), pose(None, -qpos0 * axis)
                else:  # ball: qpos is absolute
                    p, Tref = np.array(m.jnt_pos[j], dtype=float), np.eye(4)
                placement = T @ pose(None, p) @ Tref
                jtype = {JT.mjJNT_HINGE: "revolute", JT.mjJNT_SLIDE: "prismatic", JT.mjJNT_BALL: "spherical"}[jt]
                if k == jnum - 1 and not np.any(p):
                    self.add_body(b, f"joint '{jn}' of body '{B}'", B, parent, jtype, placement, axis=axis,
                                  joint_name=jn, **kw, **inert)
                    done = True
                else:
                    bn = unique_name(f"{B}_{jn}" if named[j] else jn, taken_bodies)
                    self.add_body(b, f"joint '{jn}' of body '{B}'", bn, parent, jtype, placement, axis=axis,
                                  joint_name=jn, **kw)
                    parent, T = bn, pose(None, -p)
            if not done:
                self.add_body(b, f"body '{B}'", B, parent, "fixed", T,
                              joint_name=unique_name(f"{B}_fixed", taken_joints), **inert)
        self.geoms(b, body_names)
        self.sites(b, body_names, taken_bodies)
        self.equalities(b)
        try:
            return b.build(merge_fixed=merge_fixed)
        except ModelError as e:
            raise self.err(str(e)) from e

    def inertial(self, i, B):
        """Builder keywords (mass, com, inertia in the MuJoCo body frame) of body ``i``; {} if massless."""
        m = self.m
        mass = float(m.body_mass[i])
        moments = np.array(m.body_inertia[i], dtype=float)
        if mass == 0.0:
            if np.any(moments):
                raise self.err(f"body '{B}': mass 0 with a non-zero inertia {moments.tolist()}")
            return {}
        R = quat_to_rotation(m.body_iquat[i])
        return {"mass": mass, "com": np.array(m.body_ipos[i], dtype=float), "inertia": R @ np.diag(moments) @ R.T}

    def joint_kwargs(self, j, jt):
        """Builder keywords of joint ``j``: per-dof damping, friction, armature (angular first), limits."""
        m, JT = self.m, self.mj.mjtJoint
        d0 = int(m.jnt_dofadr[j])
        nv = {JT.mjJNT_FREE: 6, JT.mjJNT_BALL: 3}.get(jt, 1)
        sl = slice(d0, d0 + nv)
        order = _FREE_DOF_ORDER if jt == JT.mjJNT_FREE else list(range(nv))
        kw = {"damping": np.asarray(m.dof_damping[sl], dtype=float)[order],
              "friction": np.asarray(m.dof_frictionloss[sl], dtype=float)[order],
              "armature": np.asarray(m.dof_armature[sl], dtype=float)[order]}
        if jt in (JT.mjJNT_HINGE, JT.mjJNT_SLIDE) and m.jnt_limited[j]:
            kw["lower"], kw["upper"] = (float(x) for x in m.jnt_range[j])
        if m.jnt_actfrclimited[j]:
            kw["effort_limit"] = float(np.max(np.abs(m.jnt_actfrcrange[j])))
        return kw

    def geoms(self, b, body_names):
        """Every geom as a geometry of the frame named after its MuJoCo body (sizes converted)."""
        mj, m = self.mj, self.m
        G = mj.mjtGeom
        shapes = {G.mjGEOM_PLANE: "plane", G.mjGEOM_HFIELD: "hfield", G.mjGEOM_SPHERE: "sphere",
                  G.mjGEOM_CAPSULE: "capsule", G.mjGEOM_ELLIPSOID: "ellipsoid", G.mjGEOM_CYLINDER: "cylinder",
                  G.mjGEOM_BOX: "box", G.mjGEOM_MESH: "mesh", G.mjGEOM_SDF: "sdf"}
        for g in range(m.ngeom):
            B = body_names[m.geom_bodyid[g]]
            gt = int(m.geom_type[g])
            s = np.array(m.geom_size[g], dtype=float)
            T = pose(quat_to_rotation(m.geom_quat[g]), m.geom_pos[g])
            mesh, scale = None, (1.0, 1.0, 1.0)
            if gt == G.mjGEOM_SPHERE:
                size = (s[0],)
            elif gt in (G.mjGEOM_CAPSULE, G.mjGEOM_CYLINDER):
                size = (s[0], 2.0 * s[1])
            elif gt == G.mjGEOM_BOX:
                size = tuple(2.0 * s)
            elif gt == G.mjGEOM_PLANE:
                size = (2.0 * s[0], 2.0 * s[1])
            elif gt == G.mjGEOM_ELLIPSOID:
                size = tuple(s)
            elif gt == G.mjGEOM_MESH:
                size = ()
                k = int(m.geom_dataid[g])
                mesh = self.mesh_file(k)
                scale = tuple(float(x) for x in m.mesh_scale[k])
                # MuJoCo recentres the mesh: compiled vertex = R_mᵀ (scaled file vertex - p_m)
                T = T @ np.linalg.inv(pose(quat_to_rotation(m.mesh_quat[k]), m.mesh_pos[k]))
            else:
                size = tuple(s)
            collision = bool(m.geom_contype[g] or m.geom_conaffinity[g])
            b.add_geometry(B, shapes.get(gt, f"mjgeom{gt}"), size, T,
                           name=self.name(mj.mjtObj.mjOBJ_GEOM, g, f"{B}_geom{g}"), mesh=mesh, scale=scale,
                           rgba=tuple(float(x) for x in m.geom_rgba[g]), collision=collision, visual=True)

    def mesh_file(self, k):
        """The file of mesh asset ``k`` as MuJoCo recorded it (else the mesh name)."""
        m = self.m
        adr = int(m.mesh_pathadr[k]) if hasattr(m, "mesh_pathadr") else -1
        if adr >= 0 and hasattr(m, "paths"):
            raw = bytes(m.paths[adr:])
            return raw[:raw.index(b"\0")].decode() if b"\0" in raw else raw.decode()
        return self.name(self.mj.mjtObj.mjOBJ_MESH, k, f"mesh{k}")

    def sites(self, b, body_names, taken_bodies):
        """Named sites as frames of kind 'user' (renamed ``<site>_1`` on a name clash)."""
        mj, m = self.mj, self.m
        taken = set(taken_bodies)
        for s in range(m.nsite):
            n = self.name(mj.mjtObj.mjOBJ_SITE, s, None)
            if not n:
                continue
            b.add_frame(unique_name(n, taken), body_names[m.site_bodyid[s]],
                        pose(quat_to_rotation(m.site_quat[s]), m.site_pos[s]), kind="user")

    def equalities(self, b):
        """Active equality constraints, recorded with ``add_equality``."""
        mj, m = self.mj, self.m
        for e in range(m.neq):
            if not m.eq_active0[e]:
                continue
            kind = mj.mjtEq(int(m.eq_type[e])).name.replace("mjEQ_", "").lower()
            # eq_objtype is only meaningful for connect / weld (body or site)
            ot = {"joint": mj.mjtObj.mjOBJ_JOINT, "tendon": mj.mjtObj.mjOBJ_TENDON}.get(kind)
            if ot is None:
                ot = mj.mjtObj.mjOBJ_FLEX if kind.startswith("flex") else mj.mjtObj(int(m.eq_objtype[e]))
            obj2 = int(m.eq_obj2id[e])
            b.add_equality(kind, self.name(mj.mjtObj.mjOBJ_EQUALITY, e, f"equality{e}"),
                           self.name(ot, m.eq_obj1id[e], f"{ot.name}{m.eq_obj1id[e]}"),
                           self.name(ot, obj2, f"{ot.name}{obj2}") if obj2 >= 0 else None,
                           np.array(m.eq_data[e], dtype=float), objtype=ot.name.replace("mjOBJ_", "").lower())
