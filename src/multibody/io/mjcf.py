"""MJCF loader: ``load_mjcf(path_or_string) -> Model``.

The MJCF file is compiled by MuJoCo itself (``mujoco.MjSpec.from_file`` /
``from_string``, then ``compile``: defaults, classes, ``<include>``,
``inertiafromgeom``, angle units and frames are all resolved by MuJoCo's
compiler, whose ``balanceinertia`` setting the ``inertia=`` option drives),
and the compiled ``MjModel`` is converted. No MJCF is parsed here. The
``mujoco`` package is an optional dependency (``pip install multibody[mjcf]``).
docs/loading.md ("MJCF") is the user's guide.

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
  not represented). Effort limit of a hinge / slide: the sum over its motor
  actuators (no activation dynamics, fixed gain, no bias, joint
  transmission) of |gear| · min(|gain| · max|ctrlrange| if ctrllimited,
  max|forcerange| if forcelimited) — MuJoCo's largest ``qfrc_actuator`` —
  capped by max |``jnt_actfrcrange``| when
  ``actuatorfrclimited`` (which alone also gives the limit); infinite
  without a limited motor. Per dof: ``dof_damping`` -> damping,
  ``dof_frictionloss`` -> friction, ``dof_armature`` -> armature (free-joint
  dofs permuted to angular first).
* Springs: ``jnt_stiffness`` -> ``model.stiffness`` (nv, the joint's
  stiffness on each of its velocity coordinates) and ``qpos_spring`` ->
  ``model.spring_reference`` (nq); the Simulator applies them as
  :class:`~multibody.forces.JointSpring` elements, whose force is MuJoCo's
  ``qfrc_spring``.
* Tendons -> ``model.tendons`` (:class:`~multibody.model.model.TendonSpec`):
  fixed tendons (joints and ``wrap_prm`` coefficients) and spatial tendons
  through sites only (via points: the site's body frame and ``site_pos``;
  a :class:`~multibody.forces.paths.Path`), with ``tendon_stiffness``,
  ``tendon_damping`` and ``tendon_lengthspring`` (the Simulator's
  :class:`~multibody.forces.actuators.TendonSpring`, MuJoCo's passive
  tendon force).
* Actuators -> ``model.actuators`` (:class:`~multibody.model.model.ActuatorSpec`,
  docs/actuators.md): every actuator MuJoCo compiled to a general one
  (``<motor>``, ``<position>``, ``<velocity>``, ``<intvelocity>``,
  ``<damper>``, ``<cylinder>``, ``<muscle>``, ``<general>``) with one
  control, ``dyntype`` none / integrator / filter / filterexact / muscle,
  ``gaintype`` fixed / affine / muscle, ``biastype`` none / affine / muscle,
  on a hinge or slide joint (``joint``, ``jointinparent``) or a loaded
  tendon: gear, prm arrays, the ranges MuJoCo limits (ctrl, force, act),
  ``actearly``, and for muscles the compiled ``actuator_lengthrange`` and
  the peak force (``force < 0``: MuJoCo's ``scale / actuator_acc0``,
  resolved here). The Simulator drives them by default. A range whose low
  end exceeds its high end (which MuJoCo's ``autolimits`` silently leaves
  unlimited) or a non-finite parameter is a ModelFileError naming the
  actuator. Motors also still give effort limits (below).
* Not converted, and named (counts and names) in one
  :class:`~multibody.errors.ModelWarning` per load: actuators on other
  transmissions (site, slider-crank, body, ball or free joints, tendons
  not converted) or of other types (dcmotor, PID, SO(3), user, several
  controls or activations, a delay), actuator ``damping`` / ``armature``,
  actuators whose group is disabled, spatial tendons with pulleys or
  wrapping geoms, tendon length limits, friction loss, armature, actuator
  force limits and nonlinear spring / damper terms, sensors (read them
  with :func:`multibody.load_sensors`), flexes, skins,
  keyframes, inactive equalities, ball cone limits, mocap bodies (welded
  at their compiled pose), gravity compensation, fluid forces, unnamed
  sites, MuJoCo 4's nonlinear joint spring / damper terms.
* Inertia: ``body_mass``, ``body_ipos`` and the principal moments
  ``body_inertia`` in the frame ``body_iquat``, rotated into the body frame
  (``I = R diag(I_p) Rᵀ``). Mass 0 with zero inertia is massless. MuJoCo's
  compiler has validated the inertias (``physical_inertia=False`` in the
  builder): a body without joints may keep a point mass, as in MuJoCo.
* Every compiled number used is checked finite; a NaN or infinity is a
  :class:`~multibody.errors.ModelFileError` naming the element.
* Geoms -> geometries (collision if ``contype`` or ``conaffinity`` is
  non-zero or a ``<pair>`` names it; all visual), placement
  ``geom_pos``/``geom_quat``, sizes converted from MuJoCo's half sizes: box
  full extents, sphere (radius), capsule / cylinder (radius, full length),
  ellipsoid (semi-axes), plane (full extents; 0 = infinite), mesh (the
  asset's file and scale, placed so that the file's vertices map to
  MuJoCo's recentred mesh; ``vertices``/``faces`` are MuJoCo's compiled
  ones mapped back to that frame; on a moving body the collision geometry
  is their "convex" hull), hfield (``size`` = (2 ``hfield_size[0]``, 2
  ``hfield_size[1]``, ``hfield_size[2]``, ``hfield_size[3]``), ``heights`` =
  ``hfield_data`` · ``hfield_size[2]``), sdf (visual only, MuJoCo's
  ``geom_size``). Contact parameters per geom: ``geom_friction``,
  ``contype``, ``conaffinity``, ``condim``, ``priority``, ``margin``,
  ``gap``, ``solref``, ``solimp``. ``<contact><pair>`` ->
  ``model.collision_pairs`` (geoms by name, the pair's own parameters),
  ``<exclude>`` -> ``model.excluded_link_pairs`` (MuJoCo body names),
  ``<flag filterparent>`` -> ``model.filter_parent``, and
  ``model.collision_parent`` maps each body to the body hosting its MuJoCo
  weld parent (docs/collision.md). Named sites become frames of kind "user".
* Gravity ``opt.gravity``. Active equality constraints are recorded with
  ``add_equality(kind, name, obj1, obj2, eq_data)``: kind "connect", "weld",
  "joint", "tendon", "flex", ...; ``obj1``/``obj2`` name the objects as the
  model does (bodies or sites for connect / weld — frames of the model, a
  body merged into its parent included; joints by the loader's joint
  names; tendons), ``None`` if absent; ``data`` is MuJoCo's ``eq_data``.
  :mod:`multibody.constraints` puts a connect / weld on a frame's host body
  at the frame's placement.
"""
from __future__ import annotations

