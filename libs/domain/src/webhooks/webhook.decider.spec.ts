import { deciderSpec } from '@crs/test/support/decider-spec';
import { decideWebhook, evolveWebhook, initialWebhook } from './webhook.decider';
import type { WebhookEvent } from './webhook.events';

const given = deciderSpec({ decide: decideWebhook, evolve: evolveWebhook, initialState: initialWebhook });

const registered: WebhookEvent = { type: 'WebhookRegistered', data: { url: 'https://a.example/h', eventTypes: ['indexing.status_changed'], replaced: false } };
const secretSet = (secretId: string, generated = false): WebhookEvent => ({ type: 'SigningSecretSet', data: { secretId, generated } });
const deleted: WebhookEvent = { type: 'WebhookDeleted', data: { url: 'https://a.example/h' } };

describe('webhook registration decider', () => {
  describe('Register', () => {
    it('registers a first webhook', () => {
      given([]).when({ type: 'Register', url: 'https://a.example/h', eventTypes: ['indexing.status_changed'] }).then([registered]);
    });
    it('registers with a secret when one comes with it', () => {
      given([])
        .when({ type: 'Register', url: 'https://a.example/h', eventTypes: ['indexing.status_changed'], secret: { secretId: 's1', generated: true } })
        .then([registered, secretSet('s1', true)]);
    });
    it('registering again replaces URL and event types', () => {
      given([registered])
        .when({ type: 'Register', url: 'https://b.example/h', eventTypes: [] })
        .then([{ type: 'WebhookRegistered', data: { url: 'https://b.example/h', eventTypes: [], replaced: true } }]);
    });
    it('registering again without a secret keeps the secret', () => {
      const replaced: WebhookEvent = { type: 'WebhookRegistered', data: { url: 'https://b.example/h', eventTypes: [], replaced: true } };
      given([registered, secretSet('s1', true), replaced]).when({ type: 'RemoveSecret' }).then([{ type: 'SigningSecretRemoved', data: { secretId: 's1' } }]);
    });
    it('a registration after a deletion is a first one again', () => {
      given([registered, deleted]).when({ type: 'Register', url: 'https://a.example/h', eventTypes: ['indexing.status_changed'] }).then([registered]);
    });
  });

  describe('Delete', () => {
    it('deletes the registration, naming its URL', () => {
      given([registered]).when({ type: 'Delete' }).then([{ type: 'WebhookDeleted', data: { url: 'https://a.example/h' } }]);
    });
    it('deleting without a registration decides nothing', () => {
      given([]).when({ type: 'Delete' }).thenNothing();
      given([registered, secretSet('s1'), deleted]).when({ type: 'Delete' }).thenNothing();
    });
    it('deleting the registration forgets its secret', () => {
      given([registered, secretSet('s1'), deleted, registered]).when({ type: 'RemoveSecret' }).thenNothing();
    });
  });

  describe('SetSecret', () => {
    it('sets a secret on a registration', () => {
      given([registered]).when({ type: 'SetSecret', secretId: 's2', generated: false }).then([secretSet('s2')]);
    });
    it('refuses without a registration', () => {
      given([]).when({ type: 'SetSecret', secretId: 's', generated: false }).thenThrows('WEBHOOK_NOT_REGISTERED', 'not_found');
      given([registered, deleted]).when({ type: 'SetSecret', secretId: 's', generated: false }).thenThrows('WEBHOOK_NOT_REGISTERED');
    });
  });

  describe('RemoveSecret', () => {
    it('removes the current secret', () => {
      given([registered, secretSet('s1'), secretSet('s2')]).when({ type: 'RemoveSecret' }).then([{ type: 'SigningSecretRemoved', data: { secretId: 's2' } }]);
    });
    it('without a secret decides nothing', () => {
      given([registered]).when({ type: 'RemoveSecret' }).thenNothing();
      given([registered, secretSet('s1'), { type: 'SigningSecretRemoved', data: { secretId: 's1' } }]).when({ type: 'RemoveSecret' }).thenNothing();
    });
    it('refuses without a registration', () => {
      given([]).when({ type: 'RemoveSecret' }).thenThrows('WEBHOOK_NOT_REGISTERED', 'not_found');
    });
  });
});
