import type { z } from 'zod';
import { ConfigError } from '../errors.ts';
import { describeOptionIssues } from './closest-name.ts';

/**
 * Validate a component's constructor options against its zod schema and return the parsed value (defaults
 * filled in). Every problem is reported at once, each with its path, as a `ConfigError` naming the component
 * ("Invalid configuration in memory-store options"); an unknown option names the nearest known one.
 *
 * @throws ConfigError
 */
export function parseOptions<Schema extends z.ZodType>(schema: Schema, options: unknown, component: string): z.output<Schema> {
  const parsed = schema.safeParse(options ?? {});
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    describeOptionIssues(schema, parsed.error).map((issue) => ({ path: issue.path.map(String).join('.'), code: issue.code, message: issue.message })),
    { component, source: `${component} options` },
  );
}
