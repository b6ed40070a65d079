/**
 * Checks the documentation against the package, so an example that rots fails CI:
 *
 * 1. Every ```ts / ```typescript block in README.md and docs/**\/*.md is written as its own module to
 *    .docs-check/ (gitignored, removed afterwards unless --keep) and type-checked, strict, with
 *    tsconfig.docs.json: "tickwork", "tickwork/sqlite"... resolve to ./src through `paths`.
 *    A fragment that needs names it does not define says so on the line before its fence:
 *      <!-- prelude: engine, app -->   prepends docs/.preludes/engine.ts and app.ts (declarations only)
 *    A block that is not TypeScript to check says why:
 *      <!-- docs-check: skip (the reason) -->
 *    Skipped blocks are counted and listed; nothing is skipped silently.
 *    A block that calls an upstream also runs, against a local one, once it type-checks:
 *      <!-- docs-check: run (retry-after) -->   (on the line above its prelude marker, if it has one)
 *    runs docs/.runners/retry-after.ts, which serves the upstream on 127.0.0.1, gives the block's
 *    free names (`tw`) real values, loads the block and checks what it did (scripts/docs-run-block.ts).
 * 2. Every relative link between Markdown files resolves, anchors included.
 *
 *   npx tsx scripts/check-docs.ts [--keep]
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

const ROOT = join(import.meta.dirname, "..");
const OUT = join(ROOT, ".docs-check");
const PRELUDES = join(ROOT, "docs", ".preludes");
const TSCONFIG = join(ROOT, "tsconfig.docs.json");
const CHECKED_LANGS = new Set(["ts", "typescript"]);

interface Block {
  file: string;
  /** The 1-based line of the block's first code line in the Markdown file. */
  line: number;
  lang: string;
  code: string;
  preludes: string[];
  skip: string | null;
  /** The runner (docs/.runners/<name>.ts) that runs the block against a local upstream. */
  run: string | null;
}

const rel = (path: string): string => relative(ROOT, path).split(sep).join("/");

function markdownFiles(): string[] {
  const out = [join(ROOT, "README.md")];
  const visit = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) visit(path);
      else if (name.endsWith(".md")) out.push(path);
    }
  };
  visit(join(ROOT, "docs"));
  return out;
}

