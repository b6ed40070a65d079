import js from "@eslint/js";
import tseslint from "typescript-eslint";

// `import { z } from "zod"` takes zod's namespace as one object, which a bundler cannot cut: a Worker's
// bundle then carries every locale and the JSON Schema code (about 350 KiB minified). The namespace
// import lets it keep only what is called.
const ZOD_NAMESPACE = {
  selector: "ImportDeclaration[source.value='zod'] > ImportSpecifier[imported.name='z']",
  message: 'import * as z from "zod": the z object keeps all of zod in a bundle',
};

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-restricted-syntax": ["error", ZOD_NAMESPACE],
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
