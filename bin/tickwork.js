#!/usr/bin/env node
// The `tickwork` command. An installed package runs its build (dist/cli/main.js); this repository has
// no build step before `npm test` or `npm start`, so here the sources run through tsx.
import { existsSync } from "node:fs";
import process from "node:process";
import { URL } from "node:url";

const source = new URL("../src/cli/main.ts", import.meta.url);
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  process.setSourceMapsEnabled(true);
  await import(source.href);
} else {
  await import(new URL("../dist/cli/main.js", import.meta.url).href);
}