const FENCE = /^\s*(`{3,}|~{3,})\s*([\w+-]*)/;
const PRELUDE_MARK = /^<!--\s*prelude:\s*([\w\s,-]+?)\s*-->$/;
const SKIP_MARK = /^<!--\s*docs-check:\s*skip\s*\((.+)\)\s*-->$/;
const RUN_MARK = /^<!--\s*docs-check:\s*run\s*\(([\w-]+)\)\s*-->$/;
const RUNNERS = join(ROOT, "docs", ".runners");

/** The fenced blocks of a file, and the lines outside them (for the link check). */
function parse(file: string): { blocks: Block[]; prose: { line: number; text: string }[]; problems: string[] } {
  const lines = readFileSync(file, "utf8").split("\n");
  const blocks: Block[] = [];
  const prose: { line: number; text: string }[] = [];
  const problems: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) {
      prose.push({ line: i + 1, text: lines[i]! });
      continue;
    }
    const fence = open[1]!;
    const lang = open[2]!.toLowerCase();
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end]!.trim().startsWith(fence)) end++;
    if (end >= lines.length) problems.push(`${rel(file)}:${i + 1}: a code fence that is never closed`);
    let mark = i - 1;
    while (mark >= 0 && lines[mark]!.trim() === "") mark--;
    const before = mark >= 0 ? lines[mark]!.trim() : "";
    const prelude = PRELUDE_MARK.exec(before);
    const skip = SKIP_MARK.exec(before);
    // A run marker sits right above the prelude marker, or is the marker itself.
    const runLine = prelude && mark > 0 ? lines[mark - 1]!.trim() : before;
    const run = RUN_MARK.exec(runLine);
    if ((prelude || skip || run) && !CHECKED_LANGS.has(lang)) problems.push(`${rel(file)}:${mark + 1}: a docs-check marker before a ${lang || "plain"} block, which is not checked anyway`);
    if (/^<!--\s*(prelude|docs-check)/.test(before) && !prelude && !skip && !run) problems.push(`${rel(file)}:${mark + 1}: a malformed docs-check marker: ${before}`);
    blocks.push({
      file,
      line: start + 1,
      lang,
      code: lines.slice(start, end).join("\n"),
      preludes: prelude ? prelude[1]!.split(",").map((s) => s.trim()).filter(Boolean) : [],
      skip: skip ? skip[1]! : null,
      run: run ? run[1]! : null,
    });
    i = end;
  }
  return { blocks, prose, problems };
}

interface Written {
  block: Block;
  path: string;
  /** Lines of preludes before the block's first line. */
  offset: number;
  preludeSpans: { name: string; from: number; lines: number }[];
}

function writeModules(blocks: Block[], problems: string[], used: Set<string>): Written[] {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const written: Written[] = [];
  for (const block of blocks) {
    const parts: string[] = [];
    const preludeSpans: Written["preludeSpans"] = [];
    let offset = 0;
    for (const name of block.preludes) {
      const path = join(PRELUDES, `${name}.ts`);
      if (!existsSync(path)) {
        problems.push(`${rel(block.file)}:${block.line - 1}: prelude "${name}" does not exist (docs/.preludes/${name}.ts)`);
        continue;
      }
      used.add(name);
      const text = readFileSync(path, "utf8").replace(/\n$/, "");
      preludeSpans.push({ name, from: offset, lines: text.split("\n").length });
      parts.push(text);
      offset += text.split("\n").length;
    }
    parts.push(block.code);
    const slug = rel(block.file).replace(/\.md$/, "").replace(/[^\w]+/g, "-");
    const path = join(OUT, `${slug}-L${block.line}.ts`);
    writeFileSync(path, `${parts.join("\n")}\n`);
    written.push({ block, path, offset, preludeSpans });
  }
  return written;
}

/** Each export of package.json must be mapped to its source in tsconfig.docs.json, or blocks would import the build. */
function checkPaths(problems: string[]): void {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string; exports: Record<string, { types: string }> };
  const config = ts.readConfigFile(TSCONFIG, ts.sys.readFile).config as { compilerOptions?: { paths?: Record<string, string[]> } };
  const paths = config.compilerOptions?.paths ?? {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const name = subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
    const source = `./${target.types.replace(/^\.\/dist\//, "src/").replace(/\.d\.ts$/, ".ts")}`;
    if (paths[name]?.[0] !== source) problems.push(`tsconfig.docs.json: paths["${name}"] should be ["${source}"] (package.json exports "${subpath}")`);
  }
}

function typeCheck(written: Written[]): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(TSCONFIG, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    },
  });
  if (!parsed) throw new Error("tsconfig.docs.json could not be read");
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
  const byPath = new Map(written.map((w) => [resolve(w.path), w]));
  const diagnostics = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
  // The blocks and the docs scripts are checked in full; src/ is checked by npm run typecheck.
  for (const w of written) {
    const file = program.getSourceFile(w.path);
    if (!file) throw new Error(`${w.path} is not in the docs program: check tsconfig.docs.json's include`);
    diagnostics.push(...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file));
  }
  for (const file of program.getSourceFiles()) {
    if (/^(scripts\/(docs-[\w-]+|check-docs)|docs\/\.runners\/[\w-]+)\.ts$/.test(rel(file.fileName))) diagnostics.push(...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file));
  }
  return diagnostics.map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, "\n  ");
    if (!d.file || d.start === undefined) return `error TS${d.code}: ${message}`;
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    const w = byPath.get(resolve(d.file.fileName));
    if (!w) return `${rel(d.file.fileName)}:${line + 1}:${character + 1}: error TS${d.code}: ${message}`;
    if (line >= w.offset) return `${rel(w.block.file)}:${w.block.line + line - w.offset}:${character + 1}: error TS${d.code}: ${message}`;
    const span = w.preludeSpans.find((s) => line >= s.from && line < s.from + s.lines)!;
    return `docs/.preludes/${span.name}.ts:${line - span.from + 1}:${character + 1} (prelude of ${rel(w.block.file)}:${w.block.line}): error TS${d.code}: ${message}`;
  });
}

