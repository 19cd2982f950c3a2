// The attribute condition of the filters tree (`{ attribute, operator, value }`): its schema and its SQL.
import { sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { subscribers } from '../../db/schema.js';
import { compareSql, misfit, shapeProblem, testSql, typeOfTest, VALUE_OPERATORS, type AttributeType, type AudienceScope, type ValueTest } from './filter-values.js';

/** A condition value as documented: a string, number or boolean, or a list of them (`in`, `between`). */
const conditionValue = z
  .union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number()]))])
  .optional()
  .describe('Per operator: a string, number, true / false or ISO 8601 date; `in` a list; `between` [low, high]; the days operators a whole number; none for exists / not_exists');

/** Adds a test's shape problem (operator and value that cannot go together) as a Zod issue on its field. */
export function checkShape(test: ValueTest, ctx: z.RefinementCtx): void {
  const problem = shapeProblem(test);
  if (problem) ctx.addIssue({ code: 'custom', path: [problem.field], message: problem.error });
}

export const attributeConditionSchema = z
  .strictObject({
    attribute: z.string().min(1).max(100).describe("A top-level key of the person's attributes"),
    operator: z.enum(VALUE_OPERATORS).describe("The attribute's type decides which operators it takes (docs/TARGETING.md)"),
    value: conditionValue,
  })
  .superRefine(checkShape)
  .meta({ id: 'AttributeCondition', description: "The person's attribute compares as asked, the stored value read as the attribute's type" });

export type AttributeCondition = z.output<typeof attributeConditionSchema>;

/** What attribute conditions need to know of the project beyond the tree (`SegmentService.resolveContext`). */
export interface AttributeContext {
  /** The project's attribute list: an attribute not in it is read as the type of the condition's value. */
  attributeTypes: ReadonlyMap<string, AttributeType>;
  /** The attributes of which some person of the environment holds a text longer than `attribute_values` keeps. */
  longTexts: ReadonlySet<string>;
}

/** The type a condition reads its attribute as: the attribute list's, else the condition's own value's. */
export const attributeTypeOf = (condition: AttributeCondition, types: ReadonlyMap<string, AttributeType>): AttributeType =>
  types.get(condition.attribute) ?? typeOfTest(condition);

/**
 * The predicate of an attribute condition; one that no longer fits its attribute's type (declared since) holds for
 * nobody. For an audience (`scope` given) it is a set of people read from `attribute_values` (docs/TARGETING.md,
 * "Storage"): `neq` and `not_exists` as the people outside the set of `eq` and `exists`.
 */
export function attributeConditionSql(condition: AttributeCondition, context: AttributeContext, now: Date | undefined, scope?: AudienceScope): SQL {
  const type = attributeTypeOf(condition, context.attributeTypes);
  if (misfit(type, condition)) return sql`false`;
  const stored = (attributes: SQL) => sql`(${attributes} -> ${condition.attribute}::text)`;
  if (!scope) return testSql(type, stored(sql`${subscribers.attributes}`), condition, now);
  const negated = condition.operator === 'neq' || condition.operator === 'not_exists';
  const test: ValueTest = negated ? { operator: condition.operator === 'neq' ? 'eq' : 'exists', value: condition.value } : condition;
  const named = sql`v.project_id = ${scope.projectId} AND v.sandbox = ${scope.sandbox} AND v.name = ${condition.attribute}::text`;
  const members = (reading: SQL) => sql`SELECT v.subscriber_id FROM attribute_values v WHERE ${named} AND ${compareSql(type, reading, test, now)}`;
  let set: SQL;
  if (type === 'text') {
    // Every row has a text reading, kept in `text` unless it is long: those few are read again from the person.
    if (test.operator === 'exists') set = sql`SELECT v.subscriber_id FROM attribute_values v WHERE ${named}`;
    else if (!context.longTexts.has(condition.attribute)) set = members(sql`v.text`);
    else {
      set = sql`${members(sql`v.text`)} UNION ALL SELECT v.subscriber_id FROM attribute_values v JOIN subscribers s ON s.id = v.subscriber_id
        WHERE ${named} AND v.long AND ${testSql('text', stored(sql.raw('s.attributes')), test, now)}`;
    }
  } else if (type === 'boolean') {
    // The text of true and "true" is 'true': the text index answers.
    set = test.operator === 'exists' ? sql`SELECT v.subscriber_id FROM attribute_values v WHERE ${named} AND v.text IN ('true', 'false')`
      : sql`SELECT v.subscriber_id FROM attribute_values v WHERE ${named} AND v.text = ${String(test.value)}::text`;
  } else set = members(type === 'number' ? sql`v.number` : sql`v.at`);
  const member = sql`${subscribers.id} IN (${set})`;
  return negated ? sql`(NOT ${member})` : member;
}
