"""Warehouse at scale: one million synthetic episodes (20 models × 100 runs × 500
episodes) with eight score rows each (four checks, four judge rubrics), then the time of
the views and read helpers a UI or a gate would use, and of replacing one partition.
Prints figures; asserts nothing about time.

    python -m bat_pipeline_tests.bench.warehouse
"""

from __future__ import annotations

import builtins
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bat_pipeline.engine.contracts import (
    Episode,
    EpisodeTrace,
    JudgeScores,
    Totals,
    Trajectory,
    Verdict,
    VerdictCheck,
)
from bat_pipeline.resources.warehouse import Warehouse
from bat_pipeline.storage import PartitionRef

MODELS, RUNS, EPISODES_PER_PARTITION, K = 20, 100, 500, 5

_EPISODES_SQL = f"""
INSERT INTO episodes BY NAME
SELECT strftime(TIMESTAMP '2024-01-01' + to_days(CAST(run AS INTEGER)), '%Y%m%dT%H%M%SZ') AS run_id,
       'model-' || lpad(CAST(model AS VARCHAR), 2, '0') AS model_key,
       'task_' || lpad(CAST(e // {K} AS VARCHAR), 3, '0') AS task_id,
       CAST(e % {K} AS INTEGER) AS attempt,
       CASE WHEN hash(i, 1) % 50 = 0 THEN 'error' ELSE 'completed' END AS final_status,
       hash(i, 2) % 100 < 35 + 2 * model + run % 10 AS passed,
       500 + hash(i, 3) % 20000 AS wall_ms,
       200 + hash(i, 4) % 6000 AS tokens_in,
       20 + hash(i, 5) % 800 AS tokens_out,
       hash(i, 6) % 200 AS tokens_cached,
       'synthetic answer ' || i AS final_output
FROM (SELECT range AS i, (range // {EPISODES_PER_PARTITION}) % {MODELS} AS model,
             range // ({EPISODES_PER_PARTITION} * {MODELS}) AS run, range % {EPISODES_PER_PARTITION} AS e
      FROM range({MODELS * RUNS * EPISODES_PER_PARTITION}))
"""
"""A partition's rows lie together, runs in time order, as `write_partition` appends them."""

_SCORES_SQL = """
INSERT INTO episode_scores BY NAME
SELECT e.run_id, e.model_key, 'bench' AS agent_id, e.task_id, e.attempt, c.position, c.scorer, c.criterion,
       CASE WHEN c.gating THEN CAST(hash(e.run_id, e.model_key, e.task_id, e.attempt, c.position) % 4 > 0 AS DOUBLE)
            ELSE (hash(e.run_id, e.model_key, e.task_id, e.attempt, c.position) % 101) / 100 END AS value,
       value AS raw, CASE WHEN c.gating THEN 'pass/fail' ELSE '0..1' END AS scale,
       CASE WHEN c.gating THEN value = 1 END AS passed, c.gating, 0 AS sample,
       CASE WHEN NOT c.gating THEN 'openai:judge' END AS judge, 'synthetic reason' AS reason
FROM episodes e CROSS JOIN (VALUES
    (0, 'status', 'status', true), (1, 'output_contains', 'output[0]', true),
    (2, 'tool_calls', 'tool_call:get_weather', true), (3, 'tokens', 'tokens', true),
    (4, 'relevance', 'response_relevance', false), (5, 'task_completion', 'task_completion_quality', false),
    (6, 'hallucination', 'hallucination_score', false), (7, 'tool_call', 'tool_call_appropriateness', false)
) c(position, scorer, criterion, gating)
"""

_RUNS_SQL = """
INSERT INTO runs BY NAME
SELECT DISTINCT run_id, model_key, 'openai:' || model_key AS model_name, 'bench' AS run_name,
       '/bench/agent' AS agent_dir, ? AS k
FROM episodes
"""

