import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** A 32-byte key given as 64 hex characters or as base64; `name` is the setting that gave it (named in the error). */
export function parseKey(text: string, name: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
  if (key.length !== 32) throw new Error(`${name} must be 32 bytes: 64 hex characters or base64 (e.g. \`openssl rand -base64 32\`)`);
  return key;
}

/**
 * The 32-byte key in `file`, created (random, mode 0600) when there is none. Processes sharing the data directory
 * share the key: the file is created exclusively ('wx'), so a key another process created a moment ago is never
 * overwritten, and both read the same one.
 */
export function readOrCreateKeyFile(file: string, name: string): Buffer {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    mkdirSync(dirname(file), { recursive: true });
    try {
      writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    text = readFileSync(file, 'utf8');
  }
  return parseKey(text, name);
}
