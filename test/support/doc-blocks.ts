/**
 * The fenced code blocks of the documentation (README.md and docs/**\/*.md), for the docs tests
 * (test/docs/code-blocks.test.ts, test/integration/docs-tutorial.test.ts). A block is read as
 * CommonMark fences it: a line of three or more backticks (indented up to the list item it sits in),
 * an info string whose first word is its language, and the lines up to the closing fence, with the
 * fence's indentation removed.
 *
 * A block may name the file it is, on its first line: `// operators/memcached/index.ts` (ts) or
 * `# operators/memcached/sample.yaml` (yaml). The tutorial's runner writes such blocks to that path.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** One fenced block. */
export interface DocBlock {
  /** The Markdown file, relative to the repository root (e.g. `docs/tutorial/01-project.md`). */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The info string's first word, lower-cased; `''` when none. */
  readonly lang: string;
  /** The block's lines, without the fences and the fence's indentation, joined with `\n`. */
  readonly body: string;
  /** The file the block names on its first line (a comment holding only a relative path), if any. */
  readonly path?: string;
}

/** The kinds of block the docs may hold (STYLE: ts is compiled, sh is parsed or run, yaml parsed, text is output). */
export const BLOCK_LANGUAGES = ['ts', 'sh', 'yaml', 'text'] as const;

const FENCE = /^(\s*)(`{3,})\s*([^`\s]*)[^`]*$/;
const PATH_HEADER = /^(?:\/\/|#)\s*([\w.-]+(?:\/[\w.-]+)*\.(?:ts|mts|cts|js|ya?ml|json))\s*$/;

/** The blocks of one Markdown file, in order. @throws Error naming `file:line` for a fence never closed */
export function blocksOf(root: string, file: string): DocBlock[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, ticks, info] = open;
    const closing = new RegExp(`^\\s*${ticks}\`*\\s*$`);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !closing.test(lines[j]!); j++) {
      const text = lines[j]!;
      body.push(text.startsWith(indent!) ? text.slice(indent!.length) : text.trimStart());
    }
    if (j >= lines.length) throw new Error(`${file}:${i + 1}: a code fence that is never closed`);
    const path = PATH_HEADER.exec(body[0] ?? '')?.[1];
    blocks.push({ file, line: i + 1, lang: info!.toLowerCase(), body: body.join('\n'), ...(path ? { path } : {}) });
    i = j;
  }
  return blocks;
}

/** README.md and every `.md` under docs/ (but the generated docs/api/), relative to `root`, sorted. */
export function docFiles(root: string): string[] {
  const files: string[] = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (path !== join('docs', 'api')) walk(path);
      } else if (entry.name.endsWith('.md')) {
        files.push(relative('.', path));
      }
    }
  };
  walk('docs');
  return files.sort();
}

/** Every block of README.md and docs/**. */
export function allDocBlocks(root: string): DocBlock[] {
  return docFiles(root).flatMap((file) => blocksOf(root, file));
}
