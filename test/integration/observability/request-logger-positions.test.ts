/**
 * The request log's masking (routes/middleware/request-logger.ts), found in review round s (a review
 * of round r's fixes); each **was a bug**:
 * - a login after `.search` (`/Users/.search/jane.doe`, a 404 like `/Users/jane.doe`) was written at
 *   info: `.search` takes the entity id's place, and what follows it is masked as after an id;
 * - at debug a query parameter's *name* was written as it is (`/Users?jane.doe@example.com`): names
 *   other than filter, the list parameters and the schemas' attributes are only counted;
 * - a source whose id is `users`/`user`/`group`/`groups` (config-schema allows it) lost the bridge
 *   ids and route words an operator needs (`/admin/v1/sources/group/resync`,
 *   `/scim/v2/users/Users/<uuid>`): the source id was read as an entity collection; the source's
 *   place is now known by the path's first words.
 */
import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { createRequestLogger, loggedPath } from "../../../routes/middleware/request-logger.js";
import { createLogger } from "../../../src/observability/logger.js";

const LOGIN = "jane.doe-rvws";

function buildApp(level: string) {
  const lines: string[] = [];
  const logger = createLogger(level, {}, { write: (line: string) => void lines.push(line) });
  const app = express();
  app.use(createRequestLogger(logger));
  app.use((_req, res) => {
    res.status(404).json({});
  });
  return { app, lines };
}

async function settle() {
  await new Promise((r) => setTimeout(r, 50));
}

describe("request log privacy", () => {
  it("hides a login put after /Users/.search/ at info", async () => {
    const { app, lines } = buildApp("info");
    await request(app).get(`/scim/v2/okta/Users/.search/${LOGIN}`);
    await settle();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.includes(LOGIN))).toEqual([]);
  });

  it("hides a login sent as a query parameter's name at debug", async () => {
    const { app, lines } = buildApp("debug");
    await request(app).get(`/scim/v2/okta/Users?${LOGIN}@example.com`);
    await request(app).get(`/scim/v2/okta/Users?${LOGIN}=1`);
    await settle();
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.filter((l) => l.includes(LOGIN))).toEqual([]);
  });
});

describe("request log keeps what an operator needs for sources named like a collection", () => {
  const ID = "0b5e3a9c-1d2f-4e6a-8b7c-9d0e1f2a3b4c";
  it.each([
    ["/admin/v1/sources/group/resync", "/admin/v1/sources/group/resync"],
    ["/admin/v1/sources/users/reconcile", "/admin/v1/sources/users/reconcile"],
    [`/scim/v2/users/Users/${ID}`, `/scim/v2/users/Users/${ID}`],
    [`/admin/v1/dead-letters/groups/user/${ID}/retry`, `/admin/v1/dead-letters/groups/user/${ID}/retry`],
    ["/hooks/user/okta", "/hooks/user/okta"],
  ])("%s", (path, expected) => {
    expect(loggedPath(path)).toBe(expected);
  });
});
