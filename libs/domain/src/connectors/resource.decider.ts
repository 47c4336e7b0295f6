import { isEventOf, type DomainEvent } from '../domain-event';
import { normalizeDocumentAcl, PRIVATE } from '../acl';
import { conflict, invalid, notFound, unknownCommand } from '../errors';
import type { PermissionCapture } from './access-precedence';
import { checkRequired, storedInstructions } from './connector-settings';
import {
  type ContentPolicy,
  DEFAULT_CONTENT_POLICY,
  addCounts,
  NO_COUNTS,
  type PermissionVerdict,
  type ResourceEvent,
  type ResourceSettings,
  type ResourceSettingsChanged,
  type SyncCounts,
  type SyncDeferralReason,
  type SyncFailureKind,
  type SyncTrigger,
  RESOURCE_EVENT_TYPES,
} from './connector.events';

/**
 * One resource of a connector: its settings, access rule, cursor and sync history, on one stream
 * (`connector-resource-<connectorId>-<sha256(resourceId)>`), so a replace and a checkpoint of the replaced generation
 * conflict on the stream's revision, and a checkpoint of a sync that is not the running one is refused here.
 *
 * Generations: configuring a resource that is absent (never configured, or removed) starts generation 1 or the next
 * one; a replace starts the next one with the cursor cleared. A sync belongs to the generation it started in.
 *
 * The access rule (`acl`, rule 13: deleting a rule never widens access): once a resource has had a rule, nothing
 * returns it to "no rule" (unrestricted). A PATCH's `[]` or `null` is `__private__` (nobody), as for documents; a
 * replace that omits `acl`, and adding the resource again after a removal without one, give `__private__` too. To
 * reopen a resource, set its `acl` to `["__public__"]`.
 */
export interface RunningSync {
  syncId: string;
  generation: number;
  trigger: SyncTrigger;
  startedAt: string;
  leaseExpiresAt: string;
  /** the sync's totals so far */
  counts: SyncCounts;
}

export type SyncOutcome =
  | { kind: 'completed'; syncId: string; counts: SyncCounts }
  | { kind: 'deferred'; syncId: string; reason: SyncDeferralReason; retryAt: string }
  | { kind: 'failed'; syncId: string; failure: SyncFailureKind; message: string };

export interface ResourceState {
  phase: 'absent' | 'live' | 'removed';
  /** the last settings (kept after a removal, for rule 13) */
  settings: ResourceSettings | null;
  /** 0 before the first configure */
  generation: number;
  cursor: string | null;
  running: RunningSync | null;
  lastOutcome: SyncOutcome | null;
  /** failures in a row since the last completed sync (of any kind) */
  consecutiveFailures: number;
  /** the last failure since the last completed sync (a deferral in between does not clear it) */
  lastFailure: { kind: SyncFailureKind; message: string } | null;
  /** the last `auth` or `scope` failure since the last completed sync */
  authFailure: { kind: 'auth' | 'scope'; message: string } | null;
  /** the generation of the last completed sync; null: none completed */
  completedGeneration: number | null;
  /** the last recorded permission verdict, and what it means for access (a failure keeps the last capture) */
  verdict: PermissionVerdict | null;
  permission: PermissionCapture | null;
  /** an API access rule was set at some point */
  hadAclRule: boolean;
  /** what happens to the synced documents of a removed resource (null while it is live) */
  contentPolicy: ContentPolicy | null;
}

export const initialResource = (): ResourceState => ({
  phase: 'absent',
  settings: null,
  generation: 0,
  cursor: null,
  running: null,
  lastOutcome: null,
  consecutiveFailures: 0,
  lastFailure: null,
  authFailure: null,
  completedGeneration: null,
  verdict: null,
  permission: null,
  hadAclRule: false,
  contentPolicy: null,
});


function capture(previous: PermissionCapture | null, verdict: PermissionVerdict): PermissionCapture {
  switch (verdict.status) {
    case 'captured':
      return { status: 'captured', acl: verdict.acl, ...(verdict.unresolved ? { unresolved: verdict.unresolved } : {}) };
    case 'off':
      return { status: 'off' };
    case 'failed': {
      // A failure decides as the last successful capture did (access-precedence.ts); it never widens.
      const last = previous?.status === 'captured' ? { acl: previous.acl, ...(previous.unresolved ? { unresolved: previous.unresolved } : {}) } : previous?.status === 'failed' ? previous.last : undefined;
      return last ? { status: 'failed', last } : { status: 'failed' };
    }
  }
}

