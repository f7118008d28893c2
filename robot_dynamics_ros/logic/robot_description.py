"""A robot description from a file: a URDF read as it is, a xacro file expanded with its arguments.

ROS-free. Vendors publish their arms as xacro files that take arguments (ur_description's
``ur.urdf.xacro`` with ``ur_type:=ur5e name:=ur``, franka_description's ``fr3.urdf.xacro``, ...):
``read_description(path, xacro_args)`` gives the URDF XML that every model source of the package
(the nodes' ``urdf_path``, the launch files' ``urdf:=``, bring-up's and identify's ``--urdf``, the
demos) builds its model from, and that the simulator publishes on /robot_description.

A path ending in ``.xacro`` (``.urdf.xacro`` too) is expanded by the ROS ``xacro`` package (PyPI
``xacro``, the one ``ros2 run xacro xacro`` runs), imported only then: ``pip install xacro`` where it is
missing. ``xacro_args`` are its command line's arguments, ``name:=value`` separated by spaces
(``parse_xacro_args``). ``$(find pkg)`` resolves to the package's share directory through the ament
index (ament_index_python, on AMENT_PREFIX_PATH), as xacro does under ROS. ``package://`` URIs (the
meshes) are left as they are: the dynamics reads no geometry, and RViz resolves them from
/robot_description.
"""

from __future__ import annotations

import os
import shlex
import threading

from robot_dynamics_ros.logic.input_guard import bounded

__all__ = ['DescriptionError', 'DescriptionTooLarge', 'XACRO_SUFFIX', 'is_xacro', 'parse_xacro_args',
           'read_description']

XACRO_SUFFIX = '.xacro'
_ASSIGN = ':='
# xacro keeps the file being expanded, the arguments and the includes in module globals: one
# expansion at a time in a process.
_XACRO_LOCK = threading.Lock()


class DescriptionError(ValueError):
    """A description file that cannot be used as given: malformed xacro arguments, a xacro file that
    cannot be expanded (the reason in words), or one above the size limit."""


class DescriptionTooLarge(DescriptionError):
    """A description above the size limit: ``size`` bytes (UTF-8; a xacro file's after expansion)."""

    def __init__(self, path, size, limit):
        super().__init__(f'{bounded(path, 300)}: {size} bytes, more than the limit of {limit}')
        self.size = size
        self.limit = limit


def is_xacro(path) -> bool:
    """True for a file name ending in .xacro (``ur.urdf.xacro``, ``arm.xacro``): expanded, not read."""
    return os.fspath(path).endswith(XACRO_SUFFIX)


def parse_xacro_args(text: str) -> dict[str, str]:
    """{name: value} of xacro's command-line arguments ``name:=value``, separated by spaces; a value
    with spaces in shell quotes, an empty value allowed (``tf_prefix:=''``). DescriptionError (a
    ValueError) for a word that is not ``name:=value`` or a name given twice.

    >>> parse_xacro_args("ur_type:=ur5e name:=ur prefix:='left arm'")
    {'ur_type': 'ur5e', 'name': 'ur', 'prefix': 'left arm'}
    """
    try:
        words = shlex.split(text or '')
    except ValueError as exc:          # an unclosed quote
        raise DescriptionError(f'xacro_args {bounded(repr(text), 200)}: {exc}') from None
    args: dict[str, str] = {}
    for word in words:
        name, assign, value = word.partition(_ASSIGN)
        if not assign or not name.strip():
            raise DescriptionError(f'xacro_args: {bounded(repr(word), 100)} is not name:=value (arguments '
                                   "are separated by spaces, as on xacro's command line: "
                                   "'ur_type:=ur5e name:=ur')")
        if name in args:
            raise DescriptionError(f'xacro_args: {name!r} is given twice')
        args[name] = value
    return args


def read_description(path, xacro_args: str = '', *, max_bytes: int | None = None) -> str:
    """The URDF XML of the file ``path``: a xacro file (``is_xacro``) expanded with ``xacro_args``
    (``parse_xacro_args``), any other file's UTF-8 text as it is (``xacro_args`` unused).

    ``max_bytes``: DescriptionTooLarge above it (a file's size, or the expanded XML's UTF-8 bytes); a
    file is never read past it (a device or FIFO never ends). OSError or UnicodeDecodeError for a URDF
    that cannot be read; DescriptionError (a ValueError) for a xacro file that cannot be expanded,
    saying why: an argument that is not set, a package ``$(find ...)`` cannot find, xacro not
    installed, the error xacro gives.
    """
    if is_xacro(path):
        if not os.path.isfile(path):
            raise FileNotFoundError(f'xacro file not found: {bounded(path, 300)}')
        data = _expand(os.fspath(path), parse_xacro_args(xacro_args)).encode('utf-8')
        size = len(data)
    else:
        with open(path, 'rb') as f:
            data = f.read() if max_bytes is None else f.read(max_bytes + 1)
        size = max(len(data), os.path.getsize(path))
    if max_bytes is not None and size > max_bytes:
        raise DescriptionTooLarge(path, size, max_bytes)
    return data.decode('utf-8')


def _expand(path: str, mappings: dict[str, str]) -> str:
    """``xacro path name:=value ...``'s output; DescriptionError saying what went wrong, and in which file."""
    try:
        import xacro
    except ImportError:
        raise DescriptionError(f'{bounded(path, 300)} is a xacro file: expanding it needs the xacro package '
                         '(pip install xacro, or the ROS package xacro)') from None
    with _XACRO_LOCK:
        try:
            # a copy: xacro adds the <xacro:arg> defaults to the mapping it is given
            document = xacro.process_file(path, mappings=dict(mappings))
        except Exception as exc:  # xacro raises XacroException and whatever its expressions raise
            where = (xacro.filestack or [None])[-1]
            raise DescriptionError(_xacro_error(path, where, exc)) from None
    return document.toprettyxml(indent='  ')


def _xacro_error(path: str, where: str | None, exc: Exception) -> str:
    """What went wrong expanding ``path`` (``where``: the file being expanded then), in words."""
    inner = getattr(exc, 'exc', None)
    place = f'{bounded(path, 300)}' + (f' (in {bounded(where, 300)})' if where and where != path else '')
    if type(inner).__name__ == 'ArgException':      # $(arg name) of an argument neither given nor declared
        name = str(inner)
        return (f"xacro argument {name!r} is not set: pass xacro_args '{name}:=VALUE' "
                f'(xacro file {place})')
    if type(inner).__module__.startswith('ament_index_python') or 'AMENT_PREFIX_PATH' in str(inner):
        detail = inner.args[0] if inner.args else inner     # (a KeyError's str() adds quotes)
        return (f'xacro file {place}: $(find ...) failed: {bounded(detail, 500)}; the packages are looked '
                'up in the ament index on AMENT_PREFIX_PATH: install the package, or source the '
                'workspace that has it')
    return f'cannot expand xacro file {place}: {type(exc).__name__}: {bounded(exc, 500)}'
