import { Worker } from 'node:worker_threads';
import { ParseError } from './parse-error';

export interface PdfText {
  /** Text of each page, in order. */
  pages: string[];
  /** The document information dictionary's Title, if set. */
  title: string | null;
}

export interface PdfExtractionOptions {
  /** A PDF that takes longer than this is given up as CORRUPT_FILE. Default 60 s. */
  timeoutMs?: number;
}

type WorkerReply =
  | { ok: true; pages: string[]; title: string | null }
  | { ok: false; stage: 'load' | 'parse'; errorName: string; message: string };

/*
 * pdf-parse ships a CommonJS build, but the pdf.js inside it loads its own worker module with a
 * dynamic import() of an .mjs file. Jest's module sandbox refuses that import (it needs
 * --experimental-vm-modules), so pdf-parse runs in a worker thread: a plain Node context where
 * the import works, under jest and in production alike. The thread also bounds memory and time
 * spent on a hostile PDF, and is thrown away afterwards. The source is inline (not a separate
 * .js file) so that tsc output needs nothing copied next to it.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  let PDFParse;
  try {
    ({ PDFParse } = require(workerData.pdfParsePath));
  } catch (error) {
    parentPort.postMessage({ ok: false, stage: 'load', errorName: String(error && error.name), message: String(error && error.message) });
    return;
  }
  const parser = new PDFParse({ data: workerData.bytes });
  try {
    const info = await parser.getInfo();
    const result = await parser.getText({ pageJoiner: '' });
    const title = info && info.info && typeof info.info.Title === 'string' ? info.info.Title : null;
    parentPort.postMessage({ ok: true, pages: result.pages.map((page) => page.text), title });
  } catch (error) {
    parentPort.postMessage({ ok: false, stage: 'parse', errorName: String(error && error.name), message: String(error && error.message) });
  } finally {
    await parser.destroy().catch(() => undefined);
  }
})();
`;

const DEFAULT_TIMEOUT_MS = 60_000;
const WORKER_HEAP_MB = 512;

/** Extracts the text layer of a PDF with pdf-parse (pdf.js), in a worker thread. */
export function extractPdfText(bytes: Uint8Array, options: PdfExtractionOptions = {}): Promise<PdfText> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise<PdfText>((resolve, reject) => {
    const copy = new Uint8Array(bytes); // ours to hand over to the thread without a second copy
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { pdfParsePath: require.resolve('pdf-parse'), bytes: copy },
      transferList: [copy.buffer],
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      stdout: true, // pdf.js warnings about odd fonts are not our logs
      stderr: true,
    });
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      outcome();
    };
    const timer = setTimeout(
      () => settle(() => reject(new ParseError('CORRUPT_FILE', `The PDF could not be read within ${timeoutMs / 1000} s.`, { format: 'pdf' }))),
      timeoutMs,
    );
    worker.stdout.resume();
    worker.stderr.resume();
    worker.once('message', (reply: WorkerReply) => settle(() => (reply.ok ? resolve({ pages: reply.pages, title: reply.title }) : reject(replyError(reply)))));
    worker.once('error', (cause) =>
      settle(() => reject(new ParseError('CORRUPT_FILE', 'The PDF could not be read: it is too large or too complex.', { format: 'pdf', cause }))),
    );
    worker.once('exit', (code) => settle(() => reject(new Error(`The PDF text extraction worker exited (code ${code}) without a result.`))));
  });
}

function replyError(reply: Extract<WorkerReply, { ok: false }>): Error {
  const cause = Object.assign(new Error(reply.message), { name: reply.errorName });
  if (reply.stage === 'load') return new Error(`pdf-parse could not be loaded: ${reply.message}`, { cause });
  if (reply.errorName === 'PasswordException') {
    return new ParseError('ENCRYPTED_PDF', 'The PDF is password-protected; remove the password and upload it again.', { format: 'pdf', cause });
  }
  return new ParseError('CORRUPT_FILE', 'The PDF is damaged or incomplete and could not be read.', { format: 'pdf', cause });
}
