"""Test scenes of the contact stage (closed forms in the tests)."""
import numpy as np

import multibody as mb


def rotation_y(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def ball(radius=0.1, mass=1.0, restitution=0.0, friction=1.0, ground=True, gravity=(0.0, 0.0, -9.81)):
    """A free sphere (body "ball"), optionally over a ground plane z = 0."""
    b = mb.ModelBuilder(gravity=gravity)
    b.add_body("ball", joint="free", mass=mass, inertia=np.eye(3) * 0.4 * mass * radius ** 2)
    b.add_geometry("ball", "sphere", (radius,), name="ball", restitution=restitution,
                   friction=(friction, 0.005, 0.0001))
    if ground:
        b.add_geometry("world", "plane", name="ground", restitution=restitution, friction=(friction, 0.005, 0.0001))
    return b.build()


def incline(angle, mu, size=(0.2, 0.2, 0.1), mass=1.0, gravity=9.8):
    """A box (body "box", free) resting on the plane through the origin
    tilted by ``angle`` about y (downhill: the plane's −x direction), friction
    ``mu`` on both; returns (model, q0, R) with R the plane's rotation."""
    R = rotation_y(angle)
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -gravity))
    a, c, h = size
    inertia = mass / 12.0 * np.diag([c * c + h * h, a * a + h * h, a * a + c * c])
    b.add_body("box", joint="free", mass=mass, inertia=inertia)
    b.add_geometry("box", "box", size, name="box", friction=(mu, 0.0, 0.0))
    b.add_geometry("world", "plane", placement=(R, np.zeros(3)), name="slope", friction=(mu, 0.0, 0.0))
    model = b.build()
    q0 = model.neutral()
    q0[:3] = R @ np.array([0.0, 0.0, 0.5 * h])  # resting on the surface
    w = np.cos(angle / 2), 0.0, np.sin(angle / 2), 0.0
    q0[3:7] = w
    return model, q0, R


def spheres(n=2, radius=0.1, friction=0.5, restitution=0.0, offset=0.08, spin=True, masses=(1.0, 2.0), gap=0.3,
            speed=2.0):
    """n free spheres in zero gravity along x (bodies "s0", "s1", ...),
    ``gap`` (m) between neighbouring surfaces; the first moves at ``speed``
    (m/s) along +x, the last (n = 2) at −speed/2, and is shifted by
    ``offset`` (m) along y (an off-centre hit); ``spin``: both spin about
    axes not parallel to their motion. Returns (model, q0, v0)."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    for i in range(n):
        m = masses[i]
        b.add_body(f"s{i}", joint="free", mass=m, inertia=np.eye(3) * 0.4 * m * radius ** 2)
        b.add_geometry(f"s{i}", "sphere", (radius,), name=f"s{i}", friction=(friction, 0.0, 0.0),
                       restitution=restitution, condim=3 if friction > 0 else 1)
    model = b.build()
    q0, v0 = model.neutral(), np.zeros(model.nv)
    for i in range(n):
        q0[7 * i] = i * (2 * radius + gap)
    q0[7 * (n - 1) + 1] = offset
    v0[3] = speed
    if n == 2:
        v0[9] = -0.5 * speed
    if spin:
        v0[0:3] = (0.0, 3.0, 5.0)
        v0[6:9] = (-2.0, 0.0, 1.0)
    return model, q0, v0


def box_stack(n=5, size=0.2, mu=0.5, mass=1.0, gravity=9.81):
    """``n`` equal cubes (edge ``size``, bodies "b0" at the bottom, "b1",
    ...) stacked exactly on top of each other on a ground plane z = 0,
    friction ``mu`` on every geometry. Returns (model, q0)."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -gravity))
    inertia = np.eye(3) * mass * size * size / 6.0
    for i in range(n):
        b.add_body(f"b{i}", joint="free", mass=mass, inertia=inertia)
        b.add_geometry(f"b{i}", "box", (size,) * 3, name=f"b{i}", friction=(mu, 0.0, 0.0))
    b.add_geometry("world", "plane", name="ground", friction=(mu, 0.0, 0.0))
    model = b.build()
    q0 = model.neutral()
    for i in range(n):
        q0[7 * i + 2] = (i + 0.5) * size
    return model, q0


