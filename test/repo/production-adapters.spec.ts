import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * `npm run test:production-adapters` cannot run here (no Docker engine). What can be checked without one: the
 * compose profile and the runner agree (servers, ports, URLs), the runner refuses plainly without Docker, and a
 * production adapter's suite fails rather than skips when the runner requires it and its URL is missing.
 */
const root = join(__dirname, '..', '..');
const runnerPath = join(root, 'bin/test-production-adapters.js');
const runner = require(runnerPath) as {
  SERVERS: { eventstore: string; elasticsearch: string };
  ADAPTER_ENV: Record<string, string>;
  CONTRACT_SUITES: string[];
};
const compose = parse(readFileSync(join(root, 'docker/compose.yml'), 'utf8')) as {
  services: Record<string, { profiles?: string[]; ports?: string[]; environment?: Record<string, string>; healthcheck?: { test: unknown } }>;
};

describe('npm run test:production-adapters', () => {
  it('is the documented command', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['test:production-adapters']).toBe('node bin/test-production-adapters.js');
  });

  it('starts servers of the adapter-tests profile only, on the ports its URLs name, each with a health check', () => {
    const eventstore = compose.services[runner.SERVERS.eventstore];
    const elasticsearch = compose.services[runner.SERVERS.elasticsearch];
    for (const service of [eventstore, elasticsearch]) {
      expect(service.profiles).toEqual(['adapter-tests']);
      expect(service.healthcheck?.test).toBeDefined();
    }
    expect(eventstore.environment?.KURRENTDB_MEM_DB).toBe('true');
    const esdb = new URL(runner.ADAPTER_ENV.EVENTSTORE_URL);
    const es = new URL(runner.ADAPTER_ENV.ELASTICSEARCH_URL);
    expect(eventstore.ports).toEqual([`${esdb.hostname}:${esdb.port}:2113`]);
    expect(elasticsearch.ports).toEqual([`${es.hostname}:${es.port}:9200`]);
    // The production services stay out of the profile: `docker compose up` starts them as before.
    expect(compose.services.eventstore.profiles).toBeUndefined();
  });

  it('runs both production contract suites', () => {
    expect(runner.CONTRACT_SUITES).toEqual(['test/integration/event-store.eventstoredb.int.ts', 'test/integration/search-index.elasticsearch.int.ts']);
    for (const file of runner.CONTRACT_SUITES) expect(existsSync(join(root, file))).toBe(true);
    expect(runner.ADAPTER_ENV.CRS_PRODUCTION_ADAPTERS_REQUIRED).toBe('true');
  });

  it('says plainly that it needs Docker when there is none, and runs nothing', () => {
    const noDocker = mkdtempSync(join(tmpdir(), 'crs-no-docker-'));
    const run = spawnSync(process.execPath, [runnerPath], { cwd: root, env: { ...process.env, PATH: noDocker }, encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('needs Docker with Compose v2');
    expect(run.stdout).not.toContain('PASS');
  });

  it.each([
    ['test/integration/event-store.eventstoredb.int.ts', 'EVENTSTORE_URL is not set'],
    ['test/integration/search-index.elasticsearch.int.ts', 'ELASTICSEARCH_URL is not set'],
  ])('%s fails instead of skipping when the run requires it and its URL is missing', (file, message) => {
    const env: NodeJS.ProcessEnv = { ...process.env, CRS_PRODUCTION_ADAPTERS_REQUIRED: 'true', TEST_DATABASE_URL: process.env.CRS_TEST_PG_URL };
    delete env.EVENTSTORE_URL;
    delete env.ELASTICSEARCH_URL;
    delete env.CRS_TEST_DATA_ROOT; // the outer run's Postgres directory: not the nested run's to remove
    const run = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), '--runInBand', file], { cwd: root, env, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(message);
  }, 60_000);
});
