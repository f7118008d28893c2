"""The package's layout by role (dynamics/, logic/, nodes/, cli/, demos/): the command lines users
type from before the layout still work, no module name is used for two different things, and nothing
imports upwards (the core imports no node, tool or demo; the logic no node, tool or demo)."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import robot_dynamics_ros

PACKAGE = Path(robot_dynamics_ros.__file__).resolve().parent
ROOT = PACKAGE.parent


@pytest.mark.parametrize('module', ['robot_dynamics_ros.bringup', 'robot_dynamics_ros.identify',
                                    'robot_dynamics_ros.precompile',
                                    'robot_dynamics_ros.demo', 'robot_dynamics_ros.demos',
                                    'robot_dynamics_ros.cli.bringup', 'robot_dynamics_ros.cli.identify'])
def test_command_lines_answer_help(module):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get('PYTHONPATH'))
                                                      if p))
    env.pop('_ROS_WHEELS_BOOTSTRAP_COMPLETE', None)
    run = subprocess.run([sys.executable, '-m', module, '--help'], capture_output=True, text=True,
                         env=env, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert 'usage' in run.stdout.lower(), run.stdout


# Module names that exist in more than one folder on purpose: the same thing at two levels.
SAME_THING = {
    '__init__', '__main__',
    # the command lines users typed before the layout, kept at the top (each imports its tool)
    'bringup', 'identify', 'precompile',
}


def test_no_module_name_is_used_twice():
    names = {}
    for path in PACKAGE.rglob('*.py'):
        names.setdefault(path.stem, []).append(path.relative_to(PACKAGE).as_posix())
    twice = {name: paths for name, paths in names.items() if len(paths) > 1 and name not in SAME_THING}
    assert not twice, twice


LAYERS = {'dynamics': set(), 'logic': {'dynamics'}, 'nodes': {'dynamics', 'logic'},
          'cli': {'dynamics', 'logic', 'nodes'}, 'demos': {'dynamics', 'logic', 'nodes', 'cli'}}


@pytest.mark.parametrize('layer', sorted(LAYERS))
def test_layers_import_only_below_themselves(layer):
    allowed = LAYERS[layer] | {layer}
    wrong = []
    for path in (PACKAGE / layer).rglob('*.py'):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f'{node.module}.{a.name}' for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                parts = name.split('.')
                if parts[0] == 'robot_dynamics_ros' and len(parts) > 1 and parts[1] in LAYERS \
                        and parts[1] not in allowed:
                    wrong.append(f'{path.relative_to(PACKAGE)} imports {name}')
    assert not wrong, wrong
