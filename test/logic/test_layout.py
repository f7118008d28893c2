"""The package's layout by role (dynamics/, logic/, nodes/, cli/, demos/): every tool runs as
``python -m robot_dynamics_ros.cli.<tool>`` and as its console script, and nothing else (no
top-level shims), no module name is used for two different things, and nothing imports upwards (the
core imports no node, tool or demo; the logic no node, tool or demo)."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import robot_dynamics_ros

PACKAGE = Path(robot_dynamics_ros.__file__).resolve().parent
ROOT = PACKAGE.parent
# The tools: the modules of cli/ with a main() (resources is a library of the others).
TOOLS = sorted(path.stem for path in (PACKAGE / 'cli').glob('*.py')
               if re.search(r'^def main\(', path.read_text(), re.MULTILINE))


def _console_scripts():
    """setup.py's console scripts: {name: 'module:function'}."""
    setup = (ROOT / 'setup.py').read_text()
    block = setup[setup.index('ENTRY_POINTS = ['):]
    block = block[:block.index(']')]
    return dict(re.findall(r"'(\w+) = ([\w.]+:\w+)'", block))


def test_the_tools_are_those_of_cli():
    assert TOOLS == ['bringup', 'identify', 'precompile', 'view'], TOOLS


def test_no_shims_at_the_top_of_the_package():
    """Only the package's own __init__ at its top: the tools are in cli/, the demos in demos/."""
    assert sorted(p.name for p in PACKAGE.glob('*.py')) == ['__init__.py']


@pytest.mark.parametrize('tool', TOOLS)
def test_every_tool_is_a_console_script(tool):
    assert _console_scripts().get(tool) == f'robot_dynamics_ros.cli.{tool}:main', _console_scripts()


def test_the_demos_are_a_console_script():
    assert _console_scripts()['demo'] == 'robot_dynamics_ros.demos.__main__:main'


def test_every_console_script_is_an_executable_of_the_prefix():
    """After the set-up (tools/bootstrap.sh) each is where `ros2 run` looks: <prefix>/lib/<package>."""
    lib = Path(sys.prefix) / 'lib' / 'robot_dynamics_ros'
    missing = [name for name in _console_scripts() if not os.access(lib / name, os.X_OK)]
    assert not missing, f'not executables in {lib}: {missing}'


@pytest.mark.parametrize('module', [*(f'robot_dynamics_ros.cli.{tool}' for tool in TOOLS),
                                    'robot_dynamics_ros.demos'])
def test_command_lines_answer_help(module):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get('PYTHONPATH'))
                                                      if p))
    env.pop('_ROS_WHEELS_BOOTSTRAP_COMPLETE', None)
    run = subprocess.run([sys.executable, '-m', module, '--help'], capture_output=True, text=True,
                         env=env, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert 'usage' in run.stdout.lower(), run.stdout


# Module names that exist in more than one folder on purpose: the same thing at two levels.
SAME_THING = {'__init__', '__main__'}


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
