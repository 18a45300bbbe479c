/**
 * `/_emulator/...`: inspection and control over HTTP for tests and demos. These endpoints need no
 * bearer token, are not logged, and never see injected faults.
 *
 *   GET    /_emulator/state        everything stored
 *   GET    /_emulator/requests     {requests (last 10,000), counters {total, writes, byOperation}}
 *   GET    /_emulator/violations   contract violations
 *   POST   /_emulator/reset        forget data, log, violations and faults
 *   POST   /_emulator/seed         SeedData -> SeedResult
 *   POST   /_emulator/drift        DriftAction -> {ok, id?}
 *   GET    /_emulator/faults       active fault rules
 *   POST   /_emulator/faults       add one rule (or an array)
 *   PUT    /_emulator/faults       replace all rules
 *   DELETE /_emulator/faults       clear all rules
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { EmulatorError } from "./emulator-error.js";
import { assertRules, type FaultRule } from "./fault-injector.js";
import { errorBody, parseJsonBody, readRawBody, sendJson } from "./http-io.js";
import type { ContractViolation, RequestLogEntry, RequestStats } from "./request-recorder.js";
import type { DriftAction, SeedData, SeedResult } from "./state-control.js";

/** The part of the emulator these endpoints use (implemented by PlatformEmulator). */
export interface EmulatorInspection {
  state(): unknown;
  requests(): RequestLogEntry[];
  counters(): RequestStats;
  violations(): ContractViolation[];
  reset(): void;
  seed(data: SeedData): SeedResult;
  drift(change: DriftAction): string | undefined;
  faults(): FaultRule[];
  addFault(rule: FaultRule): void;
  setFaults(rules: FaultRule[]): void;
  clearFaults(): void;
}

export async function handleInspection(
  emulator: EmulatorInspection,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): Promise<void> {
  const route = `${req.method} ${pathname.replace(/\/+$/, "")}`;
  try {
    const raw = await readRawBody(req);
    const body = parseJsonBody(raw, req.headers["content-type"] ?? "application/json");
    switch (route) {
      case "GET /_emulator/state":
        return sendJson(res, 200, emulator.state());
      case "GET /_emulator/requests":
        return sendJson(res, 200, { requests: emulator.requests(), counters: emulator.counters() });
      case "GET /_emulator/violations":
        return sendJson(res, 200, { violations: emulator.violations() });
      case "POST /_emulator/reset":
        emulator.reset();
        return sendJson(res, 204, undefined);
      case "POST /_emulator/seed":
        return sendJson(res, 200, emulator.seed((body ?? {}) as SeedData));
      case "POST /_emulator/drift": {
        const id = emulator.drift(body as DriftAction);
        return sendJson(res, 200, { ok: true, ...(id !== undefined ? { id } : {}) });
      }
      case "GET /_emulator/faults":
        return sendJson(res, 200, { faults: emulator.faults() });
      case "POST /_emulator/faults": {
        const rules = (Array.isArray(body) ? body : [body]) as FaultRule[];
        assertRules(rules); // all or nothing
        for (const rule of rules) emulator.addFault(rule);
        return sendJson(res, 200, { faults: emulator.faults() });
      }
      case "PUT /_emulator/faults":
        emulator.setFaults((Array.isArray(body) ? body : []) as FaultRule[]);
        return sendJson(res, 200, { faults: emulator.faults() });
      case "DELETE /_emulator/faults":
        emulator.clearFaults();
        return sendJson(res, 204, undefined);
      default:
        throw new EmulatorError(404, "NOT_FOUND", `no inspection endpoint ${route}`);
    }
  } catch (err) {
    const e =
      err instanceof EmulatorError
        ? err
        : new EmulatorError(400, "BAD_REQUEST", err instanceof Error ? err.message : String(err));
    sendJson(res, e.status, errorBody(e, false));
  }
}
