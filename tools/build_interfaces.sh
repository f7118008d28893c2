#!/usr/bin/env bash
# Build the ROS 2 interface packages PyPI has no wheel of into a virtual environment made of PyPI's
# ROS 2 wheels, from the interface sources in ../shared/ros2-interfaces:
#   control_msgs (ros2_control's FollowJointTrajectory, JointTrajectoryControllerState) and
#   tf2_msgs (TFMessage, the type of /tf and /tf_static).
#
#   bash tools/build_interfaces.sh VENV DISTRO
#
# Called by tools/bootstrap.sh (step 1c); each package is a no-op when it is importable already (a
# system ROS installation's, or this script's earlier build). What it builds:
#   control_msgs, from the distribution's release (5.8.0 for Jazzy, 6.8.0 for Kilted, whose
#   FollowJointTrajectory feedback has `index`), only the interfaces this package uses:
#   control_msgs/action/FollowJointTrajectory, control_msgs/msg/JointTrajectoryControllerState,
#   control_msgs/msg/JointTolerance, control_msgs/msg/JointComponentTolerance
#   (about 90 s on two cores; the whole package would take 3.5 min and 24 MB for interfaces nothing
#   here uses). A package that needs the rest of control_msgs gets it from a system ROS installation
#   (rosdep key control_msgs) or by setting CONTROL_MSGS_ALL=1.
#   tf2_msgs 0.36.4 whole (TFMessage, TF2Error, FrameGraph, LookupTransform: about 40 s); its
#   TFMessage is the same definition in every distribution since Foxy, so a system installation's
#   RViz and tf2 read what state_publisher sends.
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
INTERFACES="${ROS2_INTERFACES:-$ROOT/../shared/ros2-interfaces}"
log() { printf 'build_interfaces: %s\n' "$*" >&2; }

case "$DISTRO" in
    jazzy) CONTROL_MSGS_VERSION=5.8.0 ;;
    kilted) CONTROL_MSGS_VERSION=6.8.0 ;;
    *) log "no control_msgs release known for ROS_DISTRO=$DISTRO"; exit 2 ;;
esac
TF2_MSGS_VERSION=0.36.4
unset _ROS_WHEELS_BOOTSTRAP_COMPLETE

control_msgs_importable() {
    "$VPY" -c 'import control_msgs.action, control_msgs.msg
control_msgs.action.FollowJointTrajectory; control_msgs.msg.JointTrajectoryControllerState' \
        >/dev/null 2>&1
}
tf2_msgs_importable() {
    "$VPY" -c 'from tf2_msgs.msg import TFMessage; TFMessage' >/dev/null 2>&1
}

toolchain_ready=0
toolchain() {
    # (1) and (2), once per run, only when something is built
    [[ "$toolchain_ready" == 1 ]] && return 0
    for tool in cmake make cc; do
        command -v "$tool" >/dev/null 2>&1 \
            || { log "building interfaces needs $tool (apt-get install cmake build-essential)"; exit 1; }
    done
    "$VPY" -m pip install --quiet -r "$ROOT/requirements/interfaces-$DISTRO.txt"
    # The exported CMake files' foreign include folders, rewritten to this environment's.
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
    toolchain_ready=1
}

# build NAME VERSION IMPORTABLE [CMAKELISTS]: (3) for one package; CMAKELISTS replaces the package's
# own CMakeLists.txt when given (to generate a subset of its interfaces).
build() {
    local name="$1" version="$2" importable="$3" cmakelists="${4:-}"
    local sources="$INTERFACES/$name-$version" build="$VENV/.build/$name-$version" t0=$SECONDS
    if "$importable"; then
        log "$name is importable already: nothing to build"
        return 0
    fi
    if [[ ! -f "$sources/package.xml" ]]; then
        log "$name is not importable and its sources are not at $sources (set ROS2_INTERFACES)"
        return 0
    fi
    toolchain
    log "building $name $version for ROS 2 $DISTRO from $sources"
    mkdir -p "$build"
    rm -rf "$build/src"
    cp -r "$sources" "$build/src"
    [[ -n "$cmakelists" ]] && printf '%s\n' "$cmakelists" >"$build/src/CMakeLists.txt"
    export CMAKE_PREFIX_PATH="$VENV" AMENT_PREFIX_PATH="$VENV"
    cmake -S "$build/src" -B "$build/build" -DCMAKE_INSTALL_PREFIX="$VENV" -DCMAKE_BUILD_TYPE=Release \
        -DPython3_EXECUTABLE="$VPY" -DBUILD_TESTING=OFF >"$build/configure.log" 2>&1 \
        || { log "$name: cmake configure failed: see $build/configure.log"; tail -20 "$build/configure.log" >&2; exit 1; }
    cmake --build "$build/build" -j2 >"$build/build.log" 2>&1 \
        || { log "$name: build failed: see $build/build.log"; tail -20 "$build/build.log" >&2; exit 1; }
    cmake --install "$build/build" >"$build/install.log" 2>&1 \
        || { log "$name: install failed: see $build/install.log"; tail -20 "$build/install.log" >&2; exit 1; }
    "$importable" || { log "$name was built but does not import"; exit 1; }
    log "$name built and installed in $((SECONDS - t0)) s"
}

CONTROL_MSGS_SUBSET='cmake_minimum_required(VERSION 3.10)
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
ament_package()'
[[ "${CONTROL_MSGS_ALL:-0}" == 1 ]] && CONTROL_MSGS_SUBSET=''
build control_msgs "$CONTROL_MSGS_VERSION" control_msgs_importable "$CONTROL_MSGS_SUBSET"
build tf2_msgs "$TF2_MSGS_VERSION" tf2_msgs_importable
