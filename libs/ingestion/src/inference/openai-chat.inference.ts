import { setTimeout as delay } from 'node:timers/promises';
import { InferenceError, type Inference, type InferenceInput, type InferredFact } from './inference.port';

export interface OpenAiChatInferenceOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
  maxRetries?: number;
  fetch?: typeof fetch;
}

const SYSTEM = `You extract the underlying preferences, traits and facts about the user from their input.
Answer with a JSON object {"facts": [{"kind": "preference" | "trait" | "fact", "text": "<one standalone statement about the user, third person, using their name when given>"}]}.
Return an empty list when there is nothing durable to remember.`;

/** Inference through any OpenAI-compatible /v1/chat/completions endpoint (LLM_BASE_URL, LLM_MODEL, LLM_API_KEY), JSON output. */
export class OpenAiChatInference implements Inference {
  readonly modelId: string;
  private readonly url: string;

  constructor(private readonly options: OpenAiChatInferenceOptions) {
    this.modelId = `openai-chat:${options.model}`;
    const base = options.baseUrl.replace(/\/+$/, '');
    this.url = `${base.endsWith('/v1') ? base : `${base}/v1`}/chat/completions`;
  }

  async extract(input: InferenceInput): Promise<InferredFact[]> {
    const content = input.pairs ? input.pairs.map((p) => `User: ${p.user}\nAssistant: ${p.assistant}`).join('\n\n') : input.text ?? '';
    const instructions = [input.userName ? `The user's name is ${input.userName}.` : '', input.customInstructions ? `Instructions: ${input.customInstructions}` : ''].filter(Boolean).join('\n');
    const body = JSON.stringify({
      model: this.options.model,
      temperature: 0,
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: instructions ? `${SYSTEM}\n${instructions}` : SYSTEM },
        { role: 'user', content },
      ],
    });
    const retries = this.options.maxRetries ?? 3;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.call(body);
      } catch (err) {
        const retryable = err instanceof InferenceError ? err.code !== 'bad_response' : true;
        if (!retryable || attempt >= retries) throw err instanceof InferenceError ? err : new InferenceError(String((err as Error).message), 'remote_failed');
        await delay(Math.min(8000, 250 * 2 ** attempt));
      }
    }
  }

  private async call(body: string): Promise<InferredFact[]> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.options.timeoutMs ?? 60_000);
    let res: Response;
    try {
      res = await (this.options.fetch ?? fetch)(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
        body,
        signal: controller.signal,
      });
    } catch (err) {
      throw new InferenceError(`chat endpoint unreachable: ${(err as Error).message}`, controller.signal.aborted ? 'remote_timeout' : 'remote_failed');
    } finally {
      clearTimeout(timer);
    }
    if (res.status === 429 || res.status >= 500) throw new InferenceError(`chat endpoint answered ${res.status}`, 'remote_failed');
    if (!res.ok) throw new InferenceError(`chat endpoint answered ${res.status}: ${(await res.text()).slice(0, 200)}`, 'bad_response');
    const json: any = await res.json().catch(() => null);
    const text = json?.choices?.[0]?.message?.content;
    let parsed: any;
    try {
      parsed = typeof text === 'string' ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (!parsed || !Array.isArray(parsed.facts)) throw new InferenceError('chat endpoint did not return {"facts": [...]}', 'bad_response');
    return parsed.facts
      .filter((f: any) => f && typeof f.text === 'string' && f.text.trim() && ['preference', 'trait', 'fact'].includes(f.kind))
      .map((f: any) => ({ kind: f.kind, text: f.text.trim().slice(0, 2000) }));
  }
}

export function createInference(config: { baseUrl?: string; model?: string; apiKey?: string }): Inference {
  if (config.baseUrl) {
    if (!config.model) throw new Error('LLM_BASE_URL needs LLM_MODEL');
    return new OpenAiChatInference({ baseUrl: config.baseUrl, model: config.model, apiKey: config.apiKey });
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { RuleBasedInference } = require('./rule-based.inference') as typeof import('./rule-based.inference');
  return new RuleBasedInference();
}
