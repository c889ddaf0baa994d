"""The simulated user of EvalBench scenarios (engine.simulated_user.SimulatedUser) over
HTTP: asked through the judge's client (resources.judge.JudgeClient), so it speaks the same
providers, reads its key the same way (`simulated_user.api_key_env`, the project's `.env`
and the shell, `simulated_user.env`), retries the same failures and redacts its key from
every error. Its answers are never cached: a conversation is asked afresh each run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bat_pipeline.engine.contracts.config import SimulatedUserSettings
from bat_pipeline.engine.contracts.scenario import ConversationTurn
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.engine.scorers.judging import JudgeQuestion
from bat_pipeline.engine.simulated_user import PURPOSE, SimulatedUserError, UserReply, reply_text, user_messages
from bat_pipeline.resources.judge import JudgeClient, JudgeConfigError


class SimulatedUserClient:
    """One model playing the user (SimulatedUser protocol)."""

    def __init__(
        self,
        settings: SimulatedUserSettings,
        *,
        environ: Mapping[str, str] | None = None,
        redactor: Redactor | None = None,
        backoff_base_s: float = 0.5,
    ) -> None:
        """Raises JudgeConfigError (its message naming `simulated_user`) when the key is
        missing or the base URL unusable."""
        self.settings = settings
        try:
            self._client = JudgeClient(
                settings.client_settings(),
                environ=environ,
                redactor=redactor,
                looked_in="the environment and simulated_user.env",
                backoff_base_s=backoff_base_s,
            )
        except JudgeConfigError as exc:
            raise JudgeConfigError(
                str(exc).replace("the judge", "the simulated user").replace("judge.", "simulated_user.")
            ) from None

    @property
    def name(self) -> str:
        return self._client.name

    async def reply(self, plan: str, history: Sequence[ConversationTurn]) -> UserReply:
        """The next message; an empty answer is asked again like an unreadable one. Raises
        SimulatedUserError (redacted) once the client gave up."""
        question = JudgeQuestion(purpose=PURPOSE, messages=user_messages(plan, history), parse=reply_text)
        # One opening per question: its stats are this question's requests and tokens.
        async with self._client.opened() as stats:
            answer = await self._client.ask(question)
        if answer.value is None:
            raise SimulatedUserError(f"the simulated user ({self.name}) did not answer: {answer.error}")
        return UserReply(
            text=answer.value, tokens_in=stats.tokens_in, tokens_out=stats.tokens_out, requests=stats.requests
        )