_MODEL_METRICS_SQL = """
INSERT INTO model_metrics BY NAME
SELECT run_id, model_key, count(DISTINCT task_id) AS tasks, count(*) AS episodes,
       count(*) FILTER (passed) AS passed, count(*) FILTER (NOT passed) AS failed,
       avg(CAST(passed AS DOUBLE)) AS pass_rate,
       count(*) FILTER (final_status = 'error') AS error_episodes,
       quantile_cont(wall_ms, 0.5) AS p50_ms, quantile_cont(wall_ms, 0.9) AS p90_ms,
       quantile_cont(wall_ms, 0.95) AS p95_ms, quantile_cont(wall_ms, 0.99) AS p99_ms,
       avg(wall_ms) AS avg_wall_ms, min(wall_ms) AS min_wall_ms, max(wall_ms) AS max_wall_ms,
       sum(wall_ms) AS total_wall_ms, sum(tokens_in) AS prompt_tokens_total,
       sum(tokens_out) AS completion_tokens_total, sum(tokens_in + tokens_out) AS total_tokens_total,
       avg(tokens_in + tokens_out) AS avg_total_tokens
FROM episodes GROUP BY run_id, model_key
"""

_TASK_METRICS_SQL = """
INSERT INTO task_metrics BY NAME
SELECT run_id, model_key, task_id, count(*) AS attempts, count(*) FILTER (passed) AS passed,
       CAST(bool_or(passed) AS DOUBLE) AS pass_at_k, CAST(bool_and(passed) AS DOUBLE) AS pass_hat_k
FROM episodes GROUP BY run_id, model_key, task_id
"""

_PASS_AT_K_SQL = """
UPDATE model_metrics SET pass_at_k = t.at_k, pass_hat_k = t.hat_k
FROM (SELECT run_id, model_key, avg(pass_at_k) AS at_k, avg(pass_hat_k) AS hat_k
      FROM task_metrics GROUP BY ALL) t
WHERE model_metrics.run_id = t.run_id AND model_metrics.model_key = t.model_key
"""


def build(wh: Warehouse) -> dict[str, float]:
    """Fill an empty warehouse with the synthetic history; seconds per step."""
    steps = {}
    with wh.connect() as conn:
        for name, sql, params in (
            ("episodes", _EPISODES_SQL, []),
            ("episode_scores", _SCORES_SQL, []),
            ("runs", _RUNS_SQL, [K]),
            ("model_metrics", _MODEL_METRICS_SQL, []),
            ("task_metrics", _TASK_METRICS_SQL, []),
            ("pass_at_k", _PASS_AT_K_SQL, []),
        ):
            start = time.perf_counter()
            conn.execute(sql, params)
            steps[name] = time.perf_counter() - start
    return steps


