"""The live web viewer (viser): :class:`Viewer` and :func:`show`.

A :class:`Viewer` serves a page (three.js, drawn by viser's client) that
shows a model's :class:`~multibody.viz.scene.Scene`. Every body is one
scene node whose pose is set from forward kinematics; its geometry hangs
below it in the body frame, so an update sends one pose per body and
nothing else. :meth:`Viewer.update` only stores the configuration: a
background thread computes the poses and pushes them to the browsers at
most ``fps`` times a second, so a simulation may call ``update`` at every
step (it costs a copy) and never waits on the network.
"""
from __future__ import annotations

import threading
import time
import warnings
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from ..errors import InputError
from .scene import Scene, default_camera, pose_to_pq
from .._typing import ArrayLike

if TYPE_CHECKING:
    from ..model.model import Model
    from ..simulation.trajectory import Trajectory

#: viser's default port, the first one tried
DEFAULT_PORT = 8080


def _viser():
    try:
        import viser
    except ImportError as e:
        raise ImportError("the live viewer needs viser: pip install 'multibody[viz]' (or pip install viser)") from e
    return viser


def _rgb255(rgba):
    return tuple(int(round(255 * float(c))) for c in rgba[:3])


def contact_arrays(contacts):
    """Points (n, 3) and forces (n, 3) (world frame, m and N, the force on the
    second geometry) of ``contacts``: a list of
    :class:`~multibody.constraints.contact.Contact`, a pair of arrays
    ``(points, forces)``, or None (no contact)."""
    if contacts is None:
        return np.zeros((0, 3)), np.zeros((0, 3))
    if isinstance(contacts, tuple) and len(contacts) == 2 and not hasattr(contacts[0], "position"):
        P, F = (np.asarray(a, dtype=float).reshape(-1, 3) for a in contacts)
    else:
        P = np.array([c.position for c in contacts], dtype=float).reshape(-1, 3)
        F = np.array([c.force for c in contacts], dtype=float).reshape(-1, 3)
    if P.shape != F.shape:
        raise InputError(f"contacts: {len(P)} points but {len(F)} forces")
    return P, F


def check_trajectory(model, trajectory):
    """Raise InputError unless ``trajectory`` fits ``model``: the model
    fingerprint it carries (files written by ``Trajectory.save`` carry
    one) must be the model's; a trajectory without one (built by hand)
    must at least have ``q`` of shape (N, nq) with N >= 1."""
    q = np.asarray(getattr(trajectory, "q", None))
    if getattr(trajectory, "model_fingerprint", None) is not None:
        trajectory.check_model(model)
    elif q.ndim != 2 or q.shape[1] != model.nq or len(q) == 0:
        raise InputError(f"trajectory.q must have shape (N, {model.nq}) for model '{model.name}', got {q.shape}")
    t = np.asarray(trajectory.t, dtype=float)
    if t.shape != (len(q),) or not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0):
        raise InputError(f"trajectory.t must be {len(q)} non-decreasing finite times, got shape {t.shape}")


