import { FilterError } from '../errors.ts';
import type { ComparisonOperator, FilterNode, Primitive } from './types.ts';

const FIELD_OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$contains', '$exists'] as const;
const LOGICAL_OPERATORS = ['$and', '$or', '$not'] as const;

/** How deep `$and`, `$or` and `$not` may nest in one filter; deeper is a `FilterError`, so no store's evaluation can overflow the stack. */
export const MAX_FILTER_DEPTH = 64;
/** How many conditions one filter may hold (field conditions, logical operators and `$in`/`$nin` values together). */
export const MAX_FILTER_CONDITIONS = 10_000;

/** What parsing one filter has used of its limits. */
interface Budget {
  component: string;
  conditions: number;
}

/**
 * Validate a filter and turn it into a `FilterNode` tree. Throws `FilterError` naming the path of the first
 * problem; an unknown operator is always an error, never ignored.
 *
 * @throws FilterError
 */
export function parseFilter(filter: unknown, component = 'filter'): FilterNode {
  return parseObject(filter, '', { component, conditions: 0 }, 0);
}

function parseObject(value: unknown, path: string, budget: Budget, depth: number): FilterNode {
  const { component } = budget;
  if (depth > MAX_FILTER_DEPTH) {
    throw new FilterError(`The filter nests $and, $or and $not more than ${MAX_FILTER_DEPTH} levels deep`, {
      path,
      component,
      fix: `Flatten it: at most ${MAX_FILTER_DEPTH} levels of $and/$or/$not (a list of alternatives is one $or, or one $in).`,
    });
  }
  if (!isPlainObject(value)) {
    throw new FilterError(`A filter must be an object, got ${describe(value)}`, {
      path,
      component,
      fix: 'Write filters like { field: value } or { field: { $gte: 3 } }.',
    });
  }
  const children: FilterNode[] = [];
  for (const [key, operand] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    count(budget, 1, at);
    if (key.startsWith('$')) children.push(parseLogical(key, operand, at, budget, depth));
    else children.push(...parseField(key, operand, at, budget));
  }
  return children.length === 1 ? children[0] : { kind: 'and', children };
}

/** Count `conditions` more against the filter's size limit. */
function count(budget: Budget, conditions: number, at: string): void {
  budget.conditions += conditions;
  if (budget.conditions > MAX_FILTER_CONDITIONS) {
    throw new FilterError(`The filter holds more than ${MAX_FILTER_CONDITIONS} conditions`, {
      path: at,
      component: budget.component,
      fix: 'Split the search, or filter on a field that groups the documents (a tag or a source) instead of listing them.',
    });
  }
}

function parseLogical(operator: string, operand: unknown, at: string, budget: Budget, depth: number): FilterNode {
  const { component } = budget;
  switch (operator) {
    case '$and':
    case '$or': {
      if (!Array.isArray(operand) || operand.length === 0) {
        throw new FilterError(`${operator} takes a non-empty array of filters, got ${describe(operand)}`, {
          path: at,
          component,
          fix: `Write ${operator}: [{ … }, { … }] with at least one filter.`,
        });
      }
      const children = operand.map((item, index) => parseObject(item, `${at}[${index}]`, budget, depth + 1));
      return { kind: operator === '$and' ? 'and' : 'or', children };
    }
    case '$not':
      return { kind: 'not', child: parseObject(operand, at, budget, depth + 1) };
    default:
      throw unknownOperator(operator, at, component, LOGICAL_OPERATORS, 'at the top level of a filter');
  }
}

function parseField(field: string, operand: unknown, at: string, budget: Budget): FilterNode[] {
  const { component } = budget;
  if (field.split('.').some((part) => part === '')) {
    throw new FilterError(`"${field}" is not a valid field path`, { path: at, component, fix: 'Use dotted paths such as author.name.' });
  }
  if (!isPlainObject(operand)) return [{ kind: 'eq', path: field, value: primitive(operand, at, component, '$eq') }];
  const entries = Object.entries(operand);
  if (entries.length === 0)
    throw new FilterError('An empty operator object matches nothing meaningful', {
      path: at,
      component,
      fix: 'Give at least one operator, e.g. { $eq: value }.',
    });
  const nodes: FilterNode[] = [];
  for (const [operator, value] of entries) {
    const operatorPath = `${at}.${operator}`;
    if (!operator.startsWith('$')) {
      throw new FilterError(`Nested objects are not matched by value; "${operator}" is not an operator`, {
        path: operatorPath,
        component,
        fix: `Use a dotted path instead: { "${field}.${operator}": … }.`,
      });
    }
    switch (operator) {
      case '$eq':
        nodes.push({ kind: 'eq', path: field, value: primitive(value, operatorPath, component, operator) });
        break;
      case '$ne':
        nodes.push({ kind: 'ne', path: field, value: primitive(value, operatorPath, component, operator) });
        break;
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        if (typeof value !== 'number' || !Number.isFinite(value)) {
          throw new FilterError(`${operator} compares numbers; got ${describe(value)}`, {
            path: operatorPath,
            component,
            fix: 'Store dates as epoch milliseconds to compare them.',
          });
        }
        nodes.push({ kind: 'compare', path: field, operator: operator as ComparisonOperator, value });
        break;
      case '$in':
      case '$nin': {
        if (!Array.isArray(value) || value.length === 0) {
          throw new FilterError(`${operator} takes a non-empty array of values, got ${describe(value)}`, {
            path: operatorPath,
            component,
            fix: `Write ${operator}: ["a", "b"] with at least one value.`,
          });
        }
        count(budget, value.length, operatorPath);
        const values = value.map((item, index) => primitive(item, `${operatorPath}[${index}]`, component, operator));
        nodes.push({ kind: operator === '$in' ? 'in' : 'nin', path: field, values });
        break;
      }
      case '$contains':
        nodes.push({ kind: 'contains', path: field, value: primitive(value, operatorPath, component, operator) });
        break;
      case '$exists':
        if (typeof value !== 'boolean') {
          throw new FilterError(`$exists takes true or false, got ${describe(value)}`, {
            path: operatorPath,
            component,
            fix: 'Write $exists: true or $exists: false.',
          });
        }
        nodes.push({ kind: 'exists', path: field, exists: value });
        break;
      default:
        throw unknownOperator(operator, operatorPath, component, FIELD_OPERATORS, `on field "${field}"`);
    }
  }
  return nodes;
}

function primitive(value: unknown, at: string, component: string, operator: string): Primitive {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  const fix = value === null ? 'To match a missing or null field use { $exists: false }.' : 'Compare against strings, finite numbers or booleans.';
  throw new FilterError(`${operator} needs a string, finite number or boolean, got ${describe(value)}`, { path: at, component, fix });
}

function unknownOperator(operator: string, at: string, component: string, known: readonly string[], where: string): FilterError {
  return new FilterError(`Unknown operator ${operator} ${where}`, { path: at, component, fix: `Supported operators: ${known.join(' ')}.` });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value === 'string') return `"${value}"`;
  return typeof value;
}