import warnings

from typing import Any

import numpy as np

from .._typing import Source
from ..errors import InputError, ModelError, ModelFileError, ModelWarning
from ..model.builder import WORLD, ModelBuilder
from ..model.model import Model
from ..model.geometry import convex_hull
from ..model.model import ActuatorSpec, TendonSpec
from ._common import axis_angle_rotation, pose, quat_to_rotation, read_source, unique_name
from ..model.meshes import MESH_MODES

_FREE_DOF_ORDER = [3, 4, 5, 0, 1, 2]  # MuJoCo free-joint dofs (lin, ang) -> multibody (ang, lin)


def _import_mujoco():
    """The ``mujoco`` module, or an ImportError telling how to install it."""
    try:
        import mujoco
    except ImportError as e:
        raise ImportError("load_mjcf needs the 'mujoco' package: pip install multibody[mjcf] "
                          "(or pip install mujoco)") from e
    return mujoco


INERTIA_MODES = ("warn", "strict", "fix")


def load_mjcf(path_or_string: Source | Any, name: str | None = None, merge_fixed: bool = True, inertia: str = "warn",
              meshes: str = "warn") -> Model:
    """Load a MuJoCo MJCF model into a :class:`~multibody.model.Model`.

    Parameters
    ----------
    path_or_string : str, pathlib.Path, mujoco.MjModel or mujoco.MjSpec
        An MJCF file name, the MJCF XML itself (a string starting with
        ``'<'``), or an already built MuJoCo model / spec (a spec is copied,
        never modified).
    name : str, optional
        Model name (default: MuJoCo's model name).
    merge_fixed : bool
        Default True: bodies welded to their parent (no joints) are merged
        into it and kept as frames, like the URDF loader.
    inertia : {"warn", "strict", "fix"}
        What to do with a body inertia whose principal moments violate the
        triangle inequality ``A + B >= C``. MuJoCo's compiler decides, through
        its ``balanceinertia`` setting (which replaces the three moments of
        such a body by their mean, keeping the mass and the frame):

        * ``"warn"`` (default): compile as the file says; if MuJoCo refuses a
          triangle-inequality violation, compile again with
          ``balanceinertia`` and emit a :class:`~multibody.errors.ModelWarning`
          naming the bodies and their moments before and after;
        * ``"strict"``: ``balanceinertia`` off (even if the file turns it
          on): a violation is a :class:`~multibody.errors.ModelFileError`;
        * ``"fix"``: ``balanceinertia`` on, silently.

        Differences from :func:`~multibody.io.load_urdf`'s option of the same
        name: the repair is MuJoCo's (the mean of the moments), not
        multibody's; MuJoCo refuses a moving body whose mass or inertia is
        below ``mjMINVAL`` in every mode (there is no repair of singular
        inertias: it is a ModelFileError, with MuJoCo's message); and for an
        already compiled ``mujoco.MjModel`` the option does nothing (its
        inertias are taken as they are).
    meshes : {"warn", "strict", "skip"}
        MuJoCo reads the mesh files (a missing one is MuJoCo's compile
        error); the convex hull of each mesh asset's compiled vertices is
        computed once. ``"warn"`` (default): a collision geom whose mesh is
        degenerate (no volume), or whose type has no collision counterpart
        (sdf), is left out of collision (``model.skipped_geometries``) with
        one ModelWarning naming it; ``"strict"``: a ModelFileError
        instead; ``"skip"``: no hulls, mesh geoms are left out of collision.

    Returns
    -------
    Model
        The compiled model converted as the module docstring says; in short,
        ``q`` = MuJoCo ``qpos``, ``v`` = ``qvel`` except free joints (angular
        first, linear in the body frame), and the frame named after each
        MuJoCo body has MuJoCo's body pose. Joint springs are kept in
        ``model.stiffness`` / ``model.spring_reference``, actuators and
        tendons in ``model.actuators`` / ``model.tendons`` (the Simulator's
        default actuators; motors also become effort limits).

    Raises
    ------
    ModelFileError
        With MuJoCo's message, if the file is missing, MuJoCo cannot compile
        it, or a compiled number multibody uses is not finite (naming the
        element).
    ImportError
        If ``mujoco`` is not installed.

    Warns
    -----
    ModelWarning
        One, naming whatever is not converted; others for balanced inertias
        and left-out meshes.
    """
    if inertia not in INERTIA_MODES:
        raise InputError(f"load_mjcf: inertia must be one of {', '.join(map(repr, INERTIA_MODES))}, "
                         f"got {inertia!r}")
    if meshes not in MESH_MODES:
        raise InputError(f"load_mjcf: meshes must be one of {', '.join(map(repr, MESH_MODES))}, got {meshes!r}")
    mujoco = _import_mujoco()
    if isinstance(path_or_string, mujoco.MjModel):
        m, src, balanced = path_or_string, "MjModel", []
    else:
        if isinstance(path_or_string, mujoco.MjSpec):
            src = "MjSpec"
            try:
                spec = path_or_string.copy()
            except Exception as e:  # MuJoCo raises ValueError and friends
                raise ModelFileError(f"{src}: MuJoCo could not copy it: {_oneline(e)}") from None
        else:
            text, path = read_source(path_or_string, "MJCF")
            src = f"MJCF file '{path}'" if path else "MJCF string"
            try:
                spec = mujoco.MjSpec.from_file(path) if path else mujoco.MjSpec.from_string(text)
            except Exception as e:
                raise ModelFileError(f"{src}: MuJoCo could not load it: {_oneline(e)}") from None
        m, balanced = _compile(spec, src, inertia)
    conv = _Converter(mujoco, m, src, meshes)
    model = conv.build(name, merge_fixed)
    if conv.mesh_problems:
        warnings.warn(ModelWarning(f"{src}: {len(conv.mesh_problems)} collision geom(s) left out of collision "
                                   "(model.skipped_geometries; meshes='strict' refuses them): "
                                   + "; ".join(conv.mesh_problems)), stacklevel=2)
    if balanced:
        warnings.warn(ModelWarning(
            f"{src}: MuJoCo's compiler balanced (balanceinertia) the inertia of "
            + "; ".join(balanced) + " (principal moments violating A + B >= C set to their mean; "
            "load_mjcf(..., inertia='strict') refuses, inertia='fix' balances silently)"), stacklevel=2)
    if conv.dropped:
        warnings.warn(ModelWarning(f"{src}: not converted (multibody has no counterpart): "
                                   + "; ".join(conv.dropped)), stacklevel=2)
    return model


