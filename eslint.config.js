import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    // The core must run in workerd: no Node built-ins and no database drivers outside the store
    // assemblies (and their driver adapters), the server and the CLI.
    files: ["src/**/*.ts"],
    ignores: ["src/store/**", "src/server/**", "src/cli/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ regex: "^(node:|better-sqlite3$|pg$|pg-)", message: "the core must run in workerd" }] }],
    },
  },
);
