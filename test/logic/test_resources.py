"""cli/resources.py finds the shipped files in a source checkout first (the files beside the package),
also where no share directory holds links to them (a plain ``pip install -e .``): the checkout is the
directory above the Python package, whose package.xml names it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from robot_dynamics_ros.cli import resources

REPO = Path(__file__).resolve().parents[2]


def test_the_checkout_is_the_directory_above_the_package():
    assert resources.package_parent() == REPO
    assert resources.source_root() == REPO
    assert resources.share_directories()[0] == REPO
    assert resources.config_file('simulation.yaml') == REPO / 'config' / 'simulation.yaml'
    assert resources.world_file('table.xml') == REPO / 'worlds' / 'table.xml'


def test_a_checkout_without_share_links_finds_its_own_files(tmp_path):
    """A copy of the checkout's layout (package.xml, the package, config/, urdf/) imported from its own
    folder: bring-up's graph takes that copy's files (a config only the copy has), not an installed
    share directory's."""
    for name in ('package.xml',):
        shutil.copy(REPO / name, tmp_path / name)
    shutil.copytree(REPO / 'robot_dynamics_ros', tmp_path / 'robot_dynamics_ros',
                    ignore=shutil.ignore_patterns('__pycache__'))
    for folder in ('config', 'urdf'):
        shutil.copytree(REPO / folder, tmp_path / folder)
    (tmp_path / 'config' / 'only_in_the_copy.yaml').write_text('{}\n')
    env = {k: v for k, v in os.environ.items() if k != 'AMENT_PREFIX_PATH'}
    env['PYTHONPATH'] = str(tmp_path)
    code = ('from robot_dynamics_ros.cli import bringup, resources; '
            "gc = bringup.resolve_graph('simulation'); "
            "print(resources.source_root(), gc.config, gc.urdf, "
            "resources.config_file('only_in_the_copy.yaml'))")
    out = subprocess.run([sys.executable, '-c', code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    root, config, urdf, only = out.stdout.split()
    assert Path(root) == tmp_path
    assert Path(config) == tmp_path / 'config' / 'simulation.yaml'
    assert Path(urdf) == tmp_path / 'urdf' / 'ur5e.urdf'
    assert Path(only) == tmp_path / 'config' / 'only_in_the_copy.yaml'
