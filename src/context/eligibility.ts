import type { Document, JsonValue } from '../document.ts';
import { AxonError } from '../errors.ts';
import type { Filter } from '../filter/index.ts';

/**
 * Eligibility, enforced by code (SPEC §7): which documents a caller may see. The caller's context becomes a store
 * filter applied inside the search (so `topK` is spent on eligible documents), and every document is checked again
 * before it enters a context packet. The model never decides whether a source is allowed.
 *
 * A document carries its eligibility in `metadata`:
 * - `tenantId` (string, or an array of strings): only callers of that tenant see it. Without one the document is
 *   shared by every tenant (unless the policy says `untenanted: 'deny'`).
 * - `allowedRoles` (string, or an array of strings): only callers holding one of these roles see it. Missing or
 *   null means every role; an empty array means no role.
 * - `redaction`: `none` (the default), `pii` (passed through the policy's redactor before inclusion), `secret`
 *   (never enters) or `tenant_scoped` (only callers of the document's own tenant; a document without a `tenantId`
 *   is then seen by nobody).
 * - `trustLevel`: `trusted | internal | user_supplied | public | model_generated | untrusted`; `unknown` (or any other
 *   value) is excluded.
 *   A document without one gets the policy's `defaultTrustLevel`.
 * - `updatedAt` (ISO 8601 date or epoch milliseconds) and `maxAgeDays`: a document older than its maximum age at the
 *   caller's `now` is stale. A document that declares `maxAgeDays` but no valid `updatedAt` is stale too, because its
 *   freshness cannot be shown.
 *
 * Every check fails closed: a value of the wrong type makes the document ineligible, never visible.
 */

/** Who is asking: the context the software (not the model) uses to decide what may be seen. */
export interface CallerContext {
  /** Recorded in traces; not used for eligibility. */
  callerId?: string;
  tenantId?: string;
  roles?: string[];
  /** The time freshness is judged at. @default the current time */
  now?: Date;
}

/**
 * How trusted a source is, from most to least. `model_generated` is text a model wrote (an earlier answer of the
 * conversation, a generated summary): it may restate anything it was shown, so it ranks below public sources.
 * `unknown` never enters a packet.
 */
export const TRUST_LEVELS = ['trusted', 'internal', 'user_supplied', 'public', 'model_generated', 'untrusted'] as const;
export type TrustLevel = (typeof TRUST_LEVELS)[number];

export const REDACTION_CLASSES = ['none', 'pii', 'secret', 'tenant_scoped'] as const;
export type RedactionClass = (typeof REDACTION_CLASSES)[number];

/** Rewrites personal data out of a text before it enters a packet. Synchronous and deterministic. */
export interface Redactor {
  /** Recorded on the redacted document (`metadata.redactedBy`) and in traces. */
  readonly name: string;
  redact(text: string): string;
}

/** The rules eligibility is judged by, beyond what each document declares. */
export interface EligibilityPolicy {
  /** Whether a document without `tenantId` is shared by every tenant or seen by nobody. @default 'shared' */
  untenanted?: 'shared' | 'deny';
  /** Trust level of a document that declares none; `'unknown'` excludes such documents. @default 'internal' */
  defaultTrustLevel?: TrustLevel | 'unknown';
  /** Maximum age of a document that has an `updatedAt` but declares no `maxAgeDays`. @default no limit */
  maxAgeDays?: number;
  /** Applied to the content of `pii` documents. @default defaultPiiRedactor */
  redactor?: Redactor;
}

/** The outcome of checking one document for one caller. An eligible `pii` document comes back redacted. */
export type EligibilityDecision = { eligible: true; document: Document } | { eligible: false; reason: 'not_allowed' | 'stale'; detail: string };

const COMPONENT = 'eligibility';
const DAY_MS = 86_400_000;

/**
 * The default redactor: replaces e-mail addresses, IBANs, payment card numbers, US social security numbers and
 * phone numbers with a placeholder such as `EMAIL_REDACTED` (no brackets, so the text still reads as prose).
 * Pattern-based and best effort: plug in a real PII detector through `EligibilityPolicy.redactor` where the data
 * calls for one.
 */
