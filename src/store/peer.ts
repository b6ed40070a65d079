// Only the Node-side entry points (tickwork/sqlite, tickwork/postgres, tickwork/server, the CLI) import
// this file; the core and tickwork/cloudflare never do, so workerd never loads node:module through it.
import { createRequire } from "node:module";
import { MissingPeerError } from "../core/errors.js";

export { MissingPeerError };

const requireFromHere = createRequire(import.meta.url);

/**
 * Loads an optional peer dependency synchronously (the drivers and server pieces are CommonJS or
 * ship a CommonJS entry), so a consumer who never calls `usedBy` never needs the package installed.
 * Only "not installed" becomes a MissingPeerError: any other failure (a native module built for
 * another Node, say) is the package's own error and is rethrown as it is.
 */
export function requirePeer<T>(packageName: string, usedBy: string): T {
  try {
    return requireFromHere(packageName) as T;
  } catch (error) {
    if (isNotFound(error, packageName)) throw new MissingPeerError(packageName, usedBy, { cause: error });
    throw error;
  }
}

function isNotFound(error: unknown, packageName: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // The quoted name, so that a missing dependency of the peer ('pg-types' under 'pg') is not taken
  // for the peer itself: Node says "Cannot find module 'pg'".
  return (code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND") && String((error as Error).message).includes(`'${packageName}'`);
}
