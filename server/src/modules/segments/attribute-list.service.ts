// The project's attribute list: types inferred from the first values written, declared by users, and read by the compiler.
import type { Db } from '../../db/database.js';
import type { AttributeType } from '../../db/schema.js';
import * as repo from './attribute-list.repository.js';
import { readDate } from './filter-values.js';

/** How many (project, environment, name) the process remembers as already listed before it starts over. */
const KNOWN_MAX = 100_000;
const VALUES_LIMIT = 20;

/** The type a first value suggests: JSON numbers and booleans as such, an ISO 8601 date string a date, the rest text. */
export function inferType(value: unknown): AttributeType {
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'string' && readDate(value) !== undefined) return 'date';
  return 'text';
}

export interface AttributeView {
  name: string;
  type: AttributeType;
  source: 'inferred' | 'declared';
  firstSeenAt: string | null;
}

const toView = (row: repo.AttributeRow): AttributeView => ({
  name: row.name,
  type: row.type,
  source: row.source,
  firstSeenAt: row.firstSeenAt?.toISOString() ?? null,
});

export class AttributeListService {
  /**
   * Names already listed, so that the write paths skip the insert for them. A row is never removed but with its project
   * (whose people are then gone too), so a remembered name stays true without notifications.
   */
  private readonly known = new Set<string>();

  constructor(private readonly db: Db) {}

  /**
   * Lists the attribute names of written attributes objects the list does not hold yet, typed by their first non-null
   * value: one statement for the whole batch, none when every name is known. Called after the write commits.
   */
  async recordWritten(scope: repo.AttributeScope, written: readonly (Record<string, unknown> | null | undefined)[]): Promise<void> {
    const fresh = new Map<string, AttributeType>();
    for (const attributes of written) {
      for (const [name, value] of Object.entries(attributes ?? {})) {
        if (value === null || fresh.has(name) || this.known.has(this.key(scope, name))) continue;
        fresh.set(name, inferType(value));
      }
    }
    if (fresh.size === 0) return;
    await repo.recordSeen(this.db, [...fresh].map(([name, type]) => ({ ...scope, name, type })), new Date());
    if (this.known.size + fresh.size > KNOWN_MAX) this.known.clear();
    for (const name of fresh.keys()) this.known.add(this.key(scope, name));
  }

  async list(scope: repo.AttributeScope): Promise<AttributeView[]> {
    return (await repo.listAttributes(this.db, scope)).map(toView);
  }

  /** Declares an attribute's type (also one no person has yet): every condition on it reads stored values so from now on. */
  async declare(scope: repo.AttributeScope, name: string, type: AttributeType): Promise<AttributeView> {
    return toView(await repo.declareAttribute(this.db, scope, name, type, new Date()));
  }

  async values(scope: repo.AttributeScope, name: string, prefix: string | undefined) {
    return { data: await repo.frequentValues(this.db, scope, name, prefix, VALUES_LIMIT) };
  }

  types(scope: repo.AttributeScope, names: readonly string[]): Promise<Map<string, AttributeType>> {
    return repo.attributeTypes(this.db, scope, names);
  }

  private key(scope: repo.AttributeScope, name: string): string {
    return `${scope.projectId}\u0000${scope.sandbox ? 1 : 0}\u0000${name}`;
  }
}
