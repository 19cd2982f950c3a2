// The filters tree of docs/TARGETING.md as the OpenAPI document types it, and the one typeahead route not on main yet
// (GET /events/project/:id/properties, branch i29-events), typed here until its schema reaches schema.d.ts.
import type { Client } from 'openapi-fetch';
import { api, type Schemas } from './client';

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
export interface EventProperty {
  path: string;
  seen: number;
  types: { type: 'string' | 'number' | 'boolean' | 'null' | 'array' | 'object'; count: number }[];
  values: { value: string | number | boolean | null; count: number }[];
}

interface PropertiesPath {
  '/events/project/{projectId}/properties': {
    get: {
      parameters: { path: { projectId: string }; query: { name: string } };
      responses: { 200: { content: { 'application/json': { name: string; sampled: number; properties: EventProperty[] } } } };
    };
  };
}

/** The session's client (credentials, 401), typed for the properties route. */
export const propertiesApi = api as unknown as Client<PropertiesPath>;
