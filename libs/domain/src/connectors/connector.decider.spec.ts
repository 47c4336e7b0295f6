import { deciderSpec } from '@crs/test/support/decider-spec';
import { decideConnector, evolveConnector, initialConnector, requireLiveConnector, syncAllowed, type ConnectorCommand } from './connector.decider';
import { DEFAULT_SYNC_INTERVAL_SECONDS, MAX_CUSTOM_INSTRUCTIONS_CHARACTERS, SYNC_INTERVAL_BOUNDS } from './connector-settings';
import type { ConnectorStreamEvent } from './connector.events';

const given = deciderSpec({ decide: decideConnector, evolve: evolveConnector, initialState: initialConnector });
const fold = (events: ConnectorStreamEvent[]) => events.reduce(evolveConnector, initialConnector());

const connectorId = 'c1';
const create: Extract<ConnectorCommand, { type: 'CreateConnector' }> = {
  type: 'CreateConnector',
  connectorId,
  provider: 'postgres',
  databaseId: 'db1',
  collection: 'main',
  credentialsId: 'cred1',
  providerAccountScope: 'pg.example:5432/shop',
};
const createdData: Extract<ConnectorStreamEvent, { type: 'ConnectorCreated' }>['data'] = {
  connectorId,
  provider: 'postgres',
  databaseId: 'db1',
  collection: 'main',
  credentialsId: 'cred1',
  customInstructions: null,
  syncIntervalSeconds: DEFAULT_SYNC_INTERVAL_SECONDS,
  providerAccountScope: 'pg.example:5432/shop',
  captureEnabled: true,
};
const created: ConnectorStreamEvent = { type: 'ConnectorCreated', data: createdData };
const withInstructions: ConnectorStreamEvent = { type: 'ConnectorSettingsChanged', data: { connectorId, customInstructions: 'Summarize orders.' } };
const paused: ConnectorStreamEvent = { type: 'ConnectorPaused', data: { connectorId } };
const resumed: ConnectorStreamEvent = { type: 'ConnectorResumed', data: { connectorId } };
const deleting = (contentPolicy: 'delete' | 'keep' = 'delete'): ConnectorStreamEvent => ({ type: 'ConnectorDeletionRequested', data: { connectorId, contentPolicy } });
const deleted = (contentPolicy: 'delete' | 'keep' = 'delete'): ConnectorStreamEvent => ({ type: 'ConnectorDeleted', data: { connectorId, contentPolicy } });

/** Histories on which every command but create is refused as if the connector did not exist. */
const gone: [string, ConnectorStreamEvent[]][] = [
  ['never created', []],
  ['being deleted', [created, deleting()]],
  ['deleted', [created, deleting(), deleted()]],
];

// 4,000 characters, each an emoji of two UTF-16 units: 8,000 units, still 4,000 characters.
const emoji = '\u{1F600}';
const limit = emoji.repeat(MAX_CUSTOM_INSTRUCTIONS_CHARACTERS);

