import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from './parse-document';
import { ParseError, type ParseErrorCode } from './parse-error';
import JSZip from 'jszip';
import { DOCX_MAX_UNZIPPED_BYTES, parseDocx, zipInflatesWithin, zipUncompressedBytes } from './parse-docx';

const fixture = (name: string) => readFileSync(join(__dirname, '../../../../test/fixtures/ingestion', name));
const parseFixture = (name: string, contentType?: string) => parseDocument({ bytes: fixture(name), filename: name, contentType });
const parseText = (text: string | Buffer, filename: string, contentType?: string) =>
  parseDocument({ bytes: Buffer.isBuffer(text) ? text : Buffer.from(text), filename, contentType });

async function expectParseError(promise: Promise<unknown>, code: ParseErrorCode): Promise<ParseError> {
  const error = await promise.then(
    () => {
      throw new Error(`expected a ParseError ${code}`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ParseError);
  expect((error as ParseError).code).toBe(code);
  expect((error as ParseError).message.length).toBeGreaterThan(10);
  return error as ParseError;
}

describe('parseDocument: formats', () => {
  it('reads plain text as UTF-8', async () => {
    await expect(parseFixture('sample.txt')).resolves.toEqual({
      text: 'Meeting notes, 12 March.\n\nThe team agreed to move the launch to April. Dr. Rivera will update the roadmap, e.g. the milestones page.\n\nOpen question: who owns the billing migration?',
      isMarkdown: false,
      title: null,
      format: 'txt',
    });
  });

  it('reads Markdown as is, titled by its front matter', async () => {
    const doc = await parseFixture('sample.md');
    expect(doc).toMatchObject({ format: 'markdown', isMarkdown: true, title: 'Deployment Handbook' });
    expect(doc.text).toBe(fixture('sample.md').toString('utf8').trimEnd());
    await expect(parseText('intro\n\n# First\n\n# Second', 'a.md')).resolves.toMatchObject({ title: 'First' });
  });

  it('reads HTML into Markdown-ish text without scripts, styles or URLs', async () => {
    await expect(parseFixture('sample.html')).resolves.toEqual({
      text: '# Travel policy\n\nBook flights through the travel portal.\n\n## Hotels\n\n- Up to 150 EUR per night\n- Breakfast included\n\n```\nexpense --category hotel --amount 120\n```',
      isMarkdown: true,
      title: 'Travel Policy & Expenses',
      format: 'html',
    });
    await expect(parseText('<h1>Only &eacute;t&eacute;</h1><p>x</p>', 'a.html')).resolves.toMatchObject({ title: 'Only été' });
  });

  it('reads PDF text per page, with the page count and metadata title', async () => {
    await expect(parseFixture('sample.pdf')).resolves.toEqual({
      text: 'Quarterly Report\nRevenue grew by twelve percent in the third quarter.\nThe growth came from the new subscription plans.\n\nOutlook\nWe expect steady demand for the rest of the year.',
      isMarkdown: false,
      title: 'Quarterly Report Q3',
      format: 'pdf',
      pages: 2,
    });
  });

  it('reads DOCX headings, paragraphs and tables', async () => {
    await expect(parseFixture('sample.docx')).resolves.toEqual({
      text: '# Onboarding Guide\n\n# Getting started\n\nWelcome to the team. Your laptop arrives on the first day.\n\n## Accounts\n\nAsk the help desk for a VPN account.\n\nTool   Owner\nWiki   Docs team',
      isMarkdown: true,
      title: 'Onboarding Guide',
      format: 'docx',
    });
  });

  it('reads CSV rows as "header: value" lines, leaving empty cells out', async () => {
    await expect(parseFixture('sample.csv')).resolves.toEqual({
      text: 'name: Ada Lovelace; role: Engineer; city: London\n\nname: Grace Hopper; role: Rear Admiral, USN; city: Arlington\n\nname: Linus; city: Helsinki',
      isMarkdown: false,
      title: null,
      format: 'csv',
    });
  });

  it('guesses the CSV delimiter, honours TSV, and names columns of headerless files', async () => {
    await expect(parseFixture('semicolon.csv')).resolves.toMatchObject({
      text: 'id: 1; product: Widget; price: 9.99\n\nid: 2; product: Gadget with "quotes"; price: 19.50',
    });
    await expect(parseText('a\tb\n1\t2, 3\n', 'x.tsv')).resolves.toMatchObject({ text: 'a: 1; b: 2, 3' });
    await expect(parseText('1,2\n3,4\n', 'x.csv')).resolves.toMatchObject({ text: 'column 1: 1; column 2: 2\n\ncolumn 1: 3; column 2: 4' });
  });

  it('reads JSON as "path: value" lines, one block per top-level entry', async () => {
    await expect(parseFixture('sample.json')).resolves.toEqual({
      text: 'project: Atlas\n\nowners[0].name: Ada\nowners[0].email: ada@example.com\nowners[1].name: Grace\n\nsettings["retention days"]: 30\nsettings.public: false\nsettings.tags: []',
      isMarkdown: false,
      title: null,
      format: 'json',
    });
    await expect(parseText('[{"a": 1}, "two"]', 'x.json')).resolves.toMatchObject({ text: '[0].a: 1\n\n[1]: two' });
    await expect(parseText('{"a": "x"}\n\n{"a": null}\n', 'x.jsonl')).resolves.toMatchObject({ text: '[0].a: x\n\n[1].a: null' });
  });

  it('normalizes line ends, byte-order marks and blank runs', async () => {
    const doc = await parseText('\ufeffone  \r\ntwo\r\n\r\n\r\n\r\nthree\u0000\n', 'a.txt');
    expect(doc.text).toBe('one\ntwo\n\nthree');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('héllo', 'utf16le')]);
    await expect(parseText(utf16, 'a.txt')).resolves.toMatchObject({ text: 'héllo' });
  });

  it('decodes a declared charset', async () => {
    await expect(parseFixture('latin1.txt', 'text/plain; charset=ISO-8859-1')).resolves.toMatchObject({ text: 'Café crème brûlée' });
    const html = Buffer.from('<html><head><meta charset="windows-1252"><title>Caf\xe9</title></head><body>x</body></html>', 'latin1');
    await expect(parseText(html, 'a.html')).resolves.toMatchObject({ title: 'Café' });
  });
});

