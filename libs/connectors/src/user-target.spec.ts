import { ConfigurationError, TargetForbiddenError } from './provider-errors';
import { checkUserUrl } from './user-target';

describe('checkUserUrl', () => {
  const publicLookup = async () => [{ address: '93.184.216.34', family: 4 }];
  const check = (raw: unknown, allowPrivateNetworks = false, lookup = publicLookup) => checkUserUrl(raw, 'base_url', { allowPrivateNetworks, lookup, example: 'https://example.atlassian.net' });

  it('passes an https URL on a public host', async () => {
    expect((await check('https://acme.example.com/wiki/')).href).toBe('https://acme.example.com/wiki/');
  });
  it('refuses what is not an http(s) URL alone, as a configuration error', async () => {
    for (const raw of [undefined, '', 'not a url', 'ftp://acme.example.com', 'https://u:p@acme.example.com', 'https://acme.example.com/?x=1', 'https://acme.example.com/#f']) {
      await expect(check(raw)).rejects.toBeInstanceOf(ConfigurationError);
    }
  });
  it('refuses http and private hosts as forbidden targets, unless private networks are allowed', async () => {
    await expect(check('http://acme.example.com')).rejects.toBeInstanceOf(TargetForbiddenError);
    await expect(check('https://127.0.0.1:8443')).rejects.toBeInstanceOf(TargetForbiddenError);
    await expect(check('https://intranet.example.com', false, async () => [{ address: '10.0.0.5', family: 4 }])).rejects.toBeInstanceOf(TargetForbiddenError);
    expect((await check('http://127.0.0.1:8443', true)).host).toBe('127.0.0.1:8443');
  });
});
