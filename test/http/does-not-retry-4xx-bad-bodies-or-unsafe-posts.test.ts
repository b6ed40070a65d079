import { describe, expect, expectTypeOf, it } from "vitest";
import * as z from "zod";
import { HttpError, HttpSchemaError } from "../../src/http/errors.js";
import { createHttpClient, type HttpClientOptions } from "../../src/http/client.js";
import { captureEvents, scriptedServer } from "./support/scripted-server.js";

const server = scriptedServer();

function client(options: HttpClientOptions = {}) {
  const log = captureEvents();
  const http = createHttpClient({ baseUrl: server.current.url, timeout: "200ms", retry: { maxAttempts: 3, backoff: () => 5 }, logger: log.logger, ...options });
  return { http, ...log };
}

const Price = z.object({ token: z.string(), priceUsd: z.number().positive() });

describe("4xx statuses are final", () => {
  it("a 404 fails at once with HttpError", async () => {
    server.current.script("/missing", { status: 404, json: { error: "no such token" }, headers: { "x-request-id": "r-404" } });
    const { http, named } = client();
    const error = await http.get("/missing").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 404, attempts: 1, requestId: "r-404", body: '{"error":"no such token"}', message: expect.stringContaining("answered 404") });
    expect(server.current.received("/missing")).toHaveLength(1);
    expect(named("http.retry")).toEqual([]);
    expect(named("http.failed")).toEqual([expect.objectContaining({ status: 404, attempts: 1 })]);
  });
});

describe("the caller's schema", () => {
  it("validates and types the body: data is the schema's output", async () => {
    server.current.script("/price", { json: { token: "STX", priceUsd: 1.93, extra: "dropped" } });
    const { http } = client();
    const res = await http.get("/price", { schema: Price });
    expectTypeOf(res.data).toEqualTypeOf<{ token: string; priceUsd: number }>();
    expect(res.data).toEqual({ token: "STX", priceUsd: 1.93 });
  });

  it("a body that does not match fails with HttpSchemaError naming each issue, and is not retried", async () => {
    server.current.script("/bad-price", { json: { token: "STX", priceUsd: "1.93" } });
    const { http, named } = client();
    const error = (await http.get("/bad-price", { schema: Price }).catch((e: unknown) => e)) as HttpSchemaError;
    expect(error).toBeInstanceOf(HttpSchemaError);
    expect(error).toMatchObject({ code: "TW_HTTP_SCHEMA", status: 200, attempts: 1 });
    expect(error.message).toMatch(/priceUsd: .*expected number/i);
    expect(error.issues).toEqual([expect.objectContaining({ path: ["priceUsd"] })]);
    expect(server.current.received("/bad-price")).toHaveLength(1);
    expect(named("http.failed")).toEqual([expect.objectContaining({ code: "TW_HTTP_SCHEMA" })]);
  });

  it("a body that is not JSON fails the schema too", async () => {
    server.current.script("/html", { body: "<html>maintenance</html>", headers: { "content-type": "text/html" } });
    const { http } = client();
    const error = await http.get("/html", { schema: Price }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpSchemaError);
    expect((error as HttpSchemaError).message).toContain("(root): the body is not JSON");
  });

  it("without a schema, data is JSON when the server says JSON, and text otherwise", async () => {
    server.current.script("/text", { body: "plain words", headers: { "content-type": "text/plain" } });
    server.current.script("/json", { json: { a: 1 } });
    const { http } = client();
    expect((await http.get("/text")).data).toBe("plain words");
    expect((await http.get("/json")).data).toEqual({ a: 1 });
  });
});

describe("non-idempotent methods", () => {
  it("a POST that gets a 503 is not retried: it may have been done", async () => {
    server.current.script("/orders", { status: 503 });
    const { http } = client();
    await expect(http.post("/orders", { body: { qty: 1 } })).rejects.toMatchObject({ status: 503, attempts: 1 });
    expect(server.current.received("/orders")).toHaveLength(1);
  });

  it("a POST with retry.unsafe is retried and sends the same JSON body each time", async () => {
    server.current.script("/orders-unsafe", { status: 503 }, { status: 201, json: { id: 7 } });
    const { http } = client();
    const res = await http.post("/orders-unsafe", { body: { qty: 2 }, retry: { unsafe: true } });
    expect(res).toMatchObject({ status: 201, data: { id: 7 }, attempts: 2 });
    const seen = server.current.received("/orders-unsafe");
    expect(seen.map((r) => [r.method, r.body, r.headers["content-type"]])).toEqual([
      ["POST", '{"qty":2}', "application/json"],
      ["POST", '{"qty":2}', "application/json"],
    ]);
  });

  it("a POST with an Idempotency-Key header is retried", async () => {
    server.current.script("/orders-keyed", { drop: true }, { status: 201, json: { id: 8 } });
    const { http } = client();
    const res = await http.post("/orders-keyed", { body: { qty: 3 }, headers: { "Idempotency-Key": "order-42" } });
    expect(res).toMatchObject({ status: 201, attempts: 2 });
    expect(server.current.received("/orders-keyed").map((r) => r.headers["idempotency-key"])).toEqual(["order-42", "order-42"]);
  });

  it("PUT and DELETE are idempotent, so they are retried", async () => {
    server.current.script("/things/1", { status: 502 }, { status: 204 });
    const { http } = client();
    await expect(http.put("/things/1", { body: { name: "x" } })).resolves.toMatchObject({ status: 204, attempts: 2, data: undefined });
    server.current.script("/things/1", { status: 502 }, { status: 204 });
    await expect(http.delete("/things/1")).resolves.toMatchObject({ status: 204, attempts: 2 });
  });
});
