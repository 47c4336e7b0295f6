import { createSign } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { auth, drive, type drive_v3 } from '@googleapis/drive';
import { isPublicAddress, type LookupFn } from '@crs/network/address-policy';
import { PrivateTargetError, privateTargetReason, publicOnlyLookup } from '@crs/network/public-targets';
import { AuthError, ConfigurationError, RateLimitedError, ScopeError, TargetForbiddenError, TransientError } from '../../provider-errors';
import type { Credentials } from '../../provider.port';
import { retryAtFrom } from '../../retry-after';
import { DEFAULT_RATE_LIMIT_WAIT_MS } from './google-drive-errors';

/** Read-only access to the files the account can see: all the connector needs. */
export const DRIVE_SCOPE = 'https://www.googleapis.com/auth/drive.readonly';

/** Google's Drive API host; an operator may point the provider elsewhere (tests, a proxy), never a credential. */
export const GOOGLE_API_URL = 'https://www.googleapis.com';

export interface ServiceAccountKey {
  clientEmail: string;
  privateKey: string;
  privateKeyId: string | null;
  /** where the signed assertion is exchanged for an access token: the key's own `token_uri` */
  tokenUri: URL;
}

export type DriveCredentials = { kind: 'access_token'; accessToken: string } | { kind: 'service_account'; key: ServiceAccountKey; subject: string | null };

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/**
 * The connector's credentials: a service account's JSON key (with an optional `subject` to act as, by domain-wide
 * delegation), or an OAuth access token. Exactly one of the two; a malformed key is a ConfigurationError that says
 * what is wrong with it (never its content).
 */
export function readCredentials(credentials: Credentials): DriveCredentials {
  const keyText = text(credentials.service_account_key);
  const accessToken = text(credentials.access_token);
  const subject = text(credentials.subject) ?? null;
  if (keyText && accessToken) throw new ConfigurationError('Give either service_account_key or access_token, not both.');
  if (accessToken) {
    if (subject) throw new ConfigurationError('subject applies to a service account key only (domain-wide delegation); an access token already acts as its user.');
    return { kind: 'access_token', accessToken };
  }
  if (!keyText) throw new ConfigurationError('Give service_account_key (the JSON key of a service account) or access_token (an OAuth access token with the drive.readonly scope).');
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(keyText) as Record<string, unknown>;
  } catch {
    throw new ConfigurationError('service_account_key is not JSON: paste the whole key file a Google Cloud service account gives (Keys > Add key > JSON).');
  }
  if (parsed === null || typeof parsed !== 'object' || parsed.type !== 'service_account') {
    throw new ConfigurationError('service_account_key is not a service account key: its "type" must be "service_account".');
  }
  const clientEmail = text(parsed.client_email);
  const privateKey = text(parsed.private_key);
  const tokenUriText = text(parsed.token_uri);
  const missing = [!clientEmail && 'client_email', !privateKey && 'private_key', !tokenUriText && 'token_uri'].filter(Boolean);
  if (missing.length) throw new ConfigurationError(`service_account_key lacks ${missing.join(', ')}.`);
  let tokenUri: URL;
  try {
    tokenUri = new URL(tokenUriText!);
  } catch {
    throw new ConfigurationError('The token_uri of service_account_key is not a URL.');
  }
  if (tokenUri.protocol !== 'https:' && tokenUri.protocol !== 'http:') throw new ConfigurationError('The token_uri of service_account_key must be an https:// URL.');
  if (tokenUri.username || tokenUri.password) throw new ConfigurationError('The token_uri of service_account_key must not carry a user or password.');
  return { kind: 'service_account', key: { clientEmail: clientEmail!, privateKey: privateKey!, privateKeyId: text(parsed.private_key_id) ?? null, tokenUri }, subject };
}

/** Who the credentials act as, for messages: the delegated user, or the service account itself. */
export function actingAs(creds: DriveCredentials): string | null {
  if (creds.kind === 'access_token') return null;
  return creds.subject ?? creds.key.clientEmail;
}

export interface TokenExchangeOptions {
  /** CONNECTOR_ALLOW_PRIVATE_NETWORKS: a token_uri on a loopback or private address (and plain http) is allowed */
  allowPrivateNetworks: boolean;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** resolves the token_uri's host (tests replace it to give a hostile DNS answer) */
  lookup?: LookupFn;
}

