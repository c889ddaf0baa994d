"""engine.privacy_floor: the privacy floor a BAT agent sets in its code, found by parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.privacy_floor import check_privacy_floors, privacy_floors


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_levels_read_as_bat_adk_reads_them(tmp_path):
    write(tmp_path, "a.py", 'App(telemetry_privacy_floor="Content")\n')
    write(tmp_path, "b.py", "App(x=1,\n    telemetry_privacy_floor=TelemetryPrivacy.FULL)\n")
    write(tmp_path, "c.py", 'App(telemetry_privacy_floor="whatever")\n')
    write(tmp_path, "d.py", "App(telemetry_privacy_floor=choose())\n")
    floors = privacy_floors(tmp_path)
    assert [(f.location, f.level) for f in floors] == [
        ("a.py:1", "content"),
        ("b.py:2", "full"),
        ("c.py:1", "none"),
        ("d.py:1", None),
    ]


def test_text_that_is_not_a_keyword_does_not_count(tmp_path):
    write(tmp_path, "a.py", '# telemetry_privacy_floor="full"\nNOTE = \'telemetry_privacy_floor="full"\'\n')
    write(tmp_path, "tests/test_app.py", 'App(telemetry_privacy_floor="full")\n')
    write(tmp_path, ".venv/lib/x.py", 'App(telemetry_privacy_floor="full")\n')
    write(tmp_path, "broken.py", "def (:\n")
    assert privacy_floors(tmp_path) == []
    assert check_privacy_floors(tmp_path) == []


@pytest.mark.parametrize("level", ["content", "names", "full"])
def test_a_floor_above_none_is_refused_naming_file_and_line(tmp_path, level):
    agent = tmp_path / "blueprint" / "weather"
    path = write(agent, "agent.py", f'\n\nApp(telemetry_privacy_floor="{level}")\n')
    with pytest.raises(InputError) as caught:
        check_privacy_floors(agent, tmp_path / "blueprint")
    assert caught.value.file == str(path)
    assert caught.value.entry == "line 3" and caught.value.field == "telemetry_privacy_floor"
    assert f'"{level}"' in str(caught.value) and 'telemetry_privacy_floor="none"' in str(caught.value)


def test_none_passes_and_an_unreadable_floor_is_a_warning(tmp_path):
    write(tmp_path, "a.py", 'App(telemetry_privacy_floor="none")\n')
    write(tmp_path, "b.py", "App(telemetry_privacy_floor=os.environ['FLOOR'])\n")
    warnings = check_privacy_floors(tmp_path)
    assert len(warnings) == 1 and "b.py:1" in warnings[0] and "cannot be read" in warnings[0]
