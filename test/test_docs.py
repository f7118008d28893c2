"""The documentation site's Python examples run as written (doc/**/*.md, as test_readme does for the README).

The ```python blocks of a page run in order in one namespace, so that a page's later examples may build on
its earlier ones; shell, YAML and text blocks are not run. Also: the plain-text docstring to reST
conversion the site's API reference uses (doc/_ext) keeps what the docstrings say.
"""
import importlib.util
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOC = ROOT / "doc"
PAGES = sorted(p for p in DOC.rglob("*.md") if "_build" not in p.relative_to(DOC).parts)
BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)


def _blocks(page):
    """(line number, source) of each ```python block of the page."""
    text = page.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in BLOCK.finditer(text)]


PAGES_WITH_CODE = [p for p in PAGES if _blocks(p)]


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=[str(p.relative_to(DOC)) for p in PAGES_WITH_CODE])
def test_doc_python_blocks_run(page, monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace = {"__name__": f"doc_{page.stem}"}
    for line, source in _blocks(page):
        # Blank lines in front so that a traceback's line numbers are the page's.
        exec(compile("\n" * (line - 1) + source, str(page), "exec"), namespace)


def test_docs_have_python_examples():
    assert len(PAGES_WITH_CODE) >= 6, "the tutorials should show the Python API in ```python blocks"


def _plain_docstrings():
    spec = importlib.util.spec_from_file_location("plain_docstrings", DOC / "_ext" / "plain_docstrings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docstring_to_rst_keeps_the_text():
    convert = _plain_docstrings().docstring_to_rst
    lines = ["|q̇_j| ≤ m*v for x_ and `a|b`:", "    observer = f(x)   # aligned", "",
             "- item one", "  continued", ">>> 1 + 1", "2"]
    rst = convert(lines)
    assert r"\|q̇_j\| ≤ m\*v for x\_ and `a|b`:" in rst
    assert "::" in rst and "    observer = f(x)   # aligned" in rst
    assert "- item one" in rst and "  continued" in rst
    assert rst[rst.index(">>> 1 + 1") - 1] == "" and "2" in rst