/**
 * The key's token_uri comes with the credentials, so it is checked as any user-given target is: https only, and not
 * on this service's network (loopback, private, link-local, reserved), unless the operator allowed private networks.
 * The exchange itself connects only to checked addresses (`publicOnlyLookup`), so a name that resolves elsewhere
 * later is refused at connect time too.
 */
export async function checkTokenUri(key: ServiceAccountKey, allowPrivateNetworks: boolean, lookup?: LookupFn): Promise<void> {
  if (allowPrivateNetworks) return;
  if (key.tokenUri.protocol !== 'https:') throw new ConfigurationError('The token_uri of service_account_key must be an https:// URL.');
  const reason = await privateTargetReason(key.tokenUri.hostname, lookup ? { lookup } : {});
  if (reason) throw new TargetForbiddenError(`The token_uri of service_account_key leads to ${key.tokenUri.hostname}, which is not on the public internet (${reason}); connectors may not connect to this service's own network.`);
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** The signed assertion of Google's service-account flow (RFC 7523): RS256 over the key's private key, one hour long. */
export function signedAssertion(key: ServiceAccountKey, subject: string | null, nowSeconds: number): string {
  const header = { alg: 'RS256', typ: 'JWT', ...(key.privateKeyId ? { kid: key.privateKeyId } : {}) };
  const claims = { iss: key.clientEmail, scope: DRIVE_SCOPE, aud: key.tokenUri.href, iat: nowSeconds, exp: nowSeconds + 3600, ...(subject ? { sub: subject } : {}) };
  const unsigned = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  let signature: Buffer;
  try {
    signature = createSign('RSA-SHA256').update(unsigned).sign(key.privateKey);
  } catch {
    throw new ConfigurationError('The private_key of service_account_key cannot sign: it is not the PEM private key of the key file.');
  }
  return `${unsigned}.${base64url(signature)}`;
}

export interface AccessToken {
  accessToken: string;
  /** epoch milliseconds */
  expiresAt: number;
}

const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

/**
 * Exchanges the signed assertion at the key's token_uri for an access token. Refusals become errors a person can act
 * on: `invalid_grant` (a deleted or disabled key, a subject outside the domain, a clock far off) an AuthError,
 * `unauthorized_client` (domain-wide delegation not granted for the scope) a ScopeError. Redirects are not followed.
 */
export async function exchangeServiceAccountKey(key: ServiceAccountKey, subject: string | null, opts: TokenExchangeOptions): Promise<AccessToken> {
  await checkTokenUri(key, opts.allowPrivateNetworks, opts.lookup);
  return requestServiceAccountToken(key, subject, opts);
}

/** The exchange without the check before it: the connection is still checked when it connects. */
export async function requestServiceAccountToken(key: ServiceAccountKey, subject: string | null, opts: TokenExchangeOptions): Promise<AccessToken> {
  const body = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: signedAssertion(key, subject, Math.floor(Date.now() / 1000)) }).toString();
  const started = Date.now();
  const { status, headers, text: answer } = await post(key.tokenUri, body, opts);
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(answer) as Record<string, unknown>;
  } catch {
    // not JSON: the status decides below
  }
  const where = key.tokenUri.host;
  if (status === 200 && typeof json.access_token === 'string' && json.access_token !== '') {
    const expiresIn = typeof json.expires_in === 'number' && json.expires_in > 0 ? json.expires_in : 3600;
    return { accessToken: json.access_token, expiresAt: started + expiresIn * 1000 };
  }
  const error = typeof json.error === 'string' ? json.error : undefined;
  const description = typeof json.error_description === 'string' ? json.error_description : undefined;
  const said = error ? `${error}${description ? `: ${description}` : ''}` : `HTTP ${status}`;
  if (status === 429) {
    const retryAt = retryAtFrom(headers.get('retry-after'), new Date(), DEFAULT_RATE_LIMIT_WAIT_MS);
    throw new RateLimitedError(`The token endpoint ${where} is throttling the connector; the sync resumes after ${retryAt.toISOString()}.`, retryAt);
  }
  if (status >= 500) throw new TransientError(`The token endpoint ${where} failed (${said}); the sync is tried again later.`);
  if (error === 'unauthorized_client') {
    throw new ScopeError(`The service account ${key.clientEmail} may not act as ${subject ?? 'itself'} with the drive.readonly scope (${said}). For a subject, allow the service account's client id the scope ${DRIVE_SCOPE} under domain-wide delegation in the Google Admin console.`);
  }
  if (error === 'invalid_grant' || error === 'invalid_client' || status === 400 || status === 401 || status === 403) {
    throw new AuthError(`The token endpoint ${where} refused the service account key of ${key.clientEmail}${subject ? ` acting as ${subject}` : ''} (${said}): the key was deleted or disabled, the subject is not a user of the domain, or this machine's clock is off. Set a new service_account_key (or subject) on the connector.`);
  }
  throw new ConfigurationError(`The token endpoint ${where} answered ${said} instead of an access token; check the token_uri of service_account_key.`);
}

