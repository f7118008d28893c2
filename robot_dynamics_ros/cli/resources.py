"""Find the files the package ships (urdf/, config/, launch/, worlds/) from an install or a source tree.

The same code runs in three layouts:

- a source checkout (``python -m robot_dynamics_ros.demos`` from the repository, or an editable
  install): the files are next to the package, in ``<repo>/urdf``, ``<repo>/config``, ...;
- a colcon install space or a ROS workspace: ``share/robot_dynamics_ros/...``, found with
  ``ament_index_python`` when it is importable and the package is registered in the ament index;
- a plain ``pip install`` into a prefix: ``<sys.prefix>/share/robot_dynamics_ros/...`` (where
  setup.py's ``data_files`` put them).

The source tree wins when this module is imported from one: an editable install copies the data
files into ``<venv>/share`` once, and those copies go stale while the repository's files change.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE_NAME = 'robot_dynamics_ros'

#: The robot the simulation graph and the demo use when no URDF is given.
DEFAULT_URDF = 'ur5e.urdf'

__all__ = [
    'DEFAULT_URDF',
    'PACKAGE_NAME',
    'config_file',
    'default_urdf',
    'launch_file',
    'package_parent',
    'share_directories',
    'share_file',
    'source_root',
    'urdf_file',
    'world_file',
]


def package_parent() -> Path:
    """The directory that holds this Python package (robot_dynamics_ros/cli/resources.py -> the
    directory above robot_dynamics_ros/): a source checkout's root, or site-packages."""
    return Path(__file__).resolve().parents[2]


def source_root() -> Path | None:
    """The repository root when this package is imported from a source checkout, else None.

    Recognised by the ``package.xml`` naming this package one directory above the Python package.
    """
    root = package_parent()
    package_xml = root / 'package.xml'
    try:
        text = package_xml.read_text(encoding='utf-8')
    except OSError:
        return None
    return root if f'<name>{PACKAGE_NAME}</name>' in text else None


def _ament_share() -> Path | None:
    try:
        from ament_index_python.packages import (
            PackageNotFoundError,
            get_package_share_directory,
        )
    except ImportError:
        return None
    try:
        return Path(get_package_share_directory(PACKAGE_NAME))
    except (PackageNotFoundError, LookupError, ValueError, OSError):
        return None


def share_directories() -> list[Path]:
    """Directories that may hold the package's data files, in the order they are searched.

    The source checkout first (if any), then the ament share directory, then
    ``<sys.prefix>/share/robot_dynamics_ros``. Only existing directories are listed.
    """
    candidates: list[Path | None] = [source_root(), _ament_share()]
    candidates.append(Path(sys.prefix) / 'share' / PACKAGE_NAME)
    seen: list[Path] = []
    for path in candidates:
        if path is not None and path.is_dir() and path.resolve() not in seen:
            seen.append(path.resolve())
    return seen


def share_file(kind: str, name: str) -> Path:
    """Absolute path of the data file ``<kind>/<name>`` (kind: 'urdf', 'config' or 'launch').

    An existing path given as ``name`` (absolute, or relative to the working directory) is returned
    as it is, so command-line arguments can be either a file or the name of a shipped file.
    Raises FileNotFoundError listing every place searched.
    """
    given = Path(os.path.expanduser(name))
    if given.is_file():
        return given.resolve()
    searched = []
    for directory in share_directories():
        path = directory / kind / name
        if path.is_file():
            return path
        searched.append(str(path))
    raise FileNotFoundError(
        f'{kind} file {name!r} not found; searched: '
        + (', '.join(searched) if searched else f'no share directory of {PACKAGE_NAME} exists')
    )


def urdf_file(name: str = DEFAULT_URDF) -> Path:
    """Path of a URDF the package ships (``urdf/<name>``), or of an existing file ``name``."""
    return share_file('urdf', name)


def config_file(name: str) -> Path:
    """Path of a parameter file the package ships (``config/<name>``), or of an existing file."""
    return share_file('config', name)


def world_file(name: str) -> Path:
    """Path of a MuJoCo world the package ships (``worlds/<name>``, e.g. ``table.xml``), or of an
    existing file ``name``."""
    return share_file('worlds', name)


def launch_file(name: str) -> Path:
    """Path of a launch file the package ships (``launch/<name>``)."""
    return share_file('launch', name)


def default_urdf() -> Path:
    """The default robot's URDF: ``urdf/ur5e.urdf``."""
    return urdf_file(DEFAULT_URDF)
