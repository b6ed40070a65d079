import { toMs } from "../core/duration.js";
import { parseHttpDate } from "../core/retry-after.js";
import { toClientTime } from "./headers.js";

/**
 * Rate-limit headers, every family in use, read into one object (pure: headers and "now" in, data
 * out), so a caller sees a budget at zero (`x-ratelimit-minute-remaining: 0`) and backs off before
 * the 429 comes.
 *
 * Families read:
 * - `x-ratelimit-limit` / `-remaining` / `-reset` (GitHub, Tenero, most APIs), with `-used`
 *   (GitHub) and `-reset-after` (Discord);
 * - scoped forms, `x-ratelimit-{scope}-{field}` (Tenero: `x-ratelimit-minute-remaining`,
 *   `x-ratelimit-month-remaining`) and `x-ratelimit-{field}-{scope}` (OpenAI:
 *   `x-ratelimit-remaining-requests`), plus `x-ratelimit-type` (Tenero: `web-ui-ip`);
 * - the IETF draft (draft-ietf-httpapi-ratelimit-headers) in its three shapes: separate
 *   `RateLimit-Limit` / `-Remaining` / `-Reset` (drafts up to 06), the dictionary
 *   `RateLimit: limit=100, remaining=0, reset=30` (draft 07), and named policies
 *   `RateLimit: "default";r=0;t=30` (draft 08 on); each with `RateLimit-Policy`
 *   (`100;w=60` or `"default";q=100;w=60`).
 */

/** One budget: how many calls it allows, how many are left, and when it refills. */
export interface RateLimitWindow {
  limit: number | null;
  remaining: number | null;
  /** When the budget refills, epoch ms on the caller's clock; null when the server does not say. */
  resetAt: number | null;
  /** The budget's window in ms, when the server states it (`w=60`) or its scope names it (`minute`). */
  window?: number;
}

/** The tightest budget a response reports, with every budget it reports in `scopes`. */
export interface RateLimit extends RateLimitWindow {
  /** The policy as the server stated it: a named policy's name, or the `RateLimit-Policy` text. */
  policy?: string;
  /** Which budget the main figures come from (`minute`, `month`, a policy name), when named. */
  scope?: string;
  /** The limiter's kind, when the server names it (Tenero: `x-ratelimit-type: web-ui-ip`). */
  type?: string;
  /** True when the main budget has nothing left (`remaining <= 0`). */
  exhausted: boolean;
  /** Which header family the main figures come from. */
  source: "x-ratelimit" | "ratelimit";
  /** Every named budget (unnamed ones under `default`), present when any budget is named. */
  scopes?: Record<string, RateLimitWindow>;
}

interface Candidate extends RateLimitWindow {
  name?: string;
  policy?: string;
  source: RateLimit["source"];
}

/** The response's rate-limit state, or null when it carries no rate-limit header. */
export function parseRateLimit(headers: Headers, now: number): RateLimit | null {
  const candidates = [...ietf(headers, now), ...xRateLimit(headers, now)];
  if (candidates.length === 0) return null;
  const main = candidates.reduce((a, b) => (tighter(b, a) ? b : a));
  const result: RateLimit = {
    limit: main.limit,
    remaining: main.remaining,
    resetAt: main.resetAt,
    exhausted: main.remaining !== null && main.remaining <= 0,
    source: main.source,
  };
  if (main.window !== undefined) result.window = main.window;
  const policy = main.policy ?? headers.get("x-ratelimit-policy")?.trim();
  if (policy) result.policy = policy;
  if (main.name !== undefined) result.scope = main.name;
  const type = headers.get("x-ratelimit-type")?.trim();
  if (type) result.type = type;
  if (candidates.some((c) => c.name !== undefined)) {
    const scopes: Record<string, RateLimitWindow> = {};
    for (const c of candidates) {
      const key = c.name ?? "default";
      if (!(key in scopes)) scopes[key] = windowOf(c);
    }
    result.scopes = scopes;
  }
  return result;
}

/**
 * Whether budget `a` binds sooner than `b`: an exhausted budget first (of two, the one that refills
 * later, since a caller must wait for both); otherwise the one with fewer calls left, then the one
 * with the smaller share left. A budget that does not say what is left comes last.
 */
function tighter(a: Candidate, b: Candidate): boolean {
  if (a.remaining === null || b.remaining === null) return b.remaining === null && a.remaining !== null;
  const aOut = a.remaining <= 0;
  const bOut = b.remaining <= 0;
  if (aOut !== bOut) return aOut;
  if (aOut) return (a.resetAt ?? -Infinity) > (b.resetAt ?? -Infinity);
  if (a.remaining !== b.remaining) return a.remaining < b.remaining;
  return share(a) < share(b);
}

const share = (c: Candidate) => (c.limit ? (c.remaining ?? 0) / c.limit : 1);

function windowOf(c: Candidate): RateLimitWindow {
  const w: RateLimitWindow = { limit: c.limit, remaining: c.remaining, resetAt: c.resetAt };
  if (c.window !== undefined) w.window = c.window;
  return w;
}

