import { describe, expect, it } from 'vitest';
import { generateContextDoc } from '../../scripts/context-doc.ts';

describe('scripts/context-doc.ts', () => {
  it('produces the page from real runs: a packet, a refusal for missing evidence, a conflict and a trace', async () => {
    const page = await generateContextDoc();
    expect(page).toMatch(/Context packet [0-9a-f]{24} {2}\d+ of 7000 tokens/);
    expect(page).toContain('retrieved_evidence · [1] docs/refund-2026.jsonl  [trusted]');
    expect(page).toMatch(/ {4}docs\/refund-2024\.jsonl#0: stale — updated 2024-01-10/);
    expect(page).not.toContain('refund-globex.jsonl  [');
    // The corpus shows the raw line; everything generated after it shows the address redacted only.
    const generated = page.slice(page.indexOf('$ axon ask'));
    expect(generated).toContain('reachable at EMAIL_REDACTED or PHONE_REDACTED');
    expect(generated).not.toContain('billing@acme.example');
    expect(page).toContain('"status": "missing_evidence"');
    expect(page).toContain('"status": "conflicting_evidence"');
    expect(page).toMatch(/Run [0-9a-f-]{36} .* status answered \(answered\)/);
    expect(page).toMatch(/: \d+ differences\n {2}caller/);
    // Documents are named source#chunk in the trace and the diff, never by id.
    expect(page).toMatch(/ {7}top: docs\/refund-2024\.jsonl#0=0\.\d{4} {2}docs\/refund-2026\.jsonl#0=/);
    expect(page).toMatch(/ {2}packet\.evidence \(4 in a, 3 in b\)\n {4}only in a: docs\/refund-2026\.jsonl#0\n/);
  }, 60_000);
});
