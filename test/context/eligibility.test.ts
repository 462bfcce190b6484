import { describe, expect, it } from 'vitest';
import { checkEligibility, defaultPiiRedactor, eligibilityFilter, expiresAt, type CallerContext } from '../../src/context/eligibility.ts';
import type { Document, JsonValue } from '../../src/document.ts';
import { compileFilter, parseFilter } from '../../src/filter/index.ts';
import { mulberry32 } from '../helpers/random.ts';

function doc(metadata: Record<string, JsonValue>, content = 'Refunds take 14 days.'): Document {
  return { id: `d-${JSON.stringify(metadata)}`, content, sourceType: 'file', sourceName: 'policy.md', score: 1, metadata };
}

const now = new Date('2026-06-01T00:00:00Z');

describe('checkEligibility', () => {
  it('admits a document without eligibility metadata for any caller', () => {
    const decision = checkEligibility(doc({}), { now });
    expect(decision).toEqual({ eligible: true, document: doc({}) });
  });

  it('keeps tenants apart and refuses tenant documents to a caller of no tenant', () => {
    const document = doc({ tenantId: 'acme' });
    expect(checkEligibility(document, { tenantId: 'acme', now }).eligible).toBe(true);
    const other = checkEligibility(document, { tenantId: 'globex', now });
    expect(other).toMatchObject({ eligible: false, reason: 'not_allowed' });
    expect(checkEligibility(document, { now })).toMatchObject({ eligible: false, reason: 'not_allowed' });
    expect(checkEligibility(doc({ tenantId: ['acme', 'globex'] }), { tenantId: 'globex', now }).eligible).toBe(true);
  });

  it('denies untenanted documents when the policy says so', () => {
    expect(checkEligibility(doc({}), { tenantId: 'acme', now }, { untenanted: 'deny' })).toMatchObject({ eligible: false, reason: 'not_allowed' });
  });

  it('requires one of the allowed roles; an empty list admits nobody', () => {
    const document = doc({ allowedRoles: ['finance', 'admin'] });
    expect(checkEligibility(document, { roles: ['support', 'admin'], now }).eligible).toBe(true);
    expect(checkEligibility(document, { roles: ['support'], now })).toMatchObject({ eligible: false, reason: 'not_allowed' });
    expect(checkEligibility(document, { now })).toMatchObject({ eligible: false, reason: 'not_allowed' });
    expect(checkEligibility(doc({ allowedRoles: 'admin' }), { roles: ['admin'], now }).eligible).toBe(true);
    expect(checkEligibility(doc({ allowedRoles: [] }), { roles: ['admin'], now }).eligible).toBe(false);
  });

  it('never admits a secret, and admits tenant_scoped only inside its tenant', () => {
    expect(checkEligibility(doc({ redaction: 'secret' }), { tenantId: 'acme', roles: ['admin'], now })).toMatchObject({
      eligible: false,
      reason: 'not_allowed',
    });
    expect(checkEligibility(doc({ redaction: 'tenant_scoped', tenantId: 'acme' }), { tenantId: 'acme', now }).eligible).toBe(true);
    expect(checkEligibility(doc({ redaction: 'tenant_scoped' }), { tenantId: 'acme', now }).eligible).toBe(false);
    expect(checkEligibility(doc({ redaction: 'classified' }), { now }).eligible).toBe(false);
  });

  it('redacts pii with the default or a plugged-in redactor, leaving the original untouched', () => {
    const original = doc({ redaction: 'pii' }, 'Write to jane.doe@example.com or call +44 20 7946 0958 about card 4111 1111 1111 1111.');
    const decision = checkEligibility(original, { now });
    if (!decision.eligible) throw new Error('expected eligible');
    expect(decision.document.content).toBe('Write to EMAIL_REDACTED or call PHONE_REDACTED about card CARD_REDACTED.');
    expect(decision.document.metadata.redactedBy).toBe(defaultPiiRedactor.name);
    expect(original.content).toContain('jane.doe@example.com');
    expect(original.metadata.redactedBy).toBeUndefined();

    expect(defaultPiiRedactor.redact('Updated 2026-01-31, order 12345, SSN 078-05-1120.')).toBe('Updated 2026-01-31, order 12345, SSN SSN_REDACTED.');

    const custom = checkEligibility(original, { now }, { redactor: { name: 'upper', redact: (text) => text.toUpperCase() } });
    expect(custom.eligible && custom.document.content.startsWith('WRITE TO')).toBe(true);
  });

  it('excludes unknown trust, and documents without a trust level when the policy requires one', () => {
    expect(checkEligibility(doc({ trustLevel: 'unknown' }), { now })).toMatchObject({ eligible: false, reason: 'not_allowed' });
    expect(checkEligibility(doc({ trustLevel: 'untrusted' }), { now }).eligible).toBe(true);
    expect(checkEligibility(doc({}), { now }, { defaultTrustLevel: 'unknown' }).eligible).toBe(false);
  });

  it("judges freshness at the caller's now", () => {
    const document = doc({ updatedAt: '2026-01-01', maxAgeDays: 90 });
    expect(checkEligibility(document, { now })).toMatchObject({ eligible: false, reason: 'stale' });
    expect(checkEligibility(document, { now: new Date('2026-02-01') }).eligible).toBe(true);
    expect(checkEligibility(doc({ updatedAt: '2020-01-01' }), { now }).eligible).toBe(true);
    expect(checkEligibility(doc({ updatedAt: '2026-01-01' }), { now }, { maxAgeDays: 30 })).toMatchObject({ reason: 'stale' });
    expect(checkEligibility(doc({ maxAgeDays: 30 }), { now })).toMatchObject({ reason: 'stale' });
    expect(checkEligibility(doc({ updatedAt: 'last tuesday', maxAgeDays: 30 }), { now })).toMatchObject({ reason: 'stale' });
    expect(checkEligibility(doc({ updatedAt: Date.parse('2026-05-30'), maxAgeDays: 30 }), { now }).eligible).toBe(true);
    expect(expiresAt(document)?.toISOString()).toBe('2026-04-01T00:00:00.000Z');
  });

  it('fails closed on metadata of the wrong type', () => {
    expect(checkEligibility(doc({ tenantId: 7 }), { tenantId: 'acme', now }).eligible).toBe(false);
    expect(checkEligibility(doc({ allowedRoles: [1] }), { roles: ['admin'], now }).eligible).toBe(false);
    expect(checkEligibility(doc({ maxAgeDays: 'ninety', updatedAt: '2026-05-31' }), { now }).eligible).toBe(false);
  });

  it('rejects a malformed caller with INVALID_CALLER', () => {
    expect(() => checkEligibility(doc({}), { tenantId: '' })).toThrow(expect.objectContaining({ code: 'INVALID_CALLER' }));
    expect(() => checkEligibility(doc({}), { roles: 'admin' as unknown as string[] })).toThrow(expect.objectContaining({ code: 'INVALID_CALLER' }));
    expect(() => checkEligibility(doc({}), { now: new Date('nope') })).toThrow(expect.objectContaining({ code: 'INVALID_CALLER' }));
  });
});

