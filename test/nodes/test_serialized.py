"""SerializedMessage: numbers rewritten in the serialized bytes deserialize as the message they stand for."""
import numpy as np
import pytest
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robot_dynamics_ros.nodes.conversions import make_joint_state, matrix_to_multiarray, multiarray_to_matrix
from robot_dynamics_ros.nodes.serialized import SerializedMessage


def test_joint_state_effort_and_stamp():
    names = ['shoulder_pan_joint', 'b', 'a_long_joint_name_of_odd_length']
    out = SerializedMessage(make_joint_state(names, effort=np.zeros(3)), 'effort', stamped=True)
    for k, effort in enumerate(([1.5, -2.25, 1e-300], [np.pi, 0.0, -7.0])):
        out.values[:] = effort
        out.set_stamp(1700000000 + k, 999_999_999 - k)
        msg = deserialize_message(out.serialized(), JointState)
        assert list(msg.name) == names
        assert list(msg.effort) == effort
        assert len(msg.position) == 0 and len(msg.velocity) == 0
        assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (1700000000 + k, 999_999_999 - k)


@pytest.mark.parametrize('rows, cols', [(1, 1), (7, 7), (6, 6), (3, 5)])
def test_matrix_data(rows, cols):
    out = SerializedMessage(matrix_to_multiarray(np.zeros((rows, cols))), 'data')
    matrix = np.random.default_rng(rows * cols).normal(size=(rows, cols))
    out.values[:] = matrix.ravel()
    msg = deserialize_message(out.serialized(), Float64MultiArray)
    np.testing.assert_array_equal(multiarray_to_matrix(msg), matrix)
    assert [d.label for d in msg.layout.dim] == ['rows', 'cols']


def test_a_field_that_is_not_there_is_refused():
    with pytest.raises(ValueError):
        SerializedMessage(make_joint_state(['a']), 'effort')       # effort empty: nothing to find
