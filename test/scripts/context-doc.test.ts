import { describe, expect, it } from 'vitest';
import { generateContextDoc } from '../../scripts/context-doc.ts';

describe('scripts/context-doc.ts', () => {
  it('produces the page from real runs: a packet, a refusal for missing evidence, a conflict and a trace', async () => {
    const page = await generateContextDoc();
    expect(page).toMatch(/Context packet [0-9a-f]{24} {2}\d+ of 7000 tokens/);
    expect(page).toContain('retrieved_evidence · [1] docs/refund-2026.jsonl  [trusted]');
    expect(page).toMatch(/docs\/refund-2024\.jsonl\): stale — updated 2024-01-10/);
    expect(page).not.toContain('refund-globex.jsonl  [');
    // The corpus shows the raw line; everything generated after it shows the address redacted only.
    const generated = page.slice(page.indexOf('$ axon ask'));
    expect(generated).toContain('reachable at EMAIL_REDACTED or PHONE_REDACTED');
    expect(generated).not.toContain('billing@acme.example');
    expect(page).toContain('"status": "missing_evidence"');
    expect(page).toContain('"status": "conflicting_evidence"');
    expect(page).toMatch(/Run [0-9a-f-]{36} .* status answered \(answered\)/);
    expect(page).toMatch(/: \d+ differences\n {2}caller/);
  }, 60_000);
});
