// The filters tree of docs/TARGETING.md and the event properties the builder's typeahead offers, as the OpenAPI document types them.
import type { Schemas } from './client';

export type Filters = Schemas['SegmentFilters'];
export type Condition = NonNullable<Filters['all']>[number];
export type AttributeCondition = Schemas['AttributeCondition'];
export type EventCondition = Schemas['EventCondition'];
export type Operator = AttributeCondition['operator'];
export type ValueType = Schemas['Attribute']['type'];
/** An operator and value: an attribute's or property's comparison, or a first / last time's. */
export interface Comparing {
  operator: Operator;
  value?: AttributeCondition['value'];
}

/** A property seen on the last events of a name: its dotted path, JSON types (most frequent first) and top values. */
export type EventProperty = Schemas['EventProperties']['properties'][number];
