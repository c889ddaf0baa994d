"""What LLM HTTP APIs look like on the wire, apart from who asks them and why.

`providers.wire_format(provider)` gives the request and answer shapes of a provider of
SPEC §2 (`openai_chat` for the OpenAI-compatible ones, `anthropic_messages` for
Anthropic); `wire` holds what both share (error details, Retry-After, a refusal of
structured output). No state, no retries, no secrets kept: the callers (the judge client
today) do that.
"""
