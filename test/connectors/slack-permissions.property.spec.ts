import fc from 'fast-check';
import { callerPrincipals, isVisible, normalizeDocumentAcl } from '@crs/domain/acl';
import { effectiveAccess } from '@crs/domain/connectors/access-precedence';
import type { SlackProvider } from '@crs/connectors/providers/slack/slack.provider';
import type { RunningFake } from '../fakes/loopback-server';
import type { SlackFake } from '../fakes/slack/slack-fake';
import { BOT_USER, contextFor, slackProviderFor, startSlackFake, WORKSPACE_GROUP } from './slack-fixture';

/**
 * For random channels of the fake workspace (public or private, any members, emails shown or hidden, accounts active
 * or deactivated, now and then more than 1,000 members) and a random rule set through the API on the resource: what
 * each person, and a stranger, would retrieve (the provider's captured verdict, then rule 12's `effectiveAccess`, then
 * the query-time visibility check) equals what they can read in Slack, except where the decision is handed to the API
 * rule: a member with a hidden email. The query path applies the same decision in SQL and in TypeScript
 * (projections/items/synced-access.property.spec.ts), so this checks the provider's half directly.
 */
interface Person {
  emailShown: boolean;
  active: boolean;
  member: boolean;
}

/** Most accounts are active; one in seven is deactivated. */
const personArb: fc.Arbitrary<Person> = fc.record({ emailShown: fc.boolean(), active: fc.integer({ min: 0, max: 6 }).map((n) => n !== 0), member: fc.boolean() });
const stateArb = fc.record({
  people: fc.array(personArb, { minLength: 1, maxLength: 6 }),
  isPrivate: fc.boolean(),
  crowd: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  apiRule: fc.option(fc.oneof(fc.constant(['__public__']), fc.constant(['__private__']), fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 3 })), { nil: undefined }),
});

const emailOf = (run: number, i: number) => `p${i}.r${run}@example.test`;
const STRANGER = 'stranger@elsewhere.test';

describe('Slack permissions: retrieval equals readability in the source (rule 11, with rule 12 against an API rule)', () => {
  let fake: SlackFake;
  let server: RunningFake;
  let provider: SlackProvider;

  beforeAll(async () => {
    ({ fake, server } = await startSlackFake());
    provider = slackProviderFor(server);
  });
  afterAll(() => fake.stop());

  it('holds for random memberships, privacy, hidden emails and API rules', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(stateArb, async ({ people, isPrivate, crowd, apiRule }) => {
        run++;
        const ids = people.map((_, i) => `U${run}X${i}`);
        people.forEach((p, i) => fake.addUser({ id: ids[i], name: `p${i}`, deleted: !p.active, profile: { email: p.emailShown ? emailOf(run, i) : undefined } }));
        const members = ids.filter((_, i) => people[i].member);
        const filler = crowd && isPrivate ? Array.from({ length: 1001 - members.length }, (_, k) => `U${run}F${k}`) : [];
        const channelId = `G${run}CHAN`;
        fake.addChannel({ id: channelId, name: `c${run}`, is_private: isPrivate }, [...members, BOT_USER, ...filler]);

        const rule = apiRule === undefined ? undefined : normalizeDocumentAcl(apiRule.map((x) => (typeof x === 'number' ? emailOf(run, x) : x)), true);
        const verdict = await provider.capturePermissions(contextFor(fake), { resourceId: channelId, resourceType: 'channel', name: `c${run}` });
        const { acl } = effectiveAccess({ document: { status: 'off' }, resource: verdict, apiRule: rule });

        // A member Slack will not name: someone active in the channel whose email is hidden.
        const unnamed = isPrivate && !crowd && people.some((p) => p.member && p.active && !p.emailShown);
        // Then the API rule governs; with none, nobody reads the channel here (it is known not to be open).
        const admittedByRule = (email: string) => rule !== undefined && (rule.includes('__public__') || rule.includes(`user_email:${email}`));
        const callers = [
          ...people.map((p, i) => ({
            email: emailOf(run, i),
            // what the caller's application declares: the workspace when the account is active, the channel group when in it
            principals: [emailOf(run, i), ...(p.active ? [WORKSPACE_GROUP] : []), ...(p.active && p.member ? [`group:slack:${channelId.toLowerCase()}`] : [])],
            readsInSlack: p.active && (!isPrivate || p.member),
          })),
          { email: STRANGER, principals: [STRANGER], readsInSlack: false },
        ];
        for (const c of callers) {
          const expected = unnamed ? admittedByRule(c.email) : c.readsInSlack;
          expect([c.email, isVisible(acl, callerPrincipals(c.principals))]).toEqual([c.email, expected]);
        }
      }),
      { numRuns: 60, seed: 11 },
    );
  });
});