/**
 * Runs each block that has a runner, in a process of its own (tsx with the docs' paths, so "tickwork"
 * is src/ as in the type check): a failure is a problem, with what the runner printed.
 */
function runBlocks(written: Written[], problems: string[]): string[] {
  const ran: string[] = [];
  for (const w of written.filter((x) => x.block.run !== null)) {
    const where = `${rel(w.block.file)}:${w.block.line}`;
    const runner = join(RUNNERS, `${w.block.run}.ts`);
    if (!existsSync(runner)) {
      problems.push(`${where}: runner "${w.block.run}" does not exist (docs/.runners/${w.block.run}.ts)`);
      continue;
    }
    const result = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "scripts", "docs-run-block.ts"), runner, w.path], {
      cwd: ROOT,
      env: { ...process.env, TSX_TSCONFIG_PATH: TSCONFIG },
      encoding: "utf8",
      timeout: 120_000,
    });
    const output = `${result.stdout}${result.stderr}`.trim();
    if (result.status === 0) ran.push(`${where}: ${output.split("\n").pop()}`);
    else problems.push(`${where}: running the block against docs/.runners/${w.block.run}.ts failed (${result.error ? String(result.error) : `exit ${result.status}`}):\n  ${output.split("\n").join("\n  ")}`);
  }
  return ran;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  for (const { text } of parse(file).prose) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const plain = heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/`/g, "");
    const base = plain.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const n = counts.get(base) ?? 0;
    counts.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

function checkLinks(files: string[], problems: string[]): number {
  let count = 0;
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string) => anchorCache.get(file) ?? anchorCache.set(file, anchorsOf(file)).get(file)!;
  for (const file of files) {
    for (const { line, text } of parse(file).prose) {
      const withoutCode = text.replace(/`[^`]*`/g, "");
      for (const match of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = match[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        count++;
        const [path, anchor] = target.split("#", 2) as [string, string | undefined];
        const resolved = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
        const where = `${rel(file)}:${line}`;
        if (!existsSync(resolved)) {
          problems.push(`${where}: broken link ${target} (${rel(resolved)} does not exist)`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith(".md") && !anchors(resolved).has(anchor)) {
          problems.push(`${where}: broken link ${target} (no heading #${anchor} in ${rel(resolved)})`);
        }
      }
    }
  }
  return count;
}

function main(): void {
  const started = performance.now();
  const keep = process.argv.includes("--keep");
  const problems: string[] = [];
  const files = markdownFiles();
  const blocks: Block[] = [];
  for (const file of files) {
    const parsed = parse(file);
    problems.push(...parsed.problems);
    blocks.push(...parsed.blocks);
  }
  const tsBlocks = blocks.filter((b) => CHECKED_LANGS.has(b.lang));
  const skipped = tsBlocks.filter((b) => b.skip !== null);
  const checked = tsBlocks.filter((b) => b.skip === null);
  checkPaths(problems);
  const used = new Set<string>();
  let typeErrors: string[] = [];
  let ran: string[] = [];
  try {
    const written = writeModules(checked, problems, used);
    typeErrors = typeCheck(written);
    if (typeErrors.length === 0) ran = runBlocks(written, problems);
  } finally {
    if (!keep) rmSync(OUT, { recursive: true, force: true });
  }
  for (const name of existsSync(PRELUDES) ? readdirSync(PRELUDES) : []) {
    if (name.endsWith(".ts") && !used.has(name.slice(0, -3))) problems.push(`docs/.preludes/${name} is used by no block: remove it`);
  }
  const links = checkLinks(files, problems);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);

  for (const b of skipped) console.log(`skipped ${rel(b.file)}:${b.line} (${b.skip})`);
  for (const line of ran) console.log(`ran ${line}`);
  for (const line of [...typeErrors, ...problems]) console.error(line);
  const withPrelude = checked.filter((b) => b.preludes.length > 0).length;
  console.log(
    `docs:check: ${checked.length} TypeScript blocks type-checked in ${files.length} Markdown files (${withPrelude} with a prelude), ` +
      `${skipped.length} skipped by marker, ${ran.length} run against a local upstream; ${links} relative links checked; ${typeErrors.length} type errors, ${problems.length} other problems; ${seconds} s`,
  );
  if (typeErrors.length || problems.length) process.exit(1);
}

main();
