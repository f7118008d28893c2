"""Sphinx configuration of the documentation site: `make docs` (sphinx-build -W doc doc/_build/html).

The layout is rosdoc2's (docs.ros.org's builder): a Sphinx project in the package's doc/ folder with
this conf.py. rosdoc2 executes this file from its own copy of doc/, so nothing here may depend on where
doc/ sits: paths go through __file__'s folder (the copy holds _ext/ and the pages) and
_ext/robot_dynamics_docs.py finds the checkout by itself.
"""
import os
import sys
import xml.etree.ElementTree as ElementTree

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '_ext'))


def _package_xml():
    """package.xml beside doc/ (make docs), else None (rosdoc2 fills project and release itself)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'package.xml')
    return ElementTree.parse(path).getroot() if os.path.isfile(path) else None


_manifest = _package_xml()
project = 'robot_dynamics_ros'
author = 'robot_dynamics_ros maintainers'
if _manifest is not None:
    project = _manifest.findtext('name')
    release = version = _manifest.findtext('version')
    author = _manifest.findtext('maintainer')
copyright = f'{author}; Apache-2.0'

extensions = [
    'myst_parser',
    'sphinx.ext.autodoc',
    'robot_dynamics_docs',      # _ext/: node reference, benchmark tables, API lists (see its docstring)
]
source_suffix = {'.md': 'markdown'}
root_doc = 'index'
exclude_patterns = ['_build', '_ext', 'Thumbs.db', '.DS_Store']

# Markdown: headings get anchors (links such as reference/nodes.md#common-parameters); ::: fences.
myst_heading_anchors = 3
myst_enable_extensions = ['colon_fence']

# The API reference: signatures as written (numpy.typing.ArrayLike stays one word, not its long union),
# members in source order; the docstrings are prose with the equations in Unicode.
autodoc_typehints = 'signature'
autodoc_member_order = 'bysource'
autodoc_preserve_defaults = True
autoclass_content = 'class'

# Quotes and dots stay as typed: the docstrings quote XML, code and strings.
smartquotes = False

html_theme = 'furo'
html_title = 'robot_dynamics_ros'
html_show_sourcelink = False

# rosdoc2 (docs.ros.org): its defaults (autodoc, intersphinx, Markdown, its theme) are what this site
# needs; nothing to change.
rosdoc2_settings = {}
