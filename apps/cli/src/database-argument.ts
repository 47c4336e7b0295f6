import type { DataSource } from 'typeorm';
import { findDatabaseByName } from '@crs/projections/databases/databases.queries';

const DATABASE_ID = /^[0-9a-f-]{36}$/;

/**
 * A database named on the command line: an id is taken as given (a deleted database is named by its id), a name is
 * looked up in the organization. Undefined when no database of the organization has that name.
 */
export async function findDatabase(ds: DataSource, org: string, database: string): Promise<{ id: string; name: string } | undefined> {
  return DATABASE_ID.test(database) ? { id: database, name: database } : await findDatabaseByName(ds, org, database);
}

/** The id of the database a `--database` (with `--org`) names; an error when the organization has no such database. */
export async function databaseIdOf(ds: DataSource, o: { database: string; org: string }): Promise<string> {
  const db = await findDatabase(ds, o.org, o.database);
  if (!db) throw new Error(`database ${o.database} not found in organization ${o.org}`);
  return db.id;
}

/** An optional `--database` (with `--org`): none means every database of the organization. */
export async function optionalDatabase(ds: DataSource, o: { database?: string; org: string }): Promise<{ databaseId?: string; databaseName?: string }> {
  if (!o.database) return {};
  const db = await findDatabase(ds, o.org, o.database);
  if (!db) throw new Error(`database ${o.database} not found in organization ${o.org}`);
  return { databaseId: db.id, databaseName: db.name };
}
