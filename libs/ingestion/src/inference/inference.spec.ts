import { createServer, type Server } from 'node:http';
import { RuleBasedInference } from './rule-based.inference';
import { OpenAiChatInference } from './openai-chat.inference';

describe('rule-based inference', () => {
  const inf = new RuleBasedInference();
  it('extracts preferences, traits and facts from the user side, in the third person with the user name', async () => {
    const facts = await inf.extract({
      pairs: [
        { user: 'I prefer window seats on long flights. I never drink coffee after noon.', assistant: 'Noted! I love helping.' },
        { user: 'My favourite color is teal and I live in Porto.', assistant: 'Nice.' },
      ],
      userName: 'Ann',
    });
    expect(facts).toEqual([
      { kind: 'preference', text: 'Ann prefers window seats on long flights.' },
      { kind: 'trait', text: 'Ann never drinks coffee after noon.' },
      { kind: 'fact', text: "Ann's favourite color is teal." },
      { kind: 'fact', text: 'Ann lives in Porto.' },
    ]);
  });
  it('custom instructions naming kinds keep only those kinds', async () => {
    const facts = await inf.extract({ text: 'I hate crowded trains. I work at Acme.', customInstructions: 'only preferences please' });
    expect(facts).toEqual([{ kind: 'preference', text: 'The user hates crowded trains.' }]);
  });
});

describe('OpenAI-compatible chat inference (fake server on 127.0.0.1)', () => {
  let server: Server;
  let url: string;
  const seen: any[] = [];
  let failures = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ auth: req.headers.authorization, body: JSON.parse(body) });
        if (failures-- > 0) {
          res.writeHead(503).end('busy');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ message: { content: JSON.stringify({ facts: [{ kind: 'preference', text: 'Ann likes tea.' }, { kind: 'bogus', text: 'x' }] }) } }] }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as any).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('sends structured-output requests with the user name and instructions, retries 5xx, validates the answer', async () => {
    failures = 1;
    const inf = new OpenAiChatInference({ baseUrl: url, model: 'm1', apiKey: 'k' });
    const facts = await inf.extract({ text: 'I like tea', userName: 'Ann', customInstructions: 'drinks only' });
    expect(facts).toEqual([{ kind: 'preference', text: 'Ann likes tea.' }]);
    expect(seen).toHaveLength(2);
    expect(seen[1].auth).toBe('Bearer k');
    expect(seen[1].body.response_format).toEqual({ type: 'json_object' });
    expect(seen[1].body.messages[0].content).toMatch(/Ann/);
    expect(seen[1].body.messages[0].content).toMatch(/drinks only/);
    expect(inf.modelId).toBe('openai-chat:m1');
  });

  it('times out', async () => {
    const slow = createServer(() => undefined);
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const inf = new OpenAiChatInference({ baseUrl: `http://127.0.0.1:${(slow.address() as any).port}`, model: 'm', timeoutMs: 100, maxRetries: 0 });
    await expect(inf.extract({ text: 'I like tea' })).rejects.toMatchObject({ code: 'remote_timeout' });
    slow.closeAllConnections();
    await new Promise((r) => slow.close(r));
  });
});
