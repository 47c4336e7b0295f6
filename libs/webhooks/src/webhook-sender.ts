import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { SendResult } from '@crs/domain/webhooks/delivery.decider';
import { DeliveryTargetError, type WebhookUrlGuard } from './webhook-url-guard';

/** Response bytes read (and thrown away) before the connection is cut. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export interface SendRequest {
  url: string;
  body: Buffer;
  headers: Record<string, string>;
  timeoutMs: number;
  /** aborting cuts the connection (a dispatcher that dies mid-delivery) */
  signal?: AbortSignal;
}

/**
 * One POST to a webhook receiver: the URL is checked (and resolved) by the guard right before, the socket
 * connects to exactly the checked address, redirects are not followed (a 3xx is a failed attempt), and the
 * whole exchange up to the response status is bounded by the time-out. Any 2xx is a success.
 */
export class WebhookSender {
  constructor(private readonly guard: WebhookUrlGuard) {}

  async send(req: SendRequest): Promise<SendResult> {
    const started = Date.now();
    const done = (r: Omit<SendResult, 'durationMs'>): SendResult => ({ ...r, durationMs: Date.now() - started });
    let target;
    try {
      target = await this.guard.resolveForDelivery(req.url);
    } catch (err) {
      if (err instanceof DeliveryTargetError) return done({ ok: false, statusCode: null, errorCode: err.code, errorMessage: err.message });
      throw err;
    }
    const pinned: LookupFunction = (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
    const remaining = Math.max(1, req.timeoutMs - (Date.now() - started));
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      const finish = (r: Omit<SendResult, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(done(r));
      };
      const lib = target.url.protocol === 'https:' ? https : http;
      const request = lib.request(target.url, {
        method: 'POST',
        headers: { ...req.headers, 'content-length': String(req.body.length) },
        agent: false,
        lookup: pinned,
        signal: req.signal,
      });
      const timer = setTimeout(() => {
        finish({ ok: false, statusCode: null, errorCode: 'TIMEOUT', errorMessage: `no response within ${req.timeoutMs} ms` });
        request.destroy();
      }, remaining);
      request.on('response', (res) => {
        const status = res.statusCode ?? 0;
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on('error', () => undefined);
        res.resume();
        const ok = status >= 200 && status < 300;
        const redirect = status >= 300 && status < 400;
        finish({
          ok,
          statusCode: status,
          errorCode: ok ? null : `HTTP_${status}`,
          errorMessage: ok ? null : redirect ? `receiver answered ${status}; redirects are not followed` : `receiver answered ${status}`,
        });
      });
      request.on('error', (err: NodeJS.ErrnoException) => {
        const aborted = err.name === 'AbortError';
        finish({ ok: false, statusCode: null, errorCode: aborted ? 'ABORTED' : 'CONNECTION_FAILED', errorMessage: `${err.code ? `${err.code}: ` : ''}${err.message}` });
      });
      request.end(req.body);
    });
  }
}
