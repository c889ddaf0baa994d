"""The verdict from the check scorers' rows is the verdict bat_pipeline gave before the
scorers existed, to the letter: pass/fail, reason text and checks, over every case of
verdict_corpus. The golden copy was written by that earlier code (engine.verdicts.decide,
removed since; see the commit that added this file).
"""

from __future__ import annotations

import gzip
import json

from bat_pipeline.engine.verdicts import score_checks, verdict_from_rows
from bat_pipeline_tests.engine.verdict_corpus import cases, golden_path


def test_rows_give_the_golden_verdict_of_every_case():
    golden = json.loads(gzip.decompress(golden_path().read_bytes()))
    verdicts = {
        case_id: verdict_from_rows(score_checks(task, episode)).model_dump(mode="json")
        for case_id, task, episode in cases()
    }
    assert set(verdicts) == set(golden)
    differ = [case_id for case_id in verdicts if verdicts[case_id] != golden[case_id]]
    assert not differ, (f"{len(differ)} differ", differ[:3], verdicts[differ[0]] if differ else None)
    assert {v["passed"] for v in golden.values()} == {True, False}
