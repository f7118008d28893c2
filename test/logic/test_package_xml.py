"""package.xml against the code, both ways: every import of a third-party or ROS module has its rosdep
key declared with the right kind (what the package's modules, demos and launch files import as
<exec_depend>; what only tests and benchmarks import as <test_depend> or <exec_depend>), and every key
declared is used. ROS-free and fast: `ast` reads the imports, `xml.etree` reads package.xml.

The keys were checked in ros/rosdistro: ROS packages by their package name in jazzy/ and
kilted/distribution.yaml, Python libraries in rosdep/python.yaml. A module with no key at all is in
NO_ROSDEP_KEY with the reason; a key declared for something other than an import is in NOT_IMPORTED.
"""

import ast
import functools
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = 'robot_dynamics_ros'
PACKAGE_XML = REPO / 'package.xml'

# Import name (top-level module) -> rosdep key.
IMPORT_KEYS = {
    # ROS 2 packages: the key is the package name (jazzy/ and kilted/distribution.yaml).
    'rclpy': 'rclpy',
    'builtin_interfaces': 'builtin_interfaces',
    'rcl_interfaces': 'rcl_interfaces',
    'rosgraph_msgs': 'rosgraph_msgs',
    'std_msgs': 'std_msgs',
    'sensor_msgs': 'sensor_msgs',
    'geometry_msgs': 'geometry_msgs',
    'trajectory_msgs': 'trajectory_msgs',
    'std_srvs': 'std_srvs',
    'diagnostic_msgs': 'diagnostic_msgs',
    'nav_msgs': 'nav_msgs',
    'control_msgs': 'control_msgs',
    'action_msgs': 'action_msgs',
    'tf2_msgs': 'tf2_msgs',
    'visualization_msgs': 'visualization_msgs',
    'ament_index_python': 'ament_index_python',
    'xacro': 'xacro',                        # a .xacro robot description (logic/robot_description.py)
    'launch': 'launch',
    'launch_ros': 'launch_ros',
    'launch_testing': 'launch_testing',
    'ros2cli': 'ros2cli',
    'urdf_parser_py': 'urdfdom_py',          # repository urdf_parser_py, package urdfdom_py
    'pinocchio': 'pinocchio',                # on PyPI: pin
    # Python libraries (rosdep/python.yaml).
    'numpy': 'python3-numpy',
    'numba': 'python3-numba',
    'scipy': 'python3-scipy',
    'cvxpy': 'python3-cvxpy-pip',            # PyPI only; cvxpy requires clarabel, the solver used
    'rosbags': 'python3-rosbags-pip',        # PyPI only
    'yaml': 'python3-yaml',
    'matplotlib': 'python3-matplotlib',
    'trimesh': 'python3-trimesh',            # the viewer's meshes and primitives
    'PIL': 'python3-pil',                    # the viewer's tests compare screenshots
    'pytest': 'python3-pytest',
    'hypothesis': 'python3-hypothesis',
    'catkin_pkg': 'python3-catkin-pkg-modules',   # the key ROS 2's own packages use for catkin_pkg
    # test_colcon_build.py imports colcon_core and runs `colcon build` (colcon-ros too); there is no
    # python3-colcon-core key, the one for the colcon tools is python3-colcon-common-extensions.
    'colcon_core': 'python3-colcon-common-extensions',
}

# Imported, but no rosdep key exists: not declared in package.xml (a comment there says so).
NO_ROSDEP_KEY = {
    'viser': 'no rosdep key: the viewer\'s web page and 3D scene, pinned in requirements/runtime.txt',
    'playwright': 'no rosdep key: drives Debian\'s chromium in test/nodes/test_viewer.py, pinned in '
                  'requirements/test.txt',
    'llvmlite': 'no rosdep key: numba\'s own dependency (Debian\'s python3-numba depends on '
                'python3-llvmlite), pinned in requirements/runtime.txt',
    'modern_robotics': 'no rosdep key (neither a system nor a pip one): installed from '
                       'requirements/test.txt',
    'mujoco': 'no rosdep key (rosdistro has none): simulator_node\'s optional engine '
              '(logic/mujoco_engine.py, imported only with engine:=mujoco; pip install \'.[mujoco]\') and '
              'the test plant of test/plants, pinned in requirements/runtime.txt',
    'crocoddyl': 'not a dependency: the optimal-control reference, imported only by '
                 'benchmarks/_crocoddyl_reaching.py in a venv of its own (.venv-crocoddyl, '
                 'requirements/crocoddyl-reference.txt: it needs Pinocchio 4.0.0)',
}

