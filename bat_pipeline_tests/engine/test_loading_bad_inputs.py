"""A corpus of malformed eval.yaml and tasks.json files, each refused with a message that
names the file, the entry and the field (the expectations live in bad_inputs/cases.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.config import load_eval_config, load_tasks
from bat_pipeline.engine.errors import InputError

FOLDER = Path(__file__).parent / "bad_inputs"
CASES = yaml.safe_load((FOLDER / "cases.yaml").read_text())


def test_every_data_file_has_a_case():
    data = {p.name for p in FOLDER.iterdir() if p.suffix in (".yaml", ".json") and p.name != "cases.yaml"}
    assert data == set(CASES)
    assert len(CASES) >= 25


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_refused(name):
    path = FOLDER / name
    with pytest.raises(InputError) as caught:
        if path.suffix == ".yaml":
            load_eval_config(FOLDER, path, environ={})
        else:
            load_tasks(path)
    text = str(caught.value)
    assert str(path.resolve()) in text or str(path) in text
    for expected in CASES[name]:
        assert str(expected) in text, f"{expected!r} not in {text!r}"
