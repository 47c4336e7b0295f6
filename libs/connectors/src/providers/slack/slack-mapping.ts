import { createHash } from 'node:crypto';
import type { FilterableField, SyncedDocument } from '../../provider.port';
import { compareTs, tsToIso } from './slack-ts';

/**
 * The fields of a Slack message this provider reads, as both conversations.history and conversations.replies return
 * them (their generated types differ in nesting, not in these fields).
 */
export interface SlackMessage {
  ts?: string;
  thread_ts?: string;
  type?: string;
  subtype?: string;
  user?: string;
  bot_id?: string;
  username?: string;
  text?: string;
  edited?: { ts?: string; user?: string };
  attachments?: { fallback?: string; pretext?: string; title?: string; title_link?: string; text?: string; author_name?: string; fields?: { title?: string; value?: string }[] }[];
  files?: { id?: string; name?: string; title?: string }[];
  reply_count?: number;
  reply_users?: string[];
  latest_reply?: string;
}

export const SLACK_FILTERABLE_FIELDS: FilterableField[] = [
  { name: 'channel', type: 'string', description: 'The id of the channel the message is in (C… or G…).' },
  { name: 'author', type: 'string', description: 'The Slack id of who posted the top-level message: a user id (U…/W…), else the bot id (B…).' },
  { name: 'message_type', type: 'string', description: "The message's subtype (bot_message, file_share, channel_join, …), or `message` for an ordinary one." },
  { name: 'posted_at', type: 'date', description: 'When the top-level message was posted (ISO 8601).' },
  { name: 'reply_count', type: 'number', description: 'How many replies its thread has (0 for none).' },
];

/**
 * A message is a document of its own when it is at the top level of the channel: not a thread reply, and not a reply
 * also sent to the channel (`thread_broadcast`), which its thread's document already holds.
 */
export function isTopLevel(m: SlackMessage): boolean {
  if (!m.ts || m.subtype === 'thread_broadcast') return false;
  return m.thread_ts === undefined || m.thread_ts === m.ts;
}

/** Whether the message has replies to fold into its document. */
export const hasThread = (m: SlackMessage): boolean => (m.reply_count ?? 0) > 0;

/**
 * What conversations.history says about a top-level message, and nothing that changes without its content changing
 * (reactions, read marks, pins are left out): its author, text, edit, attachments and files, and its thread's summary
 * (reply count, latest reply, repliers). A new or deleted reply moves the summary; an edit of a reply does not (Slack
 * reports nothing of it on the parent), which is why the hash can be computed from the history listing alone.
 */
function canonical(m: SlackMessage): unknown[] {
  return [
    m.ts,
    m.subtype ?? null,
    m.user ?? null,
    m.bot_id ?? null,
    m.username ?? null,
    m.text ?? '',
    m.edited?.ts ?? null,
    (m.attachments ?? []).map((a) => [a.fallback ?? null, a.pretext ?? null, a.title ?? null, a.title_link ?? null, a.text ?? null, a.author_name ?? null, (a.fields ?? []).map((f) => [f.title ?? null, f.value ?? null])]),
    (m.files ?? []).map((f) => [f.id ?? null, f.name ?? null, f.title ?? null]),
    m.reply_count ?? 0,
    m.latest_reply ?? null,
    [...(m.reply_users ?? [])].sort(),
  ];
}

/** The document's content hash: the same from a history page (the listing) and from a sync, for the same message. */
export function messageHash(m: SlackMessage): string {
  return createHash('sha256').update(JSON.stringify(canonical(m))).digest('hex');
}

const ENTITIES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&amp;': '&' };

/**
 * Slack's message markup as plain text: `<@U123>` as `@U123` (`<@U123|ann>` as `@ann`), `<#C123|general>` as
 * `#general`, `<!here>` as `@here`, `<!subteam^S1|@team>` as `@team`, `<!date^…|Feb 18>` as its fallback text,
 * `<https://x|label>` as `label (https://x)`, and the three escaped entities decoded.
 */
export function plainText(text: string): string {
  return text
    .replace(/<([^<>]*)>/g, (_, inner: string) => {
      const bar = inner.indexOf('|');
      const target = bar < 0 ? inner : inner.slice(0, bar);
      const label = bar < 0 ? undefined : inner.slice(bar + 1);
      if (target.startsWith('@')) return label ? `@${label}` : target;
      if (target.startsWith('#')) return label ? `#${label}` : target;
      if (target.startsWith('!date^')) return label ?? '';
      if (target.startsWith('!')) return `@${(label ?? target.slice(1).replace(/^subteam\^/, '')).replace(/^@/, '')}`;
      return label && label !== target ? `${label} (${target})` : target;
    })
    .replace(/&(lt|gt|amp);/g, (e) => ENTITIES[e]);
}

