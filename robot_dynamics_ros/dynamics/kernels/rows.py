"""Rows of the packed array as tuples of floats (see layout.py): kernels read a 3-, 6-, 9- or 10-vector
of body i with rowN(a, i, column) and write one with set_rowN(a, i, column, x); the tuples stay in
registers, where a view a[i, c:c+6] would be an array object.
"""
from .jit import inline


@inline
def row3(a, i, c):
    """a[i, c:c+3] as a tuple (x, y, z)."""
    return a[i, c], a[i, c + 1], a[i, c + 2]


@inline
def row6(a, i, c):
    """a[i, c:c+6] as a tuple: a twist (w, v) or a wrench (m, f)."""
    return a[i, c], a[i, c + 1], a[i, c + 2], a[i, c + 3], a[i, c + 4], a[i, c + 5]


@inline
def row9(a, i, c):
    """a[i, c:c+9] as a tuple: a rotation matrix, row-major."""
    return (a[i, c], a[i, c + 1], a[i, c + 2], a[i, c + 3], a[i, c + 4], a[i, c + 5],
            a[i, c + 6], a[i, c + 7], a[i, c + 8])


@inline
def row10(a, i, c):
    """a[i, c:c+10] as a tuple: the ten inertial parameters (m, h, I_o upper triangle) of spatial.py."""
    return (a[i, c], a[i, c + 1], a[i, c + 2], a[i, c + 3], a[i, c + 4], a[i, c + 5],
            a[i, c + 6], a[i, c + 7], a[i, c + 8], a[i, c + 9])


@inline
def set_row3(a, i, c, x):
    a[i, c], a[i, c + 1], a[i, c + 2] = x


@inline
def set_row6(a, i, c, x):
    a[i, c], a[i, c + 1], a[i, c + 2], a[i, c + 3], a[i, c + 4], a[i, c + 5] = x


@inline
def set_row9(a, i, c, x):
    (a[i, c], a[i, c + 1], a[i, c + 2], a[i, c + 3], a[i, c + 4], a[i, c + 5],
     a[i, c + 6], a[i, c + 7], a[i, c + 8]) = x


@inline
def set_row10(a, i, c, x):
    (a[i, c], a[i, c + 1], a[i, c + 2], a[i, c + 3], a[i, c + 4], a[i, c + 5],
     a[i, c + 6], a[i, c + 7], a[i, c + 8], a[i, c + 9]) = x
