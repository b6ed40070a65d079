// The shared database helpers, under this example's name (the app opens them through examples/support/engine.ts).
export { describeTarget, type AppDatabase, type DatabaseTarget, type SqlParam, type Statement } from "../support/database.js";
