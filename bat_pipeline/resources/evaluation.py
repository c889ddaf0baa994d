"""The agent folder under evaluation: its validated eval.yaml, dataset, storage root, and
the secrets to keep out of what is stored."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from pydantic import PrivateAttr

from bat_pipeline.engine.config.project import Overrides, load_project, project_tasks
from bat_pipeline.engine.contracts import EvalConfig, Task
from bat_pipeline.engine.environment import agent_environment, config_environ, find_dotenv, read_dotenv
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.redaction import Redactor, secret_values
from bat_pipeline.engine.target_inputs import target_secrets
from bat_pipeline.locations import root_path
from bat_pipeline.resources.judge import JudgeConfigError, resolve_api_key
from bat_pipeline.resources.scripted_llm import PLACEHOLDER, ScriptedLlmResource, uses_scripted_llm


class EvaluationResource(dg.ConfigurableResource):
    """Which agent is evaluated, and where results are kept."""

    agent_dir: str
    """The agent folder holding `eval/eval.yaml`, or an AgentV eval file (engine.config.project)."""
    providers_file: str | None = None
    """`--providers FILE` for an AgentV file."""
    threshold: float | None = None
    """`--threshold` for an AgentV file."""
    output_dir: str | None = None
    """`--output DIR`: replaces `evaluation.output_dir`."""
    dataset: str | None = None
    """`--dataset FILE`: replaces `evaluation.dataset`."""
    trust_datasets: bool = False
    """`--trust-datasets` (engine.datasets.trust)."""
    export_otlp: str | None = None
    """`--export-otlp URL`: replaces `export.otlp_endpoint`."""
    adk_config: str | None = None
    """`--config FILE`: the Google ADK test_config.json (sets `evaluation.adk_config`)."""
    storage_root: str
    """Shared storage for partition files, the judge cache and the warehouse."""
    scripted_llm: ScriptedLlmResource | None = None
    """Serves `{scripted_llm}` in eval.yaml (resources.scripted_llm); without it, such a
    file is refused when a step needs its models."""

    _declared: EvalConfig | None = PrivateAttr(default=None)
    _config: EvalConfig | None = PrivateAttr(default=None)
    _redactor: Redactor | None = PrivateAttr(default=None)

    def config(self, *, models: bool = True) -> EvalConfig:
        """eval.yaml, validated, with the model servers' addresses: a `{scripted_llm}` in it
        starts the scripted model server for this run (once). `models=False`: as written,
        starting nothing, for steps that call no model."""
        if self._declared is None:
            self._declared = load_project(Path(self.agent_dir), self.overrides())
        if not models:
            return self._declared
        if self._config is None:
            if self.scripted_llm is not None:
                self._config = self.scripted_llm.resolve(self._declared)
            elif uses_scripted_llm(self._declared):
                raise InputError(
                    str(self._declared.source),
                    f"{PLACEHOLDER} names the scripted model "
                    "server, and this code location has no scripted_llm resource to start it",
                )
            else:
                self._config = self._declared
        return self._config

    def overrides(self) -> Overrides:
        return Overrides(
            providers_file=Path(self.providers_file) if self.providers_file else None,
            threshold=self.threshold,
            output_dir=Path(self.output_dir) if self.output_dir else None,
            dataset=Path(self.dataset) if self.dataset else None,
            trust_datasets=self.trust_datasets,
            export_otlp=self.export_otlp,
            adk_config=Path(self.adk_config) if self.adk_config else None,
        )

    def tasks(self, warnings: list[str] | None = None) -> list[Task]:
        """The dataset (an AgentV file's tests, an EvalBench run's scenarios); what it
        ignored is appended to `warnings`."""
        return project_tasks(self.config(models=False), warnings)

    @property
    def root(self) -> Path:
        return root_path(self.storage_root)

    def redactor(self) -> Redactor:
        """Redacts the evaluation's secrets (engine.redaction): the judge's key, the
        simulated user's, each model's provider key as its agent gets it, and secret-named
        values of `.env`, `agent.env`, the models' `env` and `judge.env`, and of the
        environment the agent and the judge inherit (the shell's: `GITHUB_TOKEN`, ...); and the
        AgentV targets' keys and agent secrets
        (engine.target_inputs.target_secrets)."""
        if self._redactor is None:
            config = self.config(models=False)
            dotenv = read_dotenv(find_dotenv(config.agent_dir))
            shell = dict(os.environ)
            agent_envs = {
                m.partition_key: agent_environment(
                    config, m, base_env=shell, dotenv=dotenv, minimal=not config.agent.inherit_env
                )
                for m in config.models
            }
            judge_key = None
            if config.judge is not None:
                try:
                    judge_key = resolve_api_key(config.judge, config_environ(config, shell))
                except JudgeConfigError:
                    pass  # the judge step refuses on its own; nothing to redact
            user_key = None
            if config.simulated_user is not None:
                try:
                    user_key = resolve_api_key(config.simulated_user.client_settings(), config_environ(config, shell))
                except JudgeConfigError:
                    pass  # the episodes step refuses on its own
            self._redactor = Redactor(
                [
                    *secret_values(config, judge_key=judge_key, agent_envs=agent_envs, dotenv=dotenv, inherited=shell),
                    *target_secrets(config, shell),
                ]
            ).plus(user_key, min_chars=12)
        return self._redactor