describe('connector decider', () => {
  describe('CreateConnector', () => {
    it('creates a connector with the one-hour default interval, capture on and no instructions', () => {
      given([]).when(create).then([created]);
    });
    it('records what was sent: instructions, interval, capture', () => {
      given([])
        .when({ ...create, customInstructions: 'Orders only.', syncIntervalSeconds: 600, captureEnabled: false })
        .then([{ type: 'ConnectorCreated', data: { ...createdData, customInstructions: 'Orders only.', syncIntervalSeconds: 600, captureEnabled: false } }]);
    });
    it('"" instructions are none', () => {
      given([]).when({ ...create, customInstructions: '' }).then([created]);
    });
    it('accepts 4,000 characters of instructions, counted in characters (an emoji counts once)', () => {
      expect(limit.length).toBe(2 * MAX_CUSTOM_INSTRUCTIONS_CHARACTERS);
      given([])
        .when({ ...create, customInstructions: limit })
        .then([{ type: 'ConnectorCreated', data: { ...createdData, customInstructions: limit } }]);
    });
    it('refuses 4,001 characters of instructions with INVALID_INPUT', () => {
      given([]).when({ ...create, customInstructions: limit + 'a' }).thenThrows('INVALID_INPUT', 'validation');
      given([]).when({ ...create, customInstructions: 'a'.repeat(4001) }).thenThrows('INVALID_INPUT', 'validation');
    });
    it('refuses an interval outside the bounds or not whole seconds', () => {
      for (const syncIntervalSeconds of [SYNC_INTERVAL_BOUNDS.min - 1, SYNC_INTERVAL_BOUNDS.max + 1, 0, -60, 90.5, Number.NaN]) {
        given([]).when({ ...create, syncIntervalSeconds }).thenThrows('INVALID_INPUT', 'validation');
      }
    });
    it('accepts the bounds themselves', () => {
      for (const syncIntervalSeconds of [SYNC_INTERVAL_BOUNDS.min, SYNC_INTERVAL_BOUNDS.max]) {
        given([])
          .when({ ...create, syncIntervalSeconds })
          .then([{ type: 'ConnectorCreated', data: { ...createdData, syncIntervalSeconds } }]);
      }
    });
    it('refuses a blank provider account scope, provider or credentials', () => {
      given([]).when({ ...create, providerAccountScope: ' ' }).thenThrows('INVALID_INPUT');
      given([]).when({ ...create, provider: '' }).thenThrows('INVALID_INPUT');
      given([]).when({ ...create, credentialsId: '' }).thenThrows('INVALID_INPUT');
    });
    it('refuses an id that was ever used, deleted or not', () => {
      given([created]).when(create).thenThrows('CONNECTOR_EXISTS', 'conflict');
      given([created, deleting(), deleted()]).when(create).thenThrows('CONNECTOR_EXISTS', 'conflict');
    });
  });

  describe('ChangeConnectorSettings', () => {
    const change = (fields: Partial<Extract<ConnectorCommand, { type: 'ChangeConnectorSettings' }>>): ConnectorCommand => ({ type: 'ChangeConnectorSettings', connectorId, ...fields });
    it('records only what changed', () => {
      given([created])
        .when(change({ syncIntervalSeconds: 900, customInstructions: 'Summarize orders.', captureEnabled: true }))
        .then([{ type: 'ConnectorSettingsChanged', data: { connectorId, syncIntervalSeconds: 900, customInstructions: 'Summarize orders.' } }]);
    });
    it('"" clears the instructions', () => {
      given([created, withInstructions])
        .when(change({ customInstructions: '' }))
        .then([{ type: 'ConnectorSettingsChanged', data: { connectorId, customInstructions: null } }]);
    });
    it('omitted instructions are left as they are', () => {
      given([created, withInstructions])
        .when(change({ syncIntervalSeconds: 120 }))
        .then([{ type: 'ConnectorSettingsChanged', data: { connectorId, syncIntervalSeconds: 120 } }]);
      expect(fold([created, withInstructions, { type: 'ConnectorSettingsChanged', data: { connectorId, syncIntervalSeconds: 120 } }]).settings?.customInstructions).toBe('Summarize orders.');
    });
    it('turns capture off and on', () => {
      given([created]).when(change({ captureEnabled: false })).then([{ type: 'ConnectorSettingsChanged', data: { connectorId, captureEnabled: false } }]);
    });
    it('the same values again, "" on none, or nothing sent decide nothing', () => {
      given([created, withInstructions]).when(change({ customInstructions: 'Summarize orders.', syncIntervalSeconds: DEFAULT_SYNC_INTERVAL_SECONDS })).thenNothing();
      given([created]).when(change({ customInstructions: '' })).thenNothing();
      given([created]).when(change({})).thenNothing();
    });
    it('accepts 4,000 characters and refuses 4,001, changing nothing else of the request', () => {
      given([created])
        .when(change({ customInstructions: limit }))
        .then([{ type: 'ConnectorSettingsChanged', data: { connectorId, customInstructions: limit } }]);
      given([created, withInstructions]).when(change({ customInstructions: `${limit}${emoji}`, syncIntervalSeconds: 120 })).thenThrows('INVALID_INPUT', 'validation');
    });
    it('refuses an interval out of bounds', () => {
      given([created]).when(change({ syncIntervalSeconds: 59 })).thenThrows('INVALID_INPUT');
      given([created]).when(change({ syncIntervalSeconds: 2_592_001 })).thenThrows('INVALID_INPUT');
    });
    it.each(gone)('refuses a connector %s with CONNECTOR_NOT_FOUND', (_, history) => {
      given(history).when(change({ syncIntervalSeconds: 120 })).thenThrows('CONNECTOR_NOT_FOUND', 'not_found');
    });
  });

  describe('RotateCredentials', () => {
    it('records the new credentials id and the one it replaces (never the credentials)', () => {
      given([created])
        .when({ type: 'RotateCredentials', connectorId, credentialsId: 'cred2' })
        .then([{ type: 'ConnectorCredentialsRotated', data: { connectorId, credentialsId: 'cred2', previousCredentialsId: 'cred1' } }]);
    });
    it('the current credentials id again decides nothing', () => {
      given([created]).when({ type: 'RotateCredentials', connectorId, credentialsId: 'cred1' }).thenNothing();
    });
    it('a second rotation replaces the first', () => {
      given([created, { type: 'ConnectorCredentialsRotated', data: { connectorId, credentialsId: 'cred2', previousCredentialsId: 'cred1' } }])
        .when({ type: 'RotateCredentials', connectorId, credentialsId: 'cred3' })
        .then([{ type: 'ConnectorCredentialsRotated', data: { connectorId, credentialsId: 'cred3', previousCredentialsId: 'cred2' } }]);
    });
    it.each(gone)('refuses a connector %s with CONNECTOR_NOT_FOUND', (_, history) => {
      given(history).when({ type: 'RotateCredentials', connectorId, credentialsId: 'cred2' }).thenThrows('CONNECTOR_NOT_FOUND', 'not_found');
    });
  });

  describe('Pause and Resume', () => {
    it('pauses a running connector and resumes a paused one', () => {
      given([created]).when({ type: 'Pause', connectorId }).then([paused]);
      given([created, paused]).when({ type: 'Resume', connectorId }).then([resumed]);
      given([created, paused, resumed]).when({ type: 'Pause', connectorId }).then([paused]);
    });
    it('pausing a paused connector, or resuming a running one, decides nothing', () => {
      given([created, paused]).when({ type: 'Pause', connectorId }).thenNothing();
      given([created]).when({ type: 'Resume', connectorId }).thenNothing();
      given([created, paused, resumed]).when({ type: 'Resume', connectorId }).thenNothing();
    });
    it.each(gone)('refuses a connector %s with CONNECTOR_NOT_FOUND', (_, history) => {
      given(history).when({ type: 'Pause', connectorId }).thenThrows('CONNECTOR_NOT_FOUND', 'not_found');
      given(history).when({ type: 'Resume', connectorId }).thenThrows('CONNECTOR_NOT_FOUND', 'not_found');
    });
    it('pause turns scheduled syncs off; a sync asked for still runs', () => {
      expect(syncAllowed(fold([created]), 'scheduled')).toBe(true);
      expect(syncAllowed(fold([created, paused]), 'scheduled')).toBe(false);
      expect(syncAllowed(fold([created, paused]), 'manual')).toBe(true);
      expect(syncAllowed(fold([created, paused]), 'initial')).toBe(true);
      expect(syncAllowed(fold([created, paused, resumed]), 'scheduled')).toBe(true);
      expect(syncAllowed(fold([created, deleting()]), 'manual')).toBe(false);
    });
  });

  describe('RequestDeletion', () => {
    it('deletes the synced content by default', () => {
      given([created]).when({ type: 'RequestDeletion', connectorId }).then([deleting('delete')]);
      given([created, paused]).when({ type: 'RequestDeletion', connectorId }).then([deleting('delete')]);
    });
    it('keeps it when asked to', () => {
      given([created]).when({ type: 'RequestDeletion', connectorId, contentPolicy: 'keep' }).then([deleting('keep')]);
    });
    it('a repeat with the same policy decides nothing', () => {
      given([created, deleting()]).when({ type: 'RequestDeletion', connectorId }).thenNothing();
      given([created, deleting('keep')]).when({ type: 'RequestDeletion', connectorId, contentPolicy: 'keep' }).thenNothing();
    });
    it('a repeat with another policy is refused: the first one stands', () => {
      given([created, deleting('keep')]).when({ type: 'RequestDeletion', connectorId }).thenThrows('CONNECTOR_DELETING', 'conflict');
    });
    it('refuses a connector never created, or deleted', () => {
      given([]).when({ type: 'RequestDeletion', connectorId }).thenThrows('CONNECTOR_NOT_FOUND', 'not_found');
      given([created, deleting(), deleted()]).when({ type: 'RequestDeletion', connectorId }).thenThrows('CONNECTOR_NOT_FOUND', 'not_found');
    });
  });

  describe('MarkDeleted', () => {
    it('completes a deletion under way, with its policy', () => {
      given([created, deleting('keep')]).when({ type: 'MarkDeleted', connectorId }).then([deleted('keep')]);
    });
    it('a repeat decides nothing', () => {
      given([created, deleting(), deleted()]).when({ type: 'MarkDeleted', connectorId }).thenNothing();
    });
    it('refuses a live connector (no deletion was requested) and one never created', () => {
      given([created]).when({ type: 'MarkDeleted', connectorId }).thenThrows('CONNECTOR_NOT_DELETING', 'conflict');
      given([]).when({ type: 'MarkDeleted', connectorId }).thenThrows('CONNECTOR_NOT_FOUND', 'not_found');
    });
  });

  describe('requireLiveConnector (resource commands check their connector with it)', () => {
    it('gives the settings of a live connector, paused or not', () => {
      expect(requireLiveConnector(fold([created, paused]), connectorId)).toMatchObject({ provider: 'postgres', credentialsId: 'cred1' });
    });
    it.each(gone)('refuses a connector %s', (_, history) => {
      expect(() => requireLiveConnector(fold(history), connectorId)).toThrow(expect.objectContaining({ code: 'CONNECTOR_NOT_FOUND' }));
    });
  });
});