def timed(fn: Callable[[], object], repeat: int = 5) -> tuple[float, float, object]:
    """(first call, median of the rest) in milliseconds, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
    return times[0], statistics.median(times[1:]), result


def one_partition(root: Path, run_id: str, model_key: str) -> tuple[PartitionRef, list[Episode]]:
    ref = PartitionRef(
        run_id=run_id,
        run_name="bench",
        model_key=model_key,
        model_name=f"openai:{model_key}",
        k=K,
        agent_dir=root,
        dir=root / run_id / model_key,
        output_dir=root / "out",
    )
    episodes = [
        Episode(
            model_name=ref.model_name,
            task_id=f"task_{e // K:03d}",
            final_status="completed",
            final_output="answer",
            aux={"attempt_index": e % K},
            verdict=Verdict(
                passed=e % 3 != 0,
                reason="",
                checks=[
                    VerdictCheck(check="status", passed=True, detail="completed"),
                    VerdictCheck(check="output[0]", passed=e % 3 != 0, detail="phrase"),
                ],
            ),
            qualitative_scores=JudgeScores(
                response_relevance=0.8,
                task_completion_quality=0.6,
                judge_reasoning={"relevance": "on topic", "task_completion": "done"},
            ),
            trace=EpisodeTrace(
                wall_ms=1000.0 + e,
                trajectory=Trajectory(found=True, totals=Totals(model_calls=3, tokens_in=900, tokens_out=120)),
            ),
        )
        for e in range(EPISODES_PER_PARTITION)
    ]
    return ref, episodes


def run(print: Callable[..., None] = builtins.print) -> dict[str, float]:
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bat-bench-warehouse-") as tmp:
        wh = Warehouse(Path(tmp) / "warehouse.duckdb")
        start = time.perf_counter()
        steps = build(wh)
        figures["build_s"] = time.perf_counter() - start
        rows = wh.query(
            "SELECT (SELECT count(*) FROM episodes) AS episodes, "
            "(SELECT count(*) FROM episode_scores) AS score_rows, "
            "(SELECT count(*) FROM model_metrics) AS partitions, "
            "(SELECT count(*) FROM task_metrics) AS task_rows"
        )[0]
        size_mb = wh.path.stat().st_size / 1e6
        print(
            f"built {rows['episodes']:,} episodes, {rows['score_rows']:,} score rows, "
            f"{rows['partitions']:,} run×model partitions, "
            f"{rows['task_rows']:,} task rows in {figures['build_s']:.2f}s "
            f"({', '.join(f'{k} {v:.2f}s' for k, v in steps.items())}); file {size_mb:.1f} MB"
        )

        with wh.connect(read_only=True) as conn:
            queries = {
                "model_trend view, all rows": lambda: conn.execute("SELECT * FROM model_trend").fetchall(),
                "latest_model_metrics view": lambda: conn.execute("SELECT * FROM latest_model_metrics").fetchall(),
                "pass rate per model over all episodes": lambda: conn.execute(
                    "SELECT model_key, avg(CAST(passed AS DOUBLE)) FROM episodes GROUP BY ALL"
                ).fetchall(),
                "mean per scorer, all score rows": lambda: conn.execute(
                    "SELECT model_key, scorer, criterion, avg(value) FROM episode_scores GROUP BY ALL"
                ).fetchall(),
                "verdict_checks view, one partition": lambda: conn.execute(
                    "SELECT * FROM verdict_checks WHERE run_id = '20240115T000000Z' AND model_key = 'model-03'"
                ).fetchall(),
                "judge_scores view, one partition": lambda: conn.execute(
                    "SELECT * FROM judge_scores WHERE run_id = '20240115T000000Z' AND model_key = 'model-03'"
                ).fetchall(),
                "per task: pass rate over every run": lambda: conn.execute(
                    "SELECT model_key, task_id, sum(passed) / sum(attempts) FROM task_metrics GROUP BY ALL"
                ).fetchall(),
                "per task, from the episodes: latest run": lambda: conn.execute(
                    "SELECT model_key, task_id, avg(CAST(passed AS DOUBLE)) FROM episodes "
                    "WHERE run_id = (SELECT max(run_id) FROM episodes) GROUP BY ALL"
                ).fetchall(),
            }
            for label, fn in queries.items():
                first, median, result = timed(fn)
                figures[label] = median
                print(f"{label:<40} {len(result):>6} rows  first {first:7.1f} ms  median {median:7.1f} ms")

        helpers = {
            "Warehouse.trend(last_n=10) (open+close)": lambda: wh.trend(last_n=10),
            "Warehouse.latest() (open+close)": wh.latest,
            "Warehouse.previous_metrics() (open+close)": lambda: [wh.previous_metrics("model-07", "20240301T000000Z")],
            "Warehouse.chart_data() (open+close)": lambda: wh.chart_data().episodes,
            "Warehouse.score_means() (open+close)": wh.score_means,
        }
        for label, fn in helpers.items():
            first, median, result = timed(fn)
            figures[label] = median
            print(f"{label:<40} {len(result):>6} rows  first {first:7.1f} ms  median {median:7.1f} ms")
        slowest = max(v for k, v in figures.items() if k != "build_s")
        print(f"slowest query: {slowest:.0f} ms median (target < 1000 ms)")

        ref, episodes = one_partition(Path(tmp), "20240115T000000Z", "model-03")
        first, median, written = timed(lambda: wh.write_partition(ref, episodes), repeat=3)
        figures["write_partition"] = median
        print(
            f"{'write_partition (replace 500 episodes)':<40} {written['episodes']:>6} rows  "
            f"first {first:7.1f} ms  median {median:7.1f} ms"
        )
    return figures


if __name__ == "__main__":
    run()