// ---- x-ratelimit-* ------------------------------------------------------------------------------

type Field = "limit" | "remaining" | "reset" | "used" | "resetAfter";

const FIELD_FIRST = /^(limit|remaining|reset|used)-(.+)$/;
const FIELD_LAST = /^(.+)-(limit|remaining|reset|used)$/;

function xRateLimit(headers: Headers, now: number): Candidate[] {
  const groups = new Map<string, Partial<Record<Field, string>>>();
  headers.forEach((value, name) => {
    if (!name.startsWith("x-ratelimit-")) return;
    const rest = name.slice("x-ratelimit-".length);
    let scope = "";
    let field: Field;
    if (rest === "limit" || rest === "remaining" || rest === "reset" || rest === "used") field = rest;
    else if (rest === "reset-after") field = "resetAfter";
    else {
      // `minute-remaining` (Tenero) or `remaining-requests` (OpenAI).
      const last = FIELD_LAST.exec(rest);
      const first = last ? null : FIELD_FIRST.exec(rest);
      if (last) [scope, field] = [last[1]!, last[2] as Field];
      else if (first) [field, scope] = [first[1] as Field, first[2]!];
      else return;
    }
    const group = groups.get(scope) ?? {};
    group[field] = value;
    groups.set(scope, group);
  });
  const resource = headers.get("x-ratelimit-resource")?.trim();
  const out: Candidate[] = [];
  for (const [scope, g] of groups) {
    const limit = leadingNumber(g.limit);
    let remaining = leadingNumber(g.remaining);
    const used = leadingNumber(g.used);
    if (remaining === null && limit !== null && used !== null) remaining = Math.max(0, limit - used);
    if (limit === null && remaining === null) continue;
    const resetAt = g.resetAfter !== undefined ? secondsFromNow(g.resetAfter, now) : g.reset !== undefined ? resetTime(g.reset, headers, now) : null;
    const c: Candidate = { limit, remaining, resetAt, source: "x-ratelimit" };
    const name = scope || resource || undefined;
    if (name !== undefined) c.name = name;
    const window = scope ? SCOPE_WINDOW_MS[scope.toLowerCase()] : undefined;
    if (window !== undefined) c.window = window;
    out.push(c);
  }
  return out;
}

/** Windows implied by a scope's name; a month is left out because its length depends on the month. */
const SCOPE_WINDOW_MS: Record<string, number> = {
  second: 1_000, sec: 1_000, s: 1_000,
  minute: 60_000, min: 60_000, m: 60_000,
  hour: 3_600_000, h: 3_600_000,
  day: 86_400_000, d: 86_400_000,
  week: 604_800_000,
};

/**
 * A reset value in any of its dialects: seconds until reset (`30`), epoch seconds (`1767225600`:
 * anything above 10^9, i.e. after 2001), epoch ms (above 10^12), a Go-style duration (OpenAI's
 * `6m0s`, `20ms`), or an HTTP date. Absolute times are read against the server's `Date`.
 */
function resetTime(raw: string, headers: Headers, now: number): number | null {
  const text = raw.trim();
  const n = leadingNumber(text);
  if (n !== null && /^\d+(\.\d+)?$/.test(text)) {
    if (n > 1e12) return toClientTime(Math.round(n), headers, now);
    if (n > 1e9) return toClientTime(Math.round(n * 1_000), headers, now);
    return now + Math.round(n * 1_000);
  }
  try {
    return now + toMs(text);
  } catch {
    const at = parseHttpDate(text);
    return at === null ? null : toClientTime(at, headers, now);
  }
}

function secondsFromNow(raw: string, now: number): number | null {
  const n = leadingNumber(raw);
  return n === null ? null : now + Math.round(n * 1_000);
}

/** `"100"` and `"100, 100;w=60"` (some gateways append a policy) both read as 100. */
function leadingNumber(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const m = /^\s*(\d+(?:\.\d+)?)/.exec(raw);
  return m ? Number(m[1]) : null;
}

// ---- IETF RateLimit / RateLimit-Policy ----------------------------------------------------------

function ietf(headers: Headers, now: number): Candidate[] {
  const policyText = headers.get("ratelimit-policy")?.trim();
  const policies = policyText ? parseMembers(policyText) : [];
  const combined = headers.get("ratelimit")?.trim();
  if (combined) {
    const members = parseMembers(combined);
    if (members.some((m) => m.key !== null)) return dictionaryForm(members, policies, policyText, now);
    return namedForm(members, policies, now);
  }
  const limit = leadingNumber(headers.get("ratelimit-limit") ?? undefined);
  const remaining = leadingNumber(headers.get("ratelimit-remaining") ?? undefined);
  if (limit === null && remaining === null) return namedForm([], policies, now);
  const reset = leadingNumber(headers.get("ratelimit-reset") ?? undefined);
  return [unnamed(limit, remaining, reset === null ? null : now + Math.round(reset * 1_000), policies, policyText)];
}

