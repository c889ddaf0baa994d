"""`skills_best_practices` (LLM): EvalBench's review of the SKILL.md of each skill the agent
activated (evalbench/scorers/skillsbestpractices.py), where a run config names it:

- the skills are EvalBench's `accumulated_skills` (engine.evalbench_harness), repeats kept;
  none activated: 100, "No skills were activated; best practices check skipped.", unasked;
- each skill's `SKILL.md` is read from the scorer's `skills_dir` (relative to the working
  directory, as EvalBench opens it), `<skill>/SKILL.md` or a folder of that name in any case,
  else from EvalBench's fallbacks under the working directory
  (`.venv/fake_home_claude/.claude/skills`, `.venv/fake_home_codex/.codex/skills`,
  `.venv/fake_home/.gemini/skills`); a skill without one scores 0 ("SKILL.md not found");
- the judge grades the file 0–100 (five categories of 20: metadata quality, conciseness,
  progressive disclosure, clarity, content quality); the score is clamped to 0–100 and the
  row's is the mean over the skills.

One row, not gating, raw on 0–100. A skill whose answer never came scores 0 with the error in
its reason, as EvalBench's does; the row then carries `details.error`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.evalbench_harness import accumulated_skills
from bat_pipeline.engine.scenario_judging import answer_object
from bat_pipeline.engine.scorers.harness_metrics import named
from bat_pipeline.engine.scorers.judging import FAILED, Judge, JudgeQuestion, cannot_judge, null_row
from bat_pipeline.engine.scorers.registry import ScoringInput, llm
from bat_pipeline.engine.scorers.support import all_steps

NAME = "skills_best_practices"
SCALE = "0..100"
CATEGORIES = ("metadata_quality", "conciseness", "progressive_disclosure", "clarity", "content_quality")
FALLBACK_DIRS = (
    Path(".venv") / "fake_home_claude" / ".claude" / "skills",
    Path(".venv") / "fake_home_codex" / ".codex" / "skills",
    Path(".venv") / "fake_home" / ".gemini" / "skills",
)
_CATEGORY = {
    "type": "object",
    "additionalProperties": False,
    "required": ["score", "comment"],
    "properties": {"score": {"type": "integer"}, "comment": {"type": "string"}},
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["score", *CATEGORIES, "summary"],
    "properties": {"score": {"type": "integer"}, **dict.fromkeys(CATEGORIES, _CATEGORY), "summary": {"type": "string"}},
}
INSTRUCTIONS = (
    "You review an agent skill's SKILL.md against the practices of good skills. Grade five "
    "categories from 0 to 20 each: metadata_quality (a name matching its folder, lowercase with "
    "hyphens; a description saying what the skill does and when to use it), conciseness (no "
    "padding, only what the agent needs), progressive_disclosure (details in referenced files, "
    "not all in the body), clarity (steps an agent can follow), content_quality (complete, no "
    "TODOs or placeholders). The score is their sum, 0 to 100. Answer with one JSON object and "
    'nothing else: {"score": <0-100>, "metadata_quality": {"score": <0-20>, "comment": "..."}, '
    '"conciseness": {...}, "progressive_disclosure": {...}, "clarity": {...}, '
    '"content_quality": {...}, "summary": "<one or two sentences>"}'
)


def find_skill_md(skill: str, folder: Path | None) -> Path | None:
    """`<folder>/<skill>/SKILL.md`, else a folder of the skill's name in any case."""
    if folder is None:
        return None
    direct = folder / skill / "SKILL.md"
    if direct.exists():
        return direct
    if folder.is_dir():
        for entry in folder.iterdir():
            if entry.name.lower() == skill.lower() and (entry / "SKILL.md").exists():
                return entry / "SKILL.md"
    return None


def skills_folder(options: dict[str, Any]) -> Path | None:
    if options.get("skills_dir"):
        return Path(str(options["skills_dir"]))
    return next((d.resolve() for d in FALLBACK_DIRS if d.is_dir()), None)


def parse_grade(text: str) -> tuple[float, str]:
    """(score clamped to 0–100, the categories and summary as text)."""
    try:  # the whole answer, not one of its categories (each has a score too)
        found = answer_object(text, "progressive_disclosure")
    except ValueError:
        found = answer_object(text, "score")
    try:
        score = float(min(100, max(0, int(found["score"]))))
    except (TypeError, ValueError):
        raise ValueError(f"score field is not an integer: {found.get('score')!r}") from None
    lines = []
    for category in CATEGORIES:
        part = found.get(category)
        if isinstance(part, dict) and part.get("score") is not None:
            lines.append(f"{category}: {part['score']}/20 — {part.get('comment', '')}")
    if found.get("summary"):
        lines.append(f"summary: {found['summary']}")
    return score, "\n".join(lines)


@llm(NAME, order=525, applies=named(NAME))
async def skills_best_practices(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    why = cannot_judge(item)
    if why:
        return [null_row(NAME, NAME, judge.name, why, scale=SCALE)]
    scenario = item.task.scenario
    options = scenario.options(NAME) if scenario is not None else {}
    skills = accumulated_skills(item.episode, all_steps(item.trajectory))
    if not skills:
        return [
            ScoreRow(
                scorer=NAME,
                criterion=NAME,
                value=1.0,
                raw=100.0,
                scale=SCALE,
                reason="No skills were activated; best practices check skipped.",
            )
        ]
    folder = skills_folder(options)
    scores: list[float] = []
    notes: list[str] = []
    errors: list[str] = []
    for skill in skills:
        path = find_skill_md(skill, folder)
        if path is None:
            score, note = 0.0, f"SKILL.md not found for skill '{skill}' in {folder or ''}"
        else:
            content = path.read_text(encoding="utf-8", errors="replace")
            messages = [
                {"role": "system", "content": INSTRUCTIONS},
                {"role": "user", "content": f"## Skill folder\n{skill}\n\n## SKILL.md\n{content}"},
            ]
            answer = await judge.ask(JudgeQuestion(purpose=NAME, messages=messages, parse=parse_grade, schema=SCHEMA))
            if answer.value is None:
                score, note = 0.0, f"Error calling model: {answer.error or 'no answer'}"
                errors.append(f"{skill}: {answer.error or 'no answer'}")
            else:
                score, note = answer.value
        scores.append(score)
        notes.append(f"[{skill}] Score={score:.0f}: {note[:300]}")
    mean = sum(scores) / len(scores)
    reason = f"Mean best practices score across {len(scores)} skill(s): {mean:.2f}\n" + "\n".join(notes)
    details: dict[str, Any] = {"skills": skills, "scores": scores}
    if errors:
        details["error"] = FAILED + "; ".join(errors)
    return [
        ScoreRow(
            scorer=NAME,
            criterion=NAME,
            value=mean / 100.0,
            raw=mean,
            scale=SCALE,
            judge=judge.name,
            reason=reason,
            details=details,
        )
    ]
