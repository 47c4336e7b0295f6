import fc from 'fast-check';
import { callerPrincipals, isVisible } from '@crs/domain/acl';
import { effectiveAccess, type StoredAcl } from '@crs/domain/connectors/access-precedence';
import type { ResourceConfig, SyncedDocument } from '@crs/connectors/provider.port';
import { JiraProvider } from '@crs/connectors/providers/jira/jira.provider';
import { JiraFake, type JiraHolder, type JiraRoleActor } from '../fakes/jira/jira-fake';
import type { RunningFake } from '../fakes/loopback-server';

/**
 * For random browse grants of a project, random security levels, random actors of its project roles (which browse
 * grants and levels may name) and random levels on its issues, what a caller
 * retrieves (the provider's captured permissions through rule 12's decision, against a random API rule on the
 * resource) equals what Jira shows that person: an issue with a level to the level's members who may browse the
 * project; any other issue to whoever may browse it. Where a browse holder hides their email the provider's verdict
 * names nobody, so the API rule governs (with none, nobody sees the issue), and a public verdict yields to an API rule:
 * the model says so too.
 */
const USERS = { ada: 'ada@p.test', bob: 'bob@p.test', cy: 'cy@p.test', hid: undefined } as const;
type Name = keyof typeof USERS;
const GROUPS: Record<string, Name[]> = { g1: ['ada', 'bob'], g2: ['cy', 'hid'] };
const CALLERS = ['ada@p.test', 'bob@p.test', 'cy@p.test', 'out@p.test'];

const ROLES = ['301', '302'] as const;
type RoleId = (typeof ROLES)[number];

type Actor = { type: 'group'; value: 'g1' | 'g2' } | { type: 'user'; value: Name };
type Holder = Actor | { type: 'projectRole'; value: RoleId } | { type: 'anyone' } | { type: 'reporter' };
const browseHolder = fc.constantFrom<Holder>(
  { type: 'group', value: 'g1' },
  { type: 'group', value: 'g2' },
  { type: 'user', value: 'ada' },
  { type: 'user', value: 'cy' },
  { type: 'user', value: 'hid' },
  { type: 'anyone' },
  { type: 'projectRole', value: '301' },
  { type: 'projectRole', value: '302' },
  { type: 'reporter' },
);
const levelHolder = fc.constantFrom<Holder>({ type: 'user', value: 'ada' }, { type: 'user', value: 'bob' }, { type: 'group', value: 'g2' }, { type: 'reporter' }, { type: 'projectRole', value: '301' }, { type: 'projectRole', value: '302' });
const roleActor = fc.constantFrom<Actor>({ type: 'user', value: 'ada' }, { type: 'user', value: 'bob' }, { type: 'user', value: 'hid' }, { type: 'group', value: 'g1' }, { type: 'group', value: 'g2' });
const roleActors = fc.uniqueArray(roleActor, { maxLength: 3, selector: (a) => JSON.stringify(a) });
const issue = fc.record({ level: fc.constantFrom(null, '201', '202'), reporter: fc.constantFrom<Name>('ada', 'bob', 'cy', 'hid') });
const apiRule = fc.constantFrom<StoredAcl | undefined>(undefined, ['__public__'], ['user_email:cy@p.test']);

/** Who a set of grants reaches in Jira (every member, hidden emails included), for one issue's reporter and the project's role actors. */
function reaches(holders: Holder[], reporter: Name, roles: Record<RoleId, Actor[]>): Set<string> | 'anyone' {
  if (holders.some((h) => h.type === 'anyone')) return 'anyone';
  const people = (h: Holder): Name[] => {
    switch (h.type) {
      case 'user':
        return [h.value];
      case 'group':
        return GROUPS[h.value];
      case 'projectRole':
        return roles[h.value].flatMap(people);
      case 'reporter':
        return [reporter];
      default:
        return [];
    }
  };
  return new Set(holders.flatMap(people).map((n) => USERS[n] ?? `hidden:${n}`));
}
const within = (set: Set<string> | 'anyone', email: string) => set === 'anyone' || set.has(email);

