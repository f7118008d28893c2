#!/usr/bin/env bash
# Create or update the project's virtual environment for one ROS 2 distribution from PyPI:
# <repo>/.venv-jazzy (the default) or <repo>/.venv-kilted, chosen by ROS_DISTRO (which a sourced ROS
# installation sets too).
#
#   bash tools/bootstrap.sh                        # Jazzy; idempotent, about 10 ms when nothing changed
#   ROS_DISTRO=kilted bash tools/bootstrap.sh      # Kilted, in .venv-kilted
#   PYTHON=python3.12 bash tools/bootstrap.sh
#   BOOTSTRAP_FORCE=1 bash tools/bootstrap.sh      # re-install even if the stamps match
#
# Steps, each skipped when its stamp (a hash of its inputs) is unchanged:
#   1. pinned requirements: requirements/build.txt, requirements/ros-$ROS_DISTRO.txt (the ROS 2
#      wheels) and requirements/test.txt (which includes runtime.txt). Slow (about a minute from
#      nothing), so only when a requirement file changes.
#   1b. where the distribution's folder of ROS 2 launch and CLI wheels exists
#      (../shared/ros2-cli-wheels/jazzy for Jazzy, ../shared/ros2-cli-wheels for Kilted;
#      ROS2_CLI_WHEELS overrides): the launch and CLI tools from it.
#   1c. control_msgs (FollowJointTrajectory, JointTrajectoryControllerState) and tf2_msgs (TFMessage,
#      for /tf), built from ../shared/ros2-interfaces by tools/build_interfaces.sh when not importable.
#   1d. .venv-crocoddyl: Crocoddyl and the Pinocchio it works with, the optimal-control
#      reference (requirements/crocoddyl-reference.txt).
#   2. this package, editable and without dependencies (a few seconds), plus symlinks for its
#      data_files in the venv's share/ (ament index marker, package.xml, launch/, config/, urdf/) and
#      for its console scripts in its lib/robot_dynamics_ros: the venv is an ament prefix.
#      Redone when setup.py, setup.cfg, package.xml or the set of data files changes.
#   3. every kernel compiled into numba's cache (python -m robot_dynamics_ros.cli.precompile), when a
#      kernel source changed: nodes then start without compiling.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# The ROS 2 distribution: REP 2000's Jazzy Jalisco (LTS) unless ROS_DISTRO says kilted.
DISTRO="${ROS_DISTRO:-jazzy}"
case "$DISTRO" in
    jazzy) DEFAULT_CLI_WHEELS="$ROOT/../shared/ros2-cli-wheels/jazzy" ;;
    kilted) DEFAULT_CLI_WHEELS="$ROOT/../shared/ros2-cli-wheels" ;;
    *) printf 'bootstrap: ROS_DISTRO=%s is not supported: jazzy (the default) or kilted\n' "$DISTRO" >&2
       exit 2 ;;
esac
VENV="$ROOT/.venv-$DISTRO"
VPY="$VENV/bin/python"

# The ROS wheels' .pth re-executes Python with LD_LIBRARY_PATH set and marks that with this
# variable; inherited from another environment it makes `import rclpy` fail here.
unset _ROS_WHEELS_BOOTSTRAP_COMPLETE
export PIP_DISABLE_PIP_VERSION_CHECK=1

log() { printf 'bootstrap: %s\n' "$*" >&2; }

# One bootstrap at a time (make test and make demo may start together).
mkdir -p "$VENV"
if command -v flock >/dev/null 2>&1; then
    exec 9>"$VENV/.bootstrap.lock"
    flock 9
fi

# The ROS 2 wheels (Jazzy and Kilted) exist for CPython 3.10 to 3.13.
python_ok() {
    "$1" -c 'import sys; sys.exit(not ((3, 10) <= sys.version_info[:2] <= (3, 13)))' 2>/dev/null
}

find_python() {
    if [[ -n "${PYTHON:-}" ]]; then
        python_ok "$PYTHON" || { log "PYTHON=$PYTHON is not CPython 3.10-3.13"; exit 1; }
        echo "$PYTHON"
        return
    fi
    local c
    for c in python3 python3.11 python3.12 python3.13 python3.10; do
        if command -v "$c" >/dev/null 2>&1 && python_ok "$c"; then
            echo "$c"
            return
        fi
    done
    log "no CPython 3.10-3.13 found (the ROS 2 wheels need one); set PYTHON=..."
    exit 1
}

hash_files() {
    # Content hash of the existing files among "$@" (missing ones are skipped).
    local f
    for f in "$@"; do
        [[ -f "$f" ]] && { printf '%s\n' "$f"; cat "$f"; }
    done | sha256sum | cut -d' ' -f1
}

