/**
 * U+0000 cannot be stored in Postgres text or jsonb (the log and every read model), so a request carrying it in a
 * field that is stored is refused with 400 rather than failing with 500 at the append (which invites retries of a
 * request that can never succeed). Content (memory text, pairs, app content, files) is stored as bytes and may hold it.
 */
export function nulCharacterPath(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path || 'value' : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulCharacterPath(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if (key.includes('\u0000')) return at;
      const found = nulCharacterPath(v, at);
      if (found) return found;
    }
  }
  return null;
}

export const nulCharacterMessage = (path: string) => `${path} contains the NUL character (U+0000), which cannot be stored; remove it`;
