import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ParseError, chunkText, countTokens, parseDocument } from '.';

const fixture = (name: string) => readFileSync(join(__dirname, '../../../test/fixtures/ingestion', name));

describe('parse then chunk', () => {
  it('chunks a parsed Markdown file by its sections, titled by the document', async () => {
    const doc = await parseDocument({ bytes: fixture('sample.md'), filename: 'handbook.md' });
    const chunks = chunkText(doc.text, doc);
    expect(chunks.map((c) => c.headingPath)).toEqual([[], ['Deployment'], ['Deployment', 'Install', 'Linux'], ['Deployment', 'Install', 'macOS']]);
    expect(chunks[2]!.text).toBe(
      'Deployment Handbook > Deployment > Install > Linux\nInstall the package with apt:\n\n```bash\nsudo apt install crs\n# this line is a comment, not a heading\n```\n\n| Distro | Supported |\n| ------ | --------- |\n| Ubuntu | yes       |',
    );
  });

  it('keeps CSV rows whole in chunks', async () => {
    const rows = Array.from({ length: 200 }, (_, i) => `${i},Person ${i},Works on project ${i % 13}. Lives in city ${i % 7}.`);
    const doc = await parseDocument({ bytes: Buffer.from(`id,name,notes\n${rows.join('\n')}\n`), filename: 'people.csv' });
    const chunks = chunkText(doc.text, { ...doc, maxTokens: 64, overlapTokens: 0 });
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) {
      expect(countTokens(chunk.text)).toBeLessThanOrEqual(64);
      for (const line of chunk.text.split('\n\n')) expect(line).toMatch(/^id: \d+; name: Person \d+; notes: Works on project \d+\. Lives in city \d+\.$/);
    }
  });

  it('gives up on a PDF that takes longer than the timeout', async () => {
    const error = await parseDocument({ bytes: fixture('sample.pdf'), filename: 'a.pdf' }, { timeoutMs: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ParseError);
    expect((error as ParseError).code).toBe('CORRUPT_FILE');
  });
});
