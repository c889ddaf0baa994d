"""A scripted stand-in for model providers, speaking their real HTTP APIs on 127.0.0.1.

The persona is chosen by words in the request's model name: `competent`/`good`,
`sloppy`/`bad`, `judge`. See `knobs.Knobs` for fault injection and `app` for the routes.
"""

from bat_pipeline.example.scripted_llm.knobs import Knobs
from bat_pipeline.example.scripted_llm.server import ScriptedLLM, serve_scripted_llm

__all__ = ["Knobs", "ScriptedLLM", "serve_scripted_llm"]