describe('parseDocument: failures', () => {
  it('rejects damaged PDFs as CORRUPT_FILE', async () => {
    const error = await expectParseError(parseFixture('truncated.pdf'), 'CORRUPT_FILE');
    expect(error.format).toBe('pdf');
    expect(error.cause).toBeDefined();
    await expectParseError(parseText('%PDF-1.7 and then nothing useful', 'a.pdf'), 'CORRUPT_FILE');
  });

  it('reports password-protected PDFs', async () => {
    await expectParseError(parseFixture('encrypted.pdf'), 'ENCRYPTED_PDF');
  });

  it('reports a PDF without a text layer as empty', async () => {
    await expectParseError(parseFixture('no-text.pdf'), 'EMPTY_DOCUMENT');
  });

  it('rejects DOCX files that are not Word documents', async () => {
    const error = await expectParseError(parseFixture('random-bytes.docx'), 'CORRUPT_FILE');
    expect(error.message).not.toMatch(/jszip|central directory/i);
    await expectParseError(parseFixture('not-a-word-document.docx'), 'CORRUPT_FILE');
    await expectParseError(parseFixture('empty.docx'), 'EMPTY_DOCUMENT');
    await expectParseError(parseText(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 1, 2, 3]), 'locked.docx'), 'UNSUPPORTED_FORMAT');
  });

  it('refuses a DOCX whose parts unzip past 100 MiB before inflating anything (CONTENT_TOO_LARGE)', async () => {
    const sample = fixture('sample.docx');
    expect(zipUncompressedBytes(sample)).toBeGreaterThan(1000);
    expect(zipUncompressedBytes(sample)).toBeLessThan(1024 * 1024);
    // The same archive, its word/document.xml declared at 200 MiB in the central directory.
    const bomb = Buffer.from(sample);
    const name = Buffer.from('word/document.xml');
    for (let i = 0; i < bomb.length - 46; i++) {
      if (bomb.readUInt32LE(i) === 0x02014b50 && bomb.subarray(i + 46, i + 46 + name.length).equals(name)) bomb.writeUInt32LE(200 * 1024 * 1024, i + 24);
    }
    expect(zipUncompressedBytes(bomb)).toBeGreaterThan(DOCX_MAX_UNZIPPED_BYTES);
    const error = await expectParseError(parseDocument({ bytes: bomb, filename: 'bomb.docx' }), 'CONTENT_TOO_LARGE');
    expect(error.message).toMatch(/unzips to 200 MiB, more than the 100 MiB read/);
  });

  describe('a DOCX whose parts inflate past the limit while its archive declares them small (CONTENT_TOO_LARGE)', () => {
    const LIMIT = 1024 * 1024; // the same check as the 100 MiB one, on a small bomb
    let bomb: Buffer;
    beforeAll(async () => {
      const zip = await JSZip.loadAsync(fixture('sample.docx'));
      const declared = (await zip.file('word/document.xml')!.async('nodebuffer')).length;
      const body = `<w:p><w:r><w:t>${'a '.repeat(LIMIT)}</w:t></w:r></w:p>`; // 2 MiB, deflates to a few KiB
      zip.file('word/document.xml', `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`);
      bomb = await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
      // Every size field of the part says what the original part measured.
      const name = Buffer.from('word/document.xml');
      for (let i = 0; i < bomb.length - 46; i++) {
        if (bomb.readUInt32LE(i) === 0x02014b50 && bomb.subarray(i + 46, i + 46 + name.length).equals(name)) bomb.writeUInt32LE(declared, i + 24);
        if (bomb.readUInt32LE(i) === 0x04034b50 && bomb.subarray(i + 30, i + 30 + name.length).equals(name)) bomb.writeUInt32LE(declared, i + 22);
      }
      expect(bomb.length).toBeLessThan(64 * 1024);
      expect(zipUncompressedBytes(bomb)).toBeLessThan(LIMIT);
    });

    const refused = async (bytes: Buffer) => {
      expect(await zipInflatesWithin(bytes, LIMIT)).toBe(false);
      const error = await expectParseError(parseDocx(bytes, LIMIT), 'CONTENT_TOO_LARGE');
      expect(error.message).toMatch(/unzips to more than the 1 MiB read \(more than its archive declares\)/);
    };

    it('as generated', async () => {
      await refused(bomb);
      expect(await zipInflatesWithin(fixture('sample.docx'), LIMIT)).toBe(true);
    });

    it('with bytes before it, a long trailing comment, or a directory that undercounts its entries (JSZip reads all three)', async () => {
      await refused(Buffer.concat([Buffer.alloc(4096, 0x20), bomb]));
      const eocd = bomb.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
      const comment = Buffer.alloc(60_000, 0x61);
      const commented = Buffer.concat([bomb, comment]);
      commented.writeUInt16LE(comment.length, eocd + 20);
      await refused(commented);
      const undercounted = Buffer.from(bomb);
      undercounted.writeUInt16LE(1, eocd + 8);
      undercounted.writeUInt16LE(1, eocd + 10);
      await refused(undercounted);
    });
  });

  it('rejects binary or non-UTF-8 content declared as text', async () => {
    await expectParseError(parseFixture('binary.txt'), 'CORRUPT_FILE');
    await expectParseError(parseFixture('latin1.txt'), 'CORRUPT_FILE');
    await expectParseError(parseText(fixture('binary.txt'), 'notes.md'), 'CORRUPT_FILE');
  });

  it('rejects malformed JSON and CSV', async () => {
    const error = await expectParseError(parseFixture('corrupt.json'), 'CORRUPT_FILE');
    expect(error.message).toMatch(/^The file is not valid JSON/);
    await expectParseError(parseText('{"a": 1}\nnot json\n', 'x.jsonl'), 'CORRUPT_FILE');
    await expectParseError(parseText('a,b\n"unterminated,2\n', 'x.csv'), 'CORRUPT_FILE');
  });

  it('reports empty documents', async () => {
    await expectParseError(parseText('', 'a.txt'), 'EMPTY_DOCUMENT');
    await expectParseError(parseText(' \n\r\n\t', 'a.txt'), 'EMPTY_DOCUMENT');
    await expectParseError(parseText('<html><head><title>T</title><script>x()</script></head><body> </body></html>', 'a.html'), 'EMPTY_DOCUMENT');
    await expectParseError(parseText('name,city\n', 'a.csv'), 'EMPTY_DOCUMENT');
    await expectParseError(parseText('{}', 'a.json'), 'EMPTY_DOCUMENT');
  });

  it('rejects unsupported formats', async () => {
    await expectParseError(parseText('x', 'deck.pptx'), 'UNSUPPORTED_FORMAT');
    await expectParseError(parseText(fixture('binary.txt'), 'upload'), 'UNSUPPORTED_FORMAT');
  });
});