describe('eligibilityFilter', () => {
  it('is a valid filter for every caller shape', () => {
    for (const caller of [{}, { tenantId: 'acme' }, { roles: ['a', 'b'] }, { tenantId: 'acme', roles: ['a'] }] as CallerContext[]) {
      for (const untenanted of ['shared', 'deny'] as const) {
        const filter = eligibilityFilter(caller, { untenanted });
        expect(filter).toBeDefined();
        expect(() => parseFilter(filter)).not.toThrow();
      }
    }
  });

  // Generated cases: over every combination of metadata values and callers, the filter admits everything the check
  // admits (so topK is not starved), and the check refuses nothing the filter admits except for freshness or a
  // malformed value (which the filter language cannot see).
  it('admits exactly the documents the check admits, up to freshness and malformed values', () => {
    const random = mulberry32(15);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const tenants: (JsonValue | undefined)[] = [undefined, null, 'acme', 'globex', ['acme', 'globex'], [], 7];
    const roles: (JsonValue | undefined)[] = [undefined, null, 'admin', ['support'], ['finance', 'admin'], [], [1]];
    const redactions: (JsonValue | undefined)[] = [undefined, 'none', 'pii', 'secret', 'tenant_scoped', 'classified'];
    const trusts: (JsonValue | undefined)[] = [undefined, 'trusted', 'internal', 'public', 'untrusted', 'unknown', 3];
    const callers: CallerContext[] = [
      {},
      { tenantId: 'acme' },
      { tenantId: 'globex', roles: ['admin'] },
      { roles: ['support'] },
      { tenantId: 'acme', roles: ['finance', 'support'] },
    ];
    let admitted = 0;
    for (let round = 0; round < 3000; round++) {
      const metadata: Record<string, JsonValue> = {};
      const set = (key: string, value: JsonValue | undefined) => {
        if (value !== undefined) metadata[key] = value;
      };
      set('tenantId', pick(tenants));
      set('allowedRoles', pick(roles));
      set('redaction', pick(redactions));
      set('trustLevel', pick(trusts));
      const caller = { ...pick(callers), now };
      const policy = { untenanted: pick(['shared', 'deny'] as const), defaultTrustLevel: pick(['internal', 'unknown'] as const) };
      const document = doc(metadata);
      const matches = compileFilter(parseFilter(eligibilityFilter(caller, policy)))(document);
      const decision = checkEligibility(document, caller, policy);
      if (decision.eligible) {
        admitted++;
        expect(matches, JSON.stringify({ metadata, caller, policy })).toBe(true);
      } else if (matches) {
        // The only refusals the filter may let through: an empty role list (the filter language reads [] as missing)
        // and values of the wrong type.
        const malformed =
          typeof metadata.tenantId === 'number' || JSON.stringify(metadata.allowedRoles) === '[1]' || JSON.stringify(metadata.allowedRoles) === '[]';
        expect(malformed, JSON.stringify({ metadata, caller, policy, decision })).toBe(true);
      }
    }
    expect(admitted).toBeGreaterThan(100);
  });
});
