"""`bat-pipeline compare BASE CANDIDATE`: two partitions of one agent, paired on the tasks
both ran (engine.comparison), read from the warehouse.

Each side is `RUN/PARTITION` (a run id or a unique prefix of one) or `PARTITION` alone (the
newest run holding it). Exit 0; 1 when the candidate's pass rate is significantly lower
(a CI gate); 2 when a side cannot be found, the sides belong to different agents, or their
datasets differ without `--allow-dataset-change`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bat_pipeline.engine.comparison import PROVENANCE_FIELDS, Side, as_json, as_text, compare
from bat_pipeline.engine.errors import InputError
from bat_pipeline.resources.warehouse import Warehouse, queries

REGRESSED = 1


def compare_command(
    warehouse: Warehouse,
    base: str,
    candidate: str,
    *,
    agent_id: str | None = None,
    fmt: str = "text",
    confidence: float = 0.95,
    allow_dataset_change: bool = False,
) -> int:
    """Print the comparison of `base` and `candidate`; the exit code as the module says."""
    if not Path(warehouse.path).exists():
        raise InputError(str(warehouse.path), "no warehouse yet: run an evaluation first (bat-pipeline run)")
    with warehouse.connect(read_only=True) as conn:
        b = resolve_side(conn, base, agent_id, "BASE")
        c = resolve_side(conn, candidate, agent_id, "CANDIDATE")
        if b.agent_id != c.agent_id:
            raise InputError(
                "compare", f"the sides belong to different agents ({b.agent_id} and {c.agent_id})", field="CANDIDATE"
            )
        b_hash, c_hash = b.provenance.get("dataset_hash"), c.provenance.get("dataset_hash")
        if b_hash and c_hash and b_hash != c_hash and not allow_dataset_change:
            raise InputError(
                "compare",
                f"the datasets differ ({b.label}: {b_hash}, {c.label}: {c_hash}); only the tasks both ran would be "
                "paired: pass --allow-dataset-change to compare them anyway",
                field="CANDIDATE",
            )
        result = compare(
            b,
            c,
            base_outcomes=queries.partition_outcomes(conn, b.run_id, b.model_key),
            candidate_outcomes=queries.partition_outcomes(conn, c.run_id, c.model_key),
            base_scores=queries.partition_score_values(conn, b.run_id, b.model_key),
            candidate_scores=queries.partition_score_values(conn, c.run_id, c.model_key),
            confidence=confidence,
        )
    if fmt == "json":
        sys.stdout.write(json.dumps(as_json(result), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(as_text(result))
    return REGRESSED if result.regressed else 0


def resolve_side(conn: Any, spec: str, agent_id: str | None, name: str) -> Side:
    """The partition `spec` names (see the module); InputError naming `name` otherwise."""
    run_prefix, _, key = spec.rpartition("/")
    rows = queries.partitions_of(conn, key, agent_id)
    if not rows:
        known = sorted({r["model_key"] for r in queries.fetch(conn, "SELECT DISTINCT model_key FROM runs")})
        raise InputError("compare", f"no run holds partition '{key}' (known: {', '.join(known) or 'none'})", field=name)
    if run_prefix:
        exact = [r for r in rows if r["run_id"] == run_prefix]
        rows = exact or [r for r in rows if r["run_id"].startswith(run_prefix)]
        if not rows:
            raise InputError("compare", f"no run starting with '{run_prefix}' holds partition '{key}'", field=name)
        if len({r["run_id"] for r in rows}) > 1:
            ids = ", ".join(sorted({r["run_id"] for r in rows}))
            raise InputError("compare", f"'{run_prefix}' names several runs ({ids}): give more of the id", field=name)
    agents = {r["agent_id"] for r in rows}
    if len(agents) > 1:
        raise InputError(
            "compare",
            f"partition '{key}' belongs to several agents ({', '.join(sorted(agents))}): choose one with --agent",
            field=name,
        )
    row = rows[0]
    return Side(
        run_id=row["run_id"],
        model_key=row["model_key"],
        model_name=row["model_name"] or row["model_key"],
        agent_id=row["agent_id"] or "",
        provenance={f: row.get(f) for f in PROVENANCE_FIELDS if row.get(f) is not None},
    )
