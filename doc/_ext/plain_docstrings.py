"""The package's docstrings, which are plain text, as reStructuredText for the API reference (autodoc).

The docstrings are prose with Unicode equations (|x|, a*b, x_i), aligned equation blocks and code
indented under a line, "- " lists with hanging continuations, and >>> examples. Read as reST they would
warn (|x| is a substitution reference, an indented block needs "::") or lose their layout; this turns
them into the reST that shows what they say. No Sphinx import: test/test_docs.py tests it as it is.
"""
import re

_BULLET = re.compile(r'^( *)([-*]) \S')
_PROTECTED = re.compile(r'(``.+?``|`[^`]+`)')


def _escape(text):
    """Inline reST markup characters of plain prose made literal (code spans left as they are)."""
    parts = _PROTECTED.split(text)
    for i in range(0, len(parts), 2):
        part = parts[i].replace('\\', '\\\\').replace('|', '\\|').replace('*', '\\*')
        parts[i] = re.sub(r'(?<=\S)_(?=[\s.,;:!?)\]]|$)', r'\\_', part)
    return ''.join(parts)


def docstring_to_rst(lines):
    """The lines of a plain-text docstring (dedented) as reST: paragraphs and "- " lists with their
    inline markup characters escaped, indented blocks as literal blocks, >>> examples as doctests."""
    out, i, n = [], 0, len(lines)

    def indent(line):
        return len(line) - len(line.lstrip(' '))

    while i < n:
        line = lines[i]
        if not line.strip():
            out.append('')
            i += 1
            continue
        bullet = _BULLET.match(line)
        if line.lstrip().startswith('>>>') and indent(line) == 0:
            out.append('')
            while i < n and lines[i].strip():
                out.append(lines[i])
                i += 1
            out.append('')
        elif bullet:
            base = len(bullet.group(1))
            out.append('')
            while i < n and lines[i].strip():
                item = _BULLET.match(lines[i])
                if item and len(item.group(1)) == base:
                    out.append('- ' + _escape(lines[i].strip()[2:]))
                elif indent(lines[i]) >= base + 2:
                    out.append('  ' + _escape(lines[i].strip()))
                else:
                    break
                i += 1
            out.append('')
        elif indent(line) > 0:
            block = []
            while i < n and (not lines[i].strip() or indent(lines[i]) > 0):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            cut = min(indent(b) for b in block if b.strip())
            out += ['', '::', ''] + ['    ' + b[cut:] if b.strip() else '' for b in block] + ['']
        else:
            out.append(_escape(line))
            i += 1
    text = '\n'.join(out).split('\n')
    cleaned = []
    for line in text:                      # no runs of blank lines
        if line or (cleaned and cleaned[-1]):
            cleaned.append(line)
    return cleaned
