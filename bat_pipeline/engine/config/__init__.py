"""Reading the evaluation's inputs, as `bat eval` reads them: `eval/eval.yaml` (SPEC §2),
the dataset `tasks.json` (SPEC §3) and the agent's own `config.yaml` (SPEC §1).

- `eval_file`: eval.yaml into an EvalConfig (`$VAR` expansion, the project's scorers);
- `lenient`: what bat-cli accepts in its own way, turned into the records' shape;
- `rules`: checks across fields (cron, rubrics, partition keys, the agent's target);
- `dataset`: tasks.json into Tasks;
- `agent_yaml`: the agent's config.yaml, and the copy an evaluation hands the agent;
- `unknown_keys`, `messages`, `files`: what the readers share (keys bat-cli ignores,
  refusals in the user's terms, files read with YAML's duplicate keys refused).

Every refusal is an InputError naming the file, the entry (`models[2]`, `judge`,
`tasks[3] (id 'x')`) and the field; no pydantic ValidationError, YAML or JSON exception
leaves this package.
"""

from bat_pipeline.engine.config.dataset import load_tasks
from bat_pipeline.engine.config.eval_file import load_eval_config

__all__ = ["load_eval_config", "load_tasks"]
