// The filters tree of docs/TARGETING.md and the routes that feed the condition builder's typeahead, typed here until
// their OpenAPI schemas reach main (issue 29, branches i29-tree and i29-events); then these give way to schema.d.ts.
import type { Client } from 'openapi-fetch';
import { api, type Schemas } from './client';

export type ValueType = 'text' | 'number' | 'boolean' | 'date';
export type Operator =
  | 'eq'
  | 'neq'
  | 'in'
  | 'contains'
  | 'starts_with'
  | 'exists'
  | 'not_exists'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'
  | 'between'
  | 'within_last_days'
  | 'more_than_days_ago';
type Value = string | number | boolean | (string | number)[];

export interface AttributeCondition {
  attribute: string;
  operator: Operator;
  value?: Value;
}
export interface PropertyCondition {
  property: string;
  operator: Operator;
  value?: Value;
}
export interface DateCondition {
  operator: Operator;
  value?: Value;
}
export interface EventCondition {
  event: string;
  performed?: boolean;
  count?: { operator: 'gte' | 'lte' | 'eq'; value: number };
  withinLastDays?: number;
  between?: { from?: string; to?: string };
  where?: PropertyCondition[];
  first?: DateCondition;
  last?: DateCondition;
}
export type SegmentCondition = { inSegment: string } | { notInSegment: string };
export type Condition = AttributeCondition | EventCondition | SegmentCondition | Filters;
/** The spec's fields (`SegmentFilters` of today's OpenAPI document) and the tree's `all` / `any`. */
export type Filters = Schemas['SegmentFilters'] & { all?: Condition[]; any?: Condition[] };

export interface Attribute {
  name: string;
  type: ValueType;
  source: 'inferred' | 'declared';
}
export interface FrequentValue {
  value: string;
  count: number;
}
/** A property seen on the last events of a name: its dotted path, JSON types (most frequent first) and top values. */
export interface EventProperty {
  path: string;
  seen: number;
  types: { type: 'string' | 'number' | 'boolean' | 'null' | 'array' | 'object'; count: number }[];
  values: { value: string | number | boolean | null; count: number }[];
}

/** The three typeahead routes in openapi-fetch's shape, so the session's client (credentials, 401) calls them. */
interface TargetingPaths {
  '/projects/{projectId}/attributes': {
    get: { parameters: { path: { projectId: string } }; responses: { 200: { content: { 'application/json': { data: Attribute[] } } } } };
  };
  '/projects/{projectId}/attributes/{name}/values': {
    get: {
      parameters: { path: { projectId: string; name: string }; query?: { q?: string } };
      responses: { 200: { content: { 'application/json': { data: FrequentValue[] } } } };
    };
  };
  '/events/project/{projectId}/properties': {
    get: {
      parameters: { path: { projectId: string }; query: { name: string } };
      responses: { 200: { content: { 'application/json': { name: string; sampled: number; properties: EventProperty[] } } } };
    };
  };
}

export const targetingApi = api as unknown as Client<TargetingPaths>;
