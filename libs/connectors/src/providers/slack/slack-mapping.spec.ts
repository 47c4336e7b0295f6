import { messageDocument, messageHash, plainText, type SlackMessage } from './slack-mapping';
import { compareTs, tsMinusSeconds, tsToIso } from './slack-ts';

describe('Slack messages as documents', () => {
  it('turns Slack markup into plain text', () => {
    expect(plainText('<@U123> and <@U456|ann> in <#C1|general>, <!here>, <!subteam^S1|@design>, <!subteam^S2>')).toBe('@U123 and @ann in #general, @here, @design, @S2');
    expect(plainText('see <https://x.test/a|the doc> or <https://x.test/b>; due <!date^1392734382^{date}|Feb 18, 2014>')).toBe('see the doc (https://x.test/a) or https://x.test/b; due Feb 18, 2014');
    expect(plainText('a &lt;b&gt; &amp;amp; c')).toBe('a <b> &amp; c');
  });

  it('hashes what history says of a message: reactions and read marks do not move it, an edit or a reply does', () => {
    const m: SlackMessage & { reactions?: unknown; last_read?: string } = { ts: '1459300000.000001', user: 'U1', text: 'hello' };
    const base = messageHash(m);
    expect(messageHash({ ...m, reactions: [{ name: '+1', count: 2 }], last_read: '1459300000.000001' } as SlackMessage)).toBe(base);
    expect(messageHash({ ...m, text: 'hello!', edited: { ts: '1459300001.000000' } })).not.toBe(base);
    expect(messageHash({ ...m, reply_count: 1, latest_reply: '1459300002.000001', reply_users: ['U2'] })).not.toBe(base);
    expect(messageHash({ ...m, reply_users: ['U2', 'U3'] })).toBe(messageHash({ ...m, reply_users: ['U3', 'U2'] }));
  });

  it('keeps the hash of a thread when a reply is edited, and moves its last activity', () => {
    const parent: SlackMessage = { ts: '1459300000.000001', user: 'U1', text: 'q?', thread_ts: '1459300000.000001', reply_count: 1, latest_reply: '1459300100.000001' };
    const reply: SlackMessage = { ts: '1459300100.000001', thread_ts: parent.ts, user: 'U2', text: 'a' };
    const before = messageDocument('C1', parent, [reply]);
    const after = messageDocument('C1', parent, [{ ...reply, text: 'a, edited', edited: { ts: '1459300200.000000' } }]);
    expect(after.contentHash).toBe(before.contentHash);
    expect([before.metadata.last_activity_at, after.metadata.last_activity_at]).toEqual(['2016-03-30T01:08:20.000Z', '2016-03-30T01:10:00.000Z']);
  });

  it('compares timestamps exactly, past what a double holds', () => {
    expect(compareTs('1459300000.000002', '1459300000.000001')).toBeGreaterThan(0);
    expect(Number('1459300000.000002') - Number('1459300000.000001')).not.toBe(0.000001);
    expect(compareTs('999999999.999999', '1000000000.000000')).toBeLessThan(0);
    expect(tsMinusSeconds('1459300000.000123', 86_400)).toBe('1459213600.000123');
    expect(tsToIso('1459300000.000999')).toBe('2016-03-30T01:06:40.000Z');
  });
});