def _oneline(e):
    """An exception's message on one line."""
    return " ".join(str(e).split())


def _compile(spec, src, mode):
    """Compile ``spec`` (modified: its ``compiler.balanceinertia``) per the
    ``inertia`` mode of :func:`load_mjcf`. Returns ``(MjModel, balanced)``,
    ``balanced`` describing the bodies MuJoCo balanced in "warn" mode."""
    if mode != "warn":
        spec.compiler.balanceinertia = mode == "fix"
    try:
        return spec.compile(), []
    except Exception as e:
        msg = _oneline(e)
        if mode != "warn" or "balanceinertia" not in msg or spec.compiler.balanceinertia:
            hint = " (load_mjcf(..., inertia='fix') lets MuJoCo balance it)" if "balanceinertia" in msg else ""
            raise ModelFileError(f"{src}: MuJoCo could not compile it: {msg}{hint}") from None
    spec.compiler.balanceinertia = True
    try:
        m = spec.compile()
    except Exception as e:
        raise ModelFileError(f"{src}: MuJoCo could not compile it: {_oneline(e)}") from None
    return m, _balanced_bodies(spec, m) or [f"the body named in MuJoCo's message ({msg})"]


def _balanced_bodies(spec, m):
    """Descriptions of the bodies whose explicit inertia violates ``A + B >=
    C`` in ``spec`` and whose moments in the compiled ``m`` are their mean
    (what ``balanceinertia`` does). ``spec.bodies`` is in MuJoCo's body order."""
    out = []
    bodies = list(spec.bodies)
    if len(bodies) != m.nbody:
        return out
    for i in range(1, m.nbody):
        sb = bodies[i]
        full = np.asarray(sb.fullinertia, dtype=float)
        if np.isfinite(full[0]):  # (Ixx, Iyy, Izz, Ixy, Ixz, Iyz)
            I = np.array([[full[0], full[3], full[4]], [full[3], full[1], full[5]], [full[4], full[5], full[2]]])
            moments = np.linalg.eigvalsh(I) if np.isfinite(I).all() else np.full(3, np.nan)
        else:
            moments = np.asarray(sb.inertia, dtype=float)
        if not np.isfinite(moments).all():
            continue
        a, b_, c = np.sort(moments)
        compiled = np.asarray(m.body_inertia[i], dtype=float)
        mean = moments.mean()
        if a + b_ < c and np.allclose(compiled, mean, rtol=1e-9, atol=0):
            out.append(f"body '{sb.name or f'body{i}'}' ({moments.tolist()} -> {compiled.tolist()})")
    return out


