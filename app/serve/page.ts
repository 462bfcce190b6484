import { createHash } from 'node:crypto';
import { PAGE_SCRIPT } from './page-script.ts';

export { PAGE_SCRIPT } from './page-script.ts';
export { PAGE_STYLE } from './page-style.ts';

/** Where the server serves the page's script and style sheet. */
export const PAGE_SCRIPT_PATH = '/page.js';
export const PAGE_STYLE_PATH = '/page.css';

/** The script's Subresource Integrity hash: a browser runs `/page.js` only if its text is exactly `PAGE_SCRIPT`. */
export const PAGE_SCRIPT_INTEGRITY = `sha256-${createHash('sha256').update(PAGE_SCRIPT).digest('base64')}`;

/**
 * The page `axon serve` sends: the HTML of the page, whose style sheet and script are served beside it
 * (`PAGE_STYLE_PATH`, `PAGE_SCRIPT_PATH`). The script tag carries `nonce`, the one the response's
 * Content-Security-Policy names, so no other script (an injected one included) can run; nothing is loaded from
 * anywhere else.
 */
export function pageHtml(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Axon</title>
<link rel="stylesheet" href="${PAGE_STYLE_PATH}">
</head>
<body>
<svg id="svg-proto" class="hidden" aria-hidden="true"></svg>
<header><h1>Axon</h1><span id="status" role="status" aria-live="polite">Ready.</span></header>
<main>
  <nav aria-label="Past runs">
    <h2>Past runs</h2>
    <p class="hint" id="compare-hint">Tick two runs to compare them.</p>
    <button class="primary" type="button" id="compare-open" disabled>Compare the two ticked runs</button>
    <ol id="runs"></ol>
    <h2>Conversations</h2>
    <ol id="conversations"></ol>
  </nav>
  <div class="content">
    <section id="thread" class="hidden" aria-label="Conversation"><h2>Conversation</h2><ol id="turns"></ol></section>
    <form id="ask">
      <label for="question" class="hidden">Question</label>
      <textarea id="question" name="question" placeholder="Ask a question (Ctrl+Enter to send)" required></textarea>
      <button class="primary" type="submit" id="send">Ask</button>
    </form>
    <div class="options">
      <label><input type="checkbox" id="agentic"> Agentic: plan sub-queries and retrieve in rounds</label>
      <label>Top K <input type="number" id="top-k" min="1" max="1000" placeholder="default"></label>
      <button class="plain" type="button" id="new-conversation">New conversation</button>
      <label>Search <select id="mode"><option value="">default</option><option value="vector">vector</option><option value="keyword">keyword</option><option value="hybrid">hybrid</option></select></label>
    </div>
    <div id="single">
      <section aria-label="Answer"><p id="searched" class="hint hidden"></p><div id="answer" aria-live="polite"></div><div id="citations"></div></section>
      <section id="chunk" class="hidden" aria-label="Cited chunk" tabindex="-1">
        <button class="cite close" type="button" id="chunk-close" aria-label="Close the chunk">×</button>
        <strong id="chunk-source"></strong> <span id="chunk-page"></span> <span id="chunk-note"></span><pre id="chunk-text"></pre>
      </section>
      <section id="agentic-view" class="hidden" aria-label="Agentic iterations"><h2>Iterations</h2><div id="iterations" class="stages"></div></section>
      <section aria-label="Trace"><h2 id="trace-title">Trace</h2><div id="timeline" class="timeline" aria-label="Stage timings"></div><div id="stages" class="stages"></div></section>
      <section aria-label="Context packet"><h2>Context packet</h2><div id="packet"></div></section>
    </div>
    <section id="compare" class="hidden" aria-label="Two runs compared" tabindex="-1">
      <div class="toolbar"><h2>Two runs side by side</h2><button class="plain" type="button" id="compare-close">Close (Esc)</button></div>
      <div id="compare-body"></div>
    </section>
  </div>
</main>
<script src="${PAGE_SCRIPT_PATH}" nonce="${nonce}" integrity="${PAGE_SCRIPT_INTEGRITY}"></script>
</body>
</html>
`;
}
