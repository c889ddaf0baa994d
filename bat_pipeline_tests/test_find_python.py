"""scripts/find-python, which picks the interpreters `make` builds the environments with: the
pipeline's venv (3.11 or newer) and the bat-adk agents' (3.12 or newer). It runs here with
two real interpreters as the first commands of its search, each on a PATH of the test's
own: `python3.12` (the bat-adk environment's) and, after it, `python3.11` (the venv's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bat_pipeline_tests.support.paths import REPO

SCRIPT = REPO / "scripts" / "find-python"
FACTS = (
    "import sys; print(sys.executable); print(sys.version_info >= (3, 12)); "
    'print(not any("libpython" in line for line in open("/proc/self/maps")))'
)


def facts(interpreter: str) -> tuple[str, bool, bool]:
    """(sys.executable, whether it is 3.12 or newer, whether libpython is built in)."""
    lines = subprocess.run([interpreter, "-c", FACTS], capture_output=True, text=True, check=True).stdout.split()
    return lines[0], lines[1] == "True", lines[2] == "True"


def find(env: dict[str, str], minimum: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), minimum], env=env, capture_output=True, text=True, timeout=60)


def test_an_interpreter_with_libpython_built_in_comes_first_and_the_minimum_holds(tmp_path, bat_adk_env):
    newer = str(Path(bat_adk_env["UV_PROJECT_ENVIRONMENT"]) / "bin" / "python")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, interpreter in (("python3.12", newer), ("python3.11", sys.executable)):
        (bin_dir / name).write_text(f'#!/bin/sh\nexec "{interpreter}" "$@"\n', encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "PYENV_ROOT": str(tmp_path / "no-pyenv"), "HOME": str(tmp_path)}
    newer_facts, venv_facts = facts(newer), facts(sys.executable)

    # The venv's: any 3.11+, one with libpython built in before any other.
    venv = find(env, "3.11")
    assert venv.returncode == 0, venv.stderr
    chosen = facts(venv.stdout.strip())
    if newer_facts[2] or venv_facts[2]:
        assert chosen[2], (chosen, newer_facts, venv_facts)
    else:
        assert chosen[0] == newer_facts[0]  # the first found
    if venv_facts[2] and not newer_facts[2]:
        assert chosen[0] == venv_facts[0]  # searched after the 3.12 one, taken before it

    # bat-adk's: 3.12 or newer; the first found unless one has libpython built in.
    adk = find(env, "3.12")
    assert adk.returncode == 0, adk.stderr
    chosen = facts(adk.stdout.strip())
    assert chosen[1], chosen
    if not chosen[2]:
        assert chosen[0] == newer_facts[0]

    # $PYTHON is taken as it is when recent enough, passed over when not.
    assert facts(find({**env, "PYTHON": newer}, "3.11").stdout.strip())[0] == newer_facts[0]
    if not venv_facts[1]:
        assert facts(find({**env, "PYTHON": sys.executable}, "3.12").stdout.strip())[1]

    missing = find(env, "3.99")
    assert missing.returncode == 1 and "Python 3.99 or newer is needed" in missing.stderr
