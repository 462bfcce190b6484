import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { StageRecord } from '../../../src/pipeline/trace.ts';
import type { AgenticRunView, RunningServer, RunView } from '../../../app/serve/index.ts';
import { serve } from '../../../app/serve/index.ts';
import { defaultDocumentId } from '../../../src/document.ts';
import { ANSWER, CITED_SPANS, CORPUS, fixturePipeline, FOLLOW_UP, FOLLOW_UP_SEARCHED, SUB_QUERY } from './fixture.ts';

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

/**
 * The lines the page should draw between adjacent stage columns: a document the first column passed on and both
 * ranked, whose place among the documents both kept changed (a rise caused only by a drop above gets none).
 */
function expectedLines(stages: StageRecord[]): { id: string; from: number; to: number; fromRank: number; toRank: number }[] {
  const lines: { id: string; from: number; to: number; fromRank: number; toRank: number }[] = [];
  for (let index = 0; index + 1 < stages.length; index++) {
    const [before, after] = [stages[index], stages[index + 1]];
    const kept = before.outputIds.filter((id) => after.outputIds.includes(id) && after.inputIds.includes(id));
    const keptAfter = after.outputIds.filter((id) => kept.includes(id));
    for (const id of kept) {
      if (kept.indexOf(id) === keptAfter.indexOf(id)) continue;
      lines.push({ id, from: index, to: index + 1, fromRank: before.outputIds.indexOf(id) + 1, toRank: after.outputIds.indexOf(id) + 1 });
    }
  }
  return lines;
}

/** Each stage's output ids, keyed as the compare view keys them: stage and occurrence ("search#2"). */
function stageLists(run: RunView): Map<string, string[]> {
  const seen: Record<string, number> = {};
  return new Map(
    run.stages.map((stage) => {
      seen[stage.stage] = (seen[stage.stage] ?? 0) + 1;
      return [`${stage.stage}#${seen[stage.stage]}`, stage.outputIds];
    }),
  );
}

