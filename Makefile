# Every target first runs tools/bootstrap.sh, which creates/updates the environment of the ROS 2
# distribution from PyPI (idempotent, about 10 ms when nothing changed): .venv-jazzy by default,
# .venv-kilted with ROS_DISTRO=kilted (a sourced ROS installation sets ROS_DISTRO too).
#
#   make demo                     run the demo (python -m robot_dynamics_ros.demos), the browser viewer
#                                 beside it at http://localhost:8080 (DEMO_ARGS=--no-viewer: without)
#   ROS_DISTRO=kilted make test   the same on ROS 2 Kilted
#   make test                     ruff check . (ruff.toml), then the test suite (isolated ROS 2
#                                 domains, localhost discovery); lint findings fail it, as in CI
#   make test PYTEST_PARALLEL=    the same in one process (default: two pytest-xdist workers)
#   make test PYTEST_ARGS='-k rnea -x'
#   make bench                    benchmarks/run.py, single-threaded BLAS
#   make soak                     benchmarks/soak.py: the three nodes at 1 kHz for 10 min with bad
#                                 input mixed in; RSS growth, CPU, rates, losses (SOAK_ARGS='--minutes 2')
#   make colcon                   optional: colcon build into build/ install/ log/
#   make docs                     the documentation site (doc/, Sphinx + MyST) into doc/_build/html,
#                                 warnings as errors; installs requirements/docs.txt on first use
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

# REP 2000: Jazzy Jalisco (LTS, to May 2029) by default; Kilted Kaiju also supported.
ROS_DISTRO ?= jazzy
export ROS_DISTRO
ifeq ($(filter $(ROS_DISTRO),jazzy kilted),)
$(error ROS_DISTRO=$(ROS_DISTRO) is not supported: jazzy (the default) or kilted)
endif
VENV := .venv-$(ROS_DISTRO)
PY := $(VENV)/bin/python
# Never inherit the ROS wheels' re-exec marker from another environment (it breaks `import rclpy`).
# The wheels do not set AMENT_PREFIX_PATH: put the venv on it, so ament_index_python finds the
# packages installed there, this one included (bootstrap links its share/ files into the venv).
RUN := unset _ROS_WHEELS_BOOTSTRAP_COMPLETE; \
	export AMENT_PREFIX_PATH="$(CURDIR)/$(VENV)$${AMENT_PREFIX_PATH:+:$$AMENT_PREFIX_PATH}";

DEMO_ARGS ?=
PYTEST_ARGS ?=
# Two pytest-xdist workers by default, one per core of a 2-core machine (test/conftest.py gives each its
# own ROS domains): 9 min instead of 15 (doc/development.md). PYTEST_PARALLEL= runs it in one process.
PYTEST_PARALLEL ?= -n 2 --dist worksteal
BENCH_ARGS ?=
SOAK_ARGS ?=
COLCON_ARGS ?=
DOCS_ARGS ?=

.PHONY: all bootstrap demo test bench soak colcon docs clean
all: test

bootstrap:
	@bash tools/bootstrap.sh

demo: bootstrap
	@$(RUN) $(PY) -m robot_dynamics_ros.demos $(DEMO_ARGS)

# A random ROS_DOMAIN_ID (1..101) per run and localhost-only discovery, so parallel or leftover
# processes never cross-talk (each xdist worker moves to a domain of its own share near it:
# test/conftest.py). Override with `make test TEST_DOMAIN_ID=42`. The linter runs first
# (ruff.toml; no formatter), so a lint finding fails `make test` and .ci/run.
test: bootstrap
	@$(VENV)/bin/ruff check .
	@$(RUN) unset ROS_LOCALHOST_ONLY ROS_STATIC_PEERS; \
	export ROS_DOMAIN_ID=$${TEST_DOMAIN_ID:-$$(( RANDOM % 101 + 1 ))}; \
	export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST; \
	echo "make test: ROS_DOMAIN_ID=$$ROS_DOMAIN_ID ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"; \
	$(PY) -m pytest $(PYTEST_PARALLEL) $(PYTEST_ARGS)

bench: bootstrap
	@$(RUN) OPENBLAS_NUM_THREADS=1 $(PY) benchmarks/run.py $(BENCH_ARGS)

soak: bootstrap
	@$(RUN) OPENBLAS_NUM_THREADS=1 $(PY) benchmarks/soak.py $(SOAK_ARGS)

# colcon-core 0.21 needs setuptools < 80 (requirements/build.txt pins 79).
$(VENV)/.stamp-colcon: requirements/colcon.txt | bootstrap
	@echo "make colcon: installing requirements/colcon.txt into $(VENV)"
	@$(RUN) $(PY) -m pip install --quiet -r requirements/colcon.txt
	@touch $@

colcon: bootstrap $(VENV)/.stamp-colcon
	@$(RUN) source $(VENV)/bin/activate; \
	colcon build --build-base build --install-base install $(COLCON_ARGS); \
	echo "make colcon: done. Use: export AMENT_PREFIX_PATH=\$$PWD/$(VENV); source install/setup.bash"

# The documentation site: Sphinx in doc/ (doc/conf.py; the layout rosdoc2 builds for docs.ros.org),
# warnings as errors. The node reference is read from the nodes themselves, created in process (hence
# the isolated ROS domain, as for the tests); the performance page from benchmarks/results/*.json.
# requirements/docs.txt is installed every time (a no-op of a few seconds once it is there): a
# re-install of the pinned requirements may have moved docutils since.
docs: bootstrap
	@$(RUN) $(PY) -m pip install --quiet --disable-pip-version-check -r requirements/docs.txt
	@$(RUN) unset ROS_LOCALHOST_ONLY ROS_STATIC_PEERS; \
	export ROS_DOMAIN_ID=$${TEST_DOMAIN_ID:-$$(( RANDOM % 101 + 1 ))}; \
	export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST; \
	$(PY) -m sphinx -W --keep-going -b html doc doc/_build/html $(DOCS_ARGS) && \
	echo "make docs: doc/_build/html/index.html"

clean:
	rm -rf build install log out doc/_build .pytest_cache .ruff_cache .hypothesis *.egg-info