/** Folds any event of the log: the events of other streams leave the state as it is. */
export function evolveResource(state: ResourceState, event: DomainEvent): ResourceState {
  return isEventOf(event, RESOURCE_EVENT_TYPES) ? evolveResourceEvent(state, event) : state;
}

function evolveResourceEvent(state: ResourceState, event: ResourceEvent): ResourceState {
  switch (event.type) {
    case 'ResourceConfigured': {
      const { generation, settings } = event.data;
      const hadAclRule = state.hadAclRule || settings.acl !== null;
      if (generation === state.generation && state.phase === 'live') return { ...state, settings, hadAclRule };
      // Added (first time, or again after a removal): a new generation from the beginning, with no sync history.
      return { ...initialResource(), phase: 'live', settings, generation, verdict: state.verdict, permission: state.permission, hadAclRule };
    }
    case 'ResourceReplaced':
      return { ...state, settings: event.data.settings, generation: event.data.generation, cursor: null, running: null, hadAclRule: state.hadAclRule || event.data.settings.acl !== null };
    case 'ResourceSettingsChanged': {
      if (!state.settings) return state;
      const { customInstructions, acl } = event.data;
      const settings = { ...state.settings, ...(customInstructions !== undefined ? { customInstructions } : {}), ...(acl !== undefined ? { acl } : {}) };
      return { ...state, settings, hadAclRule: state.hadAclRule || acl !== undefined };
    }
    case 'ResourceRemoved':
      return { ...state, phase: 'removed', running: null, contentPolicy: event.data.contentPolicy };
    case 'SyncStarted': {
      const { syncId, generation, trigger, startedAt, leaseExpiresAt } = event.data;
      return { ...state, running: { syncId, generation, trigger, startedAt, leaseExpiresAt, counts: NO_COUNTS } };
    }
    case 'SyncCheckpointRecorded': {
      const running = state.running?.syncId === event.data.syncId ? { ...state.running, leaseExpiresAt: event.data.leaseExpiresAt, counts: addCounts(state.running.counts, event.data.counts) } : state.running;
      return { ...state, cursor: event.data.cursor, running };
    }
    case 'SyncLeaseRenewed': {
      const running = state.running?.syncId === event.data.syncId ? { ...state.running, leaseExpiresAt: event.data.leaseExpiresAt } : state.running;
      return { ...state, running };
    }
    case 'PermissionsCaptured':
      return { ...state, verdict: event.data.verdict, permission: capture(state.permission, event.data.verdict) };
    case 'SyncCompleted':
      return {
        ...state,
        cursor: event.data.cursor,
        running: null,
        lastOutcome: { kind: 'completed', syncId: event.data.syncId, counts: event.data.counts },
        consecutiveFailures: 0,
        lastFailure: null,
        authFailure: null,
        completedGeneration: event.data.generation,
      };
    case 'SyncDeferred':
      return { ...state, running: null, lastOutcome: { kind: 'deferred', syncId: event.data.syncId, reason: event.data.reason, retryAt: event.data.retryAt } };
    case 'SyncFailed': {
      const { syncId, kind, message, consecutiveFailures } = event.data;
      const authFailure = kind === 'auth' || kind === 'scope' ? { kind, message } : state.authFailure;
      return { ...state, running: null, lastOutcome: { kind: 'failed', syncId, failure: kind, message }, consecutiveFailures, lastFailure: { kind, message }, authFailure };
    }
    default: {
      const never: never = event;
      return never;
    }
  }
}

/** What the resource's provider verdict means for access (`effectiveAccess`'s `resource` input). */
export const resourcePermission = (state: ResourceState): PermissionCapture => state.permission ?? { status: 'off' };

interface Ids {
  connectorId: string;
  resourceId: string;
}

/** The fields of a resource as the API sends them (configure, POST /connectors/{id}/resources). */
export interface ResourceInput {
  resourceType: string;
  name: string;
  collection?: string | null;
  metadata?: Record<string, unknown> | null;
  additionalMetadata?: Record<string, unknown> | null;
  options?: Record<string, unknown> | null;
  /** undefined: not sent; a list replaces; [] or null: `__private__` */
  acl?: readonly string[] | null;
  /** undefined: not sent; "": cleared */
  customInstructions?: string;
}

/** The sync a report is about: refused unless it is the running sync of the current generation. */
interface SyncRef {
  syncId: string;
  generation: number;
}