const chromium = findChromium();
const suite = chromium ? describe : describe.skip;
/** Where the screenshots go: $AXON_SCREENSHOTS, else a fresh temporary folder (printed); none when the suite is skipped. */
const shots = process.env.AXON_SCREENSHOTS ?? (chromium ? mkdtempSync(join(tmpdir(), 'axon-serve-shots-')) : '');

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
    // The status line says how many documents the question searched.
    const documents = await pipeline.rag.components().store.count();
    await expect.poll(() => page.locator('#status').textContent()).toContain(`searched ${documents} documents`);

    // The chip names the chunk, not only the file.
    expect(await page.locator('#citations .cite').first().textContent()).toBe('[1] help/account.md#0 p. 3');
    await page.locator('#citations .cite').first().click();
    await expect.poll(() => page.locator('#chunk').isVisible()).toBe(true);
    expect(await page.locator('#chunk-source').textContent()).toBe('help/account.md');
    expect(await page.locator('#chunk-page').textContent()).toContain('page 3');
    expect(await page.locator('#chunk-text').textContent()).toContain('choose Reset password');
    // The words the citing sentence repeats are marked inside the chunk.
    expect(await page.locator('#chunk-text mark').allTextContents()).toEqual(CITED_SPANS);

    const { runs } = (await (await fetch(`${server.origin}/api/runs?token=${server.token}`)).json()) as { runs: { runId: string }[] };
    const run = (await (await fetch(`${server.origin}/api/runs/${runs[0].runId}?token=${server.token}`)).json()) as RunView;
    const post = run.stages.find((stage) => stage.name === 'adaptive-threshold')!;
    const recorded = Number(/adaptive threshold ([\d.]+)/.exec(post.dropped[0].reason)![1]);
    const column = page.locator('.stage[data-name="adaptive-threshold"]');
    const dropped = column.locator('.row.dropped');
    expect(await dropped.count()).toBe(post.dropped.length);
    expect(await dropped.first().locator('.reason').textContent()).toBe(post.dropped[0].reason);
    expect(Number(await column.locator('.cutlabel').getAttribute('data-threshold'))).toBe(recorded);
    // MMR's drop names the selected document it was too like by source and chunk, as the CLI does, never by id.
    const unselected = run.stages.find((stage) => stage.name === 'mmr')!.dropped[0];
    expect(unselected.reason).not.toContain(unselected.keptId!);
    expect(await page.locator('.stage[data-name="mmr"] .row.dropped .reason').first().textContent()).toBe(
      `${unselected.reason} (kept: ${run.sources![unselected.keptId!]})`,
    );
    expect(run.sources![unselected.keptId!]).toMatch(/^[\w/]+\.md(:\d+)?#\d+$/);
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
    await page.screenshot({ path: join(shots, 'serve-vector.png'), fullPage: true });
  }, 60_000);

  it('opens a past run from the list', async () => {
    await page.goto(server.url);
    await page.locator('#runs button[data-run]').first().waitFor();
    expect(await page.locator('#answer').textContent()).toBe('');
    await page.locator('#runs button[data-run]').first().focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#answer').textContent()).toBe(ANSWER);
    expect(await page.locator('#question').inputValue()).toBe('How do I reset my password?');
    expect(await page.locator('.stage').count()).toBeGreaterThan(3);
    // A stored run's chunk is the evidence the model saw, with the same cited span marked.
    await page.locator('#citations .cite').first().click();
    expect(await page.locator('#chunk-text mark').allTextContents()).toEqual(CITED_SPANS);
    await page.setViewportSize({ width: 480, height: 800 });
    await page.screenshot({ path: join(shots, 'serve-narrow.png'), fullPage: true });
  }, 60_000);

  it('draws rank changes as lines between adjacent columns, from the rank before to the rank after', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(server.url);
    await page.locator('#mode').selectOption('hybrid');
    await page.locator('#question').fill('How do I reset my password?');
    await page.locator('#send').click();
    await page.locator('#citations .cite').first().waitFor();
    const { runs } = (await (await fetch(`${server.origin}/api/runs?token=${server.token}`)).json()) as { runs: { runId: string }[] };
    const run = (await (await fetch(`${server.origin}/api/runs/${runs[0].runId}?token=${server.token}`)).json()) as RunView;
    expect(run.stages.map((stage) => stage.name)).toContain('reciprocal-rank-fusion');
    const expected = expectedLines(run.stages);
    // MMR reorders what the threshold kept (and drops help/contacts.md): help/billing.md#1 rises from 4 to 2,
    // misc/office.md from 5 to 3, ops/vault.md falls from 3 to 4. Fusion and the other stages keep the order.
    const mmr = run.stages.findIndex((stage) => stage.name === 'mmr');
    const idOf = (sourceName: string, chunkIndex: number) => {
      const input = CORPUS.find((document) => document.sourceName === sourceName && document.metadata?.chunkIndex === chunkIndex)!;
      return defaultDocumentId({ ...input, sourceType: input.sourceType!, sourceName: input.sourceName! });
    };
    expect(expected).toEqual([
      { id: idOf('ops/vault.md', 0), from: mmr - 1, to: mmr, fromRank: 3, toRank: 4 },
      { id: idOf('help/billing.md', 1), from: mmr - 1, to: mmr, fromRank: 4, toRank: 2 },
      { id: idOf('misc/office.md', 0), from: mmr - 1, to: mmr, fromRank: 5, toRank: 3 },
    ]);
    // Each line on the page: which document, between which columns, from which rank to which, and where it ends.
    const drawn = await page.locator('#stages').evaluate((container) => {
      const columns = [...container.querySelectorAll(':scope > .stage')];
      const svg = container.querySelector('svg.links')!.getBoundingClientRect();
      return [...container.querySelectorAll('svg.links line')].map((line) => {
        const get = (name: string) => Number(line.getAttribute(name));
        const id = line.getAttribute('data-id')!;
        const rowsOf = (column: typeof container) => [...column.querySelectorAll(':scope > .row')];
        const [from, to] = [get('data-from'), get('data-to')];
        const rowA = rowsOf(columns[from]).find((row) => row.getAttribute('data-id') === id)!;
        const rowB = rowsOf(columns[to]).find((row) => row.getAttribute('data-id') === id)!;
        const [a, b] = [rowA.getBoundingClientRect(), rowB.getBoundingClientRect()];
        const near = (x: number, y: number) => Math.abs(x - y) <= 1;
        return {
          line: { id, from, to, fromRank: get('data-from-rank'), toRank: get('data-to-rank') },
          // The row a line leaves from sits at its rank in that column, and the line touches both rows' edges at their middle.
          rowRanks: [rowsOf(columns[from]).indexOf(rowA) + 1, rowsOf(columns[to]).indexOf(rowB) + 1],
          touches:
            near(svg.left + get('x1'), a.right) &&
            near(svg.top + get('y1'), a.top + a.height / 2) &&
            near(svg.left + get('x2'), b.left) &&
            near(svg.top + get('y2'), b.top + b.height / 2),
        };
      });
    });
    expect(drawn.map((entry) => entry.line)).toEqual(expected);
    for (const entry of drawn) {
      expect(entry.rowRanks).toEqual([entry.line.fromRank, entry.line.toRank]);
      expect(entry.touches).toBe(true);
    }
    await page.locator('#citations .cite').first().click();
    expect(await page.locator('#chunk-text mark').allTextContents()).toEqual(CITED_SPANS);
    // For the screenshot: the trace scrolled to the post-processors, where the lines are.
    await page.locator('#stages .stage[data-name="adaptive-threshold"]').evaluate((column) => {
      column.parentElement!.scrollLeft = (column as typeof column & { offsetLeft: number }).offsetLeft - 8;
    });
    await page.screenshot({ path: join(shots, 'serve.png'), fullPage: true });
    if (process.env.AXON_DOCS_SCREENSHOT) copyFileSync(join(shots, 'serve.png'), join(import.meta.dirname, '..', '..', '..', 'docs', 'serve.png'));
  }, 60_000);

  it('compares two past runs side by side, chosen and opened from the keyboard', async () => {
    await page.goto(server.url);
    await page.locator('#top-k').fill('3');
    await page.locator('#question').fill('How do I reset my password?');
    await page.locator('#question').press('Control+Enter');
    await page.locator('#citations .cite').first().waitFor();
    await expect.poll(() => page.locator('#runs input.pick').count()).toBe(3);
    // Newest first: the top-k 3 run, the hybrid one, the first (vector) one. Tick the newest and the oldest.
    const picks = page.locator('#runs input.pick');
    for (const index of [0, 2]) {
      await picks.nth(index).focus();
      await page.keyboard.press('Space');
    }
    expect(await page.locator('#compare-open').isDisabled()).toBe(false);
    await page.locator('#compare-open').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#compare').isVisible()).toBe(true);
    expect(await page.locator('#single').isVisible()).toBe(false);

    const [newest, oldest] = await Promise.all([0, 2].map((index) => picks.nth(index).getAttribute('data-pick')));
    const fetchRun = async (id: string | null) => (await (await fetch(`${server.origin}/api/runs/${id}?token=${server.token}`)).json()) as RunView;
    const [a, b] = [await fetchRun(oldest), await fetchRun(newest)];
    expect(await page.locator('#compare .cmp-run[data-side="a"] h3').textContent()).toBe(`A: ${a.question}`);
    expect(await page.locator('#compare .cmp-answer').allTextContents()).toEqual([a.answer, b.answer]);
    expect(await page.locator('#compare-answers').textContent()).toBe('Same answer text.');
    const [listsA, listsB] = [stageLists(a), stageLists(b)];
    const keys = [...new Set([...listsA.keys(), ...listsB.keys()])];
    expect(await page.locator('#compare .pair').count()).toBe(keys.length);
    // Per stage, each side's candidates with what differs: only in this run, at another rank, or the same.
    const diff = (mine: string[], theirs: string[]) =>
      mine.map((id, index) => [id, theirs.indexOf(id) === -1 ? 'only' : theirs.indexOf(id) === index ? 'same' : 'moved']);
    let onlyCount = 0;
    for (const key of keys) {
      for (const [side, mine, theirs] of [
        ['a', listsA.get(key), listsB.get(key)],
        ['b', listsB.get(key), listsA.get(key)],
      ] as const) {
        const rows = page.locator(`#compare .pair[data-key="${key}"] .side[data-side="${side}"] .crow:not(.dropped)`);
        const shown = await rows.evaluateAll((nodes) => nodes.map((node) => [node.getAttribute('data-id'), node.getAttribute('data-diff')]));
        expect(shown, `${key} side ${side}`).toEqual(mine ? diff(mine, theirs ?? []) : []);
        onlyCount += shown.filter(([, kind]) => kind === 'only').length;
      }
    }
    // Top-k 3 against 50: the larger run has documents the other never saw.
    expect(onlyCount).toBeGreaterThan(0);
    await page.screenshot({ path: join(shots, 'serve-compare.png'), fullPage: true });
    if (process.env.AXON_DOCS_SCREENSHOT)
      copyFileSync(join(shots, 'serve-compare.png'), join(import.meta.dirname, '..', '..', '..', 'docs', 'serve-compare.png'));
    // Readable on a narrow window: the two sides stay side by side and nothing runs off the page.
    await page.setViewportSize({ width: 480, height: 800 });
    const sides = page.locator('#compare .pair').first().locator('.cmp-grid > *');
    const [left, right] = [(await sides.nth(0).boundingBox())!, (await sides.nth(1).boundingBox())!];
    expect(right.x).toBeGreaterThanOrEqual(left.x + left.width);
    expect(await page.locator('html').evaluate((root) => root.scrollWidth)).toBeLessThanOrEqual(480);
    await page.screenshot({ path: join(shots, 'serve-compare-narrow.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('#compare').isVisible()).toBe(false);
    expect(await page.locator('#single').isVisible()).toBe(true);
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
    expect(await page.locator('#chunk-text mark').allTextContents()).toEqual(CITED_SPANS);
    await page.screenshot({ path: join(shots, 'serve-agentic.png'), fullPage: true });
  }, 60_000);

  it('opens a saved agentic run from the past runs: its rounds, sub-queries and the stages of each search', async () => {
    await page.goto(server.url);
    const entry = page.locator('#runs button[data-kind="agentic"]').first();
    await entry.waitFor();
    expect(await entry.textContent()).toContain('agentic');
    await entry.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#status').textContent()).toContain('1 rounds');
    const runId = await entry.getAttribute('data-run');
    const stored = (await (await fetch(`${server.origin}/api/runs/${runId}?token=${server.token}`)).json()) as AgenticRunView;
    expect(await page.locator('#iterations .step').count()).toBe(stored.steps!.length);
    const round = page.locator('#iterations .stage[data-iteration="1"]');
    expect(await round.locator('[data-step="planning"]').textContent()).toContain(SUB_QUERY);
    const retrieval = round.locator('[data-step="retrieval"]');
    expect(await retrieval.textContent()).toContain(SUB_QUERY);
    expect(await page.locator('#answer mark').textContent()).toBe(stored.answer);
    // The sub-query's own pipeline run: its stages drawn as for any run.
    await retrieval.locator('button[data-search]').press('Enter');
    expect(await page.locator('#trace-title').textContent()).toContain(SUB_QUERY);
    const search = (stored.steps!.find((step) => step.step === 'retrieval')!.output!.pipeline as { stages: StageRecord[] }).stages;
    expect(await page.locator('#stages > .stage').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-name')))).toEqual(
      search.map((stage) => stage.name),
    );
    expect(await page.locator('#stages .stage[data-stage="search"] .meta').textContent()).toContain(SUB_QUERY);
    await page.locator('#citations .cite').first().click();
    expect(await page.locator('#chunk-text mark').allTextContents()).toEqual(CITED_SPANS);
    await page.screenshot({ path: join(shots, 'serve-agentic-stored.png'), fullPage: true });
    if (process.env.AXON_DOCS_SCREENSHOT)
      copyFileSync(join(shots, 'serve-agentic-stored.png'), join(import.meta.dirname, '..', '..', '..', 'docs', 'serve-agentic.png'));
  }, 60_000);

  it('cuts long document names in the middle, keeping the file name, page and chunk whole', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(server.url);
    await page.locator('#question').fill('How do I reset my password?');
    await page.locator('#send').click();
    await page.locator('#citations .cite').first().waitFor();
    // Every row of the trace: the whole label as its tooltip, its tail (after the last "/") never clipped.
    const rows = await page.locator('#stages .row .name').evaluateAll((names) =>
      names.map((name) => {
        const tail = name.querySelector('.tail')!;
        const clipped = tail.getBoundingClientRect().right > name.getBoundingClientRect().right + 0.5 || tail.scrollWidth > tail.clientWidth;
        return { label: name.getAttribute('title'), text: name.textContent, tail: tail.textContent, clipped };
      }),
    );
    expect(rows.length).toBeGreaterThan(5);
    for (const row of rows) {
      expect(row.text).toBe(row.label);
      expect(row.label!.endsWith(row.tail!)).toBe(true);
      expect(row.clipped).toBe(false);
    }
    expect(rows.map((row) => row.tail)).toContain('account.md:3#0');
    // Two files of the same name in different folders, in a cell too narrow for either: the head gives way, the tail stays.
    // (Run as page code; the test's own TypeScript has no DOM types.)
    const cells = await page.evaluate(`['corpus/adduser/copyright#3', 'corpus/bash/copyright#3'].map((label) => {
      const cell = nameCell(label);
      cell.style.width = '110px';
      cell.style.fontSize = '11px';
      document.body.append(cell);
      const [head, tail] = [cell.querySelector('.head'), cell.querySelector('.tail')];
      const tailCut = tail.getBoundingClientRect().right > cell.getBoundingClientRect().right + 0.5 || tail.scrollWidth > tail.clientWidth;
      const result = { head: head.textContent, tail: tail.textContent, headCut: head.scrollWidth > head.clientWidth, tailCut };
      cell.remove();
      return result;
    })`);
    expect(cells).toEqual([
      { head: 'corpus/adduser/', tail: 'copyright#3', headCut: true, tailCut: false },
      { head: 'corpus/bash/', tail: 'copyright#3', headCut: true, tailCut: false },
    ]);
  }, 60_000);

  it('keeps a thread: each follow-up under the last with the searched question beside it, a new conversation, past ones reopened', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(server.url);
    expect(await page.locator('#thread').isVisible()).toBe(false);
    await page.locator('#question').fill('How do I reset my password?');
    await page.locator('#question').press('Control+Enter');
    await expect.poll(() => page.locator('#turns li').count()).toBe(1);
    expect(await page.locator('#searched').isVisible()).toBe(false);

    await page.locator('#question').fill(FOLLOW_UP);
    await page.locator('#question').press('Control+Enter');
    await expect.poll(() => page.locator('#turns li').count()).toBe(2);
    expect(await page.locator('#searched').textContent()).toBe(`Searched as: ${FOLLOW_UP_SEARCHED}`);
    expect(await page.locator('#turns li .turn-question').allTextContents()).toEqual(['How do I reset my password?', FOLLOW_UP]);
    expect(await page.locator('#turns li').nth(1).locator('.searched').textContent()).toBe(`searched as: ${FOLLOW_UP_SEARCHED}`);
    expect(await page.locator('#turns li').nth(1).locator('.turn-answer').textContent()).toBe(ANSWER);
    await page.screenshot({ path: join(shots, 'serve-conversation.png'), fullPage: true });

    // The conversation is listed with its first question; a new conversation starts empty, the old one reopens.
    const listed = page.locator('#conversations button[data-conversation]', { hasText: 'How do I reset my password?' });
    await expect.poll(() => listed.count()).toBeGreaterThan(0);
    expect(await listed.first().locator('small').textContent()).toMatch(/2 turns$/);
    await page.locator('#new-conversation').click();
    expect(await page.locator('#turns li').count()).toBe(0);
    expect(await page.locator('#thread').isVisible()).toBe(false);
    await listed.first().click();
    await expect.poll(() => page.locator('#turns li').count()).toBe(2);
    expect(await page.locator('#status').textContent()).toBe('Continuing a conversation of 2 turns.');
  }, 60_000);

  it('runs no script but its own: an injected inline script is refused by the Content-Security-Policy', async () => {
    await page.goto(server.url);
    await page.locator('#runs button[data-run]').first().waitFor();
    // An inline script and an inline event handler (on an image that fails to load), as an injection would add them.
    const ran = await page.evaluate(`new Promise((resolve) => {
      const script = document.createElement('script');
      script.textContent = 'window.injectedRan = true;';
      document.body.append(script);
      const image = document.createElement('img');
      image.setAttribute('onerror', 'window.handlerRan = true;');
      image.addEventListener('error', () => setTimeout(() => resolve([Boolean(window.injectedRan), Boolean(window.handlerRan)]), 50));
      image.setAttribute('src', 'data:image/png;base64,AAAA');
      document.body.append(image);
    })`);
    expect(ran).toEqual([false, false]);
  }, 60_000);

  it('made no request outside its own origin', () => {
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((url) => !url.startsWith(`${server.origin}/`))).toEqual([]);
  });
});
