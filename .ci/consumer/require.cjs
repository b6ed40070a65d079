// CommonJS consumers: require() of an ES module works on Node 20.19+ and 22.12+ (tickwork has no
// top-level await); older Nodes throw ERR_REQUIRE_ESM, which says the package is an ES module.
/* global require, console, process */
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS consumer is what this file checks */
const { createTickwork } = require("tickwork");
const { postgres } = require("tickwork/postgres");
if (typeof createTickwork !== "function" || typeof postgres !== "function") throw new Error("require(tickwork): missing exports");
console.log(`  require("tickwork") on Node ${process.versions.node}: ok`);
