import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive } from '@crs/persistence/embedded-postgres';

/** One service per data directory; a crs command shares a running one. */
describe('embedded Postgres ownership', () => {
  jest.setTimeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'crs-owner-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a second service on the same data directory is refused; a crs command shares the running one and never stops it; a pid reused after a restart is no owner', async () => {
    // In a plain Node process: the embedded-postgres package is ESM-only, which jest's module system cannot import.
    const script = `
      const { startEmbeddedPostgres } = require(${JSON.stringify(join(process.cwd(), 'dist/libs/persistence/src/embedded-postgres.js'))});
      (async () => {
        const dir = ${JSON.stringify(dir)};
        const out = {};
        const service = await startEmbeddedPostgres({ dataDir: dir });
        out.owned = service.owned;
        out.second = await startEmbeddedPostgres({ dataDir: dir }).then(() => 'started', (e) => e.message);
        const cli = await startEmbeddedPostgres({ dataDir: dir, role: 'cli' });
        out.cli = { owned: cli.owned, samePort: cli.port === service.port };
        await cli.stop();
        const again = await startEmbeddedPostgres({ dataDir: dir, role: 'cli' });
        out.stillRunning = again.port === service.port;
        await service.stop();
        // A command that started Postgres itself: neither a second command nor a service may run on it.
        const command = await startEmbeddedPostgres({ dataDir: dir, role: 'cli' });
        out.commandOwned = command.owned;
        out.secondCommand = await startEmbeddedPostgres({ dataDir: dir, role: 'cli' }).then(() => 'started', (e) => e.message);
        out.serviceAfterCommand = await startEmbeddedPostgres({ dataDir: dir }).then(() => 'started', (e) => e.message);
        await command.stop();
        // A restarted container: the owner file names this very pid, written by the earlier process that had it.
        const earlier = await startEmbeddedPostgres({ dataDir: dir });
        require('node:fs').writeFileSync(require('node:path').join(dir, 'postgres.owner'), process.pid + ' service 12345');
        const reused = await startEmbeddedPostgres({ dataDir: dir }).then((h) => h, (e) => e.message);
        out.pidReused = typeof reused === 'string' ? reused : { owned: reused.owned };
        await (typeof reused === 'string' ? earlier : reused).stop();
        // A postmaster.pid left by a killed Postgres whose pid another process has now: neither stopped nor obeyed.
        const stranger = require('node:child_process').spawn('sleep', ['30']);
        const pidFile = require('node:path').join(dir, 'postgres', 'postmaster.pid');
        require('node:fs').writeFileSync(pidFile, [stranger.pid, require('node:path').join(dir, 'postgres'), '0', '5999', '', '127.0.0.1', ''].join('\\n'));
        const afterReuse = await startEmbeddedPostgres({ dataDir: dir }).then((h) => h, (e) => e.message);
        out.postmasterPidReused = typeof afterReuse === 'string' ? afterReuse : { owned: afterReuse.owned, strangerAlive: stranger.exitCode === null && stranger.signalCode === null };
        if (typeof afterReuse !== 'string') await afterReuse.stop();
        stranger.kill();
        console.log(JSON.stringify(out));
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect({ code, err: code === 0 ? '' : err }).toEqual({ code: 0, err: '' });
    const result = JSON.parse(out.trim().split('\n').pop()!);
    expect(result).toEqual({
      owned: true,
      second: expect.stringMatching(/is in use: another service \(pid \d+\) runs its Postgres/),
      cli: { owned: false, samePort: true },
      stillRunning: true,
      commandOwned: true,
      secondCommand: expect.stringMatching(/is in use: a crs command \(pid \d+\).*Run this command once that command has finished/),
      serviceAfterCommand: expect.stringMatching(/is in use: a crs command \(pid \d+\).*Run this service once that command has finished/),
      pidReused: { owned: true },
      postmasterPidReused: { owned: true, strangerAlive: true },
    });
  });

  it('a killed process not yet reaped (a zombie) is not alive', async () => {
    // sh starts a short sleep in the background and replaces itself with a long one, which never reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0.05 & echo $!; exec sleep 5'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const pid = Number(await new Promise<string>((r) => parent.stdout.once('data', (d) => r(String(d).trim()))));
    await new Promise((r) => setTimeout(r, 500));
    try {
      expect(() => process.kill(pid, 0)).not.toThrow(); // the pid still exists ...
      expect(isAlive(pid)).toBe(false); // ... as a zombie
      expect(isAlive(parent.pid!)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
