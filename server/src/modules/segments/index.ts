// Face of modules/segments (the only file others import): the filter schema and compiler, the audience queries, the service and its routes.
export {
  compileSegmentFilter,
  CONSENT_CHANNELS,
  type ConsentChannel,
  emailStatusOf,
  type FilterableSubscriber,
  marketingConsentOf,
  EMPTY_CONTEXT,
  type FilterCondition,
  type FilterContext,
  hasConditions,
  type SegmentFilter,
  segmentFilterSchema,
} from './segment-filter.js';
export { rangeAfter, rangeStart } from './date-range.js';
export { matchesSegmentFilter, type EvaluablePerson } from './filter-evaluator.js';
export { channelAudience, countAudience } from './segment.repository.js';
export { segmentRoutes } from './segment.routes.js';
export { SegmentService, storedFilter } from './segment.service.js';
export { AttributeListService } from './attribute-list.service.js';
export { reachableOn, reachableOnSome } from './reachability.js';
