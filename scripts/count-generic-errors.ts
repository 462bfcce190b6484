/**
 * Count the places the library raises an error with a generic code, one that names a family of failures rather
 * than the failure (`INVALID_INPUT`, `INVALID_OPTION`, `PROVIDER_ERROR`, `INTERNAL`, the retired
 * `INVALID_ARGUMENT`), from the TypeScript syntax tree: every `new AxonError(…)`, `new ProviderError(…)`,
 * `new FilterError(…)`, `new ConfigError(…)`, `new IndexEmptyError(…)` and `new SearchTimeoutError(…)` in the
 * library's folders. A code chosen by a condition (`status === 501 ? 'A' : 'B'`) counts as generic when one of its
 * branches is; a code computed otherwise (passed on from a caught error, looked up from a status) is listed as
 * `(computed)`. Also counted: `CONFIG_INVALID` raised as a bare `AxonError` (without the `issues` a `ConfigError`
 * carries) and plain `new Error(…)` thrown from library code, which no caller can tell apart by code.
 *
 *   npx tsx scripts/count-generic-errors.ts          # the totals, by code
 *   npx tsx scripts/count-generic-errors.ts --list   # and each generic site, as file:line code
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
const LIBRARY_FOLDERS = ['src', 'app', 'processors', 'stores', 'providers', 'testing'];
/** The codes that name a family of failures rather than the failure. */
export const GENERIC_CODES = new Set(['INVALID_ARGUMENT', 'INVALID_INPUT', 'INVALID_OPTION', 'PROVIDER_ERROR', 'INTERNAL']);
/** The fixed code of each error class that has one. */
const CLASS_CODE: Record<string, string> = {
  FilterError: 'FILTER_INVALID',
  ConfigError: 'CONFIG_INVALID',
  IndexEmptyError: 'INDEX_EMPTY',
  SearchTimeoutError: 'SEARCH_TIMEOUT',
};

export interface CodedSite {
  file: string;
  line: number;
  className: string;
  /** Every code the site may raise: one literal, the branches of a condition, or `(computed)`. */
  codes: string[];
}

export interface ErrorCensus {
  sites: CodedSite[];
  /** Sites one of whose codes is generic. */
  generic: CodedSite[];
  /** Generic sites by code (a conditional site counts under each generic branch). */
  byCode: Map<string, number>;
  /** `CONFIG_INVALID` raised as a bare `AxonError`. */
  bareConfigInvalid: CodedSite[];
  /** `new Error(…)` (or `TypeError`, `RangeError`) in library code. */
  plainErrors: Array<{ file: string; line: number }>;
}

/** Every error construction site under the library's folders, with its codes. */
export function errorCensus(): ErrorCensus {
  const sites: CodedSite[] = [];
  const plainErrors: ErrorCensus['plainErrors'] = [];
  for (const file of LIBRARY_FOLDERS.flatMap((folder) => sourceFiles(join(root, folder)))) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression)) {
        const className = node.expression.text;
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        const where = { file: relative(root, file), line };
        if (className === 'AxonError' || className === 'ProviderError' || className in CLASS_CODE) {
          sites.push({ ...where, className, codes: codesOf(className, node) });
        } else if (/^(Error|TypeError|RangeError)$/.test(className) && ts.isThrowStatement(node.parent)) {
          plainErrors.push(where);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  const generic = sites.filter((site) => site.codes.some((code) => GENERIC_CODES.has(code)));
  const byCode = new Map<string, number>();
  for (const site of generic) for (const code of new Set(site.codes)) if (GENERIC_CODES.has(code)) byCode.set(code, (byCode.get(code) ?? 0) + 1);
  const bareConfigInvalid = sites.filter((site) => site.className === 'AxonError' && site.codes.includes('CONFIG_INVALID'));
  return { sites, generic, byCode, bareConfigInvalid, plainErrors };
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

function codesOf(className: string, node: ts.NewExpression): string[] {
  if (className in CLASS_CODE) return [CLASS_CODE[className]];
  if (className === 'AxonError') return node.arguments?.[0] === undefined ? ['(computed)'] : literalCodes(node.arguments[0]);
  const options = node.arguments?.[1];
  if (options === undefined) return ['PROVIDER_ERROR'];
  if (!ts.isObjectLiteralExpression(options)) return ['(computed)'];
  const code = options.properties.find((member) => member.name !== undefined && ts.isIdentifier(member.name) && member.name.text === 'code');
  // A spread of shared options (`...base`) is taken to hold no code: none in the library does.
  if (code === undefined) return ['PROVIDER_ERROR'];
  return ts.isPropertyAssignment(code) ? literalCodes(code.initializer) : ['(computed)'];
}

/** The codes an expression may be: a string literal, either branch of a condition, else `(computed)`. */
function literalCodes(expression: ts.Expression): string[] {
  if (ts.isStringLiteralLike(expression)) return [expression.text];
  if (ts.isParenthesizedExpression(expression)) return literalCodes(expression.expression);
  if (ts.isConditionalExpression(expression)) return [...literalCodes(expression.whenTrue), ...literalCodes(expression.whenFalse)];
  return ['(computed)'];
}

if (import.meta.filename === process.argv[1]) {
  const census = errorCensus();
  const percent = ((census.generic.length / census.sites.length) * 100).toFixed(0);
  console.log(`${census.generic.length} of ${census.sites.length} error construction sites (${percent}%) use a generic code:`);
  for (const [code, count] of [...census.byCode].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) console.log(`  ${code}: ${count}`);
  const computed = census.sites.filter((site) => site.codes.includes('(computed)'));
  console.log(`${computed.length} site(s) compute their code (passed on, or looked up from a status).`);
  console.log(`${census.bareConfigInvalid.length} raise CONFIG_INVALID as a bare AxonError (without issues).`);
  console.log(`${census.plainErrors.length} throw a plain Error.`);
  if (process.argv.includes('--list')) {
    for (const site of census.generic) console.log(`${site.file}:${site.line} ${site.codes.join('|')}`);
    for (const site of computed) console.log(`${site.file}:${site.line} (computed)`);
    for (const site of census.bareConfigInvalid) console.log(`${site.file}:${site.line} CONFIG_INVALID (bare)`);
    for (const site of census.plainErrors) console.log(`${site.file}:${site.line} Error`);
  }
}
