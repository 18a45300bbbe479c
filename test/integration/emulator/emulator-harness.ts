/** Test helper: an emulator on a random port and a small fetch wrapper. */
import {
  createPlatformEmulator,
  type PlatformEmulator,
  type PlatformEmulatorOptions,
} from "../../../src/platform/emulator/platform-emulator.js";

export const TOKEN = "test-token";
export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
export const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are read loosely
  body: any;
}

export interface Harness {
  emulator: PlatformEmulator;
  url: string;
  call(
    method: string,
    path: string,
    body?: unknown,
    options?: { token?: string | null; contentType?: string },
  ): Promise<Answer>;
  close(): Promise<void>;
}

export async function startHarness(options: Partial<PlatformEmulatorOptions> = {}): Promise<Harness> {
  // checkResponses: every success answer is checked against the contract's response schemas.
  const emulator = createPlatformEmulator({ token: TOKEN, seed: 42, checkResponses: true, ...options });
  const url = await emulator.start({ port: 0 });
  return {
    emulator,
    url,
    async call(method, path, body, callOptions = {}) {
      const headers: Record<string, string> = {};
      const token = callOptions.token === undefined ? TOKEN : callOptions.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) {
        headers["content-type"] =
          callOptions.contentType ??
          (path.startsWith("/api/scim") ? "application/scim+json" : "application/json");
      }
      const res = await fetch(url + path, {
        method,
        headers,
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
    },
    close: () => emulator.close(),
  };
}

export function scimUser(userName: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { schemas: [USER_SCHEMA], userName, ...extra };
}

export async function createUser(
  h: Harness,
  userName: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const res = await h.call("POST", "/api/scim/v2/Users", scimUser(userName, extra));
  if (res.status !== 201) throw new Error(`createUser ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

export function patch(...operations: Array<Record<string, unknown>>): Record<string, unknown> {
  return { schemas: [PATCH_SCHEMA], Operations: operations };
}