def sphere_pyramid(radius=0.1, mu=0.5, mass=1.0, gravity=9.81):
    """Five equal spheres on a ground plane z = 0, friction ``mu``: four
    touching in a square (bodies "s0".."s3", centres (±r, ±r, r)) and one
    ("top") resting on them at (0, 0, r + √2 r), touching each. Returns
    (model, q0). Static closed form: each of the top's four contacts
    carries mg/(2√2) along its normal (45° from vertical), each of the
    square's four contacts mg/(4√2), each ground contact 5mg/4, no
    friction."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -gravity))
    inertia = np.eye(3) * 0.4 * mass * radius ** 2
    names = [f"s{i}" for i in range(4)] + ["top"]
    for name in names:
        b.add_body(name, joint="free", mass=mass, inertia=inertia)
        b.add_geometry(name, "sphere", (radius,), name=name, friction=(mu, 0.0, 0.0))
    b.add_geometry("world", "plane", name="ground", friction=(mu, 0.0, 0.0))
    model = b.build()
    q0 = model.neutral()
    r = radius
    centres = [(r, r, r), (-r, r, r), (-r, -r, r), (r, -r, r), (0.0, 0.0, r + np.sqrt(2.0) * r)]
    for i, c in enumerate(centres):
        q0[7 * i:7 * i + 3] = c
    return model, q0


def stacked_spheres(angle=0.3, radius=0.1, masses=(1.0, 1.0), mu=0.0, gravity=9.81):
    """Two free spheres on a ground plane z = 0, friction ``mu`` on every
    geometry: "low" resting on the ground at the origin, "high" resting on
    it, its centre ``angle`` (rad) from the vertical above the low one's
    (along +x). Returns (model, q0)."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -gravity))
    for name, m in zip(("low", "high"), masses):
        b.add_body(name, joint="free", mass=m, inertia=np.eye(3) * 0.4 * m * radius ** 2)
        b.add_geometry(name, "sphere", (radius,), name=name, friction=(mu, 0.0, 0.0))
    b.add_geometry("world", "plane", name="ground", friction=(mu, 0.0, 0.0))
    model = b.build()
    q0 = model.neutral()
    q0[:3] = 0.0, 0.0, radius
    q0[7:10] = 2 * radius * np.sin(angle), 0.0, radius + 2 * radius * np.cos(angle)
    return model, q0


def box_grid(n=3, size=0.1, gap=0.05, mu=1.0, mass=1.0, gravity=9.81):
    """n³ equal cubes (half edge ``size``) in a grid with ``gap`` (m)
    between neighbours, each layer 1 cm above its place so that the grid
    drops onto a ground plane z = 0 and settles into n stacks of n (the
    27-box pile of benchmarks/contact.py for n = 3). Returns (model, q0)."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -gravity))
    inertia = np.eye(3) * mass * (2 * size) ** 2 / 6.0
    k = 0
    for i in range(n):
        for j in range(n):
            for m in range(n):
                b.add_body(f"b{k}", joint="free", mass=mass, inertia=inertia)
                b.add_geometry(f"b{k}", "box", (2 * size,) * 3, name=f"b{k}", friction=(mu, 0.0, 0.0))
                k += 1
    b.add_geometry("world", "plane", name="ground", friction=(mu, 0.0, 0.0))
    model = b.build()
    q0 = model.neutral()
    k = 0
    step = 2 * size + gap
    for i in range(n):
        for j in range(n):
            for m in range(n):
                q0[7 * k:7 * k + 3] = (i - (n - 1) / 2) * step, (j - (n - 1) / 2) * step, size + m * step + 0.01
                k += 1
    return model, q0


def coupled_ball():
    """A 1 kg sphere (r = 0.1 m) on prismatic joints x, y, z over a ground
    plane, its x coupled to its z (x = 0.5 z + 0.1): M = I, the coupling's
    row G = (1, 0, −0.5) pulls on the contact's normal direction."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_body("bx", joint="prismatic", axis=(1, 0, 0), joint_name="x")
    b.add_body("by", parent="bx", joint="prismatic", axis=(0, 1, 0), joint_name="y")
    b.add_body("ball", parent="by", joint="prismatic", axis=(0, 0, 1), joint_name="z", mass=1.0,
               inertia=np.eye(3) * 0.004)
    b.add_geometry("ball", "sphere", (0.1,), name="ball", friction=(0.3, 0.0, 0.0))
    b.add_geometry("world", "plane", name="ground", friction=(0.3, 0.0, 0.0))
    b.add_coupling("x", "z", multiplier=0.5, offset=0.1)
    return b.build()
