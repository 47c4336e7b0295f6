/**
 * One shape of text for every format, so chunk boundaries depend only on content: Unicode NFC,
 * `\n` line ends, form feeds as paragraph breaks, control characters, BOMs and soft hyphens removed,
 * trailing spaces cut, runs of blank lines collapsed to one, and no surrounding blank space.
 */
export function normalizeText(text: string): string {
  return text
    .normalize('NFC')
    .replace(/\r\n?/g, '\n')
    .replace(/\f/g, '\n\n')
    .replace(/[\u0000-\u0008\u000b\u000e-\u001f\u007f\u00ad\ufeff]/g, '')
    .replace(/[ \t\v\u00a0]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\s*\n/, '')
    .trimEnd();
}
