/**
 * Length in characters (Unicode code points), as the spec counts its limits ("counted in characters, not bytes"): an
 * emoji is one character, not the two UTF-16 units `String.length` counts. A loop, not `[...s].length`, so a text of a
 * million characters costs no array.
 */
export function characterLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}
