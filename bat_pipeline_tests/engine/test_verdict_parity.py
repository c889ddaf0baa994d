"""The verdict from the check scorers' rows is today's verdict, to the letter: pass/fail,
reason text and checks, over every case of verdict_corpus (golden copy written by the
`decide` these rows replace).

`UPDATE_GOLDEN=1 pytest ...` rewrites the golden file from the current code.
"""

from __future__ import annotations

import gzip
import json
import os

from bat_pipeline.engine.verdicts import decide, error_verdict, score_checks, verdict_from_rows
from bat_pipeline_tests.engine.verdict_corpus import cases, golden_path


def legacy(task, episode):
    if episode.eval_error:
        return error_verdict(episode.eval_error)
    if task is None:
        return error_verdict(f"task '{episode.task_id}' is no longer in the dataset")
    return decide(task, episode.final_status, episode.final_output, episode.trace.trajectory)


def test_rows_give_the_legacy_verdict_of_every_case():
    differ = []
    for case_id, task, episode in cases():
        old, new = legacy(task, episode), verdict_from_rows(score_checks(task, episode))
        if old != new:
            differ.append(f"{case_id}:\n  old {old}\n  new {new}")
    assert not differ, f"{len(differ)} differ; first:\n" + "\n".join(differ[:3])


def test_rows_give_the_golden_verdict_of_every_case():
    path = golden_path()
    verdicts = {case_id: verdict_from_rows(score_checks(task, episode)).model_dump(mode="json")
                for case_id, task, episode in cases()}
    if os.environ.get("UPDATE_GOLDEN") == "1":
        legacy_verdicts = {case_id: legacy(task, episode).model_dump(mode="json") for case_id, task, episode in cases()}
        path.write_bytes(gzip.compress(json.dumps(legacy_verdicts, indent=1, ensure_ascii=False).encode(), mtime=0))
    golden = json.loads(gzip.decompress(path.read_bytes()))
    assert set(verdicts) == set(golden)
    differ = [case_id for case_id in verdicts if verdicts[case_id] != golden[case_id]]
    assert not differ, (len(differ), differ[:3], verdicts[differ[0]] if differ else None)
    assert {v["passed"] for v in golden.values()} == {True, False}
