"""read_description: a xacro file expanded with its arguments gives the model of the equivalent URDF.

On xacro files written for these tests (test/data/xacro/): two_link_arm_description, a vendor-style
package (required arguments and arguments with defaults, macros, an include by $(find ...) and one
relative to the including file, the physical parameters from a YAML file as ur_description loads
them), found through an ament prefix made in a temporary folder; ur.urdf.xacro, ur_description's
interface (ur_type, name) over the package's own UR5e through $(find robot_dynamics_ros) (the Makefile
puts the venv, where the set-up links the package's share files, on AMENT_PREFIX_PATH). The errors say
what to do: the argument to pass, the package that is not found, `pip install xacro`.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli import bringup
from robot_dynamics_ros.dynamics.urdf import robot_name
from robot_dynamics_ros.logic.robot_description import (
    DescriptionTooLarge,
    is_xacro,
    parse_xacro_args,
    read_description,
)

pytest.importorskip('xacro')

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / 'test' / 'data' / 'xacro'
VENDOR = 'two_link_arm_description'
ARM = DATA / VENDOR / 'urdf' / 'two_link_arm.urdf.xacro'
ARM_LONG_URDF = DATA / 'two_link_arm_long.urdf'
UR_XACRO = DATA / 'ur.urdf.xacro'
UR5E_URDF = REPO / 'urdf' / 'ur5e.urdf'
LONG = 'name:=two_link_arm arm_type:=long'


@pytest.fixture
def vendor_prefix(tmp_path, monkeypatch):
    """An ament prefix holding two_link_arm_description (its index marker and its share folder, a link
    to test/data/xacro/two_link_arm_description), first on AMENT_PREFIX_PATH."""
    marker = tmp_path / 'share' / 'ament_index' / 'resource_index' / 'packages' / VENDOR
    marker.parent.mkdir(parents=True)
    marker.touch()
    (tmp_path / 'share' / VENDOR).symlink_to(DATA / VENDOR, target_is_directory=True)
    monkeypatch.setenv('AMENT_PREFIX_PATH', os.pathsep.join(
        p for p in (str(tmp_path), os.environ.get('AMENT_PREFIX_PATH')) if p))
    return tmp_path


def assert_same_model(ours, theirs):
    """The same tree, inertias, limits and dynamics (at a few seeded states)."""
    for name in ('joint_names', 'joint_types', 'link_names', 'frame_names', 'root_link', 'tip_frame'):
        assert getattr(ours, name) == getattr(theirs, name), name
    np.testing.assert_array_equal(ours.parent, theirs.parent)
    for name in ('mass', 'com', 'inertia_com', 'T_tree', 'axis', 'lower', 'upper', 'velocity_limit',
                 'effort_limit'):
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-12, atol=1e-15,
                                   err_msg=name)
    rng = np.random.default_rng(35)
    for _ in range(3):
        q, qd = rng.uniform(-1.0, 1.0, (2, theirs.nq))
        np.testing.assert_allclose(rd.gravity_torques(ours, q), rd.gravity_torques(theirs, q), rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(rd.mass_matrix(ours, q), rd.mass_matrix(theirs, q), rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(rd.coriolis_forces(ours, q, qd), rd.coriolis_forces(theirs, q, qd),
                                   rtol=1e-12, atol=1e-12)


# -- the arguments ------------------------------------------------------------------------------
def test_xacro_args_are_name_value_words_as_on_the_command_line():
    assert parse_xacro_args('') == {} and parse_xacro_args('   ') == {}
    assert parse_xacro_args('ur_type:=ur5e  name:=ur') == {'ur_type': 'ur5e', 'name': 'ur'}
    assert parse_xacro_args('prefix:="left arm" tf_prefix:= x:=a:=b') == {
        'prefix': 'left arm', 'tf_prefix': '', 'x': 'a:=b'}


@pytest.mark.parametrize('text, says', [
    ('ur_type=ur5e', "'ur_type=ur5e' is not name:=value"),
    (':=ur5e', "':=ur5e' is not name:=value"),
    ('name:=a name:=b', "'name' is given twice"),
    ("prefix:='left", 'No closing quotation'),
])
def test_malformed_xacro_args_are_refused_with_the_reason(text, says):
    with pytest.raises(ValueError, match='xacro_args') as error:
        parse_xacro_args(text)
    assert says in str(error.value)


def test_only_xacro_files_are_expanded():
    assert is_xacro('ur.urdf.xacro') and is_xacro(Path('/a/fr3.xacro'))
    assert not is_xacro('ur5e.urdf') and not is_xacro('xacro.urdf')


def test_a_urdf_file_is_read_as_it_is():
    text = UR5E_URDF.read_text(encoding='utf-8')
    assert read_description(UR5E_URDF) == text
    assert read_description(str(UR5E_URDF), 'ur_type:=ignored', max_bytes=len(text)) == text


# -- a vendor's description -----------------------------------------------------------------------
def test_the_expanded_xacro_gives_the_model_of_the_equivalent_urdf(vendor_prefix):
    xml = read_description(ARM, LONG)
    assert robot_name(xml) == 'two_link_arm' and 'xacro' not in xml.split('<robot', 1)[1]
    assert_same_model(rd.load_urdf(xml), rd.load_urdf(str(ARM_LONG_URDF)))


def test_the_arguments_choose_what_the_xacro_builds(vendor_prefix):
    short = rd.load_urdf(read_description(ARM, 'name:=arm arm_type:=short'))
    np.testing.assert_allclose(short.mass, [3.0, 1.8])           # config/short/physical_parameters.yaml
    np.testing.assert_allclose(short.T_tree[:, 2, 3], [0.08, 0.35])
    prefixed = rd.load_urdf(read_description(ARM, f'{LONG} prefix:=left_'), tip_link='left_tool0')
    assert prefixed.joint_names == ('left_shoulder_joint', 'left_elbow_joint')
    # a 1.5 kg tool 5 cm beyond tool0, lumped into the forearm
    tool = rd.load_urdf(read_description(ARM, f'{LONG} tool_mass:=1.5'))
    np.testing.assert_allclose(tool.mass, [4.0, 4.0])
    np.testing.assert_allclose(tool.com[1], [0.0, 0.0, (2.5 * 0.2 + 1.5 * 0.45) / 4.0])


def test_the_expansion_is_what_the_xacro_command_prints(vendor_prefix):
    xacro = Path(sys.executable).with_name('xacro')
    if not xacro.is_file():
        pytest.skip('no xacro command beside this Python')
    printed = subprocess.run([str(xacro), str(ARM), *LONG.split()], capture_output=True, text=True,
                             check=True, timeout=60).stdout
    assert read_description(str(ARM), LONG) == printed


@pytest.mark.parametrize('args, missing', [('name:=arm', 'arm_type'), ('arm_type:=long', 'name')])
def test_a_required_argument_not_given_is_named(vendor_prefix, args, missing):
    with pytest.raises(ValueError) as error:
        read_description(ARM, args)
    assert str(error.value).startswith(f"xacro argument '{missing}' is not set: pass xacro_args "
                                       f"'{missing}:=VALUE'"), error.value
    assert str(ARM) in str(error.value)


def test_a_package_not_in_the_ament_index_is_named(vendor_prefix):
    with pytest.raises(ValueError) as error:
        read_description(DATA / 'missing_package.urdf.xacro')
    message = str(error.value)
    assert "package 'no_such_description' not found" in message and 'AMENT_PREFIX_PATH' in message
    assert str(vendor_prefix) in message        # where it was looked for


def test_a_vendor_package_not_installed_is_named(monkeypatch):
    monkeypatch.delenv('AMENT_PREFIX_PATH', raising=False)
    with pytest.raises(ValueError, match='AMENT_PREFIX_PATH'):
        read_description(ARM, LONG)


@pytest.fixture
def needs_ur_share():
    """Skips unless $(find robot_dynamics_ros) resolves (ur.urdf.xacro includes the share's UR5e)."""
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    try:
        get_package_share_directory('robot_dynamics_ros')
    except (PackageNotFoundError, LookupError, ValueError, OSError):
        pytest.skip('robot_dynamics_ros is not in the ament index (AMENT_PREFIX_PATH): `make test` puts '
                    'the venv there, where the set-up links the share files')


def test_find_robot_dynamics_ros_resolves_through_the_ament_index(needs_ur_share):
    xml = read_description(UR_XACRO, 'ur_type:=ur5e name:=ur')
    assert robot_name(xml) == 'ur'
    assert_same_model(rd.load_urdf(xml), rd.load_urdf(str(UR5E_URDF)))
    with pytest.raises(ValueError, match="xacro argument 'ur_type' is not set"):
        read_description(UR_XACRO, 'name:=ur')


# -- bring-up: the nodes' parameters and the description the demos read -----------------------------
def test_bringup_gives_every_node_the_xacro_and_its_arguments(vendor_prefix):
    gc = bringup.resolve_graph('simulation', urdf=str(ARM), xacro_args=LONG)
    for spec in gc.nodes:
        assert gc.overrides(spec)['urdf_path'] == str(ARM)
        assert f'xacro_args:="{LONG}"' in gc.node_arguments(spec)
    command = bringup.bringup_command(gc)
    assert command[command.index('--xacro-args') + 1] == LONG
    assert gc.robot_description() == read_description(ARM, LONG)
    plain = bringup.resolve_graph('simulation')
    assert 'xacro_args' not in plain.overrides(bringup.SIMULATOR) and '--xacro-args' not in \
        bringup.bringup_command(plain)


@pytest.mark.parametrize('urdf, args, says', [
    (str(ARM), 'arm_type=long', 'is not name:=value'),
    ('ur5e.urdf', 'ur_type:=ur5e', 'is not a xacro file'),
])
def test_bringup_refuses_xacro_args_it_cannot_use(urdf, args, says):
    with pytest.raises(ValueError, match=says):
        bringup.resolve_graph('simulation', urdf=urdf, xacro_args=args)
    assert bringup.main(['--urdf', urdf, '--xacro-args', args]) == 2


# -- identify: the model of a xacro --urdf ---------------------------------------------------------------
@pytest.fixture(scope='module')
def ur5e_bag(tmp_path_factory):
    """test_identify_cli's simulated recording of the UR5e carrying a payload, 6 s, as a bag."""
    from test_identify_cli import _recording, _write_bag
    return _write_bag(tmp_path_factory.mktemp('bag') / 'recording', 'sqlite3', *_recording(duration=6.0))


def _identify(capsys, *argv):
    from robot_dynamics_ros.cli.identify import main
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_identify_takes_a_xacro_urdf_with_its_arguments(needs_ur_share, ur5e_bag, tmp_path, capsys):
    common = ('--bag', ur5e_bag, '--tip-link', 'tool0', '--json')
    from_xacro = _identify(capsys, *common, '--urdf', UR_XACRO, '--xacro-args', 'ur_type:=ur5e name:=ur')
    assert from_xacro == _identify(capsys, *common, '--urdf', UR5E_URDF)
    # identify robot writes the expanded URDF with the identified values: a plain URDF the nodes take
    out = tmp_path / 'identified.urdf'
    report = _identify(capsys, 'robot', *common, '--urdf', UR_XACRO, '--xacro-args', 'ur_type:=ur5e name:=ur',
                       '--output', out)
    assert report['output'] == str(out)
    written = out.read_text(encoding='utf-8')
    assert robot_name(written) == 'ur' and 'xacro:' not in written
    assert rd.load_urdf(str(out)).joint_names == rd.load_urdf(str(UR5E_URDF)).joint_names
    from robot_dynamics_ros.cli.identify import main
    assert main(['--bag', str(ur5e_bag), '--urdf', str(UR_XACRO), '--xacro-args', 'name:=ur']) == 2
    assert "xacro argument 'ur_type' is not set" in capsys.readouterr().err


# -- limits and errors ------------------------------------------------------------------------------
def test_the_size_limit_holds_for_the_expanded_xml(vendor_prefix):
    size = len(read_description(ARM, LONG).encode('utf-8'))
    assert read_description(ARM, LONG, max_bytes=size)
    with pytest.raises(DescriptionTooLarge) as error:
        read_description(ARM, LONG, max_bytes=size - 1)
    assert (error.value.size, error.value.limit) == (size, size - 1)
    # the source files are far smaller than what they expand to
    assert ARM.stat().st_size < size
    with pytest.raises(DescriptionTooLarge):
        read_description(UR5E_URDF, max_bytes=100)


def test_without_the_xacro_package_the_error_says_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, 'xacro', None)        # import xacro raises ImportError
    with pytest.raises(ValueError, match='pip install xacro'):
        read_description(ARM, LONG)
    assert read_description(UR5E_URDF)      # a URDF never needs it


def test_other_xacro_errors_name_the_file_and_what_xacro_said(tmp_path):
    bad = tmp_path / 'bad.urdf.xacro'
    bad.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                   '<link name="${no_such_property}"/></robot>')
    with pytest.raises(ValueError) as error:
        read_description(bad)
    assert f'cannot expand xacro file {bad}' in str(error.value)
    assert 'no_such_property' in str(error.value)
    with pytest.raises(FileNotFoundError, match='xacro file not found'):
        read_description(tmp_path / 'none.urdf.xacro')
