// bat_pipeline's own stand-in for the part of AgentV 4.42.4's `@agentv/sdk` that the graders
// of the test corpus import: `defineCodeGrader`, `createTargetClient` (with its two error
// classes), `z`, and the `CodeGraderInput` / `Message` types. Written from AgentV's
// documented behaviour at the tag (README.md beside this file says what it does and why);
// nothing else of the SDK is here, so a grader using more fails to load, by name.
import { readFileSync } from 'node:fs';
import { z } from 'zod';

export { z };

// ── The grader's input, as the SDK validates it (camelCase after conversion) ─────────────
// zod objects drop keys they do not name, so a grader sees exactly these fields.

const Meta = z.record(z.string(), z.unknown());
const Tokens = z.object({
  input: z.number(),
  output: z.number(),
  cached: z.number().optional(),
  reasoning: z.number().optional(),
});
const Summary = z.object({
  eventCount: z.number(),
  toolCalls: z.record(z.string(), z.number()),
  errorCount: z.number(),
  toolDurations: z.record(z.string(), z.array(z.number())).optional(),
  llmCallCount: z.number().optional(),
});
const Redaction = z.object({
  level: z.enum(['none', 'partial', 'full']),
  fields: z.array(z.string()).optional(),
  reason: z.string().optional(),
});
const Failure = z.object({
  message: z.string(),
  name: z.string().optional(),
  code: z.string().optional(),
  stack: z.string().optional(),
  metadata: Meta.optional(),
});
const optionalStrings = <K extends string>(...keys: K[]) =>
  Object.fromEntries(keys.map((key) => [key, z.string().optional()])) as Record<
    K,
    z.ZodOptional<z.ZodString>
  >;
const TraceEvent = z.object({
  eventId: z.string(),
  parentEventId: z.string().optional(),
  ordinal: z.number().int().nonnegative(),
  type: z.enum(['message', 'model_turn', 'tool_call', 'tool_result', 'final_response', 'error']),
  timestamp: z.string().optional(),
  durationMs: z.number().nonnegative().optional(),
  durationInferred: z.boolean().optional(),
  turnIndex: z.number().int().nonnegative().optional(),
  message: z
    .object({
      role: z.string(),
      name: z.string().optional(),
      content: z.unknown().optional(),
      redaction: Redaction.optional(),
      tokenUsage: Tokens.optional(),
      metadata: Meta.optional(),
    })
    .optional(),
  model: z
    .object({
      ...optionalStrings('provider', 'name', 'invocationId'),
      tokenUsage: Tokens.optional(),
      metadata: Meta.optional(),
    })
    .optional(),
  tool: z
    .object({
      name: z.string(),
      callId: z.string().optional(),
      input: z.unknown().optional(),
      output: z.unknown().optional(),
      status: z.enum(['ok', 'error', 'timeout', 'cancelled', 'unknown']).optional(),
      error: Failure.optional(),
      redaction: Redaction.optional(),
      metadata: Meta.optional(),
    })
    .optional(),
  error: Failure.optional(),
  sourceRef: z
    .object({
      ...optionalStrings('eventId', 'messageId', 'spanId', 'traceId', 'rawKind', 'path'),
      line: z.number().int().nonnegative().optional(),
      metadata: Meta.optional(),
    })
    .optional(),
  rawEvidence: z
    .array(
      z.object({
        kind: z.string(),
        ref: z.string().optional(),
        mediaType: z.string().optional(),
        content: z.unknown().optional(),
        redacted: z.boolean().optional(),
        metadata: Meta.optional(),
      }),
    )
    .optional(),
  redaction: Redaction.optional(),
  metadata: Meta.optional(),
});
const ToolCall = z.object({
  tool: z.string(),
  input: z.unknown().optional(),
  output: z.unknown().optional(),
  ...optionalStrings('id', 'startTime', 'endTime'),
  durationMs: z.number().optional(),
});
const Block = z.union([
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('text'), text: z.string() }),
    z.object({ type: z.literal('image'), media_type: z.string(), path: z.string() }),
    z.object({ type: z.literal('file'), media_type: z.string(), path: z.string() }),
  ]),
  z.record(z.unknown()),
]);
const MessageSchema = z.object({
  role: z.enum(['assistant', 'user', 'system', 'tool']),
  content: z.union([z.string(), z.array(Block), z.record(z.unknown())]).optional(),
  toolCalls: z.array(ToolCall).optional(),
  ...optionalStrings('name', 'startTime', 'endTime'),
  durationMs: z.number().optional(),
  metadata: z.record(z.unknown()).optional(),
});
const Trace = Summary.extend({
  messages: z.array(MessageSchema),
  events: z.array(TraceEvent),
  tokenUsage: Tokens.optional(),
  costUsd: z.number().optional(),
  durationMs: z.number().optional(),
  ...optionalStrings('startTime', 'endTime'),
  metadata: Meta.optional(),
});
const nullableStrings = <K extends string>(...keys: K[]) =>
  Object.fromEntries(keys.map((key) => [key, z.string().nullable().optional()])) as Record<
    K,
    z.ZodOptional<z.ZodNullable<z.ZodString>>
  >;
const InputSchema = z.object({
  criteria: z.string(),
  expectedOutput: z.array(MessageSchema),
  output: z.string().nullable().optional(),
  messages: z.array(MessageSchema).optional().default([]),
  outputPath: z.string().optional(),
  inputFiles: z.array(z.string()),
  input: z.array(MessageSchema),
  metadata: z.record(z.unknown()).nullable().optional(),
  trace: Trace.nullable().optional(),
  traceSummary: Summary.nullable().optional(),
  tokenUsage: Tokens.nullable().optional(),
  costUsd: z.number().nullable().optional(),
  durationMs: z.number().nullable().optional(),
  ...nullableStrings('startTime', 'endTime', 'fileChanges', 'workspacePath'),
  config: z.record(z.unknown()).nullable().optional(),
});
const ResultSchema = z.object({
  score: z.number().min(0).max(1),
  assertions: z
    .array(z.object({ text: z.string(), passed: z.boolean(), evidence: z.string().optional() }))
    .optional()
    .default([]),
  details: z.record(z.unknown()).optional(),
});