describe('jira permissions: what a caller retrieves is what Jira shows them (rule 12 against an API rule)', () => {
  let fake: JiraFake;
  let server: RunningFake;
  const keys: string[] = [];
  const resource: ResourceConfig = { resourceId: 'P', resourceType: 'project', name: 'P' };

  beforeAll(async () => {
    fake = new JiraFake();
    for (const [name, email] of Object.entries(USERS)) fake.addUser({ accountId: name, displayName: name, ...(email ? { emailAddress: email } : {}) });
    for (const [id, members] of Object.entries(GROUPS)) fake.addGroup(id, id, members);
    for (const id of ROLES) fake.addProjectRole(id, `Role ${id}`);
    fake.addProject('P', 'Project', [], [{ id: '201', name: 'One', holders: [] }, { id: '202', name: 'Two', holders: [] }]);
    for (let n = 0; n < 3; n++) keys.push(fake.addIssue('P', `Issue ${n}`, { reporter: 'ada' }));
    server = await fake.start();
  });

  afterAll(() => fake.stop());

  it('holds for random browse grants, levels and API rules', async () => {
    const provider = new JiraProvider({ allowPrivateNetworks: true, retryDelaysMs: [] });
    const ctx = { credentials: { base_url: server.url, email: fake.credentials.email, api_token: fake.credentials.apiToken } };
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(browseHolder, { maxLength: 4, selector: (h) => JSON.stringify(h) }),
        fc.uniqueArray(levelHolder, { maxLength: 3, selector: (h) => JSON.stringify(h) }),
        fc.uniqueArray(levelHolder, { maxLength: 3, selector: (h) => JSON.stringify(h) }),
        fc.array(issue, { minLength: 3, maxLength: 3 }),
        apiRule,
        fc.record({ '301': roleActors, '302': roleActors }),
        async (browse, one, two, issues, api, roles) => {
          for (const id of ROLES) fake.setRoleActors('P', id, roles[id] as JiraRoleActor[]);
          fake.setBrowse('P', browse as JiraHolder[]);
          fake.setSecurityLevelHolders('P', '201', one as JiraHolder[]);
          fake.setSecurityLevelHolders('P', '202', two as JiraHolder[]);
          issues.forEach((state, n) => {
            fake.updateIssue(keys[n], { reporter: state.reporter });
            fake.setSecurityLevel(keys[n], state.level);
          });
          const verdict = await provider.capturePermissions(ctx, resource);
          const docs: SyncedDocument[] = [];
          for await (const e of provider.sync(ctx, resource, null)) if (e.kind === 'upsert') docs.push(e.doc);
          expect(docs).toHaveLength(3);
          // who may browse every issue (the reporter grants only their own issue)
          const everyIssue = reaches(browse.filter((h) => h.type !== 'reporter'), 'ada', roles);
          const hidden = everyIssue !== 'anyone' && [...everyIssue].some((p) => p.startsWith('hidden:'));
          for (const doc of docs) {
            const n = keys.indexOf(String(doc.metadata.issue_key));
            const { level, reporter } = issues[n];
            const browsers = reaches(browse, reporter, roles);
            const acl = effectiveAccess({ document: doc.permission ?? { status: 'off' }, resource: verdict, apiRule: api }).acl;
            for (const caller of CALLERS) {
              const retrieves = isVisible(acl, callerPrincipals([caller]));
              const jira = within(browsers, caller) && (level === null || within(reaches(level === '201' ? one : two, reporter, roles), caller));
              let expected = jira;
              if (level === null && (hidden || everyIssue === 'anyone')) {
                // the verdict says nothing (hidden emails) or is public: the API rule governs when there is one
                if (api !== undefined) expected = isVisible([...api], callerPrincipals([caller]));
                else expected = hidden ? false : jira;
              }
              if (retrieves !== expected) throw new Error(`${caller} on ${doc.metadata.issue_key} (level ${level}, reporter ${reporter}): retrieves ${retrieves}, expected ${expected}; acl ${JSON.stringify(acl)}`);
            }
          }
        },
      ),
      { numRuns: 80 },
    );
  });
});
