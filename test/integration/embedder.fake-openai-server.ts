import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trigramHashVector } from '@crs/embeddings/trigram-hashing';

/** What the fake server does with the next request; default: answer with embeddings. */
export type FakeReply =
  | { kind: 'status'; status: number; retryAfter?: string }
  | { kind: 'hang' }
  | { kind: 'wrong-dimensions' };

export interface RecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: { model: string; input: string[]; dimensions?: number };
}

/**
 * A stand-in for an OpenAI-compatible `/v1/embeddings` server on 127.0.0.1 (random port).
 * Embeddings are deterministic (trigram hashing, scaled by 3 so the client must normalize) and returned in
 * reverse order so the client must sort by `index`. Tests queue failures with `nextReplies`.
 */
export class FakeOpenAiServer {
  readonly requests: RecordedRequest[] = [];
  /** Consumed one per request, before the default behaviour. */
  readonly nextReplies: FakeReply[] = [];
  private server?: Server;
  private readonly hanging = new Set<ServerResponse>();

  constructor(readonly dimensions = 64) {}

  get baseUrl(): string {
    const { port } = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (raw += chunk));
      req.on('end', () => this.answer(req.url ?? '', req.headers, raw, res));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  reset(): void {
    this.requests.length = 0;
    this.nextReplies.length = 0;
  }

  private answer(path: string, headers: IncomingHttpHeaders, raw: string, res: ServerResponse): void {
    if (path !== '/v1/embeddings') {
      res.writeHead(404).end('not found');
      return;
    }
    const body = JSON.parse(raw) as RecordedRequest['body'];
    this.requests.push({ path, headers, body });
    const reply = this.nextReplies.shift();
    if (reply?.kind === 'hang') {
      this.hanging.add(res);
      res.on('close', () => this.hanging.delete(res));
      return;
    }
    if (reply?.kind === 'status') {
      res.writeHead(reply.status, reply.retryAfter ? { 'retry-after': reply.retryAfter } : {});
      res.end(JSON.stringify({ error: { message: `fake ${reply.status}` } }));
      return;
    }
    const dims = reply?.kind === 'wrong-dimensions' ? this.dimensions + 1 : this.dimensions;
    const data = body.input.map((text, index) => ({
      object: 'embedding',
      index,
      embedding: Array.from(trigramHashVector(text, dims), (x) => x * 3),
    }));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', model: body.model, data: data.reverse() }));
  }
}
