"""Shape codes of the collision kernels and their size conventions.

The codes follow MuJoCo's order of geom types (``mjtGeom``), which is also
the order in which a pair is presented to the narrow phase: the geom with
the lower code is geom 1, and the contact normal points from geom 1 to
geom 2 (MuJoCo's and coal's convention).

Kernel sizes are half-sizes, in the geom's own frame (three numbers, unused
ones 0), unlike the model's user-facing sizes (URDF style: full box
extents, full cylinder and capsule lengths):

======== ===== ==========================================================
code     name  size
======== ===== ==========================================================
0        plane (unused); the half-space z ≤ 0 of the geom frame, infinite
1        hfield  (half-extent x, half-extent y, height); static only
2        sphere  (radius)
3        capsule (radius, half-length of the segment along z)
4        ellipsoid (semi-axes a, b, c)
5        cylinder (radius, half-length along z)
6        box     (half-extents)
7        convex  (unused) convex hull given by its vertices
8        mesh    (unused) triangle mesh; static only
======== ===== ==========================================================
"""

PLANE, HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, CONVEX, MESH = range(9)

SHAPE_NAMES = ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "convex", "mesh")
SHAPE_CODES = {name: code for code, name in enumerate(SHAPE_NAMES)}
