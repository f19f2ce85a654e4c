"""Height fields and triangle meshes: time per detection of one pair (``collide_pair`` on the
terrain's record, inside a compiled loop) against MuJoCo's ``mj_collision`` of the same height
field and geom (its one-contact-per-prism collider, the model's broad phase of two geoms
included), and the cost of building a mesh's record (its tree) in Python.

Scenes: a 64 x 64 height field 8 m x 8 m (cells 12.7 cm) of smooth random heights (0.3 m),
and a 2000-triangle mesh of the same surface (a 32 x 32 grid: 1922 triangles), with a box
30 x 20 x 10 cm, a sphere of radius 10 cm or a capsule, each resting (1 mm deep) or 5 mm
above the surface at random places and orientations; the figures are the mean over the poses.
Usage: ``python benchmarks/terrain.py [repeats]``.
"""
import sys
import time

import numpy as np
from numba import njit

import mujoco

from multibody.collision.narrow import MAX_CONTACTS, collide_pair, narrow_workspace
from multibody.collision.shapes import BOX, CAPSULE, HFIELD, MESH, SPHERE
from multibody.collision.terrain_data import hfield_record, mesh_record

I3 = np.eye(3)
EMPTY = np.zeros((0, 3))
EMPTY_F = np.zeros((0, 3), np.int64)


def surface(n, extent=8.0, amplitude=0.3, seed=0):
    """Smooth random heights (a sum of a few sines) on an n x n grid: (x, y, heights[r, c])."""
    rng = np.random.default_rng(seed)
    x = np.linspace(-extent / 2, extent / 2, n)
    X, Y = np.meshgrid(x, x)
    H = np.zeros_like(X)
    for _ in range(6):
        k = rng.normal(size=2) * 1.2
        H += np.sin(k[0] * X + k[1] * Y + rng.uniform(0, 6))
    H = amplitude * (H - H.min()) / (H.max() - H.min())
    return x, H


def grid_mesh(x, H):
    n = len(x)
    X, Y = np.meshgrid(x, x)
    V = np.c_[X.ravel(), Y.ravel(), H.ravel()]
    F = []
    for r in range(n - 1):
        for c in range(n - 1):
            a, b, d, e = r * n + c, r * n + c + 1, (r + 1) * n + c, (r + 1) * n + c + 1
            F += [[d, a, e], [a, b, e]]
    return V, np.array(F, np.int64)


def height_at(x, H, px, py):
    """Bilinear height (close enough to place a shape near the surface)."""
    c = np.interp(px, x, np.arange(len(x)))
    r = np.interp(py, x, np.arange(len(x)))
    c0, r0 = int(c), int(r)
    return H[r0, c0]


@njit(cache=True, nogil=True)
def timed(reps, t1, s1, R1, p1, v1, t2, s2, R2, p2, v2, margin, dist, pos, frame, work):
    n = 0
    for _ in range(reps):
        n = collide_pair(t1, s1, R1, p1, v1, EMPTY_F, t2, s2, R2, p2, v2, EMPTY_F, margin, dist, pos, frame, 0,
                         MAX_CONTACTS, work)
    return n


def rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, q)
    return R.reshape(3, 3), q


def main(reps=2000):
    x, H = surface(64)
    ext = x[-1]
    hf_rec = hfield_record(H, 0.1)
    t = time.perf_counter()
    V, F = grid_mesh(*surface(32))
    mesh_rec = mesh_record(V, F)
    build = time.perf_counter() - t
    print(f"mesh record of {len(F)} triangles: {build * 1e3:.1f} ms")
    xm, Hm = surface(32)
    work = narrow_workspace()
    dist, pos, frame = np.zeros(MAX_CONTACTS), np.zeros((MAX_CONTACTS, 3)), np.zeros((MAX_CONTACTS, 3, 3))
    shapes = {"box": (BOX, np.array([0.15, 0.1, 0.05])), "sphere": (SPHERE, np.array([0.1, 0.0, 0.0])),
              "capsule": (CAPSULE, np.array([0.05, 0.1, 0.0]))}
    mj_size = {"box": "0.15 0.1 0.05", "sphere": "0.1", "capsule": "0.05 0.1"}
    f = lambda v: " ".join(repr(float(a)) for a in np.ravel(v))
    for name, (code, size) in shapes.items():
        rng = np.random.default_rng(1)
        ours_h, ours_m, theirs, counts = [], [], [], []
        for trial in range(10):
            R, q = rotation(rng) if name != "box" else (I3, np.array([1.0, 0, 0, 0]))
            p = np.array([rng.uniform(-3, 3), rng.uniform(-3, 3), 0.0])
            p[2] = height_at(x, H, p[0], p[1]) + 0.2 + 0.005 * (trial % 2)
            # lower the shape onto the field: its distance from our narrow phase
            for _ in range(4):
                n = collide_pair(HFIELD, np.array([ext, ext, 0.3]), I3, np.zeros(3), hf_rec, EMPTY_F, code, size, R, p,
                                 EMPTY, EMPTY_F, 1.0, dist, pos, frame, 0, MAX_CONTACTS, work)
                p[2] -= dist[:n].min() - (0.005 if trial % 2 else -0.001)
            args = (HFIELD, np.array([ext, ext, 0.3]), I3, np.zeros(3), hf_rec, code, size, R, p, EMPTY, 0.01, dist,
                    pos, frame, work)
            timed(10, *args)
            t = time.perf_counter()
            counts.append(timed(reps, *args))
            ours_h.append((time.perf_counter() - t) / reps)
            pm = p.copy()
            pm[2] = height_at(xm, Hm, p[0], p[1]) + 0.2
            for _ in range(4):
                n = collide_pair(MESH, np.zeros(3), I3, np.zeros(3), mesh_rec, EMPTY_F, code, size, R, pm, EMPTY,
                                 EMPTY_F, 1.0, dist, pos, frame, 0, MAX_CONTACTS, work)
                pm[2] -= dist[:n].min() - (0.005 if trial % 2 else -0.001)
            args = (MESH, np.zeros(3), I3, np.zeros(3), mesh_rec, code, size, R, pm, EMPTY, 0.01, dist, pos, frame,
                    work)
            timed(10, *args)
            t = time.perf_counter()
            timed(reps, *args)
            ours_m.append((time.perf_counter() - t) / reps)
            xml = f"""<mujoco><asset><hfield name="h" nrow="64" ncol="64" size="{ext} {ext} 0.3 0.1"
              elevation="{f(H / 0.3)}"/></asset><worldbody><geom type="hfield" hfield="h"/>
              <body pos="{f(p)}" quat="{f(q)}"><freejoint/><geom type="{name}" size="{mj_size[name]}"
              margin="0.01"/></body></worldbody></mujoco>"""
            m = mujoco.MjModel.from_xml_string(xml)
            d = mujoco.MjData(m)
            mujoco.mj_kinematics(m, d)
            mujoco.mj_collision(m, d)
            t = time.perf_counter()
            for _ in range(reps // 4):
                mujoco.mj_collision(m, d)
            theirs.append((time.perf_counter() - t) / (reps // 4))
        print(f"{name:8s} 64x64 field: {np.mean(ours_h) * 1e6:6.1f} us ({np.mean(counts):.1f} contacts)   "
              f"{len(F)}-triangle mesh: {np.mean(ours_m) * 1e6:6.1f} us   MuJoCo mj_collision (field): "
              f"{np.mean(theirs) * 1e6:6.1f} us")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