export const defaultPiiRedactor: Redactor = {
  name: 'axon-pii-patterns@1',
  redact(text: string): string {
    return (
      text
        .replace(/[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+/gu, 'EMAIL_REDACTED')
        .replace(/\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g, 'IBAN_REDACTED')
        .replace(/\b(?:\d[ -]?){12,18}\d\b/g, 'CARD_REDACTED')
        .replace(/\b\d{3}-\d{2}-\d{4}\b/g, 'SSN_REDACTED')
        // Nine digits or more, so dates (2026-01-31) and short numbers stay.
        .replace(/(?<![\w-])\+?\d{1,3}[ .-]?\(?\d{2,4}\)?(?:[ .-]?\d{2,4}){2,3}(?![\w-])/g, (match) =>
          match.replace(/\D/g, '').length >= 9 ? 'PHONE_REDACTED' : match,
        )
    );
  },
};

/**
 * The caller's context as a store filter, applied inside the search (before retrieval). undefined = no restriction.
 * The filter admits a superset of the eligible documents (freshness and malformed metadata are judged by
 * `checkEligibility`), never a document the check would refuse for tenant, role, redaction or trust.
 */
export function eligibilityFilter(caller: CallerContext, policy: EligibilityPolicy = {}): Filter | undefined {
  const checked = validateCaller(caller);
  const clauses: Filter[] = [];

  const shared: Filter = { $and: [{ tenantId: { $exists: false } }, { redaction: { $ne: 'tenant_scoped' } }] };
  if (checked.tenantId !== undefined) {
    clauses.push(policy.untenanted === 'deny' ? { tenantId: checked.tenantId } : { $or: [{ tenantId: checked.tenantId }, shared] });
  } else {
    // A caller without a tenant sees only shared documents; with `untenanted: 'deny'` that is none.
    clauses.push(policy.untenanted === 'deny' ? { $and: [{ tenantId: { $exists: true } }, { tenantId: { $exists: false } }] } : shared);
  }

  const roles = checked.roles;
  clauses.push(roles.length > 0 ? { $or: [{ allowedRoles: { $exists: false } }, { allowedRoles: { $in: roles } }] } : { allowedRoles: { $exists: false } });

  clauses.push({ $or: [{ redaction: { $exists: false } }, { redaction: { $in: ['none', 'pii', 'tenant_scoped'] } }] });

  const trust = policy.defaultTrustLevel ?? 'internal';
  const known: Filter = { trustLevel: { $in: [...TRUST_LEVELS] } };
  clauses.push(trust === 'unknown' ? known : { $or: [{ trustLevel: { $exists: false } }, known] });

  return { $and: clauses };
}

/** Checked again before inclusion. */
export function checkEligibility(document: Document, caller: CallerContext, policy: EligibilityPolicy = {}): EligibilityDecision {
  const checked = validateCaller(caller);
  const metadata = document.metadata;

  const redaction = read(metadata, 'redaction') ?? 'none';
  if (typeof redaction !== 'string' || !(REDACTION_CLASSES as readonly string[]).includes(redaction)) {
    return refuse(`redaction ${JSON.stringify(redaction)} is not one of ${REDACTION_CLASSES.join(', ')}`);
  }
  if (redaction === 'secret') return refuse('redaction is secret, which never enters a packet');

  const tenants = stringList(read(metadata, 'tenantId'));
  if (tenants === 'invalid') return refuse('tenantId is not a string or an array of strings');
  if (tenants === undefined || tenants.length === 0) {
    if (redaction === 'tenant_scoped') return refuse('redaction is tenant_scoped but the document names no tenantId');
    if (policy.untenanted === 'deny') return refuse('the document names no tenantId and the policy denies untenanted documents');
  } else if (checked.tenantId === undefined) {
    return refuse(`the document belongs to tenant ${tenants.join(', ')} and the caller names no tenant`);
  } else if (!tenants.includes(checked.tenantId)) {
    return refuse(`the document belongs to another tenant than ${checked.tenantId}`);
  }

  const allowedRoles = stringList(read(metadata, 'allowedRoles'));
  if (allowedRoles === 'invalid') return refuse('allowedRoles is not a string or an array of strings');
  if (allowedRoles !== undefined && !allowedRoles.some((role) => checked.roles.includes(role))) {
    const held = checked.roles.length > 0 ? checked.roles.join(', ') : 'none';
    return refuse(`allowedRoles is [${allowedRoles.join(', ')}]; the caller holds ${held}`);
  }

  const trust = read(metadata, 'trustLevel') ?? policy.defaultTrustLevel ?? 'internal';
  if (typeof trust !== 'string' || !(TRUST_LEVELS as readonly string[]).includes(trust)) {
    return refuse(`trustLevel ${JSON.stringify(trust)} is unknown; only ${TRUST_LEVELS.join(', ')} enter`);
  }

  const freshness = checkFreshness(metadata, checked.now, policy.maxAgeDays);
  if (freshness) return { eligible: false, reason: 'stale', detail: freshness };

  if (redaction === 'pii') {
    const redactor = policy.redactor ?? defaultPiiRedactor;
    // A copy: the stored document (and whoever else holds it) keeps its own metadata.
    const redacted: Document = {
      ...document,
      content: redactor.redact(document.content),
      metadata: { ...structuredClone(document.metadata), redactedBy: redactor.name },
    };
    return { eligible: true, document: redacted };
  }
  return { eligible: true, document };
}

/** When a document stops being fresh, or undefined when it never does (no `updatedAt` or no maximum age). */
export function expiresAt(document: Pick<Document, 'metadata'>, policy: EligibilityPolicy = {}): Date | undefined {
  const updated = parseTime(read(document.metadata, 'updatedAt'));
  const maxAge = read(document.metadata, 'maxAgeDays') ?? policy.maxAgeDays;
  if (updated === undefined || typeof maxAge !== 'number' || !Number.isFinite(maxAge)) return undefined;
  return new Date(updated + maxAge * DAY_MS);
}

function checkFreshness(metadata: Record<string, JsonValue>, now: Date, defaultMaxAge: number | undefined): string | undefined {
  const declared = read(metadata, 'maxAgeDays');
  if (declared !== undefined && declared !== null && (typeof declared !== 'number' || !Number.isFinite(declared) || declared < 0)) {
    return `maxAgeDays ${JSON.stringify(declared)} is not a non-negative number`;
  }
  const rawUpdated = read(metadata, 'updatedAt');
  const updated = parseTime(rawUpdated);
  if (typeof declared === 'number') {
    if (updated === undefined)
      return `maxAgeDays is ${declared} but updatedAt ${rawUpdated === undefined ? 'is missing' : `${JSON.stringify(rawUpdated)} is not a date`}`;
  }
  const maxAge = typeof declared === 'number' ? declared : defaultMaxAge;
  if (maxAge === undefined || updated === undefined) return undefined;
  const ageDays = (now.getTime() - updated) / DAY_MS;
  if (ageDays > maxAge) {
    const day = (time: number) => new Date(time).toISOString().slice(0, 10);
    return `updated ${day(updated)}, ${Math.floor(ageDays)} days before ${day(now.getTime())}; the maximum age is ${maxAge} days`;
  }
  return undefined;
}

function parseTime(value: JsonValue | undefined): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : time;
}

