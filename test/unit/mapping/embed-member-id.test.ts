import { describe, expect, it } from "vitest";
import { embedMemberId } from "../../../src/mapping/plan-embed-group.js";

describe("embedMemberId: the externalId an embed-source user is known by", () => {
  it("is the SCIM externalId when there is one, whatever was recorded", () => {
    expect(embedMemberId({ externalId: "00u1", userName: "a@example.com" }, undefined)).toBe("00u1");
    expect(embedMemberId({ externalId: "00u2", userName: "a@example.com" }, "00u1")).toBe("00u2");
    expect(embedMemberId({ externalId: "00U1", userName: "a@example.com" }, "00u1")).toBe("00U1"); // caseExact
  });

  it("is the userName when there is none (or it is empty)", () => {
    expect(embedMemberId({ userName: "A@example.com" }, undefined)).toBe("A@example.com");
    expect(embedMemberId({ externalId: "", userName: "A@example.com" }, undefined)).toBe("A@example.com");
    expect(embedMemberId({ userName: "b@example.com" }, "a@example.com")).toBe("b@example.com");
  });

  it("keeps the recorded id when the userName changed in case only (RFC 7643 §4.1.1: caseExact false)", () => {
    expect(embedMemberId({ userName: "a@example.com" }, "A@Example.com")).toBe("A@Example.com");
    expect(embedMemberId({ userName: "JOSE\u0301@example.com" }, "jos\u00e9@example.com")).toBe(
      "jos\u00e9@example.com",
    );
  });
});
