"""Narrow phase: time per pair of ``collide_pair`` against MuJoCo's ``mj_collision``.

For each pair type, a two-geom MuJoCo model (one mocap geom, one free geom) is timed
with ``mj_collision`` (broad phase and filters of two geoms included: the closest
per-pair figure MuJoCo's Python API gives); ``collide_pair`` is timed from Python on the
same poses (Numba dispatcher included, ~0.1 us + 0.04 us per array argument) and inside
a compiled loop (the cost a compiled broad phase would pay). Rough figures, run on a
shared machine. Usage: ``python benchmarks/narrow_phase.py [repeats]``.
"""
import sys
import time

import numpy as np
from numba import njit

import mujoco

from multibody.collision.narrow import collide_pair, narrow_workspace
from multibody.collision.shapes import BOX, CAPSULE, CONVEX, CYLINDER, ELLIPSOID, PLANE, SPHERE

I3 = np.eye(3)


def rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0, 0], [0, c, -s], [0, s, c]])


rng = np.random.default_rng(0)
hull = rng.normal(size=(32, 3))
hull /= np.linalg.norm(hull, axis=1)[:, None]
hull *= 0.1
cube = np.array([[x, y, z] for z in (-.1, .1) for y in (-.1, .1) for x in (-.1, .1)])

# (name, geom 1, geom 2): (code, size3, R, p, verts)
CASES = [
    ("plane-box", (PLANE, [0, 0, 0], I3, [0, 0, 0], None), (BOX, [.1, .1, .1], rz(.3), [0, 0, .099], None)),
    ("sphere-sphere", (SPHERE, [.1, 0, 0], I3, [0, 0, 0], None), (SPHERE, [.1, 0, 0], I3, [.15, .01, 0], None)),
    ("capsule-capsule", (CAPSULE, [.05, .1, 0], I3, [0, 0, 0], None), (CAPSULE, [.05, .1, 0], rx(1.2), [.08, 0, .02], None)),
    ("capsule-box", (CAPSULE, [.05, .1, 0], rx(.4), [0, 0, 0], None), (BOX, [.1, .1, .1], I3, [0, 0, .23], None)),
    ("box-box face (8)", (BOX, [.1, .1, .1], I3, [0, 0, 0], None), (BOX, [.1, .1, .1], rz(np.pi / 4), [0, 0, .199], None)),
    ("box-box edge", (BOX, [.1, .1, .1], rx(np.pi / 4), [0, 0, 0], None), (BOX, [.1, .1, .1], rz(np.pi / 2) @ rx(np.pi / 4), [0, 0, .28], None)),
    ("ellipsoid-ellipsoid", (ELLIPSOID, [.1, .15, .08], rx(.3), [0, 0, 0], None), (ELLIPSOID, [.12, .1, .1], rz(.5), [.1, .1, .1], None)),
    ("cylinder-box", (CYLINDER, [.05, .1, 0], rx(.7), [0, 0, 0], None), (BOX, [.1, .1, .1], rz(.2), [0, .05, .2], None)),
    ("convex32-convex32", (CONVEX, [0, 0, 0], rx(.3), [0, 0, 0], hull), (CONVEX, [0, 0, 0], rz(.4), [.05, .05, .15], hull)),
    ("box-convex cube (face)", (BOX, [.1, .1, .1], I3, [0, 0, 0], None), (CONVEX, [0, 0, 0], rz(.3), [0, 0, .199], cube)),
]

TYPES = {PLANE: "plane", SPHERE: "sphere", CAPSULE: "capsule", ELLIPSOID: "ellipsoid",
         CYLINDER: "cylinder", BOX: "box", CONVEX: "mesh"}


def mj_model(g1, g2):
    f = lambda v: " ".join(map(str, np.ravel(v)))
    assets, specs = [], []
    for k, g in enumerate((g1, g2)):
        if g[0] == CONVEX:
            assets.append(f'<mesh name="m{k}" vertex="{f(g[4])}"/>')
            specs.append(f'type="mesh" mesh="m{k}"')
        else:
            n = {PLANE: 3, SPHERE: 1, CAPSULE: 2, ELLIPSOID: 3, CYLINDER: 2, BOX: 3}[g[0]]
            size = [1, 1, .1] if g[0] == PLANE else g[1][:n]
            specs.append(f'type="{TYPES[g[0]]}" size="{f(size)}"')
    q = []
    for g in (g1, g2):
        qq = np.zeros(4)
        mujoco.mju_mat2Quat(qq, np.ascontiguousarray(g[2], float).ravel())
        q.append(qq)
    xml = f"""<mujoco><option><flag multiccd="disable"/></option><asset>{''.join(assets)}</asset><worldbody>
      <body mocap="true" pos="{f(g1[3])}" quat="{f(q[0])}"><geom {specs[0]}/></body>
      <body pos="{f(g2[3])}" quat="{f(q[1])}"><freejoint/><geom {specs[1]}/></body></worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    return m, d


def arrays(g, m, d, k):
    verts = np.zeros((0, 3))
    if g[0] == CONVEX:
        mid = m.geom_dataid[k]
        verts = m.mesh_vert[m.mesh_vertadr[mid]:m.mesh_vertadr[mid] + m.mesh_vertnum[mid]].astype(float)
    return (g[0], np.array(g[1], float), d.geom_xmat[k].reshape(3, 3).copy(), d.geom_xpos[k].copy(),
            verts, np.zeros((0, 3), dtype=np.int64))


@njit(cache=True, nogil=True)
def loop(n, t1, s1, R1, p1, v1, f1, t2, s2, R2, p2, v2, f2, dist, pos, frame, work):
    c = 0
    for _ in range(n):
        c += collide_pair(t1, s1, R1, p1, v1, f1, t2, s2, R2, p2, v2, f2, 0.0, dist, pos, frame, 0, 8, work)
    return c


def best_of(fn, reps, inner):
    best = 1e9
    for _ in range(reps):
        t = time.perf_counter()
        fn(inner)
        best = min(best, (time.perf_counter() - t) / inner)
    return best * 1e6


def main(reps=5):
    work = narrow_workspace()
    dist, pos, frame = np.zeros(8), np.zeros((8, 3)), np.zeros((8, 3, 3))
    print(f"{'pair':26s} {'n':>3s} {'MuJoCo':>8s} {'ours py':>8s} {'ours jit':>8s}  (us/pair; ratio jit/MuJoCo)")
    for name, g1, g2 in CASES:
        m, d = mj_model(g1, g2)
        a = arrays(g1, m, d, 0)
        b = arrays(g2, m, d, 1)
        mujoco.mj_collision(m, d)
        ncon = d.ncon

        def mj(inner):
            for _ in range(inner):
                mujoco.mj_collision(m, d)

        def py(inner):
            for _ in range(inner):
                collide_pair(*a, *b, 0.0, dist, pos, frame, 0, 8, work)

        n = collide_pair(*a, *b, 0.0, dist, pos, frame, 0, 8, work)
        loop(1, *a, *b, dist, pos, frame, work)
        t_mj = best_of(mj, reps, 2000)
        t_py = best_of(py, reps, 2000)
        t_jit = best_of(lambda inner: loop(inner, *a, *b, dist, pos, frame, work), reps, 20000)
        print(f"{name:26s} {n:3d} {t_mj:8.3f} {t_py:8.3f} {t_jit:8.3f}  (MuJoCo ncon {ncon}; {t_jit / t_mj:5.2f}x)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
