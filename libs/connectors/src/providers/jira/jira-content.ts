import { createHash } from 'node:crypto';
import type { Version3Models } from 'jira.js';
import type { FilterableField, PermissionCapture, SyncedDocument } from '../../provider.port';

/**
 * An issue as the enhanced search returns it with the fields the connector asks for. `security` is a field of every
 * issue of a project with an issue security scheme, which the library's `Fields` model does not name.
 */
export type SearchedIssue = Omit<Version3Models.Issue, 'fields'> & {
  fields: Partial<Version3Models.Fields> & { security?: Version3Models.SecurityLevel | null };
};

/** The fields a sync reads of each issue (comments included: the rest are paged from /issue/{key}/comment). */
export const ISSUE_FIELDS = ['summary', 'description', 'issuetype', 'status', 'labels', 'assignee', 'reporter', 'priority', 'comment', 'created', 'updated', 'security'];

export const JIRA_FILTERABLE_FIELDS: FilterableField[] = [
  { name: 'project', type: 'string', description: 'The key of the issue\'s project (OPS).' },
  { name: 'issue_key', type: 'string', description: 'The issue key (OPS-12).' },
  { name: 'issue_type', type: 'string', description: 'The issue type\'s name (Bug, Task, Story, Epic, ...).' },
  { name: 'status', type: 'string', description: 'The workflow status\'s name (To Do, In Progress, Done, ...).' },
  { name: 'status_category', type: 'string', description: 'The status category\'s key: new, indeterminate or done.' },
  { name: 'priority', type: 'string', description: 'The priority\'s name.' },
  { name: 'labels', type: 'string', description: 'The labels, sorted and joined by ", " (a filter matches the whole list as written).' },
  { name: 'assignee', type: 'string', description: 'The assignee\'s email when visible, else display name; null when unassigned.' },
  { name: 'reporter', type: 'string', description: 'The reporter\'s email when visible, else display name.' },
];

type AdfNode = Omit<Version3Models.Document, 'version'>;

const BLOCKS = new Set(['paragraph', 'heading', 'blockquote', 'codeBlock', 'listItem', 'tableRow', 'table_row', 'panel', 'rule', 'mediaSingle', 'mediaGroup']);

/**
 * The plain text of an Atlassian Document Format body: text nodes as they are, mentions, emoji, dates and links by
 * their text, one line per block, list items marked, table cells separated.
 */
export function adfText(doc: AdfNode | null | undefined): string {
  if (!doc) return '';
  const out: string[] = [];
  const walk = (node: AdfNode, prefix: string): void => {
    switch (node.type) {
      case 'text':
        out.push(node.text ?? '');
        return;
      case 'hardBreak':
        out.push('\n');
        return;
      case 'mention':
      case 'emoji':
      case 'status':
        out.push(String(node.attrs?.text ?? node.attrs?.shortName ?? ''));
        return;
      case 'inlineCard':
      case 'blockCard':
        out.push(String(node.attrs?.url ?? ''));
        return;
      case 'date':
        out.push(node.attrs?.timestamp ? new Date(Number(node.attrs.timestamp)).toISOString().slice(0, 10) : '');
        return;
      case 'tableCell':
      case 'tableHeader':
      case 'table_cell':
      case 'table_header':
        for (const child of node.content ?? []) walk(child, prefix);
        out.push(' | ');
        return;
      default: {
        const marker = node.type === 'listItem' ? `${prefix}- ` : '';
        if (marker) out.push(marker);
        const nested = node.type === 'bulletList' || node.type === 'orderedList' ? `${prefix}  ` : prefix;
        for (const child of node.content ?? []) walk(child, node.type === 'listItem' ? nested : prefix);
        if (BLOCKS.has(node.type)) out.push('\n');
      }
    }
  };
  walk(doc, '');
  return out.join('').replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}

const person = (user: Version3Models.UserDetails | Version3Models.User | null | undefined): string | null => (user ? user.emailAddress ?? user.displayName ?? user.accountId ?? null : null);

/**
 * An issue with all its comments as one document: its title is `KEY: summary`; its text the summary, the fields a
 * reader wants (type, status, priority, labels, people), the description and every comment with its author. The id is
 * the issue id, which stays when the issue's key changes. The content hash covers everything the document is made
 * of, and neither the update time nor the security level, so a change of level alone keeps the content.
 */
export function issueDocument(issue: SearchedIssue, comments: Version3Models.Comment[], siteUrl: string, permission: PermissionCapture | undefined): SyncedDocument {
  const f = issue.fields;
  const key = issue.key;
  const summary = f.summary ?? '';
  const labels = [...(f.labels ?? [])].sort();
  const filterableFields: SyncedDocument['filterableFields'] = {
    project: key.split('-')[0],
    issue_key: key,
    issue_type: f.issuetype?.name ?? null,
    status: f.status?.name ?? null,
    status_category: f.status?.statusCategory?.key ?? null,
    priority: f.priority?.name ?? null,
    labels: labels.join(', '),
    assignee: person(f.assignee),
    reporter: person(f.reporter),
  };
  const lines = [
    `${key}: ${summary}`,
    '',
    [
      f.issuetype?.name ? `Type: ${f.issuetype.name}` : null,
      f.status?.name ? `Status: ${f.status.name}` : null,
      f.priority?.name ? `Priority: ${f.priority.name}` : null,
      labels.length ? `Labels: ${labels.join(', ')}` : null,
      f.reporter ? `Reporter: ${f.reporter.displayName ?? person(f.reporter)}` : null,
      f.assignee ? `Assignee: ${f.assignee.displayName ?? person(f.assignee)}` : null,
    ]
      .filter((l): l is string => l !== null)
      .join('\n'),
  ];
  const description = adfText(f.description);
  if (description) lines.push('', description);
  const said = comments.map((c) => ({ author: c.author?.displayName ?? c.author?.accountId ?? 'someone', text: adfText(c.body) })).filter((c) => c.text !== '');
  if (said.length) lines.push('', 'Comments:', ...said.map((c) => `${c.author}: ${c.text}`));
  const text = lines.join('\n').trim();
  const metadata: Record<string, unknown> = {
    issue_key: key,
    issue_id: issue.id,
    url: `${siteUrl}/browse/${key}`,
    created: f.created ?? null,
    comment_count: comments.length,
  };
  const contentHash = createHash('sha256').update(JSON.stringify([key, summary, text, filterableFields, metadata])).digest('hex');
  return {
    id: issue.id,
    title: `${key}: ${summary}`,
    content: { kind: 'text', text },
    updatedAt: f.updated ? new Date(Date.parse(f.updated)).toISOString() : null,
    contentHash,
    metadata,
    filterableFields,
    ...(permission ? { permission } : {}),
  };
}
