/** A versioned schema step. Versions only grow; a released migration is never edited. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The version a store must reach to be current (`/readyz` compares against it). */
export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.reduce((max, m) => Math.max(max, m.version), 0);
}
