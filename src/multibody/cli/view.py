"""``multibody view MODEL|TRAJ``: a model at a configuration, or a saved
trajectory replayed on the model it was recorded on."""
import os
import zipfile

import numpy as np

from ._common import CommandError, load_model, viz_function
from .simulate import play, wait


def is_trajectory_file(path):
    """True for a trajectory file (a zip: ``.npz``), False for anything else
    (a model file is XML)."""
    return os.path.isfile(path) and zipfile.is_zipfile(path)


def trajectory_model(traj, path, model_name=None, floating_base=False, srdf=None):
    """The model to replay the trajectory file ``path`` on: ``model_name``
    if given, else the model file recorded in its metadata by ``multibody
    simulate`` (loaded with the same options), checked against the
    trajectory's model fingerprint (a trajectory from another model is an
    InputError), with the ground plane when the run had one."""
    meta = traj.meta
    if model_name is None:
        recorded = meta.get("model_file")
        if not isinstance(recorded, str):
            raise CommandError(f"trajectory '{path}' does not name its model file: give it with --model MODEL")
        if not os.path.isfile(recorded):
            raise CommandError(f"trajectory '{path}' was recorded on '{recorded}', which no longer exists: give the "
                               "model with --model MODEL")
        model, _, _ = load_model(recorded, floating_base=bool(meta.get("floating_base", False)),
                                 srdf=meta.get("srdf") if meta.get("format") == "urdf" else None)
    else:
        model, _, _ = load_model(model_name, floating_base=floating_base, srdf=srdf)
    traj.check_model(model)
    return model.with_ground() if meta.get("ground") else model


def view(name, model_name=None, floating_base=False, srdf=None, q=None, html=None, port=None, out=print):
    """Show the trajectory file or the model file ``name`` (at the
    configuration ``q``, default neutral, with a slider per joint
    coordinate: :func:`multibody.viz.show`) in the viewer until the user
    presses Enter, or with ``html`` write it as an HTML page instead."""
    from .. import Trajectory, potential_energy
    from ._common import parse_configuration

    if is_trajectory_file(name):
        traj = Trajectory.load(name)
        if q is not None:
            raise CommandError("--q applies to a model file, not to a trajectory")
        model = trajectory_model(traj, name, model_name, floating_base, srdf)
        what = f"trajectory '{name}' ({len(traj.t)} samples, {traj.t[-1] - traj.t[0]:g} s) on '{model.name}'"
    else:
        if model_name is not None:
            raise CommandError("--model applies to a trajectory file; the model to view is the first argument")
        model, _, _ = load_model(name, floating_base=floating_base, srdf=srdf)
        q0 = model.neutral() if q is None else parse_configuration(model, q, model.neutral(), "--q")
        # a still: one sample, at rest
        traj = Trajectory(t=[0.0], q=[q0], v=np.zeros((1, model.nv)), tau=np.zeros((1, model.nv)), kinetic=[0.0],
                          potential=[potential_energy(model, q0)], meta={"model": model.name})
        what = f"model '{model.name}'"
    if html:
        viz_function("export_html", "--html")(model, traj, html)
        out(f"{what}: {html} (open it in a browser)")
        return model, traj
    if len(traj.t) > 1:
        play(model, traj, port, out)
    else:  # a model: with a slider per joint coordinate
        viewer = viz_function("show", "multibody view")(model, q=traj.q[0], port=port)
        try:
            wait(f"{what} in the viewer at {viewer.url}", out)
        finally:
            viewer.close()
    return model, traj