export type ResourceCommand =
  /** configure (rule 2): the listed fields replace, but cursor, instructions and access rule are kept unless sent */
  | ({ type: 'ConfigureResource' } & Ids & ResourceInput)
  /** POST /connectors/{id}/resources: adds, or replaces an existing resource (omitted fields cleared, from the beginning) */
  | ({ type: 'ReplaceResource' } & Ids & ResourceInput)
  /** PATCH: only what is sent changes */
  | ({ type: 'ChangeResourceSettings' } & Ids & { customInstructions?: string; acl?: readonly string[] | null })
  | ({ type: 'RemoveResource' } & Ids & { contentPolicy?: ContentPolicy })
  /** `now` and `leaseExpiresAt`: ISO 8601; a running sync whose lease expired before `now` is taken over */
  | ({ type: 'StartSync' } & Ids & { syncId: string; trigger: SyncTrigger; now: string; leaseExpiresAt: string })
  | ({ type: 'RecordCheckpoint' } & Ids & SyncRef & { cursor: string; counts: SyncCounts; leaseExpiresAt: string })
  /** the running sync is alive between checkpoints; like a checkpoint, it renews even a lapsed lease nobody took over */
  | ({ type: 'RenewLease' } & Ids & SyncRef & { now: string; leaseExpiresAt: string })
  | ({ type: 'RecordPermissions' } & Ids & SyncRef & { verdict: PermissionVerdict })
  | ({ type: 'CompleteSync' } & Ids & SyncRef)
  | ({ type: 'DeferSync' } & Ids & SyncRef & { retryAt: string; reason: SyncDeferralReason })
  | ({ type: 'FailSync' } & Ids & SyncRef & { kind: SyncFailureKind; message: string });

export const resourceNotFound = (ids: Ids) => notFound('RESOURCE_NOT_FOUND', `connector '${ids.connectorId}' has no resource '${ids.resourceId}'`);

/** Equal JSON values (object key order aside). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => sameJson(x, (b as unknown[])[i]));
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

const storedAcl = (acl: readonly string[] | null): string[] => normalizeDocumentAcl(acl, true)!;

/**
 * The settings a configure or replace decides. `keep`: the current settings whose instructions and access rule stay
 * when not sent (a configure of a live resource); otherwise omitted instructions are cleared, and an omitted access
 * rule is none, or `__private__` on a resource that has had one (rule 13).
 */
function settingsOf(input: ResourceInput, state: ResourceState, keep: ResourceSettings | null): ResourceSettings {
  checkRequired(input.resourceType, 'resource_type');
  checkRequired(input.name, 'name');
  const customInstructions = input.customInstructions !== undefined ? storedInstructions(input.customInstructions) : keep ? keep.customInstructions : null;
  const acl = input.acl !== undefined ? storedAcl(input.acl) : keep ? keep.acl : state.hadAclRule ? [PRIVATE] : null;
  return {
    resourceType: input.resourceType,
    name: input.name,
    collection: input.collection ?? null,
    metadata: input.metadata ?? null,
    additionalMetadata: input.additionalMetadata ?? null,
    options: input.options ?? null,
    acl,
    customInstructions,
  };
}

function requireCurrentSync(state: ResourceState, ref: SyncRef & Ids): void {
  const running = state.running;
  if (state.phase === 'live' && running && running.syncId === ref.syncId && running.generation === ref.generation && ref.generation === state.generation) return;
  const why =
    state.phase !== 'live'
      ? 'the resource was removed'
      : ref.generation !== state.generation
        ? `the resource was replaced (generation ${ref.generation} is now ${state.generation})`
        : running
          ? `sync '${running.syncId}' took it over`
          : 'no sync is running';
  throw conflict('SYNC_NOT_CURRENT', `sync '${ref.syncId}' of resource '${ref.resourceId}' is no longer the running one: ${why}; stop it without recording anything`);
}

const isoTime = (value: string, field: string): number => {
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw invalid(`${field} must be an ISO 8601 time`);
  return t;
};

