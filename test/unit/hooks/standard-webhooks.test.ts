import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { UnauthorizedError } from "../../../src/errors.js";
import { secretMatches } from "../../../src/hooks/shared-secret.js";
import {
  WebhookTimestampError,
  signWebhook,
  verifyWebhook,
  webhookKey,
} from "../../../src/hooks/standard-webhooks.js";

// The example of the Standard Webhooks specification's reference libraries.
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const TS = 1614265330;
const BODY = '{"test": 2432232314}';
const NOW = TS * 1000;

describe("Standard Webhooks signatures", () => {
  it("matches the specification's published example signature", () => {
    expect(signWebhook(SECRET, ID, TS, BODY)).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("uses the base64-decoded secret as the HMAC key", () => {
    const expected = createHmac("sha256", Buffer.from("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "base64"))
      .update(`${ID}.${TS}.${BODY}`)
      .digest("base64");
    expect(webhookKey(SECRET).length).toBe(24);
    expect(signWebhook(SECRET, ID, TS, BODY)).toBe(`v1,${expected}`);
  });

  it("accepts a valid signature among several (secret rotation)", () => {
    const signature = `v1,bm90IHRoZSByaWdodCBvbmU= v2,ignored ${signWebhook(SECRET, ID, TS, BODY)}`;
    expect(() =>
      verifyWebhook(SECRET, { id: ID, timestamp: String(TS), signature }, Buffer.from(BODY), NOW),
    ).not.toThrow();
  });

  it("refuses a forged signature, a changed body, id or timestamp", () => {
    const signature = signWebhook(SECRET, ID, TS, BODY);
    const other = "whsec_" + Buffer.from("another secret of mine").toString("base64");
    const cases: Array<[string, string, string, string]> = [
      [ID, String(TS), BODY.replace("2", "3"), signature],
      ["msg_other", String(TS), BODY, signature],
      [ID, String(TS + 1), BODY, signature],
      [ID, String(TS), BODY, signWebhook(other, ID, TS, BODY)],
      [ID, String(TS), BODY, signature.replace("v1,", "v2,")],
    ];
    for (const [id, timestamp, body, sig] of cases) {
      expect(() => verifyWebhook(SECRET, { id, timestamp, signature: sig }, Buffer.from(body), NOW)).toThrow(
        UnauthorizedError,
      );
    }
  });

  it("refuses timestamps more than 5 minutes away, either way", () => {
    const signature = signWebhook(SECRET, ID, TS, BODY);
    const headers = { id: ID, timestamp: String(TS), signature };
    expect(() => verifyWebhook(SECRET, headers, Buffer.from(BODY), NOW + 301_000)).toThrow(
      WebhookTimestampError,
    );
    expect(() => verifyWebhook(SECRET, headers, Buffer.from(BODY), NOW - 301_000)).toThrow(
      WebhookTimestampError,
    );
    expect(() => verifyWebhook(SECRET, headers, Buffer.from(BODY), NOW + 299_000)).not.toThrow();
    expect(() =>
      verifyWebhook(SECRET, { ...headers, timestamp: "2021-02-25" }, Buffer.from(BODY), NOW),
    ).toThrow(WebhookTimestampError);
  });

  it("requires all three headers", () => {
    expect(() => verifyWebhook(SECRET, { id: ID, timestamp: String(TS) }, Buffer.from(BODY), NOW)).toThrow(
      UnauthorizedError,
    );
  });
});

describe("Okta shared secret", () => {
  it("compares the whole header value", () => {
    expect(secretMatches("s3cret-value", "s3cret-value")).toBe(true);
    expect(secretMatches("Bearer s3cret-value", "s3cret-value")).toBe(false);
    expect(secretMatches("s3cret-valu", "s3cret-value")).toBe(false);
    expect(secretMatches(undefined, "s3cret-value")).toBe(false);
    expect(secretMatches("", "s3cret-value")).toBe(false);
  });
});