def _names(items, limit=8):
    """``'a', 'b', ...`` (at most ``limit`` names, then how many more)."""
    items = list(items)
    shown = ", ".join(f"'{n}'" for n in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


class _Converter:
    """Turns a compiled ``mujoco.MjModel`` into ModelBuilder calls (one use).
    After :meth:`build`, ``dropped`` lists what was not converted (one
    string per kind, with counts and names)."""

    def __init__(self, mujoco, m, src, meshes="warn"):
        """``mujoco``: the module; ``m``: the MjModel; ``src``: how messages name
        the input; ``meshes``: the option of :func:`load_mjcf`."""
        self.mj, self.m, self.src, self.meshes = mujoco, m, src, meshes
        self.dropped = []
        self.mesh_problems = []

    def err(self, msg):
        """A ModelFileError whose message starts with the source."""
        return ModelFileError(f"{self.src}: {msg}")

    def finite(self, x, what):
        """``x`` as a float array; a ModelFileError naming ``what`` if any entry is not finite."""
        a = np.array(x, dtype=float)
        if not np.isfinite(a).all():
            raise self.err(f"{what} is not finite: {a.tolist()}")
        return a

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
        """Bodies and joints (see the module docstring), then geoms, sites,
        equalities, joint springs, actuators and the list of what is dropped."""
        mj, m = self.mj, self.m
        O = mj.mjtObj
        model_name = name or bytes(m.names).split(b"\0")[0].decode(errors="replace") or "mjcf"
        b = ModelBuilder(model_name, gravity=self.finite(m.opt.gravity, "option gravity"))
        body_names = [WORLD] + [self.name(O.mjOBJ_BODY, i, f"body{i}") for i in range(1, m.nbody)]
        taken_bodies = set(body_names)
        jnt_names = [self.name(O.mjOBJ_JOINT, j, None) for j in range(m.njnt)]
        named = [bool(n) for n in jnt_names]
        taken_joints = {n for n in jnt_names if n}
        for j in range(m.njnt):
            if not named[j]:  # "<body>_joint<k>", k = the joint's rank in its body
                bj = int(m.jnt_bodyid[j])
                jnt_names[j] = unique_name(f"{body_names[bj]}_joint{j - int(m.body_jntadr[bj])}", taken_joints)
        self.jnt_names = jnt_names
        JT = mj.mjtJoint
        for i in range(1, m.nbody):
            B, P = body_names[i], body_names[m.body_parentid[i]]
            T0 = pose(quat_to_rotation(self.finite(m.body_quat[i], f"body '{B}': quat")),
                      self.finite(m.body_pos[i], f"body '{B}': pos"))
            inert = self.inertial(i, B)
            parent, T = P, T0  # next joint frame: pose T in the frame of body `parent`
            done = False
            jadr, jnum = int(m.body_jntadr[i]), int(m.body_jntnum[i])
            for k in range(jnum):
                j = jadr + k
                jt, jn = int(m.jnt_type[j]), jnt_names[j]
                kw = self.joint_kwargs(j, jt, jn)
                if jt == JT.mjJNT_FREE:
                    if jnum != 1 or P != WORLD:  # MuJoCo's compiler forbids these already
                        raise self.err(f"body '{B}': a free joint must be the only joint of a top-level body")
                    self.add_body(b, f"body '{B}'", B, WORLD, "free", None, joint_name=jn, **kw, **inert)
                    done = True
                    break
                axis = self.finite(m.jnt_axis[j], f"joint '{jn}': axis")
                qpos0 = float(self.finite(m.qpos0[m.jnt_qposadr[j]], f"joint '{jn}': ref (qpos0)"))
                jpos = self.finite(m.jnt_pos[j], f"joint '{jn}': pos")
                if jt == JT.mjJNT_HINGE:
                    p, Tref = jpos, pose(axis_angle_rotation(axis, -qpos0))
                elif jt == JT.mjJNT_SLIDE:
                    p, Tref = np.zeros(3), pose(None, -qpos0 * axis)
                else:  # ball: qpos is absolute
                    p, Tref = jpos, np.eye(4)
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
        self.pairs_and_excludes(b, body_names)
        self.sites(b, body_names, taken_bodies)
        self.equalities(b, body_names)
        try:
            model = b.build(merge_fixed=merge_fixed)
        except ModelError as e:
            raise self.err(str(e)) from e
        tendons = self.tendons(body_names)
        model = model._evolve(collision_parent=self.collision_parents(model, body_names), tendons=tendons,
                              actuators=self.actuators({t.name for t in tendons}))
        self.list_dropped(body_names)
        return model

    def inertial(self, i, B):
        """Builder keywords (mass, com, inertia in the MuJoCo body frame) of body ``i``; {} if massless."""
        m = self.m
        mass = float(self.finite(m.body_mass[i], f"body '{B}': mass"))
        moments = self.finite(m.body_inertia[i], f"body '{B}': inertia")
        com = self.finite(m.body_ipos[i], f"body '{B}': inertial pos")
        iquat = self.finite(m.body_iquat[i], f"body '{B}': inertial quat")
        if mass == 0.0 and not np.any(moments):
            return {}
        R = quat_to_rotation(iquat)
        # MuJoCo's compiler has checked the inertias (moving bodies: mass and moments above mjMINVAL,
        # A + B >= C unless balanced); a body without joints may keep a point mass (zero moments) or
        # moments without mass, which MuJoCo accepts and which merge into the parent harmlessly
        return {"mass": mass, "com": com, "inertia": R @ np.diag(moments) @ R.T, "physical_inertia": False}

    def joint_kwargs(self, j, jt, jn):
        """Builder keywords of joint ``j`` (named ``jn``): per-dof damping,
        friction, armature (angular first), limits, effort limit (the
        joint's ``actfrcrange`` and its motor actuators, see :meth:`motor_limit`)."""
        m, JT = self.m, self.mj.mjtJoint
        d0 = int(m.jnt_dofadr[j])
        nv = {JT.mjJNT_FREE: 6, JT.mjJNT_BALL: 3}.get(jt, 1)
        sl = slice(d0, d0 + nv)
        order = _FREE_DOF_ORDER if jt == JT.mjJNT_FREE else list(range(nv))
        kw = {"damping": self.finite(m.dof_damping[sl], f"joint '{jn}': damping")[order],
              "friction": self.finite(m.dof_frictionloss[sl], f"joint '{jn}': frictionloss")[order],
              "armature": self.finite(m.dof_armature[sl], f"joint '{jn}': armature")[order]}
        if jt in (JT.mjJNT_HINGE, JT.mjJNT_SLIDE):
            # checked even when unlimited: MuJoCo's autolimits leaves a joint with range="nan 1" unlimited
            rng = self.finite(m.jnt_range[j], f"joint '{jn}': range")
            if m.jnt_limited[j]:
                kw["lower"], kw["upper"] = float(rng[0]), float(rng[1])
        # joint spring (τ = -k (q - qpos_spring)): the Simulator adds it as a JointSpring (same force as
        # MuJoCo's qfrc_spring; free joints: translation in the world frame)
        stiff = float(self.finite(m.jnt_stiffness[j], f"joint '{jn}': stiffness"))
        if stiff < 0:
            raise self.err(f"joint '{jn}': stiffness must be non-negative, got {stiff}")
        q0, nq = int(m.jnt_qposadr[j]), {JT.mjJNT_FREE: 7, JT.mjJNT_BALL: 4}.get(jt, 1)
        kw["stiffness"] = stiff
        kw["spring_reference"] = self.finite(m.qpos_spring[q0:q0 + nq], f"joint '{jn}': springref")
        limit = np.inf
        if m.jnt_actfrclimited[j]:
            limit = float(np.max(np.abs(self.finite(m.jnt_actfrcrange[j], f"joint '{jn}': actuatorfrcrange"))))
        if jt in (JT.mjJNT_HINGE, JT.mjJNT_SLIDE):
            limit = min(limit, self.motor_limit(j))
        if np.isfinite(limit):
            kw["effort_limit"] = limit
        return kw

    # ------------------------------------------------------------ actuators
    def is_motor(self, a):
        """Whether actuator ``a`` is a motor (direct force ``gain · ctrl``:
        no activation dynamics, fixed gain, no bias) on a hinge or slide
        joint transmission — the only actuators turned into effort limits."""
        mj, m = self.mj, self.m
        if int(m.actuator_trntype[a]) not in (mj.mjtTrn.mjTRN_JOINT, mj.mjtTrn.mjTRN_JOINTINPARENT):
            return False
        if (int(m.actuator_dyntype[a]) != mj.mjtDyn.mjDYN_NONE or int(m.actuator_gaintype[a]) != mj.mjtGain.mjGAIN_FIXED
                or int(m.actuator_biastype[a]) != mj.mjtBias.mjBIAS_NONE):
            return False
        return int(m.jnt_type[m.actuator_trnid[a, 0]]) in (mj.mjtJoint.mjJNT_HINGE, mj.mjtJoint.mjJNT_SLIDE)

    def motor_limit(self, j):
        """Largest joint force the motor actuators of hinge/slide joint ``j``
        can apply (inf if none or if one is unlimited): the sum over its
        motors of ``|gear| · min(|gain| · max|ctrlrange| if ctrllimited,
        max|forcerange| if forcelimited)`` — MuJoCo's actuator force
        ``gain · ctrl`` clamped to ``forcerange``, times the gear."""
        m = self.m
        total, found = 0.0, False
        for a in range(m.nu):
            if int(m.actuator_trnid[a, 0]) != j or not self.is_motor(a):
                continue
            found = True
            an = self.name(self.mj.mjtObj.mjOBJ_ACTUATOR, a, f"actuator{a}")
            gear = abs(float(self.finite(m.actuator_gear[a, 0], f"actuator '{an}': gear")))
            force = np.inf
            if m.actuator_ctrllimited[a]:
                ctrl = np.max(np.abs(self.finite(m.actuator_ctrlrange[a], f"actuator '{an}': ctrlrange")))
                force = abs(float(self.finite(m.actuator_gainprm[a, 0], f"actuator '{an}': gain"))) * ctrl
            if m.actuator_forcelimited[a]:
                force = min(force, np.max(np.abs(self.finite(m.actuator_forcerange[a],
                                                             f"actuator '{an}': forcerange"))))
            total += gear * force if gear > 0 else 0.0
        return total if found else np.inf

    # ------------------------------------------------------------ tendons, actuators
    def tendons(self, body_names):
        """The fixed tendons and the spatial tendons through sites as
        TendonSpec records; the others go to ``self.skipped`` (named in
        the dropped warning)."""
        mj, m = self.mj, self.m
        W = mj.mjtWrap
        out = []
        self.skipped = {"tendon": [], "actuator": []}
        self.tendon_names = [self.name(mj.mjtObj.mjOBJ_TENDON, t, f"tendon{t}") for t in range(m.ntendon)]
        for t in range(m.ntendon):
            tn = self.tendon_names[t]
            what = f"tendon '{tn}'"
            adr, num = int(m.tendon_adr[t]), int(m.tendon_num[t])
            kinds = [int(m.wrap_type[adr + i]) for i in range(num)]
            spring = self.finite(m.tendon_lengthspring[t], f"{what}: springlength")
            kw = dict(stiffness=float(self.finite(m.tendon_stiffness[t], f"{what}: stiffness")),
                      damping=float(self.finite(m.tendon_damping[t], f"{what}: damping")),
                      spring_length=(float(spring[0]), float(spring[1])))
            if kw["stiffness"] < 0 or kw["damping"] < 0 or spring[0] > spring[1]:
                raise self.err(f"{what}: stiffness and damping must be >= 0 and springlength low <= high, got "
                               f"{kw['stiffness']}, {kw['damping']}, {spring.tolist()}")
            if all(k == W.mjWRAP_JOINT for k in kinds):
                joints = tuple((self.jnt_names[int(m.wrap_objid[adr + i])],
                                float(self.finite(m.wrap_prm[adr + i], f"{what}: coef"))) for i in range(num))
                out.append(TendonSpec(tn, "fixed", joints=joints, **kw))
            elif all(k == W.mjWRAP_SITE for k in kinds):
                points = []
                for i in range(num):
                    site = int(m.wrap_objid[adr + i])
                    pos = self.finite(m.site_pos[site], f"{what}: site {site} pos")
                    points.append((body_names[int(m.site_bodyid[site])], tuple(float(x) for x in pos)))
                out.append(TendonSpec(tn, "spatial", points=tuple(points), **kw))
            else:
                self.skipped["tendon"].append(f"{tn} (pulleys or wrapping geoms)")
        return tuple(out)

    def actuators(self, tendons):
        """The actuators multibody drives as ActuatorSpec records (module
        docstring); the others go to ``self.skipped``."""
        mj, m = self.mj, self.m
        T, D, G, B = mj.mjtTrn, mj.mjtDyn, mj.mjtGain, mj.mjtBias
        dyn = {D.mjDYN_NONE: "none", D.mjDYN_INTEGRATOR: "integrator", D.mjDYN_FILTER: "filter",
               D.mjDYN_FILTEREXACT: "filterexact", D.mjDYN_MUSCLE: "muscle"}
        gain = {G.mjGAIN_FIXED: "fixed", G.mjGAIN_AFFINE: "affine", G.mjGAIN_MUSCLE: "muscle"}
        bias = {B.mjBIAS_NONE: "none", B.mjBIAS_AFFINE: "affine", B.mjBIAS_MUSCLE: "muscle"}
        hinge_slide = (mj.mjtJoint.mjJNT_HINGE, mj.mjtJoint.mjJNT_SLIDE)
        disabled = int(m.opt.disableactuator)
        out = []
        for a in range(m.nu):
            an = self.name(mj.mjtObj.mjOBJ_ACTUATOR, a, f"actuator{a}")
            what = f"actuator '{an}'"
            tr, tid = int(m.actuator_trntype[a]), int(m.actuator_trnid[a, 0])
            dt, gt, bt = int(m.actuator_dyntype[a]), int(m.actuator_gaintype[a]), int(m.actuator_biastype[a])
            why = None
            if tr in (T.mjTRN_JOINT, T.mjTRN_JOINTINPARENT) and int(m.jnt_type[tid]) in hinge_slide:
                kind, target = "joint", self.jnt_names[tid]
            elif tr == T.mjTRN_TENDON and self.tendon_names[tid] in tendons:
                kind, target = "tendon", self.tendon_names[tid]
            else:
                why = "its transmission"
            if why is None and (dt not in dyn or gt not in gain or bt not in bias):
                why = "its dynamics, gain or bias type"
            if why is None and (int(getattr(m, "actuator_ctrlnum", [[1]] * m.nu)[a]) != 1
                                or int(m.actuator_actnum[a]) != (0 if dt == D.mjDYN_NONE else 1)):
                why = "several controls or activations"
            if why is None and np.any(np.asarray(getattr(m, "actuator_delay", np.zeros(m.nu)))[a]):
                why = "a control delay"
            group = int(m.actuator_group[a])
            if why is None and 0 <= group <= 30 and disabled & (1 << group):
                why = "its group is disabled"
            if why is not None:
                self.skipped["actuator"].append(f"{an} ({why})")
                continue
            gear = float(self.finite(m.actuator_gear[a, 0], f"{what}: gear"))
            dynprm = self.finite(m.actuator_dynprm[a, :3], f"{what}: dynprm")
            gainprm = self.finite(m.actuator_gainprm[a, :9], f"{what}: gainprm")
            biasprm = self.finite(m.actuator_biasprm[a, :9], f"{what}: biasprm")
            ranges = {}
            for r in ("ctrl", "force", "act"):
                lo, hi = self.finite(getattr(m, f"actuator_{r}range")[a], f"{what}: {r}range")
                if lo > hi:
                    raise self.err(f"{what}: {r}range ({lo:g}, {hi:g}) has low > high (MuJoCo's autolimits leaves "
                                   f"it unlimited; fix or remove the range)")
                ranges[r] = (float(lo), float(hi)) if getattr(m, f"actuator_{r}limited")[a] else None
            lengthrange = None
            if "muscle" in (gain[gt], bias[bt]):
                lengthrange = tuple(float(x) for x in self.finite(m.actuator_lengthrange[a], f"{what}: lengthrange"))
                acc0 = float(self.finite(m.actuator_acc0[a], f"{what}: acc0"))
                for prm in (gainprm, biasprm):  # MuJoCo's automatic peak force: scale / acc0
                    if prm[2] < 0:
                        prm[2] = prm[3] / max(1e-15, acc0)
            out.append(ActuatorSpec(an, kind, target, gear, dyn[dt], tuple(dynprm.tolist()), gain[gt],
                                    tuple(gainprm.tolist()), bias[bt], tuple(biasprm.tolist()), ranges["ctrl"],
                                    ranges["force"], ranges["act"], bool(m.actuator_actearly[a]), lengthrange))
        return tuple(out)

    def list_dropped(self, body_names):
        """Fill ``self.dropped``: what the compiled model has and multibody does not convert."""
        mj, m = self.mj, self.m
        O = mj.mjtObj
        out = self.dropped

        def objs(objtype, n, default, keep=lambda i: True):
            return [self.name(objtype, i, f"{default}{i}") for i in range(n) if keep(i)]

        for kind in ("actuator", "tendon"):
            if self.skipped[kind]:
                out.append(f"{len(self.skipped[kind])} {kind}(s) ({_names(self.skipped[kind])})")
        extras = {"damping": "actuator_damping", "armature": "actuator_armature"}
        for what, attr in extras.items():
            hit = objs(O.mjOBJ_ACTUATOR, m.nu, "actuator",
                       lambda a, attr=attr: np.any(np.asarray(getattr(m, attr, np.zeros(m.nu)))[a]))
            if hit:
                out.append(f"the {what} of {len(hit)} actuator(s) ({_names(hit)})")
        for what, attrs in (("length limits", ("tendon_limited",)), ("friction loss", ("tendon_frictionloss",)),
                            ("armature", ("tendon_armature",)), ("actuator force limits", ("tendon_actfrclimited",)),
                            ("nonlinear spring/damper terms", ("tendon_stiffnesspoly", "tendon_dampingpoly",
                                                               "tendon_springyield"))):
            if not m.ntendon:
                break
            values = np.concatenate([np.asarray(getattr(m, attr, np.zeros(m.ntendon))).reshape(m.ntendon, -1)
                                     for attr in attrs], axis=1)
            hit = [self.tendon_names[t] for t in range(m.ntendon) if np.any(values[t])]
            if hit:
                out.append(f"the {what} of {len(hit)} tendon(s) ({_names(hit)})")
        if m.nsensor:
            out.append(f"{m.nsensor} sensor(s) ({_names(objs(O.mjOBJ_SENSOR, m.nsensor, 'sensor'))}; "
                       f"multibody.load_sensors reads them)")
        for objtype, n, what in ((O.mjOBJ_FLEX, m.nflex, "flex"), (O.mjOBJ_SKIN, m.nskin, "skin"),
                                 (O.mjOBJ_KEY, m.nkey, "keyframe")):
            if n:
                out.append(f"{n} {what}(s) ({_names(objs(objtype, n, what))})")
        inactive = objs(O.mjOBJ_EQUALITY, m.neq, "equality", lambda e: not m.eq_active0[e])
        if inactive:
            out.append(f"{len(inactive)} inactive equality constraint(s) ({_names(inactive)})")
        balls = [self.jnt_names[j] for j in range(m.njnt)
                 if int(m.jnt_type[j]) == mj.mjtJoint.mjJNT_BALL and m.jnt_limited[j]]
        if balls:
            out.append(f"the cone limit of {len(balls)} ball joint(s) ({_names(balls)})")
        nonlinear = [self.jnt_names[j] for j in range(m.njnt)
                     if np.any(np.asarray(getattr(m, "jnt_stiffnesspoly", np.zeros((m.njnt, 1)))[j]))
                     or np.any(np.asarray(getattr(m, "jnt_springyield", np.zeros(m.njnt))[j]))
                     or np.any(np.asarray(getattr(m, "dof_dampingpoly", np.zeros((m.nv, 1))))[
                         m.jnt_dofadr[j]:m.jnt_dofadr[j] + {0: 6, 1: 3}.get(int(m.jnt_type[j]), 1)])]
        if nonlinear:
            out.append(f"the nonlinear spring/damper terms (stiffness and damping polynomials, spring yield) "
                       f"of {len(nonlinear)} joint(s) ({_names(nonlinear)}; their linear stiffness and damping "
                       f"are kept)")
        mocap = [body_names[i] for i in range(1, m.nbody) if m.body_mocapid[i] >= 0]
        if mocap:
            out.append(f"{len(mocap)} mocap bod(ies) ({_names(mocap)}: welded at their compiled pose)")
        gravcomp = [body_names[i] for i in range(1, m.nbody) if m.body_gravcomp[i] != 0]
        if gravcomp:
            out.append(f"gravity compensation of {len(gravcomp)} bod(ies) ({_names(gravcomp)})")
        fluid = [n for n in ("density", "viscosity") if getattr(m.opt, n) != 0] + \
            (["wind"] if np.any(np.asarray(m.opt.wind)) else [])
        if fluid:
            out.append(f"fluid forces (option {', '.join(fluid)})")
        unnamed = sum(1 for s in range(m.nsite) if s not in self.site_frames)
        if unnamed:
            out.append(f"{unnamed} unnamed site(s)")

    def geoms(self, b, body_names):
        """Every geom as a geometry of the frame named after its MuJoCo body
        (sizes converted, contact parameters copied); collision geometry if
        its contype or conaffinity is non-zero or an explicit pair names it."""
        mj, m = self.mj, self.m
        G = mj.mjtGeom
        shapes = {G.mjGEOM_PLANE: "plane", G.mjGEOM_HFIELD: "hfield", G.mjGEOM_SPHERE: "sphere",
                  G.mjGEOM_CAPSULE: "capsule", G.mjGEOM_ELLIPSOID: "ellipsoid", G.mjGEOM_CYLINDER: "cylinder",
                  G.mjGEOM_BOX: "box", G.mjGEOM_MESH: "mesh", G.mjGEOM_SDF: "sdf"}
        in_pairs = set(np.asarray(m.pair_geom1).tolist()) | set(np.asarray(m.pair_geom2).tolist())
        self.geom_names = []
        meshes = {}  # mesh asset -> (vertices, faces, hull or MeshError): one hull per asset
        problems = []
        for g in range(m.ngeom):
            B = body_names[m.geom_bodyid[g]]
            gt = int(m.geom_type[g])
            gn = self.name(mj.mjtObj.mjOBJ_GEOM, g, f"{B}_geom{g}")
            self.geom_names.append(gn)
            what = f"geom '{gn}'"
            s = self.finite(m.geom_size[g], f"{what}: size")
            T = pose(quat_to_rotation(self.finite(m.geom_quat[g], f"{what}: quat")),
                     self.finite(m.geom_pos[g], f"{what}: pos"))
            collision = bool(m.geom_contype[g] or m.geom_conaffinity[g]) or g in in_pairs
            kw = dict(mesh=None, scale=(1.0, 1.0, 1.0), **self.contact(g, what))
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
                kw["mesh"] = mesh = self.mesh_file(k)
                kw["scale"] = tuple(float(x) for x in self.finite(m.mesh_scale[k], f"mesh '{mesh}': scale"))
                # MuJoCo recentres the mesh: compiled vertex = R_mᵀ (scaled file vertex - p_m). The
                # geometry frame stays the file's (scaled) frame: placement and vertices are moved back.
                Tm = pose(quat_to_rotation(self.finite(m.mesh_quat[k], f"mesh '{mesh}': quat")),
                          self.finite(m.mesh_pos[k], f"mesh '{mesh}': pos"))
                T = T @ np.linalg.inv(Tm)
                if k not in meshes:
                    meshes[k] = self.mesh_data(k, Tm, mesh)
                V, F, hull = meshes[k]
                kw.update(vertices=V, faces=F, warn_nonconvex=False)
                if collision and self.meshes == "skip":
                    kw["skip"] = "not used (meshes='skip')"
                elif collision and isinstance(hull, str):
                    if self.meshes == "strict":
                        raise self.err(f"{what}: {hull}")
                    problems.append(f"{what}: {hull}")
                    kw["skip"] = hull
                elif collision:
                    kw["hull"] = hull
            elif gt == G.mjGEOM_HFIELD:
                k = int(m.geom_dataid[g])
                hs = self.finite(m.hfield_size[k], f"{what}: hfield size")
                nrow, ncol, adr = int(m.hfield_nrow[k]), int(m.hfield_ncol[k]), int(m.hfield_adr[k])
                data = self.finite(m.hfield_data[adr:adr + nrow * ncol], f"{what}: hfield data")
                # MuJoCo normalizes the elevation data to [0, 1]; heights in metres are data · size[2]
                size = (2.0 * hs[0], 2.0 * hs[1], hs[2], hs[3])
                kw["heights"] = data.reshape(nrow, ncol) * hs[2]
            else:
                size = tuple(s)
                if collision:
                    kw["skip"] = f"MuJoCo geom type '{shapes.get(gt, gt)}' has no collision counterpart"
                    problems.append(f"{what}: {kw['skip']}")
            try:
                b.add_geometry(B, shapes.get(gt, f"mjgeom{gt}"), size, T, name=gn,
                               rgba=self.geom_colour(g, what),
                               collision=collision, visual=True, **kw)
            except ModelError as e:
                raise self.err(str(e)) from e
        self.mesh_problems = problems

    def geom_colour(self, g, what):
        """The colour (r, g, b, a) MuJoCo draws geom ``g`` with: its ``rgba``,
        or its material's when the geom's is MuJoCo's default (0.5, 0.5,
        0.5, 1) — a geom's rgba overrides its material's only when set (the
        MJCF reference, geom/rgba)."""
        m = self.m
        rgba = self.finite(m.geom_rgba[g], f"{what}: rgba")
        mat = int(m.geom_matid[g])
        if mat >= 0 and np.array_equal(rgba, np.array([0.5, 0.5, 0.5, 1.0], dtype=rgba.dtype)):
            rgba = self.finite(m.mat_rgba[mat], f"{what}: material rgba")
        return tuple(float(x) for x in rgba)

    def contact(self, g, what):
        """The contact parameters of geom ``g`` (MuJoCo's compiled values)."""
        m = self.m
        return dict(friction=self.finite(m.geom_friction[g], f"{what}: friction"),
                    contype=int(m.geom_contype[g]), conaffinity=int(m.geom_conaffinity[g]),
                    condim=int(m.geom_condim[g]), priority=int(m.geom_priority[g]),
                    margin=float(self.finite(m.geom_margin[g], f"{what}: margin")),
                    gap=float(self.finite(m.geom_gap[g], f"{what}: gap")),
                    solref=self.finite(m.geom_solref[g], f"{what}: solref"),
                    solimp=self.finite(m.geom_solimp[g], f"{what}: solimp"))

    def mesh_data(self, k, Tm, mesh):
        """``(vertices, faces, hull)`` of mesh asset ``k`` in the file's scaled
        frame (MuJoCo's compiled vertices mapped back by the mesh pose
        ``Tm``); ``hull`` is the convex hull, or why there is none (a
        string), or None with ``meshes="skip"``."""
        m = self.m
        va, vn = int(m.mesh_vertadr[k]), int(m.mesh_vertnum[k])
        fa, fn = int(m.mesh_faceadr[k]), int(m.mesh_facenum[k])
        Vc = self.finite(m.mesh_vert[va:va + vn], f"mesh '{mesh}': vertices")
        V = Vc @ Tm[:3, :3].T + Tm[:3, 3]
        F = np.array(m.mesh_face[fa:fa + fn], dtype=np.int64)
        if self.meshes == "skip":
            return V, F, None
        try:
            hull = convex_hull(V, f"mesh '{mesh}'")
        except ModelError as e:
            hull = str(e)
        return V, F, hull

    def pairs_and_excludes(self, b, body_names):
        """Explicit contact pairs (``<contact><pair>``), excluded body pairs
        (``<exclude>``) and the parent filter flag."""
        mj, m = self.mj, self.m
        for p in range(m.npair):
            pn = self.name(mj.mjtObj.mjOBJ_PAIR, p, None)
            what = f"contact pair '{pn or p}'"
            b.add_collision_pair(self.geom_names[m.pair_geom1[p]], self.geom_names[m.pair_geom2[p]], name=pn,
                                 condim=int(m.pair_dim[p]),
                                 friction=self.finite(m.pair_friction[p], f"{what}: friction"),
                                 solref=self.finite(m.pair_solref[p], f"{what}: solref"),
                                 solreffriction=self.finite(m.pair_solreffriction[p], f"{what}: solreffriction"),
                                 solimp=self.finite(m.pair_solimp[p], f"{what}: solimp"),
                                 margin=float(self.finite(m.pair_margin[p], f"{what}: margin")),
                                 gap=float(self.finite(m.pair_gap[p], f"{what}: gap")))
        for e in range(m.nexclude):
            sig = int(m.exclude_signature[e])  # (body1 << 16) + body2
            b.exclude_collisions(body_names[sig >> 16], body_names[sig & 0xFFFF])
        b.filter_parent = not (int(m.opt.disableflags) & int(mj.mjtDisableBit.mjDSBL_FILTERPARENT))

    def collision_parents(self, model, body_names):
        """``model.collision_parent``: for each body of ``model``, the body that
        MuJoCo's parent filter pairs it with — the body hosting the weld parent
        of the MuJoCo body it hosts (the massless joint bodies the loader adds
        in between do not count), 0 if that is the world."""
        m = self.m
        cp = np.array(model.parents, dtype=np.int64)
        host = [model.frames[model.frame_id(n)].body for n in body_names]
        for i in range(1, m.nbody):
            weld = int(m.body_weldid[i])
            cp[host[i]] = host[int(m.body_weldid[m.body_parentid[weld]])]
        cp[0] = -1
        return cp

    def mesh_file(self, k):
        """The file of mesh asset ``k`` as MuJoCo recorded it (else the mesh name)."""
        m = self.m
        adr = int(m.mesh_pathadr[k]) if hasattr(m, "mesh_pathadr") else -1
        if adr >= 0 and hasattr(m, "paths"):
            raw = bytes(m.paths[adr:])
            return raw[:raw.index(b"\0")].decode() if b"\0" in raw else raw.decode()
        return self.name(self.mj.mjtObj.mjOBJ_MESH, k, f"mesh{k}")

    def sites(self, b, body_names, taken_bodies):
        """Named sites as frames of kind 'user' (renamed ``<name>_1`` on a
        name clash with a body). ``self.site_frames`` maps a site's index to
        its frame's name (equalities name sites, which MJCF can only
        reference by name)."""
        mj, m = self.mj, self.m
        taken = set(taken_bodies)
        self.site_frames = {}
        for s in range(m.nsite):
            n = self.name(mj.mjtObj.mjOBJ_SITE, s, None)
            if not n:
                continue
            self.site_frames[s] = fn = unique_name(n, taken)
            b.add_frame(fn, body_names[m.site_bodyid[s]],
                        pose(quat_to_rotation(self.finite(m.site_quat[s], f"site '{n}': quat")),
                             self.finite(m.site_pos[s], f"site '{n}': pos")), kind="user")

    def equalities(self, b, body_names):
        """Active equality constraints, recorded with ``add_equality``: the
        objects of a connect / weld are named by their frames (the body's,
        or the site's, see :meth:`sites`)."""
        mj, m = self.mj, self.m
        O = mj.mjtObj
        for e in range(m.neq):
            if not m.eq_active0[e]:
                continue
            kind = mj.mjtEq(int(m.eq_type[e])).name.replace("mjEQ_", "").lower()
            # eq_objtype is only meaningful for connect / weld (body or site)
            ot = {"joint": O.mjOBJ_JOINT, "tendon": O.mjOBJ_TENDON}.get(kind)
            if ot is None:
                ot = O.mjOBJ_FLEX if kind.startswith("flex") else O(int(m.eq_objtype[e]))
            ids = (int(m.eq_obj1id[e]), int(m.eq_obj2id[e]))
            if ot == O.mjOBJ_BODY:
                names = [body_names[i] if i >= 0 else None for i in ids]
            elif ot == O.mjOBJ_SITE:
                names = [self.site_frames[i] if i >= 0 else None for i in ids]
            elif ot == O.mjOBJ_JOINT:
                names = [self.jnt_names[i] if i >= 0 else None for i in ids]
            else:
                names = [self.name(ot, i, f"{ot.name}{i}") for i in ids]
            en = self.name(O.mjOBJ_EQUALITY, e, f"equality{e}")
            b.add_equality(kind, en, names[0], names[1],
                           self.finite(m.eq_data[e], f"equality '{en}' ({kind}): data"),
                           objtype=ot.name.replace("mjOBJ_", "").lower())