export function decideResource(command: ResourceCommand, state: ResourceState): ResourceEvent[] {
  const ids: Ids = { connectorId: command.connectorId, resourceId: command.resourceId };
  switch (command.type) {
    case 'ConfigureResource': {
      if (state.phase === 'live') {
        const settings = settingsOf(command, state, state.settings);
        return sameJson(settings, state.settings) ? [] : [{ type: 'ResourceConfigured', data: { ...ids, generation: state.generation, settings } }];
      }
      return [{ type: 'ResourceConfigured', data: { ...ids, generation: state.generation + 1, settings: settingsOf(command, state, null) } }];
    }
    case 'ReplaceResource': {
      const settings = settingsOf(command, state, null);
      if (state.phase !== 'live') return [{ type: 'ResourceConfigured', data: { ...ids, generation: state.generation + 1, settings } }];
      return [{ type: 'ResourceReplaced', data: { ...ids, generation: state.generation + 1, settings } }];
    }
    case 'ChangeResourceSettings': {
      if (state.phase !== 'live' || !state.settings) throw resourceNotFound(ids);
      const instructions = command.customInstructions === undefined ? undefined : storedInstructions(command.customInstructions);
      const acl = command.acl === undefined ? undefined : storedAcl(command.acl);
      const changed: Omit<ResourceSettingsChanged['data'], keyof Ids> = {};
      if (instructions !== undefined && instructions !== state.settings.customInstructions) changed.customInstructions = instructions;
      // The same rule again changes nothing: the stream records changes only.
      if (acl !== undefined && !sameJson(acl, state.settings.acl)) Object.assign(changed, { acl, previousAcl: state.settings.acl });
      return Object.keys(changed).length ? [{ type: 'ResourceSettingsChanged', data: { ...ids, ...changed } }] : [];
    }
    case 'RemoveResource':
      if (state.phase !== 'live') throw resourceNotFound(ids);
      return [{ type: 'ResourceRemoved', data: { ...ids, generation: state.generation, contentPolicy: command.contentPolicy ?? DEFAULT_CONTENT_POLICY } }];
    case 'StartSync': {
      if (state.phase !== 'live') throw resourceNotFound(ids);
      const now = isoTime(command.now, 'now');
      if (isoTime(command.leaseExpiresAt, 'leaseExpiresAt') <= now) throw invalid('leaseExpiresAt must be after now');
      const running = state.running;
      if (running?.syncId === command.syncId) return [];
      if (running && running.generation === state.generation && now < Date.parse(running.leaseExpiresAt)) {
        throw conflict('SYNC_RUNNING', `resource '${command.resourceId}' is being synced by sync '${running.syncId}' (its lease runs until ${running.leaseExpiresAt})`);
      }
      return [
        {
          type: 'SyncStarted',
          data: {
            ...ids,
            syncId: command.syncId,
            generation: state.generation,
            trigger: command.trigger,
            cursor: state.cursor,
            startedAt: command.now,
            leaseExpiresAt: command.leaseExpiresAt,
            ...(running ? { supersedes: running.syncId } : {}),
          },
        },
      ];
    }
    case 'RecordCheckpoint':
      requireCurrentSync(state, command);
      return [{ type: 'SyncCheckpointRecorded', data: { ...ids, syncId: command.syncId, generation: command.generation, cursor: command.cursor, counts: command.counts, leaseExpiresAt: command.leaseExpiresAt } }];
    case 'RenewLease': {
      requireCurrentSync(state, command);
      const now = isoTime(command.now, 'now');
      if (isoTime(command.leaseExpiresAt, 'leaseExpiresAt') <= now) throw invalid('leaseExpiresAt must be after now');
      return [{ type: 'SyncLeaseRenewed', data: { ...ids, syncId: command.syncId, generation: command.generation, leaseExpiresAt: command.leaseExpiresAt } }];
    }
    case 'RecordPermissions':
      requireCurrentSync(state, command);
      if (state.verdict && sameJson(state.verdict, command.verdict)) return [];
      return [{ type: 'PermissionsCaptured', data: { ...ids, syncId: command.syncId, generation: command.generation, verdict: command.verdict } }];
    case 'CompleteSync':
      requireCurrentSync(state, command);
      return [{ type: 'SyncCompleted', data: { ...ids, syncId: command.syncId, generation: command.generation, cursor: state.cursor, counts: state.running!.counts } }];
    case 'DeferSync':
      requireCurrentSync(state, command);
      isoTime(command.retryAt, 'retryAt');
      return [{ type: 'SyncDeferred', data: { ...ids, syncId: command.syncId, generation: command.generation, retryAt: command.retryAt, reason: command.reason } }];
    case 'FailSync':
      requireCurrentSync(state, command);
      return [
        {
          type: 'SyncFailed',
          data: { ...ids, syncId: command.syncId, generation: command.generation, kind: command.kind, message: command.message, consecutiveFailures: state.consecutiveFailures + 1 },
        },
      ];
    default: {
      const never: never = command;
      throw unknownCommand(never);
    }
  }
}
