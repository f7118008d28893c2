"""numba's on-disk cache, keyed on the source of the whole kernel package (linked mode: jit/__init__.py).

numba keys a cached function on its own source file only. The kernels inline helpers from the other
modules of this package, so a change to a helper (say in spatial.py) would leave every cached entry
point that inlined it stale. The locators below give every function of this package one stamp, a
hash of all its modules' source: any change to any kernel module recompiles every kernel, and
nothing else changes (same cache directories as numba's own locators: `NUMBA_CACHE_DIR` if set,
else `__pycache__` beside the sources).
"""
import functools
import hashlib
import os

from numba.core import caching

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))    # kernels/


@functools.cache
def package_stamp():
    """SHA-256 of the paths and contents of every module of the kernel package, its subpackages
    (entries/, and jit/: how they are compiled) included."""
    digest = hashlib.sha256()
    for directory, _, files in sorted(os.walk(PACKAGE_DIR)):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                digest.update(os.path.relpath(path, PACKAGE_DIR).encode())
                with open(path, "rb") as source:
                    digest.update(source.read())
    return digest.hexdigest()


def _in_package(py_file):
    return os.path.abspath(py_file).startswith(PACKAGE_DIR + os.sep)


class _PackageStamp:
    """Mixin: the source stamp of the whole package instead of one file's."""

    def get_source_stamp(self):
        return package_stamp()

    @classmethod
    def from_function(cls, py_func, py_file):
        return super().from_function(py_func, py_file) if _in_package(py_file) else None


class UserProvidedPackageLocator(_PackageStamp, caching.UserProvidedCacheLocator):
    """NUMBA_CACHE_DIR, when set."""


class InTreePackageLocator(_PackageStamp, caching.InTreeCacheLocator):
    """__pycache__ beside the kernel modules."""


def install():
    """Put the package locators first in numba's list (idempotent); other code keeps numba's own."""
    locators = caching.CacheImpl._locator_classes
    for locator in (InTreePackageLocator, UserProvidedPackageLocator):
        if locator not in locators:
            locators.insert(0, locator)