/** Draft 07: `RateLimit: limit=100, remaining=0, reset=30`, reset in seconds from now. */
function dictionaryForm(members: Member[], policies: Member[], policyText: string | undefined, now: number): Candidate[] {
  const field = (key: string) => {
    const v = members.find((m) => m.key === key)?.value;
    return typeof v === "number" ? v : null;
  };
  const limit = field("limit");
  const remaining = field("remaining");
  if (limit === null && remaining === null) return [];
  const reset = field("reset");
  return [unnamed(limit, remaining, reset === null ? null : now + Math.round(reset * 1_000), policies, policyText)];
}

/** An unnamed budget whose window comes from the `RateLimit-Policy` entry with the same quota. */
function unnamed(limit: number | null, remaining: number | null, resetAt: number | null, policies: Member[], policyText: string | undefined): Candidate {
  const c: Candidate = { limit, remaining, resetAt, source: "ratelimit" };
  const quotas = policies.filter((p) => typeof p.value === "number");
  const match = quotas.find((p) => p.value === limit) ?? quotas[0];
  if (match) {
    c.limit ??= match.value as number;
    const w = match.params.w;
    if (typeof w === "number") c.window = w * 1_000;
  }
  if (policyText) c.policy = policyText;
  return c;
}

/** Draft 08 on: `RateLimit: "default";r=0;t=30` with `RateLimit-Policy: "default";q=100;w=60`. */
function namedForm(members: Member[], policies: Member[], now: number): Candidate[] {
  const out: Candidate[] = [];
  const seen = new Set<string>();
  for (const m of members) {
    if (typeof m.value !== "string") continue;
    const policy = policies.find((p) => p.value === m.value);
    const r = m.params.r;
    const t = m.params.t;
    const q = policy?.params.q;
    const c: Candidate = {
      limit: typeof q === "number" ? q : null,
      remaining: typeof r === "number" ? r : null,
      resetAt: typeof t === "number" ? now + Math.round(t * 1_000) : null,
      source: "ratelimit",
      name: m.value,
      policy: m.value,
    };
    if (c.limit === null && c.remaining === null) continue;
    const w = policy?.params.w;
    if (typeof w === "number") c.window = w * 1_000;
    seen.add(m.value);
    out.push(c);
  }
  // A policy the server states but reports no usage for: its quota is still worth knowing.
  for (const p of policies) {
    if (typeof p.value !== "string" || seen.has(p.value) || typeof p.params.q !== "number") continue;
    const c: Candidate = { limit: p.params.q, remaining: null, resetAt: null, source: "ratelimit", name: p.value, policy: p.value };
    if (typeof p.params.w === "number") c.window = p.params.w * 1_000;
    out.push(c);
  }
  return out;
}

// ---- a lenient reader of RFC 8941 lists and dictionaries ----------------------------------------

type Bare = number | string | boolean;

/** One list member (`"default";r=0`, `100;w=60`) or dictionary member (`limit=100`). */
interface Member {
  key: string | null;
  value: Bare;
  params: Record<string, Bare>;
}

/**
 * Reads a structured-field list or dictionary, leniently: servers in the wild send tokens where the
 * RFC wants strings and decimals where it wants integers, and a header must never throw.
 */
export function parseMembers(text: string): Member[] {
  const members: Member[] = [];
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t")) i++;
  };
  const readToken = () => {
    const start = i;
    while (i < text.length && !";,= \t".includes(text[i]!)) i++;
    return text.slice(start, i);
  };
  const readBare = (): Bare => {
    skipSpace();
    if (text[i] === '"') {
      i++;
      let s = "";
      while (i < text.length && text[i] !== '"') {
        if (text[i] === "\\" && i + 1 < text.length) i++;
        s += text[i++];
      }
      i++;
      return s;
    }
    const token = readToken();
    if (/^-?\d+(\.\d+)?$/.test(token)) return Number(token);
    if (token === "?1") return true;
    if (token === "?0") return false;
    return token;
  };
  while (i < text.length) {
    skipSpace();
    if (text[i] === ",") {
      i++;
      continue;
    }
    let key: string | null = null;
    let value: Bare;
    if (text[i] === '"') value = readBare();
    else {
      const start = i;
      const token = readToken();
      skipSpace();
      if (text[i] === "=") {
        i++;
        key = token.toLowerCase();
        value = readBare();
      } else {
        i = start;
        value = readBare();
      }
    }
    const params: Record<string, Bare> = {};
    for (;;) {
      skipSpace();
      if (text[i] !== ";") break;
      i++;
      skipSpace();
      const name = readToken().toLowerCase();
      skipSpace();
      if (text[i] === "=") {
        i++;
        params[name] = readBare();
      } else if (name) params[name] = true;
    }
    members.push({ key, value, params });
    // Anything unreadable up to the next member is skipped rather than misread.
    while (i < text.length && text[i] !== ",") i++;
  }
  return members;
}
