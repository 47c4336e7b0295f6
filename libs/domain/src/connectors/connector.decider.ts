import { isEventOf, type DomainEvent } from '../domain-event';
import { conflict, notFound, unknownCommand } from '../errors';
import { checkRequired, checkSyncInterval, DEFAULT_SYNC_INTERVAL_SECONDS, storedInstructions } from './connector-settings';
import { CONNECTOR_STREAM_EVENT_TYPES, type ConnectorCreated, type ContentPolicy, type ConnectorStreamEvent, DEFAULT_CONTENT_POLICY } from './connector.events';

/**
 * One connector's settings and lifecycle (stream `connector-<connectorId>`).
 *
 * A connector is absent, live (possibly paused), deleting (delete accepted: nothing of it is served, its content is
 * being handled per the content policy) or deleted. Commands other than create on a connector that is absent,
 * deleting or deleted are refused with CONNECTOR_NOT_FOUND, as the API shows neither; repeating a delete, or the
 * final step of one, is not.
 */
/** A live connector's settings: what ConnectorCreated recorded, as later events changed it. */
export type ConnectorSettings = Omit<ConnectorCreated['data'], 'connectorId'>;

export interface ConnectorState {
  phase: 'absent' | 'live' | 'deleting' | 'deleted';
  settings: ConnectorSettings | null;
  paused: boolean;
  /** set once deletion is requested */
  contentPolicy: ContentPolicy | null;
}

export const initialConnector = (): ConnectorState => ({ phase: 'absent', settings: null, paused: false, contentPolicy: null });

/** Folds any event of the log: the events of other streams leave the state as it is. */
export function evolveConnector(state: ConnectorState, event: DomainEvent): ConnectorState {
  return isEventOf(event, CONNECTOR_STREAM_EVENT_TYPES) ? evolveConnectorEvent(state, event) : state;
}

function evolveConnectorEvent(state: ConnectorState, event: ConnectorStreamEvent): ConnectorState {
  switch (event.type) {
    case 'ConnectorCreated': {
      const { connectorId: _id, ...settings } = event.data;
      return { phase: 'live', settings, paused: false, contentPolicy: null };
    }
    case 'ConnectorSettingsChanged': {
      const { connectorId: _id, ...changed } = event.data;
      return state.settings ? { ...state, settings: { ...state.settings, ...changed } } : state;
    }
    case 'ConnectorCredentialsRotated':
      return state.settings ? { ...state, settings: { ...state.settings, credentialsId: event.data.credentialsId } } : state;
    case 'ConnectorPaused':
      return { ...state, paused: true };
    case 'ConnectorResumed':
      return { ...state, paused: false };
    case 'ConnectorDeletionRequested':
      return { ...state, phase: 'deleting', contentPolicy: event.data.contentPolicy };
    case 'ConnectorDeleted':
      return { ...state, phase: 'deleted', contentPolicy: event.data.contentPolicy };
    default: {
      const never: never = event;
      return never;
    }
  }
}

export type ConnectorCommand =
  | {
      type: 'CreateConnector';
      connectorId: string;
      provider: string;
      databaseId: string;
      collection: string;
      credentialsId: string;
      /** omitted or "": none */
      customInstructions?: string;
      /** omitted: DEFAULT_SYNC_INTERVAL_SECONDS */
      syncIntervalSeconds?: number;
      providerAccountScope: string;
      /** omitted: on */
      captureEnabled?: boolean;
    }
  /** Only what is sent changes: `customInstructions` "" clears, omitted leaves. */
  | { type: 'ChangeConnectorSettings'; connectorId: string; syncIntervalSeconds?: number; customInstructions?: string; captureEnabled?: boolean }
  /** `credentialsId`: the newly sealed credentials row */
  | { type: 'RotateCredentials'; connectorId: string; credentialsId: string }
  | { type: 'Pause'; connectorId: string }
  | { type: 'Resume'; connectorId: string }
  /** omitted policy: DEFAULT_CONTENT_POLICY (`delete`) */
  | { type: 'RequestDeletion'; connectorId: string; contentPolicy?: ContentPolicy }
  /** the content was handled and the credentials row deleted */
  | { type: 'MarkDeleted'; connectorId: string };

export const connectorNotFound = (connectorId: string) => notFound('CONNECTOR_NOT_FOUND', `connector '${connectorId}' was not found`);

/** The live connector's settings, or CONNECTOR_NOT_FOUND when it is absent, deleting or deleted. */
export function requireLiveConnector(state: ConnectorState, connectorId: string): ConnectorSettings {
  if (state.phase !== 'live' || !state.settings) throw connectorNotFound(connectorId);
  return state.settings;
}

