import { statusChangedPayload, testPayload } from './webhook-payload';

describe('webhook payloads', () => {
  it('has the spec fields; error fields only for failures; tenant_id is the database id', () => {
    const p = statusChangedPayload({ deliveryId: 'dlv_1', itemId: 'm1', databaseName: 'acme', databaseId: 'uuid-1', collection: 'c', status: 'errored', timestamp: 't', errorCode: 'PARSE_FAILED', errorMessage: 'bad' });
    expect(Object.keys(p)).toEqual(['event', 'delivery_id', 'id', 'database', 'collection', 'status', 'timestamp', 'error_code', 'error_message', 'tenant_id', 'sub_tenant_id']);
    expect(p).toMatchObject({ tenant_id: 'uuid-1', sub_tenant_id: 'c', database: 'acme' });
    const ok = statusChangedPayload({ deliveryId: 'dlv_1', itemId: 'm1', databaseName: 'acme', databaseId: 'uuid-1', collection: 'c', status: 'completed', timestamp: 't', errorCode: 'X' });
    expect(ok).not.toHaveProperty('error_code');
    expect(testPayload('org', 'test_1', 't')).toMatchObject({ id: 'test_document', database: 'org', collection: 'org', tenant_id: 'org', sub_tenant_id: 'org', status: 'completed', test: true });
  });
});
