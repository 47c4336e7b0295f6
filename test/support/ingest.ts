import type { TestApp } from './test-app';

/** Builds a multipart body by hand (no client library needed): text fields and files. */
export function multipart(fields: Record<string, string>, files: { field?: string; filename: string; contentType?: string; content: Buffer | string }[] = []) {
  const boundary = `----crs${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const f of files) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${f.field ?? 'documents'}"; filename="${f.filename}"\r\nContent-Type: ${f.contentType ?? 'application/octet-stream'}\r\n\r\n`));
    parts.push(Buffer.isBuffer(f.content) ? f.content : Buffer.from(f.content));
    parts.push(Buffer.from('\r\n'));
  }
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

export async function postMultipart(t: TestApp, url: string, fields: Record<string, string>, files: Parameters<typeof multipart>[1] = [], headers: Record<string, string> = {}) {
  const { payload, contentType } = multipart(fields, files);
  const res = await t.app.inject({ method: 'POST', url, payload, headers: { authorization: `Bearer ${t.key}`, 'api-version': '2', 'content-type': contentType, ...headers } });
  let body: any;
  try {
    body = res.json();
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, body, headers: res.headers, raw: res.body };
}

export async function ingestMemories(t: TestApp, database: string, memories: unknown[], extra: Record<string, string> = {}) {
  return postMultipart(t, '/context/ingest', { type: 'memory', database, memories: JSON.stringify(memories), ...extra });
}

/** Polls /context/status until every id reaches one of the statuses (default: completed). */
export async function waitForStatus(t: TestApp, database: string, ids: string[], statuses = ['completed'], timeoutMs = 30_000, collection?: string) {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    const q = new URLSearchParams({ database, ...(collection ? { collection } : {}) });
    for (const id of ids) q.append('ids', id);
    last = await t.request('GET', `/context/status?${q}`);
    const st = last.body?.data?.statuses;
    if (st && st.length >= ids.length && st.every((s: any) => statuses.includes(s.indexing_status))) return st;
    await new Promise((r) => setTimeout(r, 30));
  }
  throw new Error(`items ${ids.join(',')} did not reach ${statuses.join('/')}: ${JSON.stringify(last?.body)}`);
}

/** Waits until the database's deletion is complete (DatabaseDeleted is in the log). */
export async function waitForDatabaseDeleted(t: TestApp, databaseId: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await t.store.readAll()).some((e) => e.type === 'DatabaseDeleted' && e.data.databaseId === databaseId)) {
    if (Date.now() > deadline) throw new Error(`database ${databaseId} was not deleted within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