const authorOf = (m: SlackMessage): string | null => m.user ?? m.bot_id ?? null;

/** One message as lines: who and when, its text, its attachments' text and its files' names. */
function messageLines(m: SlackMessage): string[] {
  const who = m.user ? `@${m.user}` : m.username ? m.username : m.bot_id ? `bot ${m.bot_id}` : 'someone';
  const lines = [`${who} at ${tsToIso(m.ts!)}${m.edited?.ts ? ' (edited)' : ''}:`];
  const text = plainText(m.text ?? '').trim();
  if (text) lines.push(text);
  for (const a of m.attachments ?? []) {
    const parts = [a.pretext, a.author_name, a.title, a.text, ...(a.fields ?? []).map((f) => [f.title, f.value].filter(Boolean).join(': '))]
      .map((p) => plainText(p ?? '').trim())
      .filter(Boolean);
    const body = parts.length ? parts : [plainText(a.fallback ?? '').trim()].filter(Boolean);
    if (body.length) lines.push(...body);
  }
  for (const f of m.files ?? []) lines.push(`[file] ${[f.title, f.name].filter(Boolean).join(' ')}`.trim());
  return lines;
}

/** A title a person recognises: the message's first line of text (or of its first attachment), at most 120 characters. */
function titleOf(m: SlackMessage): string {
  const first = [m.text, ...(m.attachments ?? []).flatMap((a) => [a.pretext, a.title, a.text, a.fallback]), ...(m.files ?? []).map((f) => f.title ?? f.name)]
    .map((t) => plainText(t ?? '').split('\n').map((l) => l.replace(/`{3}/g, '').trim()).find(Boolean))
    .find(Boolean);
  const title = first ?? `${m.subtype ?? 'message'} at ${tsToIso(m.ts!)}`;
  const chars = [...title];
  return chars.length > 120 ? `${chars.slice(0, 119).join('')}…` : title;
}

/**
 * A top-level message and its thread as one document: the unit a question about a conversation is answered from (a
 * reply alone lacks the message it answers; a whole channel is too large to rank and changes all the time). Its id is
 * the message's `ts`; its content the message, then each reply in order; its hash the message's (`messageHash`).
 */
export function messageDocument(channelId: string, parent: SlackMessage, replies: readonly SlackMessage[]): SyncedDocument {
  const ts = parent.ts!;
  const ordered = [...replies].filter((r) => r.ts !== ts).sort((a, b) => compareTs(a.ts!, b.ts!));
  const lines = messageLines(parent);
  if (ordered.length) {
    lines.push('', `Thread (${ordered.length} ${ordered.length === 1 ? 'reply' : 'replies'}):`);
    for (const r of ordered) lines.push(...messageLines(r));
  }
  const changes = [ts, parent.edited?.ts, parent.latest_reply, ...ordered.flatMap((r) => [r.ts, r.edited?.ts])].filter((t): t is string => typeof t === 'string');
  const lastActivity = tsToIso(changes.reduce((a, b) => (compareTs(a, b) >= 0 ? a : b)));
  return {
    id: ts,
    title: titleOf(parent),
    content: { kind: 'text', text: lines.join('\n') },
    updatedAt: lastActivity,
    contentHash: messageHash(parent),
    // `last_activity_at` also moves when a reply is edited, which the content hash cannot show (the history listing
    // that hashes are compared with never sees replies): a sync that reads the thread again writes a new version then.
    metadata: {
      channel_id: channelId,
      ts,
      ...(parent.thread_ts ? { thread_ts: parent.thread_ts } : {}),
      ...(parent.subtype ? { subtype: parent.subtype } : {}),
      ...(authorOf(parent) ? { author: authorOf(parent) } : {}),
      ...(parent.edited?.ts ? { edited_ts: parent.edited.ts } : {}),
      last_activity_at: lastActivity,
    },
    filterableFields: {
      channel: channelId,
      author: authorOf(parent),
      message_type: parent.subtype ?? 'message',
      posted_at: tsToIso(ts),
      reply_count: parent.reply_count ?? 0,
    },
  };
}
