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
      throw new AxonError('INVALID_INPUT', 'A secret must be a non-empty string.', {
        component: 'secret',
        fix: 'Pass the key itself, or name the environment variable that holds it: { env: "NAME" } in configuration.',
        details: { argument: 'value' },
      });
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
    const named = looksLikeVariableName(input.env);
    throw new AxonError('MISSING_API_KEY', `Missing API key: ${named ? 'the ' : ''}${describeUnsetVariable(input.env, 'apiKey.env')}.`, {
      component: options.component,
      fix: named ? `Set ${input.env}, or pass apiKey.` : PASTED_KEY_FIX,
      details: named ? { variable: input.env } : {},
    });
  }
  if (options.environmentVariable) {
    const value = environment[options.environmentVariable];
    if (value) return new Secret(value);
  }
  if (options.required === false) return undefined;
  const fix = options.environmentVariable ? `Pass apiKey or set ${options.environmentVariable}.` : 'Pass apiKey.';
  throw new AxonError('MISSING_API_KEY', 'Missing API key.', { component: options.component, fix, details: { variable: options.environmentVariable } });
}

/** What to do about a key written where an environment variable's name belongs. */
export const PASTED_KEY_FIX =
  'Put the key in an environment variable and give its name ({ "env": "THAT_VARIABLE" }), or pass the key itself. ' +
  'If this was a real key, consider it exposed wherever that config is stored.';

/**
 * Say that the environment variable named by `field` (`apiKey.env`, `embeddings.apiKey`) is not set, without ever
 * repeating a value that looks like a key rather than a variable's name: then the field is named instead, with the
 * value's length.
 */
export function describeUnsetVariable(name: string, field: string): string {
  if (looksLikeVariableName(name)) return `environment variable ${name} is not set`;
  return `the value of ${field} (${name.length} characters) is not the name of an environment variable; it looks like a key itself`;
}

/**
 * Whether `name` reads as an environment variable's name (`OPENAI_API_KEY`, `AZURE_OPENAI_KEY_2`) rather than a
 * key pasted in its place: letters, digits and `_`, not starting with a digit, at most 64 characters, and not in a
 * key's form: a known key prefix (`sk_…`, `jina_…`), or a part between underscores that no one would type as a
 * word (an Azure key is 32 hexadecimal digits; others are long runs of letters and digits).
 */
export function looksLikeVariableName(name: string): boolean {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) return false;
  if (/^(sk|pk|rk|jina|key)_/i.test(name)) return false;
  return name.split('_').every((part) => !looksRandom(part));
}

// --- Internal helpers ---

/**
 * A part of a name that reads as generated rather than written: 32 characters or more, or 16 or more that switch
 * between letters and digits five times or more (a word with a version number in it switches once or twice), or
 * 20 or more holding both letters and digits.
 */
function looksRandom(part: string): boolean {
  if (part.length >= 32) return true;
  const switches = part.match(/(?<=[A-Za-z])\d|(?<=\d)[A-Za-z]/g)?.length ?? 0;
  if (part.length >= 16 && switches >= 5) return true;
  return part.length >= 20 && /\d/.test(part) && /[A-Za-z]/.test(part);
}