/**
 * One POST to the token endpoint. Unless private networks are allowed, an address literal is checked before
 * connecting and a name is resolved by `publicOnlyLookup`, so the socket connects only to a checked public address.
 */
function post(url: URL, body: string, opts: TokenExchangeOptions): Promise<{ status: number; headers: Headers; text: string }> {
  const lib = url.protocol === 'https:' ? https : http;
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (!opts.allowPrivateNetworks && isIP(literal) && !isPublicAddress(literal)) {
    return Promise.reject(new TargetForbiddenError(`The token_uri of service_account_key leads to ${literal}, a private, loopback, link-local or reserved address; connectors may not connect to this service's own network.`));
  }
  return new Promise((resolve, reject) => {
    const request = lib.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)), accept: 'application/json' },
      agent: false,
      ...(opts.allowPrivateNetworks ? {} : { lookup: publicOnlyLookup(opts.lookup) }),
      signal: opts.signal,
      timeout: opts.timeoutMs ?? 20_000,
    });
    request.on('timeout', () => request.destroy(new TransientError(`The token endpoint ${url.host} did not answer within ${opts.timeoutMs ?? 20_000} ms; the sync is tried again later.`)));
    request.on('error', (err: NodeJS.ErrnoException) => {
      if (opts.signal?.aborted) return reject(opts.signal.reason);
      if (err instanceof TransientError) return reject(err);
      if (err instanceof PrivateTargetError) return reject(new TargetForbiddenError(`The token_uri of service_account_key leads to a private address (${err.message}); connectors may not connect to this service's own network.`));
      reject(new TransientError(`The token endpoint ${url.host} could not be reached (${err.code ?? err.message}); the sync is tried again later.`));
    });
    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > MAX_TOKEN_RESPONSE_BYTES) res.destroy(new TransientError(`The token endpoint ${url.host} answered more than ${MAX_TOKEN_RESPONSE_BYTES} bytes.`));
        else chunks.push(chunk);
      });
      res.on('error', (err) => reject(err instanceof TransientError ? err : new TransientError(`The token endpoint ${url.host} dropped the answer (${err.message}).`)));
      res.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
        resolve({ status: res.statusCode ?? 0, headers, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    request.end(body);
  });
}

export interface DriveClientOptions {
  apiUrl: string;
  allowPrivateNetworks: boolean;
  /** attempts after a 5xx or a dropped connection (gaxios' backoff: 100 ms, 500 ms, 1.5 s, ...) */
  serverErrorRetries: number;
  /** the longest pause between two of those attempts */
  maxRetryDelayMs: number;
  signal?: AbortSignal;
}

/**
 * A Drive v3 client for the credentials. An access token is used as it is; a service account key is exchanged for a
 * token at the first call and again shortly before it expires (the OAuth2 client's refresh handler). The client
 * retries 5xx and dropped connections a few times with a short backoff, and never 429 or 403: those come back at once
 * so a throttled sync is deferred (RateLimitedError) instead of sleeping on its lease. gaxios is given Node's own
 * fetch (it would otherwise load the ESM-only node-fetch).
 */
export function driveClient(creds: DriveCredentials, opts: DriveClientOptions): drive_v3.Drive {
  const oauth = new auth.OAuth2();
  if (creds.kind === 'access_token') oauth.setCredentials({ access_token: creds.accessToken });
  else {
    oauth.refreshHandler = async () => {
      const token = await exchangeServiceAccountKey(creds.key, creds.subject, { allowPrivateNetworks: opts.allowPrivateNetworks, signal: opts.signal });
      return { access_token: token.accessToken, expiry_date: token.expiresAt };
    };
  }
  return drive({
    version: 'v3',
    auth: oauth,
    rootUrl: `${opts.apiUrl.replace(/\/+$/, '')}/`,
    fetchImplementation: fetch,
    retryConfig: {
      retry: opts.serverErrorRetries,
      noResponseRetries: opts.serverErrorRetries,
      statusCodesToRetry: [[500, 599]],
      retryDelay: 100,
      maxRetryDelay: opts.maxRetryDelayMs,
    },
  });
}