/**
 * Whether a sync of this trigger may start on the connector's resources. Pause turns scheduled syncs off; a sync
 * asked for (`manual`, or the `initial` one a configure starts) still runs. Resource commands are decided on the
 * resource streams; their handler checks the connector with this (or `requireLiveConnector`) and appends with the
 * connector stream's revision expected, so a delete or pause that lands meanwhile makes the append fail.
 */
export function syncAllowed(state: ConnectorState, trigger: 'scheduled' | 'manual' | 'initial'): boolean {
  return state.phase === 'live' && (trigger !== 'scheduled' || !state.paused);
}

export function decideConnector(command: ConnectorCommand, state: ConnectorState): ConnectorStreamEvent[] {
  const { connectorId } = command;
  switch (command.type) {
    case 'CreateConnector': {
      if (state.phase !== 'absent') throw conflict('CONNECTOR_EXISTS', `connector '${connectorId}' already exists`);
      checkRequired(command.provider, 'provider');
      checkRequired(command.databaseId, 'database');
      checkRequired(command.collection, 'collection');
      checkRequired(command.credentialsId, 'credentials');
      checkRequired(command.providerAccountScope, 'provider_account_scope');
      const syncIntervalSeconds = command.syncIntervalSeconds ?? DEFAULT_SYNC_INTERVAL_SECONDS;
      checkSyncInterval(syncIntervalSeconds);
      const customInstructions = command.customInstructions === undefined ? null : storedInstructions(command.customInstructions);
      return [
        {
          type: 'ConnectorCreated',
          data: {
            connectorId,
            provider: command.provider,
            databaseId: command.databaseId,
            collection: command.collection,
            credentialsId: command.credentialsId,
            customInstructions,
            syncIntervalSeconds,
            providerAccountScope: command.providerAccountScope,
            captureEnabled: command.captureEnabled ?? true,
          },
        },
      ];
    }
    case 'ChangeConnectorSettings': {
      const settings = requireLiveConnector(state, connectorId);
      // Every sent value is checked before anything is decided, so a refused request changes nothing.
      if (command.syncIntervalSeconds !== undefined) checkSyncInterval(command.syncIntervalSeconds);
      const instructions = command.customInstructions === undefined ? undefined : storedInstructions(command.customInstructions);
      const changed: Omit<Extract<ConnectorStreamEvent, { type: 'ConnectorSettingsChanged' }>['data'], 'connectorId'> = {};
      if (command.syncIntervalSeconds !== undefined && command.syncIntervalSeconds !== settings.syncIntervalSeconds) changed.syncIntervalSeconds = command.syncIntervalSeconds;
      if (instructions !== undefined && instructions !== settings.customInstructions) changed.customInstructions = instructions;
      if (command.captureEnabled !== undefined && command.captureEnabled !== settings.captureEnabled) changed.captureEnabled = command.captureEnabled;
      return Object.keys(changed).length ? [{ type: 'ConnectorSettingsChanged', data: { connectorId, ...changed } }] : [];
    }
    case 'RotateCredentials': {
      const settings = requireLiveConnector(state, connectorId);
      checkRequired(command.credentialsId, 'credentials');
      if (command.credentialsId === settings.credentialsId) return [];
      return [{ type: 'ConnectorCredentialsRotated', data: { connectorId, credentialsId: command.credentialsId, previousCredentialsId: settings.credentialsId } }];
    }
    case 'Pause':
      requireLiveConnector(state, connectorId);
      return state.paused ? [] : [{ type: 'ConnectorPaused', data: { connectorId } }];
    case 'Resume':
      requireLiveConnector(state, connectorId);
      return state.paused ? [{ type: 'ConnectorResumed', data: { connectorId } }] : [];
    case 'RequestDeletion': {
      const contentPolicy = command.contentPolicy ?? DEFAULT_CONTENT_POLICY;
      if (state.phase === 'deleting') {
        if (contentPolicy === state.contentPolicy) return [];
        throw conflict('CONNECTOR_DELETING', `connector '${connectorId}' is already being deleted with content policy '${state.contentPolicy}'`);
      }
      requireLiveConnector(state, connectorId);
      return [{ type: 'ConnectorDeletionRequested', data: { connectorId, contentPolicy } }];
    }
    case 'MarkDeleted':
      if (state.phase === 'deleted') return [];
      if (state.phase === 'absent') throw connectorNotFound(connectorId);
      if (state.phase === 'live') throw conflict('CONNECTOR_NOT_DELETING', `connector '${connectorId}' has no deletion under way`);
      return [{ type: 'ConnectorDeleted', data: { connectorId, contentPolicy: state.contentPolicy ?? DEFAULT_CONTENT_POLICY } }];
    default: {
      const never: never = command;
      throw unknownCommand(never);
    }
  }
}
