import { MAX_TIME_MS } from "../core/bounds.js";
import { InvalidInputError, describe } from "../core/errors.js";
import { UnknownQueueError } from "./errors.js";
import { toNewJobRow, type EnqueueOptions, type QueueConfig } from "./options.js";
import type { FlowNodeRow } from "./store/store.js";

/** A job of a flow below its root: in any declared queue, with children of its own if it likes. */
export interface FlowChild<P = unknown> extends Omit<EnqueueOptions, "tx" | "key"> {
  queue: string;
  payload: P;
  /** Jobs that must all end before this one runs. */
  children?: FlowChild[];
  /** What a child failing for good (or cancelled) does to this job: `"fail"` it (default), or `"continue"`, counted. */
  onChildFailure?: "fail" | "continue";
}

/** A flow's root, enqueued on the queue whose `enqueueFlow` is called. */
export interface FlowSpec<P = unknown> extends Omit<EnqueueOptions, "tx" | "key"> {
  payload: P;
  children: FlowChild[];
  onChildFailure?: "fail" | "continue";
}

/** A flow as written: each job's id and queue, and its children's, in the order given. */
export interface FlowJob {
  id: string;
  queue: string;
  children: FlowJob[];
}

/** Jobs in one flow at most, the root included: one transaction writes them all. */
export const MAX_FLOW_JOBS = 100_000;
/** Levels of nesting at most: deeper is a mistake (or a cycle) long before it is a workflow. */
export const MAX_FLOW_DEPTH = 32;

const NODE_KEYS = new Set(["queue", "payload", "children", "onChildFailure"]);

/**
 * A flow checked and laid out for the store, parents first and each parent's children side by side;
 * nothing is written if any part is wrong. `config(name)` is a declared queue's config, or undefined.
 */
export function layOutFlow(root: { queue: string; spec: unknown }, config: (queue: string) => QueueConfig | undefined, known: () => string[], now: number, where: string): { nodes: FlowNodeRow[]; tree: (ids: string[]) => FlowJob } {
  const nodes: FlowNodeRow[] = [];
  const childIndexes: number[][] = [];
  const seen = new Set<object>();
  // Breadth first, so the children of a parent are written by one statement.
  const queue: { spec: unknown; queue: string | undefined; parent: number; path: string; depth: number }[] = [{ spec: root.spec, queue: root.queue, parent: -1, path: where, depth: 0 }];
  for (let next = 0; next < queue.length; next++) {
    const { spec, queue: fixed, parent, path, depth } = queue[next]!;
    if (spec === null || typeof spec !== "object" || Array.isArray(spec)) throw new InvalidInputError(`${path}: expected { ${fixed ? "" : "queue, "}payload, children?, ... }, got ${describe(spec)}`);
    if (seen.has(spec)) throw new InvalidInputError(`${path}: this object appears twice in the flow (a cycle, or a child given twice): give each job its own object`);
    seen.add(spec);
    if (depth > MAX_FLOW_DEPTH) throw new InvalidInputError(`${path}: flows nest at most ${MAX_FLOW_DEPTH} levels deep`);
    const node = spec as Partial<FlowChild> & Record<string, unknown>;
    const name = fixed ?? node.queue;
    if (fixed === undefined) {
      if (typeof name !== "string") throw new InvalidInputError(`${path}.queue: expected a declared queue's name, got ${describe(name)}`);
    } else if (node.queue !== undefined) {
      throw new InvalidInputError(`${path}.queue: the root goes on the queue enqueueFlow is called on; leave queue out`);
    }
    const declared = config(name!);
    if (!declared) throw new UnknownQueueError(name!, known());
    // A flow is written in one transaction of its own: all of it, or nothing.
    if ("tx" in node) throw new InvalidInputError(`${path}.tx: a flow is written in a transaction of its own (all of it, or nothing), not in the caller's; enqueue it after your transaction commits`);
    for (const keyed of ["key", "dedupe", "debounce", "throttle", "unique"]) {
      if (keyed in node) throw new InvalidInputError(`${path}.${keyed}: jobs of a flow take no dedupe key (a duplicate would leave its parent waiting)`);
    }
    const children = node.children;
    if (children !== undefined && !Array.isArray(children)) throw new InvalidInputError(`${path}.children: expected an array of { queue, payload, ... }, got ${describe(children)}`);
    if (parent < 0 && (!children || children.length === 0)) throw new InvalidInputError(`${path}.children: a flow needs at least one child (enqueue a job without children with enqueue)`);
    const policy = node.onChildFailure;
    if (policy !== undefined && policy !== "fail" && policy !== "continue") throw new InvalidInputError(`${path}.onChildFailure: expected "fail" or "continue", got ${describe(policy)}`);
    const hasChildren = (children?.length ?? 0) > 0;
    if (policy !== undefined && !hasChildren) throw new InvalidInputError(`${path}.onChildFailure: applies to a job with children`);
    if (hasChildren && (node.runAt !== undefined || node.delay !== undefined)) throw new InvalidInputError(`${path}: a job with children runs when they end: runAt and delay apply to jobs without children`);
    const options: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) if (!NODE_KEYS.has(k)) options[k] = v;
    const row = toNewJobRow(declared, node.payload, options as EnqueueOptions, now, path);
    const index = nodes.length;
    if (index >= MAX_FLOW_JOBS) throw new InvalidInputError(`${where}: a flow holds at most ${MAX_FLOW_JOBS} jobs`);
    nodes.push({ ...row, queue: name!, parent, children: children?.length ?? 0, childFailure: hasChildren ? (policy ?? "fail") : null, runAt: hasChildren ? MAX_TIME_MS : row.runAt });
    childIndexes.push([]);
    if (parent >= 0) childIndexes[parent]!.push(index);
    children?.forEach((child, i) => queue.push({ spec: child, queue: undefined, parent: index, path: `${path}.children[${i}]`, depth: depth + 1 }));
  }
  const tree = (ids: string[]): FlowJob => {
    const build = (i: number): FlowJob => ({ id: ids[i]!, queue: nodes[i]!.queue, children: childIndexes[i]!.map(build) });
    return build(0);
  };
  return { nodes, tree };
}
