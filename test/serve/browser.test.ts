import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { RunningServer, RunView } from '../../src/serve/index.ts';
import { serve } from '../../src/serve/index.ts';
import { ANSWER, fixturePipeline, SUB_QUERY } from './fixture.ts';

/** Chromium from $AXON_CHROMIUM or the PATH (Debian's `chromium` package; `.ci/run` installs it). */
function findChromium(): string | undefined {
  if (process.env.AXON_CHROMIUM) return existsSync(process.env.AXON_CHROMIUM) ? process.env.AXON_CHROMIUM : undefined;
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
      const path = join(folder, name);
      if (existsSync(path)) return path;
    }
  }
  return undefined;
}

const chromium = findChromium();
const suite = chromium ? describe : describe.skip;
/** Where the screenshots go: $AXON_SCREENSHOTS, else a fresh temporary folder (printed). */
const shots = process.env.AXON_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'axon-serve-shots-'));

suite(chromium ? 'axon serve in Chromium' : 'axon serve in Chromium — SKIPPED: no Chromium found (apt-get install chromium, or set AXON_CHROMIUM)', () => {
  let browser: Browser;
  let server: RunningServer;
  let pipeline: Awaited<ReturnType<typeof fixturePipeline>>;
  let page: Page;
  const requests: string[] = [];

  beforeAll(async () => {
    pipeline = await fixturePipeline();
    server = await serve(pipeline.rag, { traceStore: pipeline.traceStore });
    const { chromium: driver } = await import('playwright-core');
    // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    browser = await driver.launch({ executablePath: chromium, headless: true, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('request', (request) => requests.push(request.url()));
    process.stderr.write(`axon serve browser test: screenshots in ${shots} (Chromium ${execFileSync(chromium!, ['--version']).toString().trim()})\n`);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await pipeline?.rag.close();
  });

  it('asks from the keyboard, streams the answer, opens a citation, shows drops and the adaptive cut', async () => {
    await page.goto(server.url);
    await page.locator('#question').fill('How do I reset my password?');
    await page.locator('#question').press('Control+Enter');
    await page.locator('#citations .cite').first().waitFor();
    expect(await page.locator('#answer').textContent()).toBe(ANSWER);

    await page.locator('#citations .cite').first().click();
    await expect.poll(() => page.locator('#chunk').isVisible()).toBe(true);
    expect(await page.locator('#chunk-source').textContent()).toBe('help/account.md');
    expect(await page.locator('#chunk-page').textContent()).toContain('page 3');
    expect(await page.locator('#chunk-text').textContent()).toContain('choose Reset password');

    const { runs } = (await (await fetch(`${server.origin}/api/runs?token=${server.token}`)).json()) as { runs: { runId: string }[] };
    const run = (await (await fetch(`${server.origin}/api/runs/${runs[0].runId}?token=${server.token}`)).json()) as RunView;
    const post = run.stages.find((stage) => stage.name === 'adaptive-threshold')!;
    const recorded = Number(/adaptive threshold ([\d.]+)/.exec(post.dropped[0].reason)![1]);
    const column = page.locator('.stage[data-name="adaptive-threshold"]');
    const dropped = column.locator('.row.dropped');
    expect(await dropped.count()).toBe(post.dropped.length);
    expect(await dropped.first().locator('.reason').textContent()).toBe(post.dropped[0].reason);
    expect(Number(await column.locator('.cutlabel').getAttribute('data-threshold'))).toBe(recorded);
    // The cut line sits at the threshold on the column's own scale: left of every kept bar's end, right of every dropped one's.
    const cutX = (await column.locator('.row .cut').first().boundingBox())!.x;
    for (const fill of await column.locator('.row.dropped .fill').all()) {
      const box = (await fill.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(cutX + 1);
    }
    for (const fill of await column.locator('.row:not(.dropped) .fill').all()) {
      const box = (await fill.boundingBox())!;
      expect(box.x + box.width).toBeGreaterThanOrEqual(cutX - 1);
    }
    await page.screenshot({ path: join(shots, 'serve.png'), fullPage: true });
    if (process.env.AXON_DOCS_SCREENSHOT) copyFileSync(join(shots, 'serve.png'), join(import.meta.dirname, '..', '..', 'docs', 'serve.png'));
  }, 60_000);

  it('opens a past run from the list', async () => {
    await page.goto(server.url);
    await page.locator('#runs button').first().waitFor();
    expect(await page.locator('#answer').textContent()).toBe('');
    await page.locator('#runs button').first().focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#answer').textContent()).toBe(ANSWER);
    expect(await page.locator('#question').inputValue()).toBe('How do I reset my password?');
    expect(await page.locator('.stage').count()).toBeGreaterThan(3);
    await page.setViewportSize({ width: 480, height: 800 });
    await page.screenshot({ path: join(shots, 'serve-narrow.png'), fullPage: true });
  }, 60_000);

  it('shows an agentic run: its rounds and steps as they arrive, the answer with span citations', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(server.url);
    await page.locator('#agentic').check();
    await page.locator('#question').fill('How do I reset my password?');
    await page.locator('#send').click();
    await expect.poll(() => page.locator('#status').textContent()).toContain('1 rounds');
    const round = page.locator('#iterations .stage[data-iteration="1"]');
    expect(await round.locator('h3').textContent()).toBe('Round 1');
    expect(await round.locator('[data-step="planning"]').getAttribute('data-status')).toBe('succeeded');
    expect(await round.locator('[data-step="retrieval"]').textContent()).toContain(SUB_QUERY);
    expect(await round.locator('[data-step="sufficiency"]').textContent()).toContain('sufficient');
    expect(await page.locator('#iterations .step.inProgress').count()).toBe(0);
    expect(await page.locator('#answer mark').textContent()).toBe(ANSWER.replace(' [1]', ''));
    await page.locator('#answer .cite').first().click();
    expect(await page.locator('#chunk-source').textContent()).toBe('help/account.md');
    expect(await page.locator('#chunk-page').textContent()).toBe('page 3');
    await page.screenshot({ path: join(shots, 'serve-agentic.png'), fullPage: true });
  }, 60_000);

  it('made no request outside its own origin', () => {
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((url) => !url.startsWith(`${server.origin}/`))).toEqual([]);
  });
});
