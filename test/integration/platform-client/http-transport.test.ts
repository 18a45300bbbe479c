import { afterEach, describe, expect, it } from "vitest";
import { HttpTransport, joinPath, TransportError } from "../../../src/platform/client/http-transport.js";
import { type FakePlatform, sendJson, startFakePlatform } from "./fake-platform.js";

let platform: FakePlatform | undefined;
let transport: HttpTransport | undefined;

afterEach(async () => {
  transport?.close();
  transport = undefined;
  await platform?.close();
  platform = undefined;
});

describe("HttpTransport", () => {
  it("keeps the base URL's path and reuses one kept-alive connection", async () => {
    platform = await startFakePlatform((_req, res) => sendJson(res, 200, { ok: true }));
    transport = new HttpTransport({ baseUrl: new URL(`${platform.url}/tenant/`) });
    for (let i = 0; i < 3; i++) {
      const answer = await transport.send({
        method: "GET",
        pathAndQuery: "/api/v1/x?a=1",
        headers: {},
        timeoutMs: 1000,
      });
      expect(answer.status).toBe(200);
    }
    expect(platform.requests.map((r) => r.url)).toEqual(Array(3).fill("/tenant/api/v1/x?a=1"));
    expect(platform.requests.every((r) => r.headers.connection === "keep-alive")).toBe(true);
    expect(new Set(platform.requests.map((r) => r.remotePort)).size).toBe(1);
    expect(joinPath(new URL("https://h.example"), "/api")).toBe("https://h.example/api");
  });

  it("refuses an answer larger than its limit", async () => {
    platform = await startFakePlatform((_req, res) => sendJson(res, 200, { blob: "x".repeat(10_000) }));
    transport = new HttpTransport({ baseUrl: new URL(platform.url), maxBodyBytes: 1000 });
    const err = await transport.send({ method: "GET", pathAndQuery: "/", headers: {}, timeoutMs: 1000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).kind).toBe("too_large");
  });
});