# Declared without being imported: key -> (dependency kind, reason).
NOT_IMPORTED = {
    'ros2launch': ('exec_depend', 'launch/*.launch.py are started with `ros2 launch`'),
    'ros2pkg': ('test_depend', 'test/launch/test_ros2_cli.py runs `ros2 pkg executables`'),
    'ros2topic': ('test_depend', 'test/launch/test_ros2_cli.py runs `ros2 topic echo`'),
    'ros2param': ('test_depend', 'test/launch/test_ros2_cli.py runs `ros2 param set/get`'),
    'ros2service': ('test_depend', 'test/launch/test_ros2_cli.py runs `ros2 service call`'),
}

# What satisfies a need: runtime code needs the key at run time; tests are satisfied by either.
SATISFIES = {'exec_depend': {'exec_depend', 'depend'},
             'test_depend': {'test_depend', 'exec_depend', 'depend'}}
# Calls that import the module named by their first (string) argument.
IMPORTING_CALLS = {'importorskip', 'import_module', '__import__'}


def imports_of(source, filename='<string>'):
    """Top-level names of the absolute imports in source, in functions too, and of the modules named
    in importorskip('x'), importlib.import_module('x') and __import__('x') calls."""
    names = set()
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, 'id', None)
            if name in IMPORTING_CALLS:
                names.add(node.args[0].value)
    return {name.split('.')[0] for name in names}


def _sources():
    """(kind, path) of the code: 'runtime' (the package, launch files), 'demo', 'test' (with benchmarks)."""
    for path in sorted((REPO / PACKAGE).rglob('*.py')):
        is_demo = path.parent == REPO / PACKAGE / 'demos'
        yield ('demo' if is_demo else 'runtime'), path
    for path in sorted((REPO / 'launch').glob('*.launch.py')):
        yield 'runtime', path
    for path in sorted([*(REPO / 'test').rglob('*.py'), *(REPO / 'benchmarks').glob('*.py')]):
        yield 'test', path


@functools.cache
def usage():
    """{module: {kind: [files]}} of the third-party and ROS imports of the code. Left out: the standard
    library, this package, relative imports, and (in tests and benchmarks) the helper modules that
    live there (conftest, _node_harness, _robots, test_identify_cli, ...)."""
    local = {path.name.removesuffix('.py') for kind, path in _sources() if kind == 'test'}
    found = {}
    for kind, path in _sources():
        for name in imports_of(path.read_text(encoding='utf-8'), str(path)):
            if name in sys.stdlib_module_names or name == PACKAGE or (kind == 'test' and name in local):
                continue
            found.setdefault(name, {}).setdefault(kind, []).append(str(path.relative_to(REPO)))
    return found


def declared(text):
    """{key: [dependency tags]} of package.xml's text (every *depend tag)."""
    deps = {}
    for element in ET.fromstring(text):
        if element.tag.endswith('depend'):
            deps.setdefault(element.text.strip(), []).append(element.tag)
    return deps


def _where(kinds):
    files = [f for kind in ('runtime', 'demo', 'test') for f in kinds.get(kind, [])]
    return ', '.join(files[:3]) + (f' and {len(files) - 3} more' if len(files) > 3 else '')


def problems(text, found):
    """What is wrong with package.xml's text for the imports found ({module: {kind: [files]}})."""
    errors = []
    needed = {key: (kind, reason) for key, (kind, reason) in NOT_IMPORTED.items()}
    for module, kinds in sorted(found.items()):
        if module in NO_ROSDEP_KEY:
            continue
        if module not in IMPORT_KEYS:
            errors.append(f'{module!r} (imported by {_where(kinds)}) is neither in IMPORT_KEYS nor in '
                          f'NO_ROSDEP_KEY: find its rosdep key in ros/rosdistro')
            continue
        kind = 'exec_depend' if kinds.keys() & {'runtime', 'demo'} else 'test_depend'
        key = IMPORT_KEYS[module]
        if needed.get(key, ('test_depend',))[0] != 'exec_depend':
            needed[key] = (kind, f'{module} is imported by {_where(kinds)}')
    deps = declared(text)
    for key, (kind, reason) in sorted(needed.items()):
        tags = deps.get(key)
        if not tags:
            errors.append(f'{key} is not declared (<{kind}>): {reason}')
        elif not SATISFIES[kind] & set(tags):
            errors.append(f'{key} is declared as {tags}, needs <{kind}>: {reason}')
    for key, tags in sorted(deps.items()):
        if key not in needed:
            errors.append(f'{key} ({tags}) is declared but nothing imports it, nor is it in NOT_IMPORTED')
        elif len(tags) > 1:
            errors.append(f'{key} is declared {len(tags)} times ({tags}): once, with the strongest kind')
    return errors


