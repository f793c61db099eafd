import type { Kysely } from 'kysely';
import type { Database } from '../../platform/store/schema.js';
import type { PlantOwner } from './bearer-auth.js';
import type { NewPlant } from './plant-request.js';

/** The spec's Plant resource as the API returns it. */
export interface Plant {
  readonly name: string;
  readonly tag?: string;
}

const toPlant = (row: { name: string; tag: string | null }): Plant => (row.tag === null ? { name: row.name } : { name: row.name, tag: row.tag });

/** Plants of one owner. Ids are unique per owner (primary key owner, id). */
export class PlantRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Returns the stored plant, or null when the owner already has a plant with this id. */
  async create(owner: PlantOwner, plant: NewPlant): Promise<Plant | null> {
    const row = await this.db
      .insertInto('plants')
      .values({ owner: owner.key, tenant_id: owner.tenantId, id: plant.id, name: plant.name, tag: plant.tag ?? null })
      .onConflict((oc) => oc.columns(['owner', 'id']).doNothing())
      .returning(['name', 'tag'])
      .executeTakeFirst();
    return row ? toPlant(row) : null;
  }

  /** Ordered by id so pages and repeated reads are stable. */
  async list(owner: PlantOwner, limit?: number): Promise<Plant[]> {
    let query = this.db.selectFrom('plants').select(['name', 'tag']).where('owner', '=', owner.key).orderBy('id', 'asc');
    if (limit !== undefined) query = query.limit(limit);
    return (await query.execute()).map(toPlant);
  }

  async delete(owner: PlantOwner, id: bigint): Promise<boolean> {
    const result = await this.db.deleteFrom('plants').where('owner', '=', owner.key).where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
