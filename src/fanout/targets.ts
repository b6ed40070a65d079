import { MAX_INDEXED_TEXT, checkText } from "../core/bounds.js";
import { InvalidInputError, describe } from "../core/errors.js";

/** A target as a round uses it: its id, its group, and the target itself (given to `send`). */
export interface ResolvedTarget<G = unknown> {
  id: string;
  group: string;
  target: G;
}

/**
 * Reads each target's id (a string, or an object's `id`) and checks it can be stored: 1 to 500
 * characters, no NUL, well-formed Unicode (it is indexed with the fan-out's name), and unique
 * across groups (a target's acknowledged version is kept per id). Throws `InvalidInputError`
 * naming the group and the target's position.
 */
export function checkTargets<G>(where: string, groups: readonly { group: string; targets: readonly G[] }[]): ResolvedTarget<G>[] {
  const out: ResolvedTarget<G>[] = [];
  const seen = new Set<string>();
  for (const { group, targets } of groups) {
    targets.forEach((target, i) => {
      const field = `${where}: group "${group}": target ${i}`;
      const raw = typeof target === "string" ? target : target && typeof target === "object" && "id" in target ? (target as { id: unknown }).id : undefined;
      if (raw === undefined) throw new InvalidInputError(`${field} is neither a string nor { id: string }, got ${describe(target)}`);
      const id = checkText(raw, `${field}: id`, { max: MAX_INDEXED_TEXT });
      if (seen.has(id)) throw new InvalidInputError(`${where}: target id "${id}" appears twice; ids must be unique across groups`);
      seen.add(id);
      out.push({ id, group, target });
    });
  }
  return out;
}
