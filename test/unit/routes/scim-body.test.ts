/**
 * The SCIM routes' JSON body reader (routes/scim/scim-body.ts): the same answers as express.json
 * for every body an identity provider may send, by the short path or by express.json itself.
 */
import { gzipSync } from "node:zlib";
import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { scimJsonBody } from "../../../routes/scim/scim-body.js";
import { parseByteSize } from "../../../src/config/byte-size.js";
import { scimErrorHandler } from "../../../routes/scim/scim-errors.js";
import { createLogger } from "../../../src/observability/logger.js";

function app(limit = "1kb") {
  const a = express();
  a.post("/echo", scimJsonBody(limit), (req, res) => {
    res.json({ body: req.body === undefined ? "(unread)" : req.body });
  });
  a.use(scimErrorHandler(createLogger("silent")));
  return a;
}

describe("parseByteSize", () => {
  it("reads body-parser's sizes with 1024-based units", () => {
    expect(parseByteSize("1mb")).toBe(1024 * 1024);
    expect(parseByteSize("512kb")).toBe(512 * 1024);
    expect(parseByteSize("100")).toBe(100);
    expect(parseByteSize("2GB")).toBe(2 * 1024 ** 3);
    expect(parseByteSize("1.5kb")).toBe(1536);
  });
  it("refuses anything else", () => {
    expect(parseByteSize("a lot")).toBeUndefined();
    expect(parseByteSize("10 tb")).toBeUndefined();
    expect(parseByteSize("")).toBeUndefined();
  });
});

describe("scimJsonBody", () => {
  it("parses application/scim+json and application/json, with or without a UTF-8 charset", async () => {
    for (const type of [
      "application/scim+json",
      "application/json",
      "application/scim+json; charset=utf-8",
      'application/json;charset="UTF-8"',
    ]) {
      const res = await request(app()).post("/echo").set("Content-Type", type).send('{"a":1}');
      expect(res.status, type).toBe(200);
      expect(res.body.body).toEqual({ a: 1 });
    }
  });

  it("takes any JSON value, as express.json with strict: false", async () => {
    const res = await request(app()).post("/echo").set("Content-Type", "application/json").send("[1,2]");
    expect(res.body.body).toEqual([1, 2]);
  });

  it("an empty body is {} and a leading byte order mark is ignored", async () => {
    const empty = await request(app()).post("/echo").set("Content-Type", "application/json").send("");
    expect(empty.body.body).toEqual({});
    const bom = await request(app())
      .post("/echo")
      .set("Content-Type", "application/json")
      .send('\uFEFF{"b":2}');
    expect(bom.body.body).toEqual({ b: 2 });
  });

  it("malformed JSON is a 400 invalidSyntax SCIM error", async () => {
    const res = await request(app()).post("/echo").set("Content-Type", "application/scim+json").send('{"a":');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: "400", scimType: "invalidSyntax" });
  });

  it("a body over the limit is a 413, whether its length is declared or it arrives chunked", async () => {
    const big = JSON.stringify({ pad: "x".repeat(2000) });
    const declared = await request(app()).post("/echo").set("Content-Type", "application/json").send(big);
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({ status: "413" });
    // The rest of an oversized body is never read: the connection ends with the answer.
    expect(declared.headers.connection).toBe("close");

    const chunked = request(app()).post("/echo").set("Content-Type", "application/json");
    chunked.set("Transfer-Encoding", "chunked");
    for (let i = 0; i < 4; i += 1) chunked.write(big.slice(i * 600, (i + 1) * 600));
    const answer = await chunked;
    expect(answer.status).toBe(413);
  });

  it("a body of another media type is left unread", async () => {
    const res = await request(app()).post("/echo").set("Content-Type", "text/plain").send("hello");
    expect(res.body.body).toBe("(unread)");
  });

  it("gzip bodies and other charsets go through express.json, with its answers", async () => {
    const gz = await request(app())
      .post("/echo")
      .set("Content-Type", "application/json")
      .set("Content-Encoding", "gzip")
      .serialize((raw: Buffer) => raw as unknown as string)
      .send(gzipSync(Buffer.from('{"z":1}')));
    expect(gz.status, gz.text).toBe(200);
    expect(gz.body.body).toEqual({ z: 1 });

    const latin = await request(app())
      .post("/echo")
      .set("Content-Type", "application/json; charset=koi8-r")
      .send('{"k":1}');
    expect(latin.status).toBe(415);
  });
});
