import type { ProjectionRunner } from '@crs/persistence/projection-runner';

/** The search index is rebuilt by generation swap rather than in a Postgres transaction. */
export const SEARCH_INDEX = 'search-index';

/** What `projections rebuild|verify <name>` works on: that read model, or with `all` every one and the search index. */
export function readModelTargets(runner: ProjectionRunner, name: string): string[] {
  return name === 'all' ? [...runner.readModels.map((p) => p.name), SEARCH_INDEX] : [name];
}