function read(metadata: Record<string, JsonValue>, key: string): JsonValue | undefined {
  if (!Object.hasOwn(metadata, key)) return undefined;
  const value = metadata[key];
  return value === null ? undefined : value;
}

function stringList(value: JsonValue | undefined): string[] | undefined | 'invalid' {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value as string[];
  return 'invalid';
}

function refuse(detail: string): EligibilityDecision {
  return { eligible: false, reason: 'not_allowed', detail };
}

interface CheckedCaller {
  tenantId: string | undefined;
  roles: string[];
  now: Date;
}

function validateCaller(caller: CallerContext): CheckedCaller {
  if (caller === null || typeof caller !== 'object') {
    throw new AxonError('INVALID_CALLER', 'The caller context must be an object.', {
      component: COMPONENT,
      fix: 'Pass { tenantId?, roles?, now? }.',
      details: { argument: 'caller' },
    });
  }
  const { tenantId, roles = [], now = new Date() } = caller;
  if (tenantId !== undefined && (typeof tenantId !== 'string' || tenantId === '')) {
    throw new AxonError('INVALID_CALLER', 'caller.tenantId must be a non-empty string when given.', {
      component: COMPONENT,
      fix: 'Leave tenantId out for a caller of no tenant.',
      details: { argument: 'caller.tenantId' },
    });
  }
  if (!Array.isArray(roles) || roles.some((role) => typeof role !== 'string' || role === '')) {
    throw new AxonError('INVALID_CALLER', 'caller.roles must be an array of non-empty strings.', {
      component: COMPONENT,
      fix: 'Pass roles like ["support", "admin"].',
      details: { argument: 'caller.roles' },
    });
  }
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) {
    throw new AxonError('INVALID_CALLER', 'caller.now must be a valid Date.', {
      component: COMPONENT,
      fix: 'Pass new Date("2026-01-31") or leave now out for the current time.',
      details: { argument: 'caller.now' },
    });
  }
  return { tenantId, roles, now };
}
