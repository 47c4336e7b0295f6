/** A tiny argv parser: `--flag`, `--key value`, `--key=value`. Unknown flags are an error (typos must not pass silently). */
export function parseArgs(argv: string[], spec: Record<string, 'boolean' | 'string'>): Record<string, string | boolean | undefined> {
  const out: Record<string, string | boolean | undefined> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
    const kind = spec[name];
    if (!kind) throw new Error(`unknown option --${name} (known: ${Object.keys(spec).map((k) => `--${k}`).join(', ')})`);
    if (kind === 'boolean') {
      out[name] = inline === undefined ? true : inline !== 'false';
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`--${name} needs a value`);
    out[name] = value;
  }
  return out;
}

export const numberList = (s: string) =>
  s.split(',').map((x) => {
    const n = Number(x.trim());
    if (!Number.isFinite(n)) throw new Error(`not a number: ${x}`);
    return n;
  });
