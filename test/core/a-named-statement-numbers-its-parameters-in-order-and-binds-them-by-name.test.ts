import { describe, expect, it } from "vitest";
import { named } from "../../src/db/named.js";

describe("a statement written with named parameters", () => {
  it("numbers each name where it first appears, one number for a name used twice", () => {
    const statement = named<"queue" | "now" | "limit">((p) => `SELECT id FROM jobs WHERE queue = ${p("queue")} AND run_at <= ${p("now")} AND created_at <= ${p("now")} LIMIT ${p("limit")}`);
    expect(statement.sql).toBe("SELECT id FROM jobs WHERE queue = $1 AND run_at <= $2 AND created_at <= $2 LIMIT $3");
    expect(statement.bind({ limit: 10, queue: "mail", now: 5 })).toEqual(["mail", 5, 10]);
  });

  it("binds only the names its text uses, so a variant that leaves one out shifts none of the others", () => {
    const variant = (traced: boolean) => named<"queue" | "trace" | "now">((p) => `INSERT INTO t VALUES (${p("queue")}${traced ? `, ${p("trace")}` : ""}, ${p("now")})`);
    const values = { queue: "mail", trace: "00-ab", now: 7 };
    expect(variant(false).sql).toBe("INSERT INTO t VALUES ($1, $2)");
    expect(variant(false).bind(values)).toEqual(["mail", 7]);
    expect(variant(true).sql).toBe("INSERT INTO t VALUES ($1, $2, $3)");
    expect(variant(true).bind(values)).toEqual(["mail", "00-ab", 7]);
  });

  it("takes null as a value and refuses a name it uses but was given none for, naming it", () => {
    const statement = named<"queue" | "group">((p) => `SELECT 1 WHERE queue = ${p("queue")} AND group_key IS NOT DISTINCT FROM ${p("group")}`);
    expect(statement.bind({ queue: "mail", group: null })).toEqual(["mail", null]);
    expect(() => statement.bind({ queue: "mail" })).toThrow('no value for the statement\'s parameter "group"');
  });
});
