"""Test-side oracle for the drawings: where a pinhole camera sees a point,
and which drawn part a camera ray meets first (ray casting in numpy,
independent of the browsers' rasterizers)."""
import numpy as np


def camera_basis(camera):
    """Eye (3,), right, up and forward unit vectors of a z-up look-at camera."""
    eye, target = np.asarray(camera["position"], float), np.asarray(camera["target"], float)
    f = (target - eye) / np.linalg.norm(target - eye)
    r = np.cross(f, [0.0, 0.0, 1.0])
    r /= np.linalg.norm(r)
    return eye, r, np.cross(r, f), f


def project(points, camera, width, height):
    """Pixel coordinates (n, 2) (x right, y down; pixel centres at .5) of
    world points (n, 3) for a perspective camera of vertical field of view
    camera["fov"] degrees looking from camera["position"] at camera["target"], z up."""
    eye, r, u, f = camera_basis(camera)
    d = np.asarray(points, float).reshape(-1, 3) - eye
    x, y, z = d @ r, d @ u, d @ f
    th = np.tan(np.radians(camera["fov"]) / 2)
    nx, ny = x / (z * th * width / height), y / (z * th)
    return np.column_stack([(nx + 1) / 2 * width, (1 - ny) / 2 * height])


def pixel_ray(camera, px, py, width, height):
    """Eye and unit direction of the ray through pixel position (px, py)."""
    eye, r, u, f = camera_basis(camera)
    th = np.tan(np.radians(camera["fov"]) / 2)
    nx, ny = 2 * px / width - 1, 1 - 2 * py / height
    d = f + nx * th * width / height * r + ny * th * u
    return eye, d / np.linalg.norm(d)


def first_hit(eye, direction, triangles):
    """Index of the first triangle (m, 3, 3) hit by the ray (Möller–Trumbore), or -1."""
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    e1, e2 = b - a, c - a
    p = np.cross(direction, e2)
    det = np.einsum("ij,ij->i", e1, p)
    ok = np.abs(det) > 1e-14
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = eye - a
    u = np.einsum("ij,ij->i", s, p) * inv
    qv = np.cross(s, e1)
    v = (qv @ direction) * inv
    t = np.einsum("ij,ij->i", e2, qv) * inv
    hit = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 1e-9)
    if not hit.any():
        return -1
    return int(np.flatnonzero(hit)[np.argmin(t[hit])])


def posed_triangles(scene, poses, visual_only=True):
    """All drawn triangles (m, 3, 3) in the world at body poses (nb, 4, 4), and the body of each."""
    tris, owner = [], []
    for p in scene.parts:
        if visual_only and p.collision:
            continue
        T = poses[p.body]
        V = p.vertices.astype(float) @ T[:3, :3].T + T[:3, 3]
        tris.append(V[p.faces])
        owner.append(np.full(len(p.faces), p.body))
    return np.concatenate(tris), np.concatenate(owner)


def check_drawing(image, scene, poses, camera, colors, tol=3, search=4, margin=1):
    """For every body with visual geometry: near the projection of its
    geometry's centroid, the image shows the colour of the body that the
    camera ray through that pixel meets first (the body itself unless
    another body hides it). The pixel checked is the one nearest the
    projected centroid (within ``search`` px) whose neighbourhood of rays
    (``margin`` px each way) meets one body only: a pixel on an edge between two bodies can
    go either way by rasterization rules. The pixel must be within ``tol``
    (per channel, 0-255) of that body's colour; with ``tol=None`` (a
    renderer that tone-maps colours) its nearest body colour must be that
    body's, at most half as far as the next nearest. Returns (body, pixel, body seen)
    for each body; raises AssertionError naming the first mismatch."""
    h, w = image.shape[:2]
    tris, owner = posed_triangles(scene, poses)

    def seen(ix, iy):
        eye, d = pixel_ray(camera, ix + 0.5, iy + 0.5, w, h)
        k = first_hit(eye, d, tris)
        return -1 if k < 0 else int(owner[k])

    checked = []
    for body in sorted({p.body for p in scene.parts if not p.collision}):
        V = np.concatenate([p.vertices for p in scene.parts if p.body == body and not p.collision]).astype(float)
        T = poses[body]
        centre = V.mean(axis=0) @ T[:3, :3].T + T[:3, 3]
        px, py = project(centre, camera, w, h)[0]
        cx, cy = int(np.floor(px)), int(np.floor(py))
        assert 2 <= cx < w - 2 and 2 <= cy < h - 2, f"body {body} projects outside the image at ({px:.1f}, {py:.1f})"
        offsets = sorted(((dx, dy) for dx in range(-search, search + 1) for dy in range(-search, search + 1)),
                         key=lambda o: o[0] ** 2 + o[1] ** 2)
        for dx, dy in offsets:
            ix, iy = cx + dx, cy + dy
            around = {seen(ix + a, iy + b) for a in range(-margin, margin + 1) for b in range(-margin, margin + 1)}
            if len(around) == 1 and -1 not in around:
                break
        else:
            raise AssertionError(f"body {body}: no pixel within {search} px of its centre ({cx}, {cy}) away from "
                                 "an edge")
        expected = around.pop()
        want = np.round(255 * np.asarray(colors[expected][:3])).astype(int)
        got = image[iy, ix].astype(int)
        if tol is None:
            bodies = sorted({p.body for p in scene.parts if not p.collision})
            dist = {i: float(np.linalg.norm(np.round(255 * np.asarray(colors[i][:3])) - got)) for i in bodies}
            near = sorted(bodies, key=dist.get)
            ok = near[0] == expected and dist[near[0]] <= 0.5 * dist[near[1]]
        else:
            ok = np.abs(got - want).max() <= tol
        assert ok, (
            f"body {body}: pixel ({ix}, {iy}) is {got.tolist()}, expected body {expected}'s colour {want.tolist()}")
        checked.append((body, (ix, iy), expected))
    return checked
