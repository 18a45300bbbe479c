/**
 * The benchmark directory: deterministic users and groups (seeded), their SCIM bodies, and a check
 * of the platform's end state against them (emulator snapshot in, problems out; pure).
 */
import { DEPARTMENT_URN } from "./bench-processes.js";
import { GROUP_SCHEMA, USER_SCHEMA } from "./scim-client.js";

export interface BenchUser {
  userName: string;
  active: boolean;
  department: string;
}

export interface BenchGroup {
  displayName: string;
  /** Indexes into the user list. */
  members: number[];
}

/** mulberry32: a small seeded generator, enough for repeatable benchmark data. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `users` users (every 50th inactive), `groups` groups of 1..2*avg-1 distinct members. */
export function makePopulation(
  users: number,
  groups: number,
  avgMembers: number,
  seed = 42,
): { users: BenchUser[]; groups: BenchGroup[] } {
  const random = seededRandom(seed);
  const userList = Array.from({ length: users }, (_, i) => ({
    userName: `bench.user${i}@example.test`,
    active: i % 50 !== 49,
    department: `Department ${i % 25}`,
  }));
  const groupList = Array.from({ length: groups }, (_, g) => {
    const size = Math.min(users, 1 + Math.floor(random() * (2 * avgMembers - 1)));
    const members = new Set<number>();
    while (members.size < size) members.add(Math.floor(random() * users));
    return { displayName: `bench-group-${g}`, members: [...members] };
  });
  return { users: userList, groups: groupList };
}

export function userBody(u: BenchUser, i: number): Record<string, unknown> {
  return {
    schemas: [USER_SCHEMA, DEPARTMENT_URN],
    userName: u.userName,
    externalId: `ext-${i}`,
    active: u.active,
    displayName: `Bench User ${i}`,
    name: { givenName: "Bench", familyName: `User${i}` },
    emails: [{ value: u.userName, type: "work", primary: true }],
    [DEPARTMENT_URN]: { department: u.department },
  };
}

export function groupBody(g: BenchGroup, scimIds: string[]): Record<string, unknown> {
  return {
    schemas: [GROUP_SCHEMA],
    displayName: g.displayName,
    members: g.members.map((i) => ({ value: scimIds[i] })),
  };
}

export interface PlatformSnapshot {
  users: Array<{ id: string; userName: string; active?: boolean; displayName?: string }>;
  groups: Array<{ id: string; displayName: string; members: string[] }>;
  attributeValues: Array<{ userId: string; name: string; value: unknown }>;
}

export interface EndStateReport {
  platformUsers: number;
  platformGroups: number;
  duplicateUsers: number;
  duplicateGroups: number;
  missingUsers: number;
  wrongActive: number;
  wrongDepartment: number;
  missingGroups: number;
  wrongMembership: number;
  unexpectedUsers: number;
  /** The first few problems, for the log (no personal data beyond synthetic bench names). */
  examples: string[];
}

export function checkEndState(
  expected: { users: BenchUser[]; groups: BenchGroup[] },
  state: PlatformSnapshot,
): EndStateReport {
  const examples: string[] = [];
  const note = (s: string) => {
    if (examples.length < 10) examples.push(s);
  };
  const byName = new Map<string, Array<{ id: string; active?: boolean }>>();
  for (const u of state.users) {
    const key = u.userName.toLowerCase();
    byName.set(key, [...(byName.get(key) ?? []), u]);
  }
  const departments = new Map<string, unknown>();
  for (const v of state.attributeValues) if (v.name === "department") departments.set(v.userId, v.value);
  const r: EndStateReport = {
    platformUsers: state.users.length,
    platformGroups: state.groups.length,
    duplicateUsers: [...byName.values()].filter((l) => l.length > 1).length,
    duplicateGroups: 0,
    missingUsers: 0,
    wrongActive: 0,
    wrongDepartment: 0,
    missingGroups: 0,
    wrongMembership: 0,
    unexpectedUsers: 0,
    examples,
  };
  const platformIds: Array<string | undefined> = [];
  const expectedNames = new Set<string>();
  for (const u of expected.users) {
    expectedNames.add(u.userName.toLowerCase());
    const found = byName.get(u.userName.toLowerCase())?.[0];
    platformIds.push(found?.id);
    if (!found) {
      r.missingUsers++;
      note(`missing user ${u.userName}`);
      continue;
    }
    if ((found.active ?? true) !== u.active) {
      r.wrongActive++;
      note(`${u.userName}: active ${found.active}, want ${u.active}`);
    }
    if (departments.get(found.id) !== u.department) {
      r.wrongDepartment++;
      note(`${u.userName}: department ${JSON.stringify(departments.get(found.id))}`);
    }
  }
  r.unexpectedUsers = [...byName.keys()].filter((k) => !expectedNames.has(k)).length;
  const groupsByName = new Map<string, Array<{ members: string[] }>>();
  for (const g of state.groups) {
    const key = g.displayName.toLowerCase();
    groupsByName.set(key, [...(groupsByName.get(key) ?? []), g]);
  }
  r.duplicateGroups = [...groupsByName.values()].filter((l) => l.length > 1).length;
  for (const g of expected.groups) {
    const found = groupsByName.get(g.displayName.toLowerCase())?.[0];
    if (!found) {
      r.missingGroups++;
      note(`missing group ${g.displayName}`);
      continue;
    }
    const want = new Set(g.members.map((i) => platformIds[i]).filter((id): id is string => !!id));
    const have = new Set(found.members);
    if (want.size !== have.size || [...want].some((id) => !have.has(id))) {
      r.wrongMembership++;
      note(`${g.displayName}: ${have.size} members, want ${want.size}`);
    }
  }
  return r;
}
