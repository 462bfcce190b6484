export type { Filter, FilterNode, Primitive, ComparisonOperator } from './types.ts';
export { RESERVED_FILTER_FIELDS } from './types.ts';
export { MAX_FILTER_CONDITIONS, MAX_FILTER_DEPTH, parseFilter } from './parse.ts';
export { compileFilter, reader, type FilterPredicate, type FilterableDocument } from './evaluate.ts';
