import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { detectFormat } from './detect-format';
import { ParseError } from './parse-error';

const fixture = (name: string) => readFileSync(join(__dirname, '../../../../test/fixtures/ingestion', name));
const detect = (filename: string, bytes: Buffer | string = 'hello', contentType?: string) =>
  detectFormat({ bytes: Buffer.from(bytes), filename, contentType });

function expectUnsupported(run: () => unknown): void {
  expect(run).toThrow(ParseError);
  try {
    run();
  } catch (error) {
    expect((error as ParseError).code).toBe('UNSUPPORTED_FORMAT');
  }
}

describe('detectFormat', () => {
  it('trusts a specific content type over the extension', () => {
    expect(detect('notes.txt', 'x', 'text/markdown; charset=utf-8')).toMatchObject({ format: 'markdown', detectedBy: 'content-type', charset: 'utf-8' });
    expect(detect('report', 'x', 'application/pdf')).toMatchObject({ format: 'pdf', detectedBy: 'content-type' });
    expect(detect('x', 'x', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document').format).toBe('docx');
    expect(detect('x', '{}', 'application/ld+json').format).toBe('json');
  });

  it('lets a known extension override generic content types', () => {
    expect(detect('readme.md', 'x', 'text/plain')).toMatchObject({ format: 'markdown', detectedBy: 'extension' });
    expect(detect('data.csv', 'a,b', 'application/vnd.ms-excel')).toMatchObject({ format: 'csv', detectedBy: 'extension' });
    expect(detect('page.HTM', '<p>x</p>', 'application/octet-stream')).toMatchObject({ format: 'html', detectedBy: 'extension' });
    expect(detect('notes', '# Title', 'text/plain')).toMatchObject({ format: 'txt', detectedBy: 'content-type' });
  });

  it('maps extensions, with TSV and JSON Lines hints', () => {
    expect(detect('a.txt').format).toBe('txt');
    expect(detect('a.markdown').format).toBe('markdown');
    expect(detect('a.pdf').format).toBe('pdf');
    expect(detect('a.docx').format).toBe('docx');
    expect(detect('a.tsv')).toMatchObject({ format: 'csv', tabSeparated: true });
    expect(detect('a.csv')).toMatchObject({ format: 'csv', tabSeparated: false });
    expect(detect('a.ndjson')).toMatchObject({ format: 'json', jsonLines: true });
    expect(detect('a', '{}', 'application/x-ndjson')).toMatchObject({ format: 'json', jsonLines: true });
  });

  it('sniffs the content when neither says', () => {
    expect(detect('upload', fixture('sample.pdf'))).toMatchObject({ format: 'pdf', detectedBy: 'content' });
    expect(detect('upload.bin', fixture('sample.docx')).format).toBe('docx');
    expect(detect('upload', ' {"a": [1, 2]} ').format).toBe('json');
    expect(detect('upload', '[not json').format).toBe('txt');
    expect(detect('upload', '<!doctype html><p>hi</p>').format).toBe('html');
    expect(detect('upload', '<div><p>hi</p></div>').format).toBe('html');
    expect(detect('upload', 'Intro\n\n## Install\nrun it').format).toBe('markdown');
    expect(detect('upload', 'Just words. 3 < 4 and 5 > 2.').format).toBe('txt');
  });

  it('rejects formats we do not read', () => {
    expectUnsupported(() => detect('photo.png', fixture('binary.txt'), 'image/png'));
    expectUnsupported(() => detect('old.doc', 'x'));
    expectUnsupported(() => detect('sheet.xlsx', 'x'));
    expectUnsupported(() => detect('x', 'x', 'application/msword'));
    expectUnsupported(() => detect('archive', fixture('not-a-word-document.docx')));
    expectUnsupported(() => detect('blob', fixture('binary.txt')));
    expectUnsupported(() => detect('legacy', Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0])));
  });
});