class Viewer:
    """A live 3-D view of ``model`` in the browser, served on ``port``
    (None: 8080; a port in use is replaced by the next free one, and the
    output says so). ``collision``: show the collision geometry at start
    (a checkbox toggles it, as it does the body frames, the centres of mass
    and the contacts). ``colors``, ``max_faces``: see
    :class:`~multibody.viz.scene.Scene`. ``fps``: most scene updates pushed
    per second. ``host``: the interface to listen on. ``camera``: the
    initial view ``{"position", "target", "fov"}`` (world frame, m,
    vertical degrees; z is up; default: framing the model's bodies at its
    neutral configuration). ``flat``: unlit colours (no environment
    map, no grid; every pixel of a geometry is its colour: for tests).

    ``url`` is the page's address; ``pushes`` counts the updates sent
    (each one: the world pose of every body, the total centre of mass and
    the contacts).
    """

    def __init__(self, model: Model, port: int | None = None, collision: bool = False,
                 colors: str | Mapping[str, Sequence[float]] | None = None, max_faces: int = 20000, fps: float = 60,
                 host: str = "0.0.0.0", camera: Mapping[str, Any] | None = None, flat: bool = False,
                 verbose: bool = True) -> None:
        viser = _viser()
        self.model = model
        self.scene = Scene(model, collision=True, colors=colors, max_faces=max_faces)
        want = DEFAULT_PORT if port is None else int(port)
        self.server = viser.ViserServer(host=host, port=want, verbose=False)
        self.port = int(self.server.get_port())
        self.url = f"http://localhost:{self.port}"
        if verbose:
            moved = f"port {want} is in use; " if self.port != want else ""
            print(f"multibody viewer: {moved}open {self.url}", flush=True)
        self._fps = float(fps)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._pending: tuple | None = None   # (q, t, contacts) not pushed yet
        self._error = None
        self.pushes = 0
        self.time = None
        self._build(collision, flat)
        if camera is None:  # frame the model at its neutral configuration
            T = self.scene.poses(model.neutral())
            camera = default_camera(np.concatenate([T[:, :3, 3], [[0.0, 0.0, 0.0]]]))
        cam = self.server.initial_camera
        cam.position, cam.look_at = tuple(camera["position"]), tuple(camera["target"])
        cam.fov = float(np.radians(camera.get("fov", 45.0)))
        self._gui_player = None
        self.sliders: dict = {}
        self.update(model.neutral())
        self._thread = threading.Thread(target=self._pusher, name="multibody-viewer", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ scene
    def _build(self, collision, flat):
        s, sc, model = self.server, self.server.scene, self.model
        sc.set_up_direction("+z")
        if flat:
            # a white ambient light of intensity pi is the identity on a Lambertian colour (three.js
            # divides diffuse reflection by pi)
            sc.configure_environment_map(None)
            sc.configure_default_lights(False)
            sc.add_light_ambient("/ambient", color=(255, 255, 255), intensity=float(np.pi))
        else:
            sc.add_grid("/grid", width=4.0, height=4.0, cell_size=0.25, section_size=1.0)
        names = [n.replace("/", "_") for n in model.body_names]
        self._nodes = [None] + [sc.add_frame(f"/bodies/{names[i]}", show_axes=False) for i in range(1, model.nbodies)]
        self._visual, self._collision = [], []
        for k, p in enumerate(self.scene.parts):
            base = "/world" if p.body == 0 else f"/bodies/{names[p.body]}"
            h = sc.add_mesh_simple(f"{base}/{'collision' if p.collision else 'visual'}/{k}", p.vertices, p.faces,
                                   color=_rgb255(p.rgba), opacity=None if p.rgba[3] >= 1 else float(p.rgba[3]),
                                   visible=not p.collision or collision)
            (self._collision if p.collision else self._visual).append(h)
        self._axes = [sc.add_frame(f"/bodies/{names[i]}/axes", axes_length=0.1, axes_radius=0.004, visible=False)
                      for i in range(1, model.nbodies)]
        com = self.scene.com_local()
        self._coms = [sc.add_icosphere(f"/bodies/{names[i]}/com", radius=0.012, color=(20, 20, 20),
                                       position=tuple(com[i]), visible=False)
                      for i in range(1, model.nbodies) if model.body_mass[i] > 0]
        self._total_com = sc.add_icosphere("/com", radius=0.025, color=(255, 200, 0), visible=False)
        self._contact_points = None
        self._contact_forces = None
        self._show_contacts = True
        g = s.gui
        toggles = [("collision geometry", collision, self._collision),
                   ("body frames", False, self._axes), ("centres of mass", False, self._coms + [self._total_com])]
        for label, value, handles in toggles:
            box = g.add_checkbox(label, initial_value=value)
            box.on_update(lambda ev, hs=handles, b=box: [setattr(h, "visible", b.value) for h in hs])
        contacts = g.add_checkbox("contacts", initial_value=True)

        def toggle_contacts(_):
            self._show_contacts = contacts.value
            for h in (self._contact_points, self._contact_forces):
                if h is not None:
                    h.visible = contacts.value
        contacts.on_update(toggle_contacts)

    # ------------------------------------------------------------------ updates
    def update(self, q: ArrayLike, t: float | None = None, contacts: Sequence[Any] | None = None) -> None:
        """Show configuration ``q`` (nq,) at time ``t`` (s, optional) with
        ``contacts`` (see :func:`contact_arrays`; None: none). Thread-safe
        and cheap: it copies ``q`` and returns; the push thread draws the
        latest configuration at most ``fps`` times a second (intermediate
        ones are skipped). Raises InputError for a q of the wrong shape or
        not finite, and the error of a previous update that could not be
        drawn (e.g. a non-unit quaternion)."""
        if self._error is not None:
            e, self._error = self._error, None
            raise e
        qq = np.array(q, dtype=float)
        if qq.shape != (self.model.nq,) or not np.isfinite(qq).all():
            raise InputError(f"Viewer.update: q must be {self.model.nq} finite numbers, got shape {qq.shape}")
        c = None if contacts is None else contact_arrays(contacts)
        with self._lock:
            self._pending = (qq, t, c)
        self._wake.set()

    def _pusher(self):
        period = 1.0 / self._fps
        while not self._stop.is_set():
            self._wake.wait(0.5)
            self._wake.clear()
            with self._lock:
                job, self._pending = self._pending, None
            if job is None:
                continue
            start = time.perf_counter()
            try:
                self._push(*job)
            except Exception as e:  # noqa: BLE001 - reported by the next update()
                self._error = e
            rest = period - (time.perf_counter() - start)
            if rest > 0:
                self._stop.wait(rest)

    def _push(self, q, t, contacts):
        T = self.scene.poses(q)
        P, Q = pose_to_pq(T[1:])
        com = (self.model.body_mass[1:, None] * (T[1:, :3, :3] @ self.scene.com_local()[1:, :, None])[..., 0]
               + self.model.body_mass[1:, None] * T[1:, :3, 3]).sum(axis=0) / max(self.model.body_mass[1:].sum(), 1e-300)
        with self.server.atomic():
            for node, p, w in zip(self._nodes[1:], P, Q):
                node.position = p
                node.wxyz = w
            self._total_com.position = com
            if contacts is not None:
                self._draw_contacts(*contacts)
        self.server.flush()
        self.time = t
        self.pushes += 1

    def _draw_contacts(self, P, F, scale=0.002):
        """Contact points (red) and forces (segments of ``scale`` m per N, on the second geometry)."""
        sc = self.server.scene
        for h in (self._contact_points, self._contact_forces):
            if h is not None:
                h.remove()
        self._contact_points = self._contact_forces = None
        if len(P):
            self._contact_points = sc.add_point_cloud("/contacts/points", P.astype(np.float32), (230, 30, 30),
                                                      precision="float32",
                                                      point_size=0.02, visible=self._show_contacts)
            seg = np.stack([P, P + scale * F], axis=1).astype(np.float32)
            self._contact_forces = sc.add_line_segments("/contacts/forces", seg, (230, 30, 30), thickness=0.005,
                                                        visible=self._show_contacts)

    # ------------------------------------------------------------------ playback
    def play(self, trajectory: Trajectory, speed: float = 1.0, loop: bool = True, start: bool = True) -> Viewer:
        """Play a recorded :class:`~multibody.Trajectory` (checked against
        the model: :func:`check_trajectory`): a time slider to scrub it,
        play/pause and the playback speed in the page; the contacts it
        recorded are drawn. Returns immediately (playback runs in a
        thread); ``start=False`` begins paused."""
        check_trajectory(self.model, trajectory)
        t = np.asarray(trajectory.t, dtype=float)
        q = np.asarray(trajectory.q, dtype=float)
        rec = getattr(trajectory, "contacts", None)
        if self._gui_player is not None:
            self._gui_player.remove()
        g = self.server.gui
        folder = self._gui_player = g.add_folder("trajectory")
        state = {"playing": bool(start), "clock": time.perf_counter(), "t0": float(t[0])}
        with folder:
            dt = float(np.min(np.diff(t))) if len(t) > 1 and np.any(np.diff(t) > 0) else 1.0
            slider = g.add_slider("time (s)", min=float(t[0]), max=float(max(t[-1], t[0] + dt)),
                                  step=dt, initial_value=float(t[0]))
            button = g.add_button("pause" if start else "play")
            rate = g.add_slider("speed", min=0.1, max=4.0, step=0.1, initial_value=float(speed))

        def show(time_):
            k = min(int(np.searchsorted(t, time_, side="right")) - 1, len(t) - 1)
            k = max(k, 0)
            c = None
            if rec is not None:
                n = int(rec.count[k])
                c = (rec.position[k, :n], rec.force[k, :n])
            self.update(q[k], float(t[k]), c)

        def on_slider(_):
            if not state["playing"]:
                show(slider.value)
        slider.on_update(on_slider)

        def on_button(_):
            state["playing"] = not state["playing"]
            button.label = "pause" if state["playing"] else "play"
            state["clock"], state["t0"] = time.perf_counter(), float(slider.value)
        button.on_click(on_button)

        def run():
            while not self._stop.is_set() and self._gui_player is folder:
                if state["playing"]:
                    now = state["t0"] + rate.value * (time.perf_counter() - state["clock"])
                    if now > t[-1]:
                        if loop:
                            state["clock"], state["t0"], now = time.perf_counter(), float(t[0]), float(t[0])
                        else:
                            now = float(t[-1])
                            state["playing"] = False
                            button.label = "play"
                    slider.value = min(now, slider.max)
                    show(now)
                self._stop.wait(1.0 / self._fps)
        show(float(t[0]))
        threading.Thread(target=run, name="multibody-player", daemon=True).start()
        return self

    def joint_sliders(self, q: ArrayLike | None = None) -> Viewer:
        """Sliders in the page for every one-coordinate joint (revolute,
        prismatic; within its limits, else ±π or ±1 m) starting at ``q``
        (default: the model's neutral configuration); moving one shows
        the new configuration. Other joints (free, spherical) stay at q.
        The sliders are ``viewer.sliders`` (joint name -> viser slider)."""
        model = self.model
        qq = model.neutral() if q is None else np.array(q, dtype=float)
        self.update(qq)
        state = {"q": qq.copy()}
        with self.server.gui.add_folder("joints"):
            for j in model.joints[1:]:
                if j.nq != 1 or j.nv != 1:
                    continue
                i = j.q_slice.start
                lo, hi = float(model.lower_limit[i]), float(model.upper_limit[i])
                span = 1.0 if "prismatic" in j.type else np.pi
                lo = lo if np.isfinite(lo) else -span
                hi = hi if np.isfinite(hi) else span
                s = self.server.gui.add_slider(j.name, min=lo, max=hi, step=(hi - lo) / 1000,
                                               initial_value=float(np.clip(qq[i], lo, hi)))

                def moved(_, i=i, s=s):
                    state["q"][i] = s.value
                    self.update(state["q"])
                s.on_update(moved)
                self.sliders[j.name] = s
        return self

    # ------------------------------------------------------------------ life
    def wait(self) -> None:
        """Block until the viewer is closed (Ctrl-C closes it): for scripts."""
        try:
            while not self._stop.is_set():
                self._stop.wait(0.5)
        except KeyboardInterrupt:
            self.close()

    def close(self) -> None:
        """Stop the push thread and the server (the port is freed)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.server.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def show(model: Model, q: ArrayLike | None = None, port: int | None = None, collision: bool = False,
         **kw: Any) -> Viewer:
    """Serve a live view of ``model`` at ``q`` (default: neutral) with a
    slider per joint coordinate (:meth:`Viewer.joint_sliders`), print its
    address and return the :class:`Viewer` (``viewer.wait()`` keeps a
    script alive)."""
    return Viewer(model, port=port, collision=collision, **kw).joint_sliders(q)
