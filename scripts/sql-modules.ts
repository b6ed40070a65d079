/**
 * The schema's SQL lives in `.sql` files under src/; each is shipped as a TypeScript module beside it
 * (`name.sql` -> `name.sql.ts`, its text as the default export), so every runtime loads it the same
 * way, a Worker's bundle included, with no file system and no loader rule.
 *
 *   npx tsx scripts/sql-modules.ts           writes the modules
 *   npx tsx scripts/sql-modules.ts --check   fails if a module differs from its .sql file (or has none)
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";

const ROOT = join(import.meta.dirname, "..");
const SRC = join(ROOT, "src");

function sqlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sqlFiles(path);
    return entry.name.endsWith(".sql") ? [path] : [];
  });
}

/** The module for one .sql file: its text in a template literal, escaped where a template would read it. */
function moduleText(sqlPath: string): string {
  const text = readFileSync(sqlPath, "utf8").replaceAll("\\", "\\\\").replaceAll("`", "\\`").replaceAll("${", "\\${");
  return `// Generated from ${basename(sqlPath)} by scripts/sql-modules.ts (npm run sql:modules). Edit the .sql file, not this one.\nexport default \`${text}\`;\n`;
}

const check = process.argv.includes("--check");
const stale: string[] = [];
for (const sqlPath of sqlFiles(SRC)) {
  const modulePath = `${sqlPath}.ts`;
  const wanted = moduleText(sqlPath);
  const current = existsSync(modulePath) ? readFileSync(modulePath, "utf8") : null;
  if (current === wanted) continue;
  if (check) stale.push(relative(ROOT, modulePath));
  else writeFileSync(modulePath, wanted);
}
if (stale.length) {
  console.error(`sql:modules: ${stale.join(", ")} differ from their .sql files; run npm run sql:modules and commit the result`);
  process.exit(1);
}
