import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import type { LookupFn } from '@crs/network/address-policy';
import { publicOnlyLookup } from '@crs/network/public-targets';

/** The `fetch` Octokit calls (`request.fetch`), as narrow as Octokit uses it. */
export type FetchLike = (url: string, init: { method?: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal | null; redirect?: string }) => Promise<Response>;

const MAX_REDIRECTS = 3;

/**
 * A `fetch` for Octokit that connects to public addresses only: every connection resolves the API host through
 * `publicOnlyLookup`, so a name that resolves to a loopback, private, link-local or reserved address when the socket
 * connects (a DNS answer that changed after the check made before the first call) is refused. Built on `node:http` /
 * `node:https` because Node's global fetch takes no per-connection lookup; redirects are followed (GET and HEAD
 * only, at most three), each through the same check.
 */
export function publicOnlyFetch(lookup?: LookupFn): FetchLike {
  return nodeFetch(publicOnlyLookup(lookup));
}

/** `fetch` over `node:http` / `node:https`, resolving names with `connectLookup` on every connection. */
export function nodeFetch(connectLookup: LookupFunction): FetchLike {
  const once = (target: URL, init: Parameters<FetchLike>[1]): Promise<http.IncomingMessage> =>
    new Promise((resolve, reject) => {
      const lib = target.protocol === 'https:' ? https : http;
      const req = lib.request(target, { method: init.method ?? 'GET', headers: init.headers, agent: false, lookup: connectLookup, ...(init.signal ? { signal: init.signal } : {}) }, resolve);
      req.on('error', reject);
      if (typeof init.body === 'string' || init.body instanceof Uint8Array) req.end(init.body);
      else req.end();
    });

  return async (url, init) => {
    let target = new URL(url);
    for (let hop = 0; ; hop++) {
      const res = await once(target, init);
      const status = res.statusCode ?? 500;
      const location = res.headers.location;
      const method = (init.method ?? 'GET').toUpperCase();
      if (status >= 300 && status < 400 && location && hop < MAX_REDIRECTS && (method === 'GET' || method === 'HEAD') && init.redirect !== 'manual') {
        res.resume();
        target = new URL(location, target);
        continue;
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
      }
      const empty = status === 204 || status === 205 || status === 304 || method === 'HEAD';
      if (empty) res.resume();
      const body = empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
      return new Response(body, { status, statusText: res.statusMessage ?? '', headers });
    }
  };
}
