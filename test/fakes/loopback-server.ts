import Fastify, { type FastifyInstance } from 'fastify';

/** A fake provider API listening on 127.0.0.1 at a port the system picked. */
export interface RunningFake {
  /** Origin of the server, e.g. `http://127.0.0.1:41234`, with no trailing slash. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * A Fastify instance for a fake: no logging, and bodies of any content type accepted as parsed JSON, form fields or
 * raw text, because the clients under test send JSON (Octokit, jira.js, googleapis) or form fields (Slack).
 */
export function createFakeApp(): FastifyInstance {
  const app = Fastify({ logger: false });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  return app;
}

/** Listens on 127.0.0.1 port 0 only, so a test never reaches beyond the machine and never collides on a port. */
export async function listenOnLoopback(app: FastifyInstance): Promise<RunningFake> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('fake server has no TCP address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => app.close(),
  };
}
