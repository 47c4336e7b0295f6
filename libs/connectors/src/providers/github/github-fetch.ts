import http from 'node:http';
import https from 'node:https';
import { RequestError } from '@octokit/request-error';
import { PrivateTargetError } from '@crs/network/public-targets';

/** The `fetch` Octokit calls (`request.fetch`), as narrow as Octokit uses it. */
export type FetchLike = (url: string, init: { method?: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal | null }) => Promise<Response>;

/** Redirects followed within the origin of one call. */
const MAX_REDIRECTS = 3;

export interface GitHubFetchOptions {
  /** The agents connections are made through: public-only agents for a user-given host (`publicOnlyAgents`). */
  httpAgent: http.Agent;
  httpsAgent: https.Agent;
  /** The most bytes of one response body that are read; a longer body fails the call. */
  maxBytes: number;
  /** The deadline of one call, from the first byte sent to the last byte read, redirects included. */
  timeoutMs: number;
}

/** Why the fetch ended a call without an answer for Octokit. */
export type FetchFailure =
  /** `elsewhere`: to another origin, or a call other than GET or HEAD; `too-many`: more than three within the origin */
  | { kind: 'redirect'; status: number; location: string; origin: string; why: 'elsewhere' | 'too-many' }
  | { kind: 'too-large'; limit: number }
  | { kind: 'deadline'; timeoutMs: number }
  | { kind: 'private-target'; detail: string };

/**
 * A call the fetch ended itself. A RequestError, so Octokit passes it through unchanged (it wraps any other error in
 * a RequestError 500, which the retry plugin would retry); its status is the redirect's, or 0, which neither the
 * retry nor the throttling plugin retries. `githubError` turns it into the ProviderError it stands for.
 */
export class GitHubFetchError extends RequestError {
  constructor(
    readonly failure: FetchFailure,
    message: string,
    request: { method: string; url: string; headers: Record<string, string> },
  ) {
    super(message, failure.kind === 'redirect' ? failure.status : 0, { request: { ...request, method: request.method as RequestMethod } });
  }
}

/** A response read whole. */
interface Answer {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

class TooLarge extends Error {}

type RequestMethod = ConstructorParameters<typeof RequestError>[2]['request']['method'];

/** One exchange over `agent`, its body read whole but never past `maxBytes`; `signal` ends it at any point. */
function exchange(target: URL, method: string, headers: Record<string, string>, body: unknown, agent: http.Agent, maxBytes: number, signal: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const lib = target.protocol === 'https:' ? https : http;
    const req = lib.request(target, { method, headers, agent, signal }, (res) => {
      const fail = (err: Error) => {
        reject(err);
        res.destroy();
        req.destroy();
      };
      if (Number(res.headers['content-length']) > maxBytes) return fail(new TooLarge());
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) fail(new TooLarge());
        else chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 500, statusText: res.statusMessage ?? '', headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
      res.on('close', () => {
        if (!res.complete) reject(new Error('the connection closed before the response was complete'));
      });
    });
    req.on('error', reject);
    if (typeof body === 'string' || body instanceof Uint8Array) req.end(body);
    else req.end();
  });
}

/**
 * The `fetch` every GitHub call goes through: `node:http` / `node:https` over the given agents (for a user-given
 * host, public-only agents, which check every connection's address, a literal one included, as it connects; Node's
 * global fetch takes no agent). Each call has an overall deadline and reads at most `maxBytes` of a body. A redirect is
 * followed only within the origin the call was made to (GET and HEAD, at most three), through the same agent, so the
 * token is never sent to another host; a redirect anywhere else ends the call with a GitHubFetchError naming where it
 * pointed. The caller's abort ends the call as an AbortError.
 */
export function githubFetch(opts: GitHubFetchOptions): FetchLike {
  return async (url, init) => {
    const method = (init.method ?? 'GET').toUpperCase();
    const headers = init.headers ?? {};
    const request = { method, url, headers };
    const start = new URL(url);
    const deadline = AbortSignal.timeout(opts.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    let target = start;
    for (let hop = 0; ; hop++) {
      let answer: Answer;
      try {
        answer = await exchange(target, method, headers, init.body, target.protocol === 'https:' ? opts.httpsAgent : opts.httpAgent, opts.maxBytes, signal);
      } catch (err) {
        if (init.signal?.aborted) throw new DOMException('The operation was aborted.', 'AbortError');
        if (deadline.aborted) throw new GitHubFetchError({ kind: 'deadline', timeoutMs: opts.timeoutMs }, `no complete answer within ${opts.timeoutMs} ms`, request);
        if (err instanceof TooLarge) throw new GitHubFetchError({ kind: 'too-large', limit: opts.maxBytes }, `an answer over ${opts.maxBytes} bytes`, request);
        if (err instanceof PrivateTargetError) throw new GitHubFetchError({ kind: 'private-target', detail: err.message }, err.message, request);
        throw err;
      }
      const location = answer.headers.location;
      if (answer.status >= 300 && answer.status < 400 && location !== undefined) {
        let next: URL | undefined;
        try {
          next = new URL(location, target);
        } catch {
          next = undefined;
        }
        const within = next !== undefined && next.origin === start.origin && (method === 'GET' || method === 'HEAD');
        if (!within || next === undefined || hop >= MAX_REDIRECTS) {
          const shown = location.slice(0, 500);
          throw new GitHubFetchError({ kind: 'redirect', status: answer.status, location: shown, origin: start.origin, why: within ? 'too-many' : 'elsewhere' }, `a redirect to ${shown}`, request);
        }
        target = next;
        continue;
      }
      const out = new Headers();
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
      }
      const empty = answer.status === 204 || answer.status === 205 || answer.status === 304 || method === 'HEAD';
      return new Response(empty ? null : answer.body, { status: answer.status, statusText: answer.statusText, headers: out });
    }
  };
}