# --- the virtual environment -------------------------------------------------------------------
# (No Python is started when nothing has to change: that is what keeps a no-op run at ~10 ms.)
if ! [[ -x "$VPY" && -f "$VENV/pyvenv.cfg" ]]; then
    PY="$(find_python)"
    log "creating $VENV with $("$PY" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
    # Keep the lock file; anything else left by a broken earlier attempt goes.
    find "$VENV" -mindepth 1 -maxdepth 1 ! -name .bootstrap.lock -exec rm -rf {} +
    if ! "$PY" -m venv "$VENV"; then
        log "python -m venv failed (on Debian: apt-get install python3-venv)"
        exit 1
    fi
fi

# --- 1. pinned requirements --------------------------------------------------------------------
REQ_STAMP="$VENV/.stamp-requirements"
req_hash="$(hash_files "$VENV/pyvenv.cfg" requirements/build.txt "requirements/ros-$DISTRO.txt" \
    requirements/runtime.txt requirements/test.txt)"
if [[ "${BOOTSTRAP_FORCE:-0}" == 1 || "$(cat "$REQ_STAMP" 2>/dev/null)" != "$req_hash" ]]; then
    python_ok "$VPY" || { log "$VPY is not CPython 3.10-3.13: delete $VENV and rerun"; exit 1; }
    log "installing pinned requirements for ROS 2 $DISTRO (requirements/build.txt, ros-$DISTRO.txt, test.txt)"
    rm -f "$REQ_STAMP" "$VENV/.stamp-package"
    t0=$SECONDS
    "$VPY" -m pip install --quiet -r requirements/build.txt -r "requirements/ros-$DISTRO.txt" \
        -r requirements/test.txt
    echo "$req_hash" >"$REQ_STAMP"
    log "requirements installed in $((SECONDS - t0)) s"
fi

# --- 1b. the ROS 2 launch and command-line tools, where their wheels are ------------------------
# `launch`, `launch_ros`, `launch_testing` and the `ros2` CLI are not on PyPI. Where a folder of
# their wheels exists (ROS2_CLI_WHEELS, default the distribution's folder beside the repository: the
# Rolling-based set breaks `ros2 service call` on Jazzy, whose rclpy.init() returns None), they are
# installed from it, without an index, so that test/launch runs them for real and users get
# `ros2 launch` / `ros2 run`. Without the folder those tests skip with a reason.
CLI_WHEELS="${ROS2_CLI_WHEELS:-$DEFAULT_CLI_WHEELS}"
CLI_STAMP="$VENV/.stamp-ros2-cli"
CLI_PACKAGES="launch launch_xml launch_yaml launch_testing launch_pytest launch_ros launch_testing_ros
    ros2launch ros2cli ros2pkg ros2run ros2topic ros2param ros2service ros2node ros2interface ros2action
    rosidl_runtime_py composition_interfaces_stub"
if [[ -d "$CLI_WHEELS" ]]; then
    cli_hash="$( { hash_files "$REQ_STAMP" requirements/ros2-cli.txt; ls "$CLI_WHEELS"; echo $CLI_PACKAGES; } \
        | sha256sum | cut -d' ' -f1)"
    if [[ "${BOOTSTRAP_FORCE:-0}" == 1 || "$(cat "$CLI_STAMP" 2>/dev/null)" != "$cli_hash" ]]; then
        log "installing the ROS 2 launch and CLI tools from $CLI_WHEELS"
        rm -f "$CLI_STAMP"
        "$VPY" -m pip install --quiet -r requirements/ros2-cli.txt
        "$VPY" -m pip install --quiet --no-index --no-deps --find-links "$CLI_WHEELS" $CLI_PACKAGES
        echo "$cli_hash" >"$CLI_STAMP"
    fi
fi

# --- 1c. control_msgs and tf2_msgs, built from their interface sources when not importable ------
# PyPI has no control_msgs (FollowJointTrajectory, JointTrajectoryControllerState) nor tf2_msgs
# (TFMessage); with the rosidl/ament_cmake wheels they build from ../shared/ros2-interfaces in about
# 15-90 s and 20-40 s (tools/build_interfaces.sh; a system ROS installation's are used as they are).
IFACE_STAMP="$VENV/.stamp-interfaces"
iface_hash="$(hash_files "$REQ_STAMP" "requirements/interfaces-$DISTRO.txt" tools/build_interfaces.sh)"
if [[ "${BOOTSTRAP_FORCE:-0}" == 1 || "$(cat "$IFACE_STAMP" 2>/dev/null)" != "$iface_hash" ]]; then
    rm -f "$IFACE_STAMP"
    bash tools/build_interfaces.sh "$VENV" "$DISTRO"
    echo "$iface_hash" >"$IFACE_STAMP"
fi

