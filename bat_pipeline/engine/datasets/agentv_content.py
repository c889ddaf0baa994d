"""A 4.x AgentV test's messages as AgentV 4.42.4 reads and sends them (issue 29 point 3):
`type: file` content parts read from disk, and the prompt built from the parts.

Files (loaders/message-processor.ts, file-resolver.ts): a part `{type: file, value: PATH}`
is looked for as written when absolute, else (a leading `/` dropped) in the eval file's
folder, then each folder above it up to the repository root (the first with `.git`); found,
it gains `path` (as written), `text` (the file, CRLF as LF) and `resolvedPath`; not found or
not text, it is left out with a warning, as AgentV leaves it out. `input_files: [PATH, ...]`
with a text `input` is one user message of those file parts, then the text. The resolved
files of the input are the test's `input_files` ({FILES} of a cli target, the script
graders' `input_files`).

The prompt (formatting/prompt-builder.ts, segment-formatter.ts): each message's parts (a
text as one part, a mapping as its JSON indented by 2); a file part is `<file: path="ABS">`
for a cli target (`agent` mode) and `<file path="PATH">\\nTEXT\\n</file>` for an LLM (`lm`
mode). One message with content: its parts, blank-line separated; several, or any assistant
or tool message: `@[Role]:` and each message's parts, line separated.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from bat_pipeline.engine.contracts.agentv import Message

Mode = Literal["agent", "lm"]
DEFAULT_SYSTEM_PROMPT = "You are a careful assistant. Follow all provided instructions and do not fabricate results."
"""What AgentV 4.42.4's LLM providers send as the system message when the test has none
(providers/llm-providers.ts)."""


def search_roots(eval_file: Path) -> list[Path]:
    """The eval file's folder and each above it, up to the repository root (the first
    folder with `.git`; else the filesystem root)."""
    roots = []
    for folder in [eval_file.parent, *eval_file.parent.parents]:
        roots.append(folder)
        if (folder / ".git").exists():
            break
    return roots


def file_shorthand(raw: dict[str, Any], suite_files: Any) -> Any:
    """`input` as messages when `input_files` (the test's, else the file's) goes with a
    text `input`: one user message of a file part per path, then the text (AgentV's
    resolveInputMessages); else `input` as it is."""
    files = raw.get("input_files", suite_files)
    text = raw.get("input")
    if not isinstance(files, list) or not isinstance(text, str):
        return text
    paths = [f for f in files if isinstance(f, str)]
    if not paths:
        return text
    return [
        {"role": "user", "content": [*({"type": "file", "value": p} for p in paths), {"type": "text", "value": text}]}
    ]


def resolve_files(
    items: list[Message], roots: Sequence[Path], where: str, warnings: list[str]
) -> tuple[list[Message], list[str]]:
    """The messages with their file parts read (module docstring), and the files found, in
    order, each once. `where` names the field in warnings."""
    out: list[Message] = []
    found: list[str] = []
    for m, message in enumerate(items):
        if not isinstance(message.content, list):
            out.append(message)
            continue
        parts: list[Any] = []
        for p, part in enumerate(message.content):
            if isinstance(part, str):
                if part:
                    parts.append({"type": "text", "value": part})
                continue
            if not isinstance(part, dict):
                continue
            if part.get("type") != "file":
                parts.append(dict(part))
                continue
            value = part.get("value")
            if not isinstance(value, str) or not value:
                continue
            display = value.lstrip("/\\") or value
            candidates = [Path(value)] if Path(value).is_absolute() else []
            candidates += [root / display for root in roots]
            at = f"{where}[{m}].content[{p}]"
            path = next((c.resolve() for c in candidates if c.is_file()), None)
            if path is None:
                tried = ", ".join(str(c) for c in dict.fromkeys(candidates))
                warnings.append(
                    f"{at}: file '{display}' not found (tried {tried}); the part is left out, as AgentV does"
                )
                continue
            try:
                text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
            except (OSError, UnicodeDecodeError) as exc:
                warnings.append(f"{at}: cannot read {path} as text ({exc}); the part is left out, as AgentV does")
                continue
            parts.append({**part, "path": display, "text": text, "resolvedPath": str(path)})
            if str(path) not in found:
                found.append(str(path))
        out.append(Message(role=message.role, content=parts))
    return out, found


def segments(content: Any) -> list[dict[str, Any]]:
    """A message's content as parts (AgentV's extractContentSegments)."""
    if isinstance(content, str):
        return [{"type": "text", "value": content}] if content.strip() else []
    if isinstance(content, dict):
        rendered = json.dumps(content, indent=2, ensure_ascii=False)
        return [{"type": "text", "value": rendered}] if rendered.strip() else []
    if not isinstance(content, list):
        return []
    out: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, str):
            if part.strip():
                out.append({"type": "text", "value": part})
        elif isinstance(part, dict):
            out.append(part)
    return out


def format_part(part: dict[str, Any], mode: Mode) -> str | None:
    """A part as prompt text (AgentV's formatSegment); None for a part that shows nothing."""
    if part.get("type") == "text":
        value = part.get("value")
        return value if isinstance(value, str) else None
    if part.get("type") == "file":
        path = part.get("path")
        if not isinstance(path, str) or not path:
            return None
        if mode == "agent":
            resolved = part.get("resolvedPath")
            return f'<file: path="{resolved if isinstance(resolved, str) else path}">'
        text = part.get("text")
        if isinstance(text, str) and text:
            return f'<file path="{path}">\n{text.strip()}\n</file>'
    return None


def _visible(parts: list[dict[str, Any]]) -> bool:
    for part in parts:
        key = "value" if part.get("type") == "text" else "text" if part.get("type") == "file" else None
        value = part.get(key) if key else None
        if isinstance(value, str) and value.strip():
            return True
    return False


def _texts(parts: list[dict[str, Any]], mode: Mode) -> list[str]:
    return [t for t in (format_part(p, mode) for p in parts) if t]


def role_markers(items: list[Message]) -> bool:
    """Whether the prompt marks roles: an assistant or tool message, or more than one
    message that shows something."""
    if any(m.role in ("assistant", "tool") for m in items):
        return True
    return sum(1 for m in items if _visible(segments(m.content))) > 1


def prompt_text(items: list[Message], mode: Mode) -> str:
    """The test's prompt (AgentV's `question`), in `mode`."""
    if role_markers(items):
        blocks = []
        for message in items:
            parts = segments(message.content)
            texts = _texts(parts, mode) if _visible(parts) else []
            if texts:
                blocks.append(f"@[{message.role[:1].upper()}{message.role[1:]}]:\n" + "\n".join(texts))
        return "\n\n".join(blocks)
    texts = [t.strip() for m in items for t in _texts(segments(m.content), mode)]
    return "\n\n".join(t for t in texts if t)


def llm_messages(items: list[Message]) -> list[dict[str, str]]:
    """The chat messages an LLM target gets (AgentV's buildChatPrompt over `lm` mode): the
    leading system messages as one system message (else DEFAULT_SYSTEM_PROMPT), then,
    with role markers, each later message (a system or tool message as an assistant
    message opening `@[System]:` / `@[Tool]:`), else one user message, the prompt."""
    system: list[str] = []
    start = 0
    while start < len(items) and items[start].role == "system":
        texts = _texts(segments(items[start].content), "lm")
        if texts:
            system.append("\n".join(texts))
        start += 1
    head = [{"role": "system", "content": "\n\n".join(system).strip() or DEFAULT_SYSTEM_PROMPT}]
    if not role_markers(items):
        return [*head, {"role": "user", "content": prompt_text(items, "lm").strip()}]
    out = []
    for message in items[start:]:
        role, texts = message.role, []
        if role in ("system", "tool"):
            texts.append(f"@[{role.capitalize()}]:")
            role = "assistant"
        texts += _texts(segments(message.content), "lm")
        if texts:
            out.append({"role": role if role in ("user", "assistant") else "user", "content": "\n".join(texts)})
    return [*head, *out]