export type Message = z.infer<typeof MessageSchema>;
export type CodeGraderInput = z.infer<typeof InputSchema>;
export type CodeGraderResult = z.input<typeof ResultSchema>;
export type CodeGraderHandler = (
  input: CodeGraderInput,
) => CodeGraderResult | Promise<CodeGraderResult>;

// ── Wire keys: snake_case in, camelCase for the handler ────────────────────────────────
// A key that starts with a capital (a tool's or a proper name) is kept as written.
function camelKey(key: string): string {
  if (/^[A-Z]/.test(key)) return key;
  return key.replace(/_([a-z0-9])/g, (_whole, next: string) => next.toUpperCase());
}

function camelDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelDeep);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[camelKey(key)] = camelDeep(inner);
    return out;
  }
  return value;
}

/** A score outside [0, 1] is pulled to its nearest end; NaN and ±Infinity count as 0. */
function clamp(score: number): number {
  return Number.isFinite(score) ? Math.min(1, Math.max(0, score)) : 0;
}

/**
 * Runs `handler` on the grader's stdin as soon as the grader module loads: parses the JSON,
 * converts its keys to camelCase, validates it, reads `output` from `output_path` when the
 * output was too large to inline, and prints the handler's result (score clamped to [0, 1],
 * `assertions` defaulting to []) as indented JSON. Any failure on the way prints score 0
 * with one failed assertion "Evaluation failed: <message>" and exits 1.
 */
export function defineCodeGrader(handler: CodeGraderHandler): void {
  void grade(handler);
}

async function grade(handler: CodeGraderHandler): Promise<void> {
  try {
    const input = InputSchema.parse(camelDeep(JSON.parse(readFileSync(0, 'utf8'))));
    if (input.outputPath && (input.output === null || input.output === undefined)) {
      const path = input.outputPath;
      let loaded: CodeGraderInput['output'] | undefined;
      Object.defineProperty(input, 'output', {
        get: () => {
          if (loaded === undefined) loaded = JSON.parse(readFileSync(path, 'utf8'));
          return loaded;
        },
        configurable: true,
        enumerable: true,
      });
    }
    const raw = await handler(input);
    const result = ResultSchema.parse({ ...raw, score: clamp(raw.score) });
    console.log(JSON.stringify(result, null, 2));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const failed = { score: 0, assertions: [{ text: `Evaluation failed: ${message}`, passed: false }] };
    console.log(JSON.stringify(failed, null, 2));
    process.exit(1);
  }
}

// ── A grader's access to a target, through the runner's proxy ──────────────────────────

export interface TargetInvokeRequest {
  readonly question: string;
  readonly systemPrompt?: string;
  readonly evalCaseId?: string;
  readonly attempt?: number;
  readonly target?: string;
}

export interface TargetInvokeResponse {
  readonly output: readonly unknown[];
  readonly rawText?: string;
  readonly tokenUsage?: z.infer<typeof Tokens>;
}

export interface TargetInfo {
  readonly targetName: string;
  readonly maxCalls: number;
  readonly callCount: number;
  readonly availableTargets: readonly string[];
}

export interface TargetClient {
  invoke(request: TargetInvokeRequest): Promise<TargetInvokeResponse>;
  invokeBatch(requests: readonly TargetInvokeRequest[]): Promise<readonly TargetInvokeResponse[]>;
  getInfo(): Promise<TargetInfo>;
}

export class TargetNotAvailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetNotAvailableError';
  }
}

export class TargetInvocationError extends Error {
  readonly statusCode?: number;

  constructor(message: string, statusCode?: number) {
    super(message);
    this.name = 'TargetInvocationError';
    this.statusCode = statusCode;
  }
}

/**
 * The client for the target proxy the runner starts for a grader with a `target:` block,
 * from AGENTV_TARGET_PROXY_URL and AGENTV_TARGET_PROXY_TOKEN; undefined when no proxy URL
 * is set (the grader then decides what to score).
 */
export function createTargetClient(): TargetClient | undefined {
  const base = process.env.AGENTV_TARGET_PROXY_URL;
  const token = process.env.AGENTV_TARGET_PROXY_TOKEN;
  if (!base) return undefined;
  if (!token) {
    throw new TargetNotAvailableError(
      'AGENTV_TARGET_PROXY_URL is set but AGENTV_TARGET_PROXY_TOKEN is missing',
    );
  }
  const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` };
  const call = async <T>(path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${base}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) {
      const text = await response.text();
      let message = text || `HTTP ${response.status}`;
      try {
        message = (JSON.parse(text) as { error?: string }).error ?? `HTTP ${response.status}`;
      } catch {
        // not JSON: the body itself (or the status) is the message
      }
      throw new TargetInvocationError(message, response.status);
    }
    return (await response.json()) as T;
  };
  const wire = (request: TargetInvokeRequest) => ({
    question: request.question,
    systemPrompt: request.systemPrompt,
    evalCaseId: request.evalCaseId,
    attempt: request.attempt,
    target: request.target,
  });
  return {
    invoke: (request) => call<TargetInvokeResponse>('/invoke', wire(request)),
    invokeBatch: async (requests) =>
      (await call<{ responses: TargetInvokeResponse[] }>('/invokeBatch', {
        requests: requests.map(wire),
      })).responses,
    getInfo: () => call<TargetInfo>('/info'),
  };
}
