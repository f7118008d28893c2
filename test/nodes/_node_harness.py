"""Test harness of the node tests: real rclpy, real DDS, isolated per test module.

Each test module gets its own rclpy Context initialised on a random ROS domain (localhost-only
discovery), one executor (the one the nodes' main() uses) and a probe node for publishing,
subscribing, calling services and reading /rosout. Everything is spun from the test thread with
finite timeouts (rclpy 9.1.2's EventsExecutor hangs without one).
"""

import inspect
import os
import sysconfig
import time
from pathlib import Path

os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

import rclpy
from rcl_interfaces.msg import Log
from rclpy.qos import QoSProfile

from robot_dynamics_ros.nodes.common import make_executor

REPO = Path(__file__).resolve().parents[2]
UR5E_URDF = REPO / 'urdf' / 'ur5e.urdf'
UR5E_JOINTS = ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint',
               'wrist_2_joint', 'wrist_3_joint')
UR5E_HOME = (0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0)
# example-robot-data's Panda (a tree: 7 arm joints + 2 finger joints), installed by the `pin`
# test dependency under the venv's cmeel prefix.
EXAMPLE_ROBOT_DATA = Path(sysconfig.get_paths()['purelib']) / 'cmeel.prefix' / 'share' / 'example-robot-data'
PANDA_URDF = EXAMPLE_ROBOT_DATA / 'robots' / 'panda_description' / 'urdf' / 'panda.urdf'


class Harness:
    """One context + executor + probe node; helpers that always spin with a finite timeout."""

    _counter = 0

    def __init__(self, domain_id):
        self.domain_id = domain_id
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.executor = make_executor(context=self.context)
        self.probe = rclpy.create_node('test_probe', context=self.context)
        self.executor.add_node(self.probe)
        self.nodes = []
        self._subscriptions = []    # the probe's subscriptions made by collect
        self.logs = []
        self.probe.create_subscription(Log, '/rosout', self.logs.append, QoSProfile(depth=1000))

    # -- nodes ------------------------------------------------------------------------------
    def add(self, node_class, parameters=None, unique_name=True, **kwargs):
        """Create ``node_class`` in this context with parameter overrides, add it, return it.

        With ``unique_name`` the node gets its default name plus a counter: node names stay
        unique within the process (rcl's /rosout publishers are keyed by logger name), so a test
        reads its topics as ``/{node.get_name()}/...``.
        """
        overrides = [rclpy.parameter.Parameter(k, value=v) for k, v in (parameters or {}).items()]
        if unique_name and 'node_name' not in kwargs:
            default = inspect.signature(node_class.__init__).parameters['node_name'].default
            Harness._counter += 1
            kwargs['node_name'] = f'{default}_{Harness._counter}'
        node = node_class(context=self.context, parameter_overrides=overrides, **kwargs)
        self.executor.add_node(node)
        self.nodes.append(node)
        return node

    def remove_all(self):
        """Destroy every node added and the probe's subscriptions (``collect``), and start over with
        a fresh executor.

        rclpy 9.1.2's EventsExecutor keeps running the callbacks of a removed node (and then
        fails on its destroyed handles), so nodes are never removed from a live executor here:
        the executor is shut down with them and the probe moves to a new one.
        """
        self.executor.shutdown(timeout_sec=1.0)
        for node in self.nodes:
            node.destroy_node()
        self.nodes = []
        # the probe's subscriptions go too: a test's collections stop growing (and costing) after it
        # (its publishers stay: a test may publish again after remove_all)
        for subscription in self._subscriptions:
            self.probe.destroy_subscription(subscription)
        self._subscriptions = []
        self.executor = make_executor(context=self.context)
        self.executor.add_node(self.probe)

    # -- spinning ---------------------------------------------------------------------------
    def spin(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=min(0.02, max(deadline - time.monotonic(), 0)))

    def spin_until(self, predicate, timeout=5.0):
        """Spin until ``predicate()`` is true; return it (False on timeout)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            self.executor.spin_once(timeout_sec=0.02)
        return bool(predicate())

    # -- topics and services ----------------------------------------------------------------
    def collect(self, msg_type, topic, qos=100):
        """Subscribe the probe; return the list every received message is appended to."""
        received = []
        self._subscriptions.append(self.probe.create_subscription(msg_type, topic, received.append, qos))
        return received

    def publisher(self, msg_type, topic, qos=10, wait_for=1):
        """A probe publisher, returned once ``wait_for`` subscribers have matched."""
        pub = self.probe.create_publisher(msg_type, topic, qos)
        assert self.spin_until(lambda: pub.get_subscription_count() >= wait_for, 10.0), \
            f'no subscriber on {topic}'
        return pub

    def call(self, srv_type, name, request, timeout=5.0):
        client = self.probe.create_client(srv_type, name)
        assert self.spin_until(client.service_is_ready, 10.0), f'service {name} not available'
        future = client.call_async(request)
        assert self.spin_until(future.done, timeout), f'service {name} did not answer'
        self.probe.destroy_client(client)
        return future.result()

    def warnings(self, node_name, contains=''):
        """WARN-or-worse /rosout messages of ``node_name`` containing ``contains``."""
        return [m.msg for m in self.logs
                if m.name == node_name and m.level >= Log.WARN and contains in m.msg]

    def logged(self, node_name, contains='', timeout=3.0):
        """``warnings``, after spinning until there is one (at most ``timeout`` s): /rosout reaches the
        probe on its own path, on a loaded machine after the messages that followed the warning."""
        self.spin_until(lambda: self.warnings(node_name, contains), timeout)
        return self.warnings(node_name, contains)

    def close(self):
        self.remove_all()
        self.executor.shutdown(timeout_sec=1.0)
        self.probe.destroy_node()
        rclpy.shutdown(context=self.context)


def held_arm_with_estimator(ros, urdf_xml, initial_positions, publish_rate):
    """The simulated arm held by the computed-torque controller on simulated time, with the external
    torque estimator (tip tool0, no friction): (simulator, estimator) nodes added to ``ros``."""
    from robot_dynamics_ros.nodes.computed_torque_node import ComputedTorqueController
    from robot_dynamics_ros.nodes.external_torque_estimator import ExternalTorqueEstimator
    from robot_dynamics_ros.nodes.simulator_node import SimulatorNode

    ros.add(ComputedTorqueController, {'robot_description': urdf_xml, 'kp': [400.0], 'kd': [40.0],
                                       'state_timeout': 0.5, 'use_sim_time': True})
    simulator = ros.add(SimulatorNode, {'robot_description': urdf_xml,
                                        'initial_positions': list(initial_positions), 'tip_link': 'tool0',
                                        'publish_rate': publish_rate, 'friction': False,
                                        'publish_clock': True, 'lockstep_timeout': 2.0})
    estimator = ros.add(ExternalTorqueEstimator, {'robot_description': urdf_xml, 'tip_link': 'tool0',
                                                  'use_sim_time': True})
    return simulator, estimator
