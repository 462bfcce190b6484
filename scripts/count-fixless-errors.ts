/**
 * Count the places the library builds an error without a `fix` (what the user can do about it), from the
 * TypeScript syntax tree: every `new AxonError(…)`, `new ProviderError(…)` and `new FilterError(…)` in the
 * library's folders. An options object with a `fix` property (or a spread of options that may hold one, or
 * options passed on whole) counts as having one; `fix: undefined` does not. `ConfigError`, `IndexEmptyError` and
 * `SearchTimeoutError` always write their own fix. Two codes are left out of the count, since a user cannot act
 * on them: `INTERNAL` (Axon broke its own invariant: a bug to report) and `ABORTED` (the caller cancelled); so is
 * an error that is never shown, marked by a `// no fix: <why>` comment on the line above it (one caught to decide
 * something, say).
 *
 *   npx tsx scripts/count-fixless-errors.ts          # the totals, by code
 *   npx tsx scripts/count-fixless-errors.ts --list   # and each site without a fix, as file:line code
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
const LIBRARY_FOLDERS = ['src', 'app', 'processors', 'stores', 'providers', 'testing'];
/** Where each error class takes its options object, by argument position. */
const OPTIONS_ARGUMENT: Record<string, number> = { AxonError: 2, ProviderError: 1, FilterError: 1 };
/** Error classes whose constructor writes a fix itself. */
const ALWAYS_FIXED = new Set(['ConfigError', 'IndexEmptyError', 'SearchTimeoutError']);
const NOT_USER_CAUSED = new Set(['INTERNAL', 'ABORTED']);

export interface ErrorSite {
  file: string;
  line: number;
  className: string;
  /** The code when it is written as a literal; `PROVIDER_ERROR`/`FILTER_INVALID` for those classes' defaults. */
  code: string;
  fix: boolean;
  /** Marked `// no fix:` on the line above: never shown to a user. */
  unshown: boolean;
}

/** Every error construction site under the library's folders. */
export function errorSites(): ErrorSite[] {
  const sites: ErrorSite[] = [];
  for (const file of LIBRARY_FOLDERS.flatMap((folder) => sourceFiles(join(root, folder)))) {
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression)) {
        const className = node.expression.text;
        if (className in OPTIONS_ARGUMENT || ALWAYS_FIXED.has(className)) {
          const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
          sites.push({
            file: relative(root, file),
            line,
            className,
            code: codeOf(className, node),
            fix: ALWAYS_FIXED.has(className) || hasFix(className, node),
            unshown: /\/\/ no fix: /.test(lines[line - 2] ?? ''),
          });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return sites;
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

function codeOf(className: string, node: ts.NewExpression): string {
  const first = node.arguments?.[0];
  if (className === 'AxonError') return first && ts.isStringLiteralLike(first) ? first.text : '(computed)';
  if (className === 'ProviderError') {
    const options = node.arguments?.[1];
    const code = options && ts.isObjectLiteralExpression(options) ? property(options, 'code') : undefined;
    return code && ts.isPropertyAssignment(code) && ts.isStringLiteralLike(code.initializer) ? code.initializer.text : 'PROVIDER_ERROR';
  }
  if (className === 'FilterError') return 'FILTER_INVALID';
  return { ConfigError: 'CONFIG_INVALID', IndexEmptyError: 'INDEX_EMPTY', SearchTimeoutError: 'SEARCH_TIMEOUT' }[className] ?? className;
}

function hasFix(className: string, node: ts.NewExpression): boolean {
  const options = node.arguments?.[OPTIONS_ARGUMENT[className]];
  if (options === undefined) return false;
  // Options built elsewhere and passed on whole: the site that built them is the one to count.
  if (!ts.isObjectLiteralExpression(options)) return true;
  const fix = property(options, 'fix');
  if (fix === undefined) return options.properties.some((member) => ts.isSpreadAssignment(member));
  if (ts.isPropertyAssignment(fix)) return !(ts.isIdentifier(fix.initializer) && fix.initializer.text === 'undefined');
  return true;
}

function property(object: ts.ObjectLiteralExpression, name: string): ts.ObjectLiteralElementLike | undefined {
  return object.properties.find((member) => member.name !== undefined && ts.isIdentifier(member.name) && member.name.text === name);
}

if (import.meta.filename === process.argv[1]) {
  const sites = errorSites();
  const counted = sites.filter((site) => !NOT_USER_CAUSED.has(site.code));
  const unshown = counted.filter((site) => !site.fix && site.unshown);
  const fixless = counted.filter((site) => !site.fix && !site.unshown);
  const byCode = new Map<string, number>();
  for (const site of fixless) byCode.set(site.code, (byCode.get(site.code) ?? 0) + 1);
  console.log(
    `${sites.length} error construction sites in ${LIBRARY_FOLDERS.join(', ')}; ${sites.length - counted.length} are INTERNAL or ABORTED (left out).`,
  );
  const marked = unshown.length > 0 ? ` (besides ${unshown.length} marked "// no fix:" as never shown)` : '';
  console.log(`${fixless.length} of the other ${counted.length} have no fix${marked}.`);
  for (const [code, count] of [...byCode].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) console.log(`  ${code}: ${count}`);
  if (process.argv.includes('--list')) for (const site of fixless) console.log(`${site.file}:${site.line} ${site.code}`);
}
