import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The names an entry file exports, values and types, as written in its `export { ... } from` lists. */
function exportedNames(file: string): string[] {
  const text = readFileSync(`${ROOT}/${file}`, "utf8");
  return [...text.matchAll(/export (?:type )?\{([^}]*)\}/g)].flatMap(([, list]) =>
    list!
      .split(",")
      .map((item) => item.trim().replace(/^type\s+/, ""))
      .filter(Boolean)
      .map((item) => item.split(/\s+as\s+/).at(-1)!),
  );
}

describe("the package's entry points", () => {
  const exportsMap = (JSON.parse(readFileSync(`${ROOT}/package.json`, "utf8")) as { exports: Record<string, { types: string; default: string }> }).exports;
  const sourceOf = (subpath: string) => exportsMap[subpath]!.default.replace("./dist/", "src/").replace(/\.js$/, ".ts");

  it("tickwork exports the engine's names only: at most 90, and no store seam", () => {
    const root = exportedNames(sourceOf("."));
    expect(root.length).toBeGreaterThan(50);
    expect(root.length).toBeLessThanOrEqual(90);
    expect(root.filter((name) => /Store$/.test(name) || name === "Store")).toEqual([]);
    expect(new Set(root).size).toBe(root.length);
  });

  it("each module the engine serves has its subpath, whose entry exists, and no name is in two entry points", () => {
    for (const module of ["http", "delivery", "fanout", "notify", "cache", "idempotency"]) {
      expect(exportsMap[`./${module}`], `./${module} in package.json's exports`).toEqual({ types: `./dist/${module}/index.d.ts`, default: `./dist/${module}/index.js` });
      expect(existsSync(`${ROOT}/${sourceOf(`./${module}`)}`)).toBe(true);
    }
    const owner = new Map<string, string>();
    for (const subpath of [".", "./http", "./delivery", "./fanout", "./notify", "./cache", "./idempotency"]) {
      for (const name of exportedNames(sourceOf(subpath))) {
        expect(owner.get(name), `${name} in ${subpath}`).toBeUndefined();
        owner.set(name, subpath);
      }
    }
    // The seams stay internal in every module's entry too.
    expect([...owner.keys()].filter((name) => /Store$/.test(name))).toEqual([]);
  });
});
