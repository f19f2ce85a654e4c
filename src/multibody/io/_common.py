"""Helpers shared by the model-file loaders: telling a file path from an XML
string, and poses as 4x4 homogeneous matrices."""
import os
import pathlib
import xml.etree.ElementTree as ET

import numpy as np

from ..errors import ModelFileError

_EYE4 = np.eye(4)


def read_source(path_or_string, kind):
    """Classify the loader input.

    Returns ``(text, path)``: ``text`` is the XML text (``None`` if the input
    is a file, which the caller reads itself) and ``path`` the absolute file
    path (``None`` for an XML string). A ``str`` whose first non-blank
    character is ``'<'`` (or ``bytes``) is XML; any other ``str`` or a
    :class:`pathlib.Path` is a file name. Raises :class:`ModelFileError` if
    the file does not exist.
    """
    if isinstance(path_or_string, (bytes, bytearray)):
        path_or_string = bytes(path_or_string).decode("utf-8")
    if isinstance(path_or_string, str) and path_or_string.lstrip().startswith("<"):
        return path_or_string, None
    if not isinstance(path_or_string, (str, os.PathLike)):
        raise ModelFileError(f"{kind}: expected a file path or an XML string, got {type(path_or_string).__name__}")
    path = os.path.abspath(os.fspath(pathlib.Path(path_or_string).expanduser()))
    if not os.path.isfile(path):
        raise ModelFileError(f"{kind} file '{path_or_string}' does not exist")
    return None, path


def read_robot_xml(path_or_string, kind):
    """Parse a ``<robot>`` file (URDF, SRDF) given as a path or XML text.

    Returns ``(root, path, src)``: the root element, the absolute path
    (``None`` for a string) and the phrase naming the source in messages.
    Raises :class:`ModelFileError` for a file that cannot be read, XML that
    is not well formed or declares an unknown encoding, or another root
    element."""
    text, path = read_source(path_or_string, kind)
    src = f"{kind} file '{path}'" if path else f"{kind} string"
    try:
        root = ET.parse(path).getroot() if path else ET.fromstring(text)
    except ET.ParseError as e:
        raise ModelFileError(f"{src} is not well-formed XML: {e}") from None
    except LookupError as e:  # the XML declaration names an encoding Python does not know
        raise ModelFileError(f"{src} declares an encoding that cannot be read: {e}") from None
    except (OSError, ValueError) as e:
        raise ModelFileError(f"{src} cannot be read: {e}") from None
    if root.tag != "robot":
        raise ModelFileError(f"{src}: the root element is <{root.tag}>, expected <robot>")
    return root, path, src


def pose(R=None, p=None):
    """4x4 homogeneous pose of rotation ``R`` (default identity) and translation ``p`` (default 0)."""
    T = _EYE4.copy()  # (np.eye costs 3x a copy; loaders make ~3 poses per link)
    if R is not None:
        T[:3, :3] = R
    if p is not None:
        T[:3, 3] = p
    return T


def quat_to_rotation(q):
    """Rotation matrix of the (not necessarily unit) quaternion ``q = (w, x, y, z)``."""
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def axis_angle_rotation(axis, angle):
    """Rotation by ``angle`` (rad) about the unit vector ``axis`` (Rodrigues)."""
    k = np.asarray(axis, dtype=float)
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def unique_name(base, taken):
    """``base``, or ``base_1``, ``base_2``, ... : the first not in ``taken`` (which is updated)."""
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name
