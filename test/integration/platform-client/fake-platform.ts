/**
 * A small real HTTP server for the client's tests (before and beside the emulator): every request
 * is recorded and answered by the test's handler.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
  /** The client's port: the same port twice means a reused (kept-alive) connection. */
  remotePort: number | undefined;
}

export type Handler = (req: RecordedRequest, res: http.ServerResponse, index: number) => void;

export interface FakePlatform {
  url: string;
  requests: RecordedRequest[];
  setHandler(handler: Handler): void;
  close(): Promise<void>;
}

export async function startFakePlatform(handler: Handler): Promise<FakePlatform> {
  const requests: RecordedRequest[] = [];
  let current = handler;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const recorded: RecordedRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
        remotePort: req.socket.remotePort,
      };
      requests.push(recorded);
      current(recorded, res, requests.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setHandler: (h) => {
      current = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
) {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(text);
}

export const scimUser = (id: string, userName: string) => ({
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
  id,
  userName,
  active: true,
});
