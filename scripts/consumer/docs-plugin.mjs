// Write the plugin module and the configuration that lists it exactly as docs/configuration.md shows them (the
// ```ts block that starts with `// axon-plugins.ts`, the ```json block with "plugins") into a folder, so the
// consumer check runs `axon` with them as a reader would.
//   node docs-plugin.mjs <package or repository root> <folder>
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [root, folder] = process.argv.slice(2);
const page = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');
const blocks = [...page.matchAll(/```(ts|json)\n([\s\S]*?)```/g)].map((match) => ({ language: match[1], text: match[2] }));
const plugin = blocks.find((block) => block.language === 'ts' && block.text.startsWith('// axon-plugins.ts'));
const config = blocks.find((block) => block.language === 'json' && block.text.includes('"plugins"'));
if (!plugin || !config) {
  console.error('docs/configuration.md has no `// axon-plugins.ts` block or no configuration with "plugins"');
  process.exit(1);
}
mkdirSync(folder, { recursive: true });
writeFileSync(join(folder, 'axon-plugins.ts'), plugin.text);
writeFileSync(join(folder, 'axon.config.json'), config.text);
console.log(`wrote ${join(folder, 'axon-plugins.ts')} and axon.config.json (${config.text.trim()})`);
