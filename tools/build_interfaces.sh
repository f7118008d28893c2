#!/usr/bin/env bash
# Build ros2_control's control_msgs into a virtual environment made of PyPI's ROS 2 wheels, from the
# interface sources in ../shared/ros2-interfaces (PyPI has no control_msgs wheel).
#
#   bash tools/build_interfaces.sh VENV DISTRO
#
# Called by tools/bootstrap.sh (step 1c); a no-op when control_msgs is importable already (a system
# ROS installation's, or this script's earlier build). What it builds: the interfaces this package
# uses, from the distribution's release of control_msgs (5.8.0 for Jazzy, 6.8.0 for Kilted, whose
# FollowJointTrajectory feedback has `index`):
#   control_msgs/action/FollowJointTrajectory, control_msgs/msg/JointTrajectoryControllerState,
#   control_msgs/msg/JointTolerance, control_msgs/msg/JointComponentTolerance
# (about 90 s on two cores; the whole package would take 3.5 min and 24 MB for interfaces nothing
# here uses). A package that needs the rest of control_msgs gets it from a system ROS installation
# (rosdep key control_msgs) or by setting CONTROL_MSGS_ALL=1.
#
# Steps: (1) the interface toolchain wheels (requirements/interfaces-$DISTRO.txt); (2) the message
# wheels' exported CMake files name the include folders of the machine they were built on
# (/opt/python/cp3XX-cp3XX/include/python3.X, .../numpy/_core/include): rewritten to this
# environment's own; (3) cmake configure, build and install into the venv prefix, where the wheels'
# start-up hook already puts $VENV/lib on the library path.
set -euo pipefail

VENV="$1"
DISTRO="$2"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VPY="$VENV/bin/python"
log() { printf 'build_interfaces: %s\n' "$*" >&2; }

case "$DISTRO" in
    jazzy) VERSION=5.8.0 ;;
    kilted) VERSION=6.8.0 ;;
    *) log "no control_msgs release known for ROS_DISTRO=$DISTRO"; exit 2 ;;
esac
SOURCES="${ROS2_INTERFACES:-$ROOT/../shared/ros2-interfaces}/control_msgs-$VERSION"
unset _ROS_WHEELS_BOOTSTRAP_COMPLETE

importable() {
    "$VPY" -c 'import control_msgs.action, control_msgs.msg
control_msgs.action.FollowJointTrajectory; control_msgs.msg.JointTrajectoryControllerState' \
        >/dev/null 2>&1
}

if importable; then
    log "control_msgs is importable already: nothing to build"
    exit 0
fi
if [[ ! -f "$SOURCES/package.xml" ]]; then
    log "control_msgs is not importable and its sources are not at $SOURCES (set ROS2_INTERFACES):"
    log "computed_torque_controller will run without ~/follow_joint_trajectory and ~/controller_state"
    exit 0
fi
for tool in cmake make cc; do
    command -v "$tool" >/dev/null 2>&1 || { log "building control_msgs needs $tool (apt-get install cmake build-essential)"; exit 1; }
done

t0=$SECONDS
log "building control_msgs $VERSION for ROS 2 $DISTRO from $SOURCES"
"$VPY" -m pip install --quiet -r "$ROOT/requirements/interfaces-$DISTRO.txt"

# (2) The exported CMake files' foreign include folders, rewritten to this environment's.
"$VPY" - "$VENV" <<'PY'
import re
import sys
import sysconfig
from pathlib import Path

import numpy

venv = Path(sys.argv[1])
python_include = sysconfig.get_paths()['include']
numpy_include = numpy.get_include()
for path in (venv / 'share').glob('*/cmake/*.cmake'):
    text = path.read_text()
    new = re.sub(r'/opt/python/[^;"\s]*?/include/python3\.\d+', python_include, text)
    new = re.sub(r'/[^;"\s]*?/numpy/_core/include', numpy_include, new)
    if new != text:
        path.write_text(new)
PY

# (3) The sources with a CMakeLists.txt that generates only the interfaces used here.
BUILD="$VENV/.build/control_msgs-$VERSION"
mkdir -p "$BUILD"
rm -rf "$BUILD/src"
cp -r "$SOURCES" "$BUILD/src"
if [[ "${CONTROL_MSGS_ALL:-0}" != 1 ]]; then
    cat >"$BUILD/src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.10)
project(control_msgs)
find_package(action_msgs REQUIRED)
find_package(ament_cmake REQUIRED)
find_package(builtin_interfaces REQUIRED)
find_package(rosidl_default_generators REQUIRED)
find_package(std_msgs REQUIRED)
find_package(trajectory_msgs REQUIRED)
rosidl_generate_interfaces(${PROJECT_NAME}
  action/FollowJointTrajectory.action
  msg/JointComponentTolerance.msg
  msg/JointTolerance.msg
  msg/JointTrajectoryControllerState.msg
  DEPENDENCIES action_msgs builtin_interfaces std_msgs trajectory_msgs
)
ament_export_dependencies(rosidl_default_runtime)
ament_package()
CMAKE
fi
export CMAKE_PREFIX_PATH="$VENV" AMENT_PREFIX_PATH="$VENV"
cmake -S "$BUILD/src" -B "$BUILD/build" -DCMAKE_INSTALL_PREFIX="$VENV" -DCMAKE_BUILD_TYPE=Release \
    -DPython3_EXECUTABLE="$VPY" -DBUILD_TESTING=OFF >"$BUILD/configure.log" 2>&1 \
    || { log "cmake configure failed: see $BUILD/configure.log"; tail -20 "$BUILD/configure.log" >&2; exit 1; }
cmake --build "$BUILD/build" -j2 >"$BUILD/build.log" 2>&1 \
    || { log "build failed: see $BUILD/build.log"; tail -20 "$BUILD/build.log" >&2; exit 1; }
cmake --install "$BUILD/build" >"$BUILD/install.log" 2>&1 \
    || { log "install failed: see $BUILD/install.log"; tail -20 "$BUILD/install.log" >&2; exit 1; }
importable || { log "control_msgs was built but does not import"; exit 1; }
log "control_msgs built and installed in $((SECONDS - t0)) s"
