// The attribute condition of the filters tree (`{ attribute, operator, value }`): its schema and its SQL.
import { sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { subscribers } from '../../db/schema.js';
import { misfit, shapeProblem, testSql, typeOfTest, VALUE_OPERATORS, type AttributeType, type ValueTest } from './filter-values.js';

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

/** The type a condition reads its attribute as: the attribute list's, else the condition's own value's. */
export const attributeTypeOf = (condition: AttributeCondition, types: ReadonlyMap<string, AttributeType>): AttributeType =>
  types.get(condition.attribute) ?? typeOfTest(condition);

/** The predicate of an attribute condition; one that no longer fits its attribute's type (declared since) holds for nobody. */
export function attributeConditionSql(condition: AttributeCondition, types: ReadonlyMap<string, AttributeType>, now: Date | undefined): SQL {
  const type = attributeTypeOf(condition, types);
  if (misfit(type, condition)) return sql`false`;
  return testSql(type, sql`(${subscribers.attributes} -> ${condition.attribute}::text)`, condition, now);
}
