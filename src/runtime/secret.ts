import { inspect } from 'node:util';
import { z } from 'zod';
import { AxonError } from '../errors.ts';

const REDACTED = '[redacted]';

/**
 * An API key that cannot leak by accident: `JSON.stringify`, `util.inspect`, `String()` and template
 * literals all print `[redacted]`. The value lives in a private field and leaves only through `reveal()`,
 * which adapters call at the moment they build a request header.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    if (typeof value !== 'string' || value === '') {
      throw new AxonError('INVALID_INPUT', 'A secret must be a non-empty string.', { component: 'secret', details: { argument: 'value' } });
    }
    this.#value = value;
  }

  /** The key itself. Call only where it goes on the wire. */
  reveal(): string {
    return this.#value;
  }

  /** `text` with every occurrence of the key replaced by `[redacted]` (for messages a server echoes back). */
  redact(text: string): string {
    return text.split(this.#value).join(REDACTED);
  }

  toJSON(): string {
    return REDACTED;
  }

  toString(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return `Secret(${REDACTED})`;
  }
}

/**
 * How an API key may be given: the key itself, `{ env: 'NAME' }` to read an environment variable when the
 * component is built, or a `Secret`. Config files should use the `{ env }` form so keys stay out of them.
 */
export const apiKeySchema = z.union([
  z.string().min(1, 'must be a non-empty string'),
  z.object({ env: z.string().min(1, 'must name an environment variable') }).strict(),
  z.instanceof(Secret),
]);

export type ApiKeyInput = z.input<typeof apiKeySchema>;

export interface ResolveApiKeyOptions {
  /** The component that needs the key; named in the error. */
  component: string;
  /** Environment variable read when no key is given, e.g. `COHERE_API_KEY`. Leave out to never read one. */
  environmentVariable?: string;
  /** Throw `MISSING_API_KEY` when no key is found. @default true */
  required?: boolean;
  /** Where to read environment variables. @default process.env */
  environment?: Record<string, string | undefined>;
}

/**
 * Turn an `apiKey` option into a `Secret`. Resolution happens when the component is constructed, so a
 * missing key fails before any work (and before any document is sent anywhere).
 *
 * @throws AxonError `MISSING_API_KEY`, e.g. `[axon] [cohere-reranker] Missing API key. Pass apiKey or set COHERE_API_KEY.`
 */
export function resolveApiKey(input: ApiKeyInput | undefined, options: ResolveApiKeyOptions & { required?: true }): Secret;
export function resolveApiKey(input: ApiKeyInput | undefined, options: ResolveApiKeyOptions): Secret | undefined;
export function resolveApiKey(input: ApiKeyInput | undefined, options: ResolveApiKeyOptions): Secret | undefined {
  const environment = options.environment ?? process.env;
  if (input instanceof Secret) return input;
  if (typeof input === 'string') return new Secret(input);
  if (input && typeof input === 'object') {
    const value = environment[input.env];
    if (value) return new Secret(value);
    throw new AxonError('MISSING_API_KEY', `Missing API key: the environment variable ${input.env} is not set.`, {
      component: options.component,
      fix: `Set ${input.env}, or pass apiKey.`,
    });
  }
  if (options.environmentVariable) {
    const value = environment[options.environmentVariable];
    if (value) return new Secret(value);
  }
  if (options.required === false) return undefined;
  const fix = options.environmentVariable ? `Pass apiKey or set ${options.environmentVariable}.` : 'Pass apiKey.';
  throw new AxonError('MISSING_API_KEY', 'Missing API key.', { component: options.component, fix });
}
