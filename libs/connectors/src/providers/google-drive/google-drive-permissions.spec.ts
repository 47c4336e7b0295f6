import { captureOf, filePermission, mapGrants, type DrivePermission } from './google-drive-permissions';

const user = (email: string | undefined, extra: Partial<DrivePermission> = {}): DrivePermission => ({ type: 'user', role: 'reader', ...(email ? { emailAddress: email } : {}), ...extra });

describe('Drive grants as principals', () => {
  it('maps user, group and domain grants to their principals in stored form, sorted and lowercased, whatever the role', () => {
    const grants: DrivePermission[] = [
      user('Ada@Example.TEST', { role: 'owner' }),
      { type: 'group', role: 'writer', emailAddress: 'eng@example.test' },
      { type: 'domain', role: 'commenter', domain: 'Example.test', allowFileDiscovery: true },
      user('ada@example.test', { role: 'reader' }),
    ];
    expect(mapGrants(grants, 'f1')).toEqual({ acl: ['domain:example.test', 'group:google:eng@example.test', 'user_email:ada@example.test'], unresolved: 0 });
  });

  it('a discoverable "anyone" grant makes the file public, even beside grants it cannot resolve', () => {
    expect(mapGrants([user('ada@example.test'), { type: 'anyone', role: 'reader', allowFileDiscovery: true }, user(undefined)], 'f1')).toEqual({ acl: ['__public__'], unresolved: 0 });
  });

  it('link-only grants (anyone or a domain with the link) grant nothing; nor do published-view grants', () => {
    const grants: DrivePermission[] = [
      { type: 'anyone', role: 'reader', allowFileDiscovery: false },
      { type: 'domain', role: 'reader', domain: 'example.test', allowFileDiscovery: false },
      user('viewer@example.test', { view: 'published' }),
      user('bob@example.test'),
    ];
    expect(mapGrants(grants, 'f1')).toEqual({ acl: ['user_email:bob@example.test'], unresolved: 0 });
    expect(mapGrants([{ type: 'anyone', role: 'reader', allowFileDiscovery: false }], 'f1')).toEqual({ acl: ['__private__'], unresolved: 0 });
  });

  it('a grant whose email is hidden (or is no email, or is an unknown type) leaves no list but the count of such grants', () => {
    expect(mapGrants([user('ada@example.test'), user(undefined), { type: 'group', role: 'reader', emailAddress: 'not an email' }], 'f1')).toEqual({ acl: null, unresolved: 2 });
    expect(mapGrants([{ type: 'domain', role: 'reader' }, { type: 'mystery', role: 'reader' }], 'f1')).toEqual({ acl: null, unresolved: 2 });
    expect(mapGrants([user('bob@example.test'), { type: 'user', role: 'reader', deleted: true }, user('gone@example.test', { deleted: true }), { type: 'group', role: 'reader', deleted: true }], 'f1')).toEqual({ acl: null, unresolved: 3 });
    expect(mapGrants([user('bob@example.test'), user('next@example.test', { role: 'writer', pendingOwner: true })], 'f1')).toEqual({ acl: ['user_email:bob@example.test', 'user_email:next@example.test'], unresolved: 0 });
    expect(captureOf({ acl: null, unresolved: 2 })).toEqual({ status: 'captured', acl: null, unresolved: 2 });
    expect(captureOf({ acl: ['user_email:ada@example.test'], unresolved: 0 })).toEqual({ status: 'captured', acl: ['user_email:ada@example.test'] });
  });

  it("a file carries its readers in force even when they are its resource's; one public as its resource is says nothing of its own", () => {
    const resource = mapGrants([user('ada@example.test'), { type: 'anyone', role: 'reader', allowFileDiscovery: false }], 'folder');
    expect(filePermission([user('ada@example.test', { role: 'writer' })], 'f1', resource)).toEqual({ status: 'captured', acl: ['user_email:ada@example.test'] });
    expect(filePermission([user('ada@example.test'), user('bob@example.test')], 'f1', resource)).toEqual({ status: 'captured', acl: ['user_email:ada@example.test', 'user_email:bob@example.test'] });
    expect(filePermission([user('ada@example.test'), user(undefined)], 'f1', resource)).toEqual({ status: 'captured', acl: null, unresolved: 1 });
    expect(filePermission([user(undefined)], 'f1', mapGrants([user(undefined)], 'folder'))).toEqual({ status: 'captured', acl: null, unresolved: 1 });
    expect(filePermission([], 'f1', resource)).toEqual({ status: 'captured', acl: ['__private__'] });
    const anyone: DrivePermission = { type: 'anyone', role: 'reader', allowFileDiscovery: true };
    expect(filePermission([anyone, user('ada@example.test')], 'f1', mapGrants([anyone], 'folder'))).toEqual({ status: 'captured', acl: null });
    expect(filePermission([anyone, user('ada@example.test')], 'f1', resource)).toEqual({ status: 'captured', acl: ['__public__'] });
  });

  it('more than 1,000 principals become one group principal for the file, not a truncated list; exactly 1,000 stay listed', () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => user(`user${i}@example.test`));
    expect(mapGrants(many(1001), 'file-9')).toEqual({ acl: ['group:google:readers-of-file-9'], unresolved: 0 });
    expect(mapGrants(many(1000), 'file-9').acl).toHaveLength(1000);
  });

  it('a principal longer than a stored principal may be is unresolved', () => {
    expect(mapGrants([user(`${'a'.repeat(250)}@example.test`)], 'f1')).toEqual({ acl: null, unresolved: 1 });
  });
});
