import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { ApiKeyRecord } from '@crs/persistence/api-keys';
import type { MetadataField } from '@crs/domain/metadata-schema';
import type { EmbedderSpec } from '@crs/domain/events';
import { DATA_SOURCE } from '@crs/platform/tokens';
import { databaseNotFound } from '../http/scope';
import {
  activeCollections,
  findDatabaseById,
  findDatabaseByName,
  liveDatabasesOf,
  type DatabaseLookupRow,
} from '@crs/projections/databases/databases.queries';

export interface DatabaseRecord {
  id: string;
  orgId: string;
  name: string;
  status: 'provisioning' | 'ready' | 'deleting';
  metadataSchema: MetadataField[];
  embedder: EmbedderSpec;
  flags: { scheduler_status: boolean; graph_status: boolean; vectorstore_status: { knowledge: boolean; memories: boolean } };
  createdAt: string;
  updatedAt: string;
}

export function keyReaches(auth: ApiKeyRecord, name: string): boolean {
  return auth.databases === null || auth.databases.includes(name);
}

/** Resolves database names for a caller: a database the key cannot reach is indistinguishable from one that does not exist. */
@Injectable()
export class DatabaseDirectory {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  async find(orgId: string, name: string): Promise<DatabaseRecord | null> {
    const row = await findDatabaseByName(this.ds, orgId, name);
    return row ? toRecord(row) : null;
  }

  /** A database of the organization by id (presigned URLs name it so: a name can be taken again once deleted). */
  async findById(orgId: string, id: string): Promise<DatabaseRecord | null> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
    const row = await findDatabaseById(this.ds, orgId, id);
    return row ? toRecord(row) : null;
  }

  /** The live (not deleting) database the key can reach, or 404 DATABASE_NOT_FOUND. */
  async resolve(auth: ApiKeyRecord, name: string): Promise<DatabaseRecord> {
    if (!keyReaches(auth, name)) throw databaseNotFound(name);
    const db = await this.find(auth.orgId, name);
    if (!db || db.status === 'deleting') throw databaseNotFound(name);
    return db;
  }

  async list(auth: ApiKeyRecord): Promise<DatabaseRecord[]> {
    const rows = await liveDatabasesOf(this.ds, auth.orgId);
    return rows.map(toRecord).filter((d) => keyReaches(auth, d.name));
  }

  async collections(databaseId: string): Promise<{ name: string; createdAt: string }[]> {
    const rows = await activeCollections(this.ds, databaseId);
    return rows.map((r) => ({ name: r.name, createdAt: new Date(r.created_at).toISOString() }));
  }
}

function toRecord(r: DatabaseLookupRow): DatabaseRecord {
  return {
    id: r.id,
    orgId: r.org_id,
    name: r.name,
    status: r.status,
    metadataSchema: r.metadata_schema,
    embedder: r.embedder,
    flags: { scheduler_status: r.scheduler_ready, graph_status: r.graph_ready, vectorstore_status: { knowledge: r.vs_knowledge_ready, memories: r.vs_memories_ready } },
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
  };
}
