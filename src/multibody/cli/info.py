"""``multibody info MODEL``: what a model file describes, as multibody
loaded it."""
import json

import numpy as np


def _num(x):
    """A float for JSON (inf as a string: JSON has no infinity)."""
    x = float(x)
    return x if np.isfinite(x) else ("inf" if x > 0 else "-inf")


def describe(model, path, fmt):
    """The model as a dict of JSON values: sizes, bodies, joints (with their
    limits), frames, geometries and what the file declared for the
    simulator (actuators, tendons, loops, couplings, equalities)."""
    from ..viz.plots import coordinate_names

    names = coordinate_names(model)
    joints = []
    for j in model.joints[1:]:
        qs, vs = j.q_slice, j.v_slice
        joints.append({
            "name": j.name, "type": j.type, "parent": model.body_names[j.parent], "child": model.body_names[j.child],
            "q": [qs.start, qs.stop], "v": [vs.start, vs.stop], "coordinates": list(names[qs]),
            "lower": [_num(x) for x in model.lower_limit[qs]], "upper": [_num(x) for x in model.upper_limit[qs]],
            "velocity_limit": [_num(x) for x in model.velocity_limit[vs]],
            "effort_limit": [_num(x) for x in model.effort_limit[vs]],
            "damping": [_num(x) for x in model.damping[vs]], "friction": [_num(x) for x in model.friction[vs]],
            "armature": [_num(x) for x in model.armature[vs]]})
    bodies = [{"name": model.body_names[i], "parent": model.body_names[model.parents[i]],
               "mass": float(model.body_mass[i]), "com": [float(x) for x in model.body_com[i]]}
              for i in range(1, model.nbodies)]
    frames = [{"name": f.name, "body": model.body_names[f.body], "kind": f.kind,
               "position": [float(x) for x in np.asarray(f.placement)[:3, 3]]} for f in model.frames]

    def geometry(g):
        return {"name": g.name, "body": model.body_names[g.body], "shape": g.shape,
                "size": [float(x) for x in g.size], "mesh": g.mesh if isinstance(g.mesh, str) else None}

    return {
        "name": model.name, "file": path, "format": fmt, "nq": model.nq, "nv": model.nv,
        "bodies": model.nbodies - 1, "total_mass": model.total_mass, "gravity": [float(g) for g in model.gravity],
        "body_list": bodies, "joints": joints, "frames": frames,
        "collision_geometries": [geometry(g) for g in model.collision_geometries],
        "visual_geometries": [geometry(g) for g in model.visual_geometries],
        "actuators": [{"name": a.name, "target": a.target, "transmission": a.transmission, "gear": a.gear}
                      for a in model.actuators],
        "tendons": [{"name": t.name, "kind": t.kind} for t in model.tendons],
        "loop_joints": [{"name": lj.name, "type": lj.joint, "body_a": lj.body_a, "body_b": lj.body_b}
                        for lj in model.loop_joints],
        "couplings": [{"joint": c.joint, "mimicked": c.mimicked, "multiplier": c.multiplier, "offset": c.offset}
                      for c in model.couplings],
        "equalities": [{"name": e.name, "kind": e.kind, "body1": e.body1, "body2": e.body2}
                       for e in model.equalities],
    }


def _range(values):
    """'a' if the values are equal, else 'a..b'."""
    text = [f"{x:g}" if isinstance(x, float) else str(x) for x in values]
    return "-" if not text else text[0] if len(set(text)) == 1 else f"{text[0]}..{text[-1]}"


def info(model, path, fmt, out=print, as_json=False):
    """Print the description of ``model`` (loaded from ``path``): a text
    report, or with ``as_json`` the :func:`describe` dict as JSON."""
    d = describe(model, path, fmt)
    if as_json:
        out(json.dumps(d, indent=1))
        return d
    g = ", ".join(f"{x:g}" for x in d["gravity"])
    out(f"model '{d['name']}' ({fmt.upper()}, {path})")
    out(f"nq = {d['nq']}, nv = {d['nv']}, bodies = {d['bodies']} (+ world), joints = {len(d['joints'])}, "
        f"frames = {len(d['frames'])}, total mass = {d['total_mass']:.6g} kg, gravity = ({g}) m/s^2")
    out("\nbodies and joints")
    out("\n".join(model.summary().splitlines()[2:]))
    out("\njoint limits (position: rad or m; velocity: rad/s or m/s; effort: N*m or N; damping per unit velocity)")
    out(f"  {'joint':<24} {'lower':>10} {'upper':>10} {'velocity':>10} {'effort':>10} {'damping':>10} "
        f"{'friction':>10} {'armature':>10}")
    for j in d["joints"]:
        if j["v"][0] == j["v"][1]:
            continue
        out(f"  {j['name']:<24} " + " ".join(f"{_range(j[k]):>10}" for k in (
            "lower", "upper", "velocity_limit", "effort_limit", "damping", "friction", "armature")))
    out(f"\nframes ({len(d['frames'])})")
    for f in d["frames"]:
        out(f"  {f['name']:<24} on {f['body']:<20} {f['kind']:<6} at ({', '.join(f'{x:+.4g}' for x in f['position'])}) m")
    for kind in ("collision", "visual"):
        geoms = d[f"{kind}_geometries"]
        shapes = {}
        for geom in geoms:
            shapes[geom["shape"]] = shapes.get(geom["shape"], 0) + 1
        out(f"\n{kind} geometry ({len(geoms)}{': ' if shapes else ''}"
            + ", ".join(f"{n} {s}" for s, n in sorted(shapes.items())) + ")")
        for geom in geoms:
            size = ", ".join(f"{x:.4g}" for x in geom["size"])
            out(f"  {geom['name']:<24} on {geom['body']:<20} {geom['shape']:<9} ({size})"
                + (f" {geom['mesh']}" if geom["mesh"] else ""))
    for key, title in (("actuators", "actuators"), ("tendons", "tendons"), ("loop_joints", "loop joints"),
                       ("couplings", "couplings"), ("equalities", "equality constraints")):
        if d[key]:
            out(f"\n{title} ({len(d[key])})")
            for item in d[key]:
                out("  " + ", ".join(f"{k} {v}" for k, v in item.items()))
    return d
