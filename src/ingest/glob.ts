/**
 * A small glob matcher for include/exclude patterns. Written here rather than using `node:path.matchesGlob`
 * because that function is missing before Node 20.17 and prints an ExperimentalWarning on the versions that
 * have it (checked on 20.20); the `engines` field promises Node >= 20.
 *
 * Supported: `*` (any characters except `/`), `**` as a whole segment (any number of directories, zero
 * included), `?` (one character except `/`), `[abc]` / `[a-z]` / `[!abc]`, and `{a,b}` alternatives
 * (nestable). Paths and patterns use `/`.
 */

const compiled = new Map<string, RegExp>();

/** True when `path` (relative, `/`-separated) matches `pattern`. */
export function matchesGlob(path: string, pattern: string): boolean {
  let expression = compiled.get(pattern);
  if (!expression) {
    expression = globToRegExp(pattern);
    compiled.set(pattern, expression);
  }
  return expression.test(path);
}

/**
 * True when a path filter matches a file: a pattern without `/` is matched against the file's name alone
 * (`*.md` matches `docs/a.md`, as in `.gitignore`); one with `/` against the whole relative path.
 */
export function matchesPathFilter(relativePath: string, pattern: string): boolean {
  if (!pattern.includes('/')) {
    const name = relativePath.slice(relativePath.lastIndexOf('/') + 1);
    return matchesGlob(name, pattern);
  }
  return matchesGlob(relativePath, pattern.startsWith('./') ? pattern.slice(2) : pattern);
}

/** True when the text holds glob syntax, so it should be expanded rather than read as a literal path. */
export function hasGlobSyntax(text: string): boolean {
  return /[*?[\]{}]/.test(text);
}

/**
 * Split a pattern into the directory that holds every match (the segments before the first one with glob
 * syntax) and the rest, e.g. `docs/guides/**\/*.md` → `{ base: 'docs/guides', rest: '**\/*.md' }`.
 */
export function splitGlobBase(pattern: string): { base: string; rest: string } {
  const segments = pattern.split('/');
  const firstGlob = segments.findIndex((segment) => hasGlobSyntax(segment));
  if (firstGlob === -1) return { base: pattern, rest: '' };
  const baseSegments = segments.slice(0, firstGlob);
  const base = baseSegments.join('/') || (pattern.startsWith('/') ? '/' : '.');
  return { base, rest: segments.slice(firstGlob).join('/') };
}

/** Compile a glob into an anchored regular expression over `/`-separated paths. */
export function globToRegExp(pattern: string): RegExp {
  return new RegExp(`^${translate(pattern)}$`, 'u');
}

// --- Internal helpers ---

function translate(pattern: string): string {
  let output = '';
  let braceDepth = 0;
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index];
    if (character === '*') {
      if (pattern[index + 1] === '*') {
        const atSegmentStart = index === 0 || pattern[index - 1] === '/';
        const next = pattern[index + 2];
        if (atSegmentStart && next === '/') {
          // `**/` matches zero or more whole directories.
          output += '(?:[^/]+/)*';
          index += 2;
          continue;
        }
        if (atSegmentStart && next === undefined) {
          output += '.*';
          index += 1;
          continue;
        }
        // `**` inside a segment behaves like `*`.
        index += 1;
      }
      output += '[^/]*';
    } else if (character === '?') {
      output += '[^/]';
    } else if (character === '[') {
      const close = pattern.indexOf(']', index + 2);
      if (close === -1) {
        output += '\\[';
        continue;
      }
      let body = pattern.slice(index + 1, close);
      const negated = body.startsWith('!') || body.startsWith('^');
      if (negated) body = body.slice(1);
      output += `[${negated ? '^/' : ''}${body.replace(/[\\\]]/g, '\\$&')}]`;
      index = close;
    } else if (character === '{') {
      braceDepth += 1;
      output += '(?:';
    } else if (character === '}' && braceDepth > 0) {
      braceDepth -= 1;
      output += ')';
    } else if (character === ',' && braceDepth > 0) {
      output += '|';
    } else if (character === '\\' && index + 1 < pattern.length) {
      index += 1;
      output += escapeCharacter(pattern[index]);
    } else {
      output += escapeCharacter(character);
    }
  }
  // An unclosed brace is closed at the end rather than producing an invalid expression.
  while (braceDepth-- > 0) output += ')';
  return output;
}

function escapeCharacter(character: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(character) ? `\\${character}` : character;
}
