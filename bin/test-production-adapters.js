#!/usr/bin/env node
// `npm run test:production-adapters`: starts KurrentDB (EventStoreDB) and Elasticsearch from docker/compose.yml's
// `adapter-tests` profile, runs both production adapters' contract suites and then every e2e file against them, and
// reports each. The e2e files share one server, and KurrentDB has no per-test database: its container is made anew
// (an empty in-memory log) before each file, so no file replays another's events. Needs Docker with Compose v2.
'use strict';
const { spawnSync } = require('node:child_process');
const { readdirSync } = require('node:fs');
const { join } = require('node:path');
const { parseArgs } = require('node:util');

const root = join(__dirname, '..');
const COMPOSE = ['compose', '-f', join(root, 'docker/compose.yml'), '--profile', 'adapter-tests'];
const SERVERS = { eventstore: 'eventstore-test', elasticsearch: 'elasticsearch-test' };
// The ports docker/compose.yml publishes for the two servers.
const ADAPTER_ENV = {
  EVENTSTORE_URL: 'kurrentdb://127.0.0.1:2114?tls=false',
  ELASTICSEARCH_URL: 'http://127.0.0.1:9201',
  // A suite whose URL is missing fails instead of skipping itself.
  CRS_PRODUCTION_ADAPTERS_REQUIRED: 'true',
};
const CONTRACT_SUITES = ['test/integration/event-store.eventstoredb.int.ts', 'test/integration/search-index.elasticsearch.int.ts'];

module.exports = { COMPOSE, SERVERS, ADAPTER_ENV, CONTRACT_SUITES };
if (require.main === module) main();

function main() {
  const { values } = parseArgs({
    options: {
      'keep-servers': { type: 'boolean', default: false },
      e2e: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(`npm run test:production-adapters -- [--e2e <substring of an e2e file name>] [--keep-servers]
  Starts ${Object.values(SERVERS).join(' and ')} (docker/compose.yml, profile adapter-tests), runs
  ${CONTRACT_SUITES.join(' and ')}, then each test/e2e file (or those matching --e2e)
  with EVENTSTORE_URL and ELASTICSEARCH_URL set; stops the servers unless --keep-servers.`);
    return;
  }

  const docker = (...args) => spawnSync('docker', [...COMPOSE, ...args], { cwd: root, stdio: 'inherit' });
  const ready = spawnSync('docker', ['compose', 'version'], { cwd: root, stdio: 'ignore' });
  if (ready.error || ready.status !== 0) {
    console.error('test:production-adapters needs Docker with Compose v2 (`docker compose version` failed); nothing was run.');
    process.exit(2);
  }

  const jest = (files) =>
    spawnSync(process.execPath, [require.resolve('jest/bin/jest'), '--runInBand', ...files], { cwd: root, stdio: 'inherit', env: { ...process.env, ...ADAPTER_ENV } }).status === 0;

  const results = [];
  try {
    if (docker('up', '-d', '--wait', SERVERS.eventstore, SERVERS.elasticsearch).status !== 0) throw new Error('the servers did not become healthy');
    results.push(['contract suites (EventStoreDB, Elasticsearch)', jest(CONTRACT_SUITES)]);
    const e2e = readdirSync(join(root, 'test/e2e'))
      .filter((f) => f.endsWith('.e2e.ts') && (!values.e2e || f.includes(values.e2e)))
      .sort();
    for (const file of e2e) {
      docker('rm', '--stop', '--force', SERVERS.eventstore);
      if (docker('up', '-d', '--wait', SERVERS.eventstore).status !== 0) throw new Error(`${SERVERS.eventstore} did not become healthy again`);
      results.push([`test/e2e/${file}`, jest([`test/e2e/${file}`])]);
    }
  } catch (err) {
    results.push([String(err.message ?? err), false]);
  } finally {
    if (!values['keep-servers']) docker('down', '--volumes');
  }

  console.log('\nProduction adapters (KurrentDB + Elasticsearch):');
  for (const [what, passed] of results) console.log(`  ${passed ? 'PASS' : 'FAIL'}  ${what}`);
  const failed = results.filter(([, passed]) => !passed).length;
  console.log(`${results.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