# --- 1d. the Crocoddyl reference, in a venv of its own (one for both distributions) --------------
# The optimal-control tests and benchmarks compare against Crocoddyl, which needs Pinocchio 4.0.0 (with
# pip's choice, 4.1.0, its frame-placement residual's derivatives return NaN and crash), so it lives
# beside the project's venv: .venv-crocoddyl (requirements/crocoddyl-reference.txt; ROS-free; 15 s).
CROC_VENV="$ROOT/.venv-crocoddyl"
croc_hash="$(hash_files requirements/crocoddyl-reference.txt)"
if [[ "${BOOTSTRAP_FORCE:-0}" == 1 || "$(cat "$CROC_VENV/.stamp" 2>/dev/null)" != "$croc_hash" ]]; then
    log "Crocoddyl reference venv (.venv-crocoddyl)"
    rm -rf "$CROC_VENV"
    "${PY:-$(find_python)}" -m venv "$CROC_VENV"
    "$CROC_VENV/bin/python" -m pip install -q -r requirements/crocoddyl-reference.txt
    echo "$croc_hash" >"$CROC_VENV/.stamp"
fi

# --- 2. this package, editable -----------------------------------------------------------------
PKG_STAMP="$VENV/.stamp-package"
# Data files are linked, so their names matter here, not their contents.
shopt -s nullglob
pkg_hash="$( { hash_files "$REQ_STAMP" setup.py setup.cfg
               printf '%s\n' package.xml resource/* launch/*.launch.py config/*.yaml urdf/*.urdf worlds/*.xml; } \
    | sha256sum | cut -d' ' -f1)"
editable_pth=("$VENV"/lib/python3*/site-packages/__editable__.robot_dynamics_ros-*.pth)
shopt -u nullglob
if [[ "${BOOTSTRAP_FORCE:-0}" == 1 || ${#editable_pth[@]} -eq 0 ||
      "$(cat "$PKG_STAMP" 2>/dev/null)" != "$pkg_hash" ]]; then
    log "installing robot_dynamics_ros (editable, --no-deps)"
    rm -f "$PKG_STAMP"
    "$VPY" -m pip install --quiet --no-deps --no-build-isolation -e .
    # setuptools' editable wheel skips data_files (editable_wheel asks the distribution for
    # has_data(), which does not exist), so link them into the venv prefix ourselves, as
    # `colcon build --symlink-install` does: .venv/share/ament_index/.../robot_dynamics_ros,
    # .venv/share/robot_dynamics_ros/{package.xml,launch/,config/,urdf/}. Links from the previous
    # run are removed first, so deleted files disappear.
    "$VPY" - "$VENV" <<'PY'
import os
import sys
from pathlib import Path

import setuptools  # noqa: F401  (makes `distutils` the one setuptools vendors, also on 3.12+)
from distutils.core import run_setup

venv = Path(sys.argv[1])
manifest = venv / '.data-files-links'
for line in manifest.read_text().splitlines() if manifest.exists() else []:
    link = Path(line)
    if link.is_symlink():
        link.unlink()
dist = run_setup('setup.py', stop_after='init')
links = []
for dest, sources in dist.data_files or []:
    for src in sources:
        link = venv / dest / os.path.basename(src)
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(Path(src).resolve())
        links.append(str(link))
# The console scripts where `ros2 run`, `ros2 pkg executables` and launch_ros look for them,
# <prefix>/lib/robot_dynamics_ros/ (setup.cfg puts them there in a colcon install; pip's editable
# install puts them in .venv/bin only).
for spec in dist.entry_points['console_scripts']:
    name = spec.split('=')[0].strip()
    link = venv / 'lib' / dist.get_name() / name
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(Path('..', '..', 'bin', name))
    links.append(str(link))
manifest.write_text(''.join(f'{link}\n' for link in links))
PY
    echo "$pkg_hash" >"$PKG_STAMP"
fi

# --- 3. the kernels, compiled into numba's cache -------------------------------------------------
# Every compiled entry point of robot_dynamics_ros/dynamics/kernels, in worker processes, into
# numba's cache beside the sources (robot_dynamics_ros/cli/precompile.py), so that no node compiles at
# run time: about a minute on two cores after a change to a kernel source, nothing otherwise.
KERNEL_STAMP="$VENV/.stamp-kernels"
shopt -s nullglob
kernel_sources=(robot_dynamics_ros/dynamics/kernels/*.py robot_dynamics_ros/dynamics/kernels/*/*.py)
kernel_hash="$( { hash_files "$PKG_STAMP" "${kernel_sources[@]}"; } | sha256sum | cut -d' ' -f1)"
cached=(robot_dynamics_ros/dynamics/kernels/entries/__pycache__/*.nbi)
shopt -u nullglob
if [[ "${BOOTSTRAP_FORCE:-0}" == 1 || ${#cached[@]} -eq 0 ||
      "$(cat "$KERNEL_STAMP" 2>/dev/null)" != "$kernel_hash" ]]; then
    log "compiling the dynamics kernels into numba's cache (python -m robot_dynamics_ros.cli.precompile)"
    rm -f "$KERNEL_STAMP"
    "$VPY" -m robot_dynamics_ros.cli.precompile --quiet
    echo "$kernel_hash" >"$KERNEL_STAMP"
fi