def _package_xml():
    return PACKAGE_XML.read_text(encoding='utf-8')


def test_package_xml_declares_exactly_what_the_code_imports():
    assert problems(_package_xml(), usage()) == []


def test_the_scan_sees_imports_in_functions_importorskip_and_launch_files():
    found = usage()
    assert 'demo' in found['matplotlib'] and 'runtime' not in found['matplotlib']   # inside functions
    assert 'launch/simulation.launch.py' in found['launch_ros']['runtime']
    assert found['modern_robotics'].keys() == {'test'}                             # importorskip only
    assert 'runtime' in found['llvmlite']
    assert not {'conftest', '_node_harness', '_robots', 'test_identify_cli'} & found.keys()


def test_imports_of_reads_every_form():
    source = '''
import a.b, c as d
from e.f import g
from . import h
from .i import j
def k():
    import l
    m = pytest.importorskip('n.o')
    p = importlib.import_module('q')
    return __import__('r', fromlist=['s']), importorskip(name)
'''
    assert imports_of(source) == {'a', 'c', 'e', 'l', 'n', 'q', 'r'}


def test_a_package_xml_missing_numpy_is_reported():
    text = _package_xml().replace('  <exec_depend>python3-numpy</exec_depend>\n', '')
    assert text != _package_xml()
    errors = problems(text, usage())
    assert len(errors) == 1 and errors[0].startswith('python3-numpy is not declared (<exec_depend>)')


def test_a_runtime_import_declared_as_test_depend_is_reported():
    text = _package_xml().replace('<exec_depend>python3-matplotlib</exec_depend>',
                                  '<test_depend>python3-matplotlib</test_depend>')
    errors = problems(text, usage())
    assert len(errors) == 1 and errors[0].startswith("python3-matplotlib is declared as ['test_depend']")


def test_a_test_import_may_be_an_exec_depend():
    text = _package_xml().replace('<test_depend>python3-hypothesis</test_depend>',
                                  '<exec_depend>python3-hypothesis</exec_depend>')
    assert problems(text, usage()) == []


@pytest.mark.parametrize('extra', ['<exec_depend>python3-psutil</exec_depend>',
                                   '<test_depend>launch_testing_ros</test_depend>',
                                   '<test_depend>rclpy</test_depend>'])
def test_a_key_nothing_uses_or_a_repeated_key_is_reported(extra):
    text = _package_xml().replace('  <export>', f'  {extra}\n  <export>')
    errors = problems(text, usage())
    assert len(errors) == 1
    assert 'nothing imports it' in errors[0] or 'declared 2 times' in errors[0]


def test_an_import_without_a_key_is_reported():
    found = {**usage(), 'tomli_w': {'runtime': ['robot_dynamics_ros/x.py']}}
    errors = problems(_package_xml(), found)
    assert len(errors) == 1 and errors[0].startswith("'tomli_w' (imported by robot_dynamics_ros/x.py)")


def test_the_tables_have_no_stale_entries():
    found = usage()
    assert not (IMPORT_KEYS.keys() | NO_ROSDEP_KEY.keys()) - found.keys()
    assert not IMPORT_KEYS.keys() & NO_ROSDEP_KEY.keys()
    assert not set(IMPORT_KEYS.values()) & NOT_IMPORTED.keys()


def test_package_xml_keeps_format_3_and_the_ament_python_build_type():
    root = ET.fromstring(_package_xml())
    assert root.get('format') == '3'
    assert root.findtext('name') == PACKAGE
    assert root.findtext('export/build_type') == 'ament_python'


def test_catkin_pkg_accepts_package_xml():
    package = pytest.importorskip('catkin_pkg.package')
    parsed = package.parse_package_string(_package_xml())
    parsed.validate()
    assert parsed.name == PACKAGE
