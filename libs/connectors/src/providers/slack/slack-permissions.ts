import { emailPrincipal, MAX_PRINCIPALS, normalizeDocumentAcl } from '@crs/domain/acl';
import { TransientError } from '../../provider-errors';
import type { ResourcePermission } from '../../provider.port';
import type { SlackApi, SlackChannel, SlackListedUser, SlackUser } from './slack-client';

/**
 * Who may read a channel (access rule 11, "chat app: public channels workspace-wide; private channels to members"):
 *
 * - A public channel: every member of the workspace, as the principal `group:slack:<team id>`. Not `__public__`: a
 *   workspace is not the public, and callers outside it must not match. A caller that is a member of the workspace
 *   declares the group in its query `acl`.
 * - A private channel: its members, by email (`user_email:<email>`, from users.info or users.list; the token needs
 *   `users:read.email`). Bots and deactivated accounts are left out: they are no one a caller can be.
 * - A private channel with more than 1,000 members (the most principals a document holds): `group:slack:<channel id>`,
 *   the channel's membership as a group, rather than a truncated list that would shut members out.
 * - A private channel with a member whose email Slack does not reveal: the provider cannot name everyone who may read
 *   it, and a list without that member would misstate the source, so it captures no verdict (`acl` null) and the
 *   resource's access rule set through the API governs, as rule 12 says when the provider has none. How many members
 *   were unresolved is returned with the verdict.
 */
export const workspaceGroup = (teamId: string): string => `group:slack:${teamId.toLowerCase()}`;
export const channelGroup = (channelId: string): string => `group:slack:${channelId.toLowerCase()}`;

/** Members resolved one users.info call each up to this many; more are looked up in users.list pages. */
const USERS_INFO_UP_TO = 20;

export interface MemberResolution {
  /** `user_email:` principals of the people who may read the channel */
  principals: string[];
  /** ids of people whose email Slack did not reveal */
  unresolved: string[];
}

export interface ChannelAccess {
  permission: ResourcePermission;
  /** how the verdict was reached, for discovery details and tests */
  basis: 'workspace' | 'members' | 'channel_group' | 'unresolved_members';
  members: number | null;
  unresolved: number;
}

type AnyUser = SlackUser | SlackListedUser;

/** A person's principal, null for someone who cannot read anything (a bot, a deactivated account), undefined when unknown. */
function principalOf(user: AnyUser | undefined): string | null | undefined {
  if (user === undefined) return undefined;
  if (user.deleted || user.is_bot || user.id === 'USLACKBOT') return null;
  return emailPrincipal(user.profile?.email) ?? undefined;
}

/** Resolves member ids to principals: users.info for a few, users.list pages (stopping once all are found) for more. */
export async function resolveMembers(api: SlackApi, ids: readonly string[], directory?: Map<string, SlackListedUser>): Promise<MemberResolution> {
  const found = new Map<string, AnyUser | undefined>();
  if (directory) for (const id of ids) found.set(id, directory.get(id));
  else if (ids.length > USERS_INFO_UP_TO) {
    const wanted = new Set(ids);
    for await (const page of api.users()) {
      for (const u of page) if (u.id && wanted.has(u.id)) found.set(u.id, u);
      if (found.size === wanted.size) break;
    }
  }
  const principals = new Set<string>();
  const unresolved: string[] = [];
  for (const id of ids) {
    // Someone users.list did not show (another organization's member of a shared channel) is asked for by id.
    const user = found.has(id) ? found.get(id) : await api.user(id);
    const p = principalOf(user);
    if (p === undefined) unresolved.push(id);
    else if (p !== null) principals.add(p);
  }
  return { principals: [...principals], unresolved };
}

/** The verdict for one channel, from what conversations.info (with its member count) says of it. */
export async function channelAccess(api: SlackApi, channelId: string, channel: Pick<SlackChannel, 'is_private' | 'num_members' | 'context_team_id'>, directory?: Map<string, SlackListedUser>): Promise<ChannelAccess> {
  if (!channel.is_private) {
    const team = channel.context_team_id ?? (await api.authTest()).team_id;
    if (!team) throw new TransientError(`Slack did not say which workspace channel ${channelId} belongs to; the capture is tried again on the next sync.`);
    return { permission: { status: 'captured', acl: [workspaceGroup(team)] }, basis: 'workspace', members: channel.num_members ?? null, unresolved: 0 };
  }
  const large = { permission: { status: 'captured', acl: [channelGroup(channelId)] } as ResourcePermission, basis: 'channel_group' as const, unresolved: 0 };
  if ((channel.num_members ?? 0) > MAX_PRINCIPALS) return { ...large, members: channel.num_members ?? null };
  const ids = await api.members(channelId);
  if (ids.length > MAX_PRINCIPALS) return { ...large, members: ids.length };
  const { principals, unresolved } = await resolveMembers(api, ids, directory);
  if (unresolved.length) return { permission: { status: 'captured', acl: null, unresolved: unresolved.length }, basis: 'unresolved_members', members: ids.length, unresolved: unresolved.length };
  return { permission: { status: 'captured', acl: normalizeDocumentAcl(principals, true) ?? null }, basis: 'members', members: ids.length, unresolved: 0 };
}
