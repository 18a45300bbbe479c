/** routes/middleware/series.ts: several middlewares as one express layer. */
import express, { type RequestHandler } from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { series } from "../../../routes/middleware/series.js";

const mark =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.locals.trail = [...(res.locals.trail ?? []), name];
    next();
  };

function app(handlers: RequestHandler[]) {
  const a = express();
  a.use(series(handlers));
  a.get("/", (_req, res) => res.json({ trail: res.locals.trail ?? [] }));
  a.use(((err, _req, res, _next) =>
    res.status(500).json({ error: String(err?.message ?? err) })) as express.ErrorRequestHandler);
  return a;
}

describe("series", () => {
  it("runs the middlewares in order, then the route", async () => {
    const res = await request(app([mark("a"), mark("b"), mark("c")])).get("/");
    expect(res.body.trail).toEqual(["a", "b", "c"]);
  });

  it("a middleware that answers ends the request there", async () => {
    const stop: RequestHandler = (_req, res) => {
      res.status(401).json({ stopped: true });
    };
    const res = await request(app([mark("a"), stop, mark("never")])).get("/");
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ stopped: true });
  });

  it("an error passed to next, thrown, or rejected skips the rest and reaches the error handler", async () => {
    const passed: RequestHandler = (_req, _res, next) => next(new Error("passed"));
    const thrown: RequestHandler = () => {
      throw new Error("thrown");
    };
    const rejected: RequestHandler = async () => {
      throw new Error("rejected");
    };
    for (const [handler, message] of [
      [passed, "passed"],
      [thrown, "thrown"],
      [rejected, "rejected"],
    ] as const) {
      const res = await request(app([mark("a"), handler, mark("never")])).get("/");
      expect(res.status).toBe(500);
      expect(res.body.error).toBe(message);
    }
  });
});
