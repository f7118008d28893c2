"""The README's Python examples run as written."""
import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("index", range(len(_python_blocks())))
def test_readme_python_block_runs(index, monkeypatch):
    monkeypatch.chdir(README.parent)
    exec(compile(_python_blocks()[index], f"README.md block {index}", "exec"), {})


def test_readme_has_python_examples():
    assert _python_blocks(), "README.md should show the Python API in a ```python block"
