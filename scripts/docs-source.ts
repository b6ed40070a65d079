/**
 * The library's source as the TypeScript compiler sees it, for the generated reference pages
 * (scripts/docs-reference.ts). One program over src/ with its type checker: the reference is read
 * from the code itself (classes, calls, types), never from a list kept by hand beside it.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import ts from "typescript";

export const ROOT = join(import.meta.dirname, "..");

/** Generated or browser-only: the dashboard's UI has its own tsconfig and emits no events or errors. */
const SKIPPED = ["src/server/dashboard/ui", "src/server/dashboard/assets.generated.ts"];

export interface Source {
  program: ts.Program;
  checker: ts.TypeChecker;
  /** The files of src/, sorted by path, so every output is in a stable order. */
  files: ts.SourceFile[];
  /** A file's path from the repository root, with forward slashes. */
  pathOf(file: ts.SourceFile): string;
}

export function loadSource(): Source {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, "tsconfig.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    },
  });
  if (!config) throw new Error("tsconfig.json could not be read");
  const rootNames = listTs(join(ROOT, "src"));
  const program = ts.createProgram({ rootNames, options: { ...config.options, noEmit: true } });
  const pathOf = (file: ts.SourceFile): string => relative(ROOT, file.fileName).split(sep).join("/");
  const files = program
    .getSourceFiles()
    .filter((f) => !f.isDeclarationFile && pathOf(f).startsWith("src/"))
    .sort((a, b) => pathOf(a).localeCompare(pathOf(b)));
  return { program, checker: program.getTypeChecker(), files, pathOf };
}

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const rel = relative(ROOT, path).split(sep).join("/");
    if (SKIPPED.some((s) => rel === s || rel.startsWith(`${s}/`))) continue;
    if (statSync(path).isDirectory()) out.push(...listTs(path));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** Every node of a file, depth first. */
export function walk(node: ts.Node, visit: (node: ts.Node) => void): void {
  visit(node);
  node.forEachChild((child) => walk(child, visit));
}

/** The public entry points, from package.json's `exports`: subpath ("tickwork/sqlite") to its source file. */
export function entryPoints(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string; exports: Record<string, { types: string }> };
  const entries = new Map<string, string>();
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const name = subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
    entries.set(name, target.types.replace(/^\.\/dist\//, "src/").replace(/\.d\.ts$/, ".ts"));
  }
  return entries;
}

/** The leading JSDoc comment of a declaration, as one line of text (tags dropped). */
export function jsDocText(node: ts.Node): string {
  const docs = (node as { jsDoc?: ts.JSDoc[] }).jsDoc;
  const doc = docs?.[docs.length - 1];
  if (!doc || doc.comment === undefined) return "";
  const text = typeof doc.comment === "string" ? doc.comment : doc.comment.map((part) => part.text).join("");
  return text.replace(/\s*\n\s*/g, " ").trim();
}

/** The string values an expression can take, when the source says so literally; otherwise null. */
export function literalValues(node: ts.Expression, checker: ts.TypeChecker): string[] | null {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
  if (ts.isParenthesizedExpression(node)) return literalValues(node.expression, checker);
  if (ts.isConditionalExpression(node)) {
    const a = literalValues(node.whenTrue, checker);
    const b = literalValues(node.whenFalse, checker);
    return a && b ? [...a, ...b] : null;
  }
  const type = checker.getTypeAtLocation(node);
  const parts = type.isUnion() ? type.types : [type];
  if (parts.every((t) => t.isStringLiteral())) return parts.map((t) => (t as ts.StringLiteralType).value);
  return null;
}
